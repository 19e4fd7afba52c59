"""Review page: people judge generated test cases one at a time (keys 1–5, ← back, → skip), resumably.

No model prediction is shown (no anchoring). Each judgement is committed to the review database as
soon as its last score is given; the page reopens at the reviewer's first unjudged case.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from alict_app import presses, runs, state, widgets
from alict_app.formatting import TASK_TITLES, literal
from alict_app.guard import guarded, run_page, show_error
from alict_core.tasks import SENTIMENT

QUESTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "relevance": ("How relevant is the sentence to this linguistic capability?",
                  ("strongly not relevant", "not relevant", "unsure", "relevant", "strongly relevant")),
    "label_sentiment": ("What is the sentiment of the sentence?",
                        ("strongly negative", "negative", "neutral", "positive", "strongly positive")),
    "label_hate_speech": ("How hateful is the sentence?",
                          ("strongly normal", "normal", "unsure", "hateful", "strongly hateful")),
    "validity": ("Does the seed's label still hold for this expanded sentence?",
                 ("strongly not consistent", "not consistent", "unsure", "consistent", "strongly consistent")),
}


def store(write: bool = False) -> Any:
    """The review store: read-only unless ``write`` (page views never write; clicks do)."""
    from alict_core.review import ReviewStore

    return ReviewStore(read_only=not write)


def steps(item: Any) -> list[str]:
    """The questions of an item, in order (validity only for expansions)."""
    return ["relevance", "label", *(["validity"] if item.kind == "expansion" else [])]


def question(step: str, suite_task: str) -> tuple[str, tuple[str, ...]]:
    return QUESTIONS[f"label_{suite_task}" if step == "label" else step]


def reset_position(key: tuple[str, str]) -> None:
    """Forget the position when the task or reviewer changed (the queue decides where to resume)."""
    if st.session_state.get("review_for") != key:
        st.session_state["review_for"] = key
        for name in ("review_index", "review_draft"):
            st.session_state.pop(name, None)


def go(index: int) -> None:
    st.session_state["review_index"] = index
    st.session_state["review_draft"] = {}


def score(step: str, value: int, item_id: int, reviewer: str, suite_steps: list[str], next_index: int) -> None:
    """Button callback: record one score; the last one saves the judgement and moves on."""
    draft = dict(st.session_state.get("review_draft") or {})
    if draft.get("item") != item_id:
        draft = {"item": item_id}
    draft[step] = value
    st.session_state["review_draft"] = draft
    if all(s in draft for s in suite_steps):
        note = st.session_state.get(f"review_note_{item_id}", "")
        store(write=True).judge(item_id, reviewer, relevance=draft["relevance"], label_score=draft["label"],
                      validity=draft.get("validity"), note=note)
        st.session_state["review_saved"] = item_id
        go(next_index)


def create_task_form(suite_task: str) -> None:
    """Sample a new review task from one of the app's finished runs."""
    finished = runs.list_runs(suite_task)
    widgets.copied_runs_note()
    if not finished:
        st.caption("Finish a run on the Run page (or use `python -m alict_core review sample`) to sample cases.")
        return
    with st.form("review_create"):
        keys = [r["key"] for r in finished]
        labels = {r["key"]: runs.describe_run(r) for r in finished}
        key = st.selectbox("Run to sample from", keys, format_func=lambda k: labels[k])
        name = st.text_input("Review task name", max_chars=100)
        c1, c2, c3, c4 = st.columns(4)
        size = c1.number_input("Seeds (0 = 95 % / 5 % size rule)", min_value=0, max_value=100_000, value=0)
        n_sets = c2.number_input("Sets", min_value=1, max_value=100, value=10)
        k = c3.number_input("Reviewers per case", min_value=1, max_value=10, value=2)
        seed = c4.number_input("Sampling seed", min_value=0, max_value=99_999, value=0)
        st.form_submit_button("Create review task", on_click=presses.note, args=("review_create",))
        if presses.take("review_create") and key in labels:
            from alict_core.review import SamplingPlan, create_review_task, load_cases

            if not name.strip():
                keep_notice("create", suite_task, "error", "Give the review task a name.")
                return
            plan = SamplingPlan(size=int(size) or None, n_sets=int(n_sets), k=int(k), seed=int(seed))
            try:
                task, summary = create_review_task(store(write=True), name.strip(), suite_task,
                                                   load_cases(runs.run_dir(key)), plan)
            except Exception as exc:  # noqa: BLE001 - shown by show_notice, like guarded() would, but kept
                keep_notice("create", suite_task, "error", exc)
                return
            st.session_state["review"] = task.name
            keep_notice("create", suite_task, "success",
                        f"Review task {literal(repr(task.name))}: {summary['n_seeds']} seeds + "
                        f"{summary['n_expansions']} expansions in {summary['n_sets']} sets.")
            st.rerun()  # the page's task menus are drawn above this form: redraw them with the new task


NOTICES = "_review_notices"  # where -> (task, kind, message or error): a press's outcome, kept (see keep_notice)


def keep_notice(where: str, suite_task: str, kind: str, message: str | BaseException) -> None:
    """Keep a press's outcome (``kind``: success, info or error) for ``show_notice``: drawn only in the press's
    run, a rerun from elsewhere (the sidebar's status probe resolving, a build landing) wiped it before it was read.
    It stays until the next press there (``drop_notice``) or a task switch."""
    st.session_state.setdefault(NOTICES, {})[where] = (suite_task, kind, message)


def drop_notice(where: str) -> None:
    st.session_state.get(NOTICES, {}).pop(where, None)


def show_notice(where: str, suite_task: str) -> None:
    kept = st.session_state.get(NOTICES, {}).get(where)
    if kept is None:
        return
    task, kind, message = kept
    if task != suite_task:
        drop_notice(where)
    elif isinstance(message, BaseException):
        show_error(message, "creating the review task" if where == "create" else "taking a set")
    else:
        getattr(st, kind)(message)


def metrics_view(task: Any) -> None:
    import pandas as pd

    from alict_core.review import task_stats

    stats = task_stats(store().judgements(task.id), task.suite_task)
    if not stats["n_judgements"]:
        st.caption("No judgements yet.")
        return

    def cells(m: dict[str, Any]) -> dict[str, Any]:
        return {name: (None if m[key]["value"] is None else
                       f"{m[key]['value']:.3f} [{m[key]['ci_low']:.3f}, {m[key]['ci_high']:.3f}] (n={m[key]['n']})")
                for key, name in (("label_cons", "LabelCons"), ("lc_rel", "LCRel"), ("exp_validity", "ExpValidity"))}

    st.dataframe(pd.DataFrame([{"cases": part, **cells(stats[part])} for part in ("seed", "expansion", "overall")]),
                 hide_index=True)
    st.dataframe(pd.DataFrame([{"lc": lc, **cells(m["all"])} for lc, m in stats["per_lc"].items()]), hide_index=True)
    agree = stats["agreement"]
    from alict_core.review.metrics import describe_kappa

    fmt = lambda v: "–" if v is None else f"{v:.3f}"  # noqa: E731
    st.caption(f"{stats['n_judgements']} judgements of {stats['n_cases']} cases by {len(stats['reviewers'])} "
               f"reviewer(s); every figure is per case (a case's reviewers averaged; n = cases). Agreement on "
               f"{agree['n_shared']} shared cases: {describe_kappa(agree)}, "
               f"Krippendorff's α (label) {fmt(agree['krippendorff_alpha_label'])}, "
               f"(relevance) {fmt(agree['krippendorff_alpha_relevance'])}. Intervals: 95 % Wilson over cases.")
    writeback_view(task.suite_task)


def writeback_view(suite_task: str) -> None:
    """Which cases later runs leave out, and the confirmation that turns the write-back on."""
    import pandas as pd

    from alict_core.review.writeback import DEFAULT_MIN_AGREEING, writeback_status

    review_store = store()
    rule = review_store.writeback_rule(suite_task)
    minimum = int(st.number_input("Reviewers who must agree to reject a case", min_value=1, max_value=20,
                                  value=int(rule.min_agreeing) if rule else DEFAULT_MIN_AGREEING,
                                  key=f"review_min_agreeing_{suite_task}",
                                  help="A case is rejected when at least this many reviewers, a strict majority of "
                                  "its reviewers, give a label that disagrees with its expectation or a relevance "
                                  "of 2 or less. The expansions of a rejected seed go with it."))
    status = writeback_status(suite_task, url=review_store.url, min_agreeing=minimum)
    rejected = status["rejected"]
    seeds = f", and every expansion of the {len(status['rejected_seeds'])} rejected seed(s)" \
        if status["rejected_seeds"] else ""
    if rule is not None:
        st.markdown(f"**Write-back on** (at least {rule.min_agreeing} agreeing reviewers; confirmed"
                    + (f" by {rule.confirmed_by}" if rule.confirmed_by else "") + f"). **Rejected cases** "
                    f"({len(rejected)}{seeds}) are left out of later {TASK_TITLES[suite_task]} runs; "
                    "`run --include-rejected` shows them.")
    else:
        st.markdown(f"**Write-back off**: later runs exclude nothing yet. Under this rule **{len(rejected)} "
                    f"case(s){seeds}** would be left out of later {TASK_TITLES[suite_task]} runs.")
    if rejected:
        st.dataframe(pd.DataFrame(rejected), hide_index=True)
    changed = rule is not None and int(rule.min_agreeing) != minimum
    if rule is None or changed:
        confirm_form(suite_task, len(rejected), minimum, changed)
    else:
        off_button(suite_task)


def off_button(suite_task: str) -> None:
    st.button("Turn the write-back off", key=f"review_writeback_off_{suite_task}", on_click=presses.note,
              args=(f"review_writeback_off::{suite_task}",))
    if presses.take(f"review_writeback_off::{suite_task}"):
        store(write=True).revoke_writeback(suite_task)
        st.rerun()


def confirm_form(suite_task: str, n_rejected: int, minimum: int, changed: bool) -> None:
    """The write-back confirmation: a tick and a button in one form.

    A form keeps the tick in the browser until the button is pressed, and sends tick and click in one message.
    As a plain checkbox the tick was a rerun of its own, and the button's state waited for that rerun: on a
    loaded machine a tick was seen undone by a rerun under way at the same time. In the form no rerun comes
    between the tick and the click. The press is noted by the button's callback with the tick as sent
    (``presses.note``): read from the button's return value it could be lost on a loaded server. A press without the
    tick leaves its warning in the session until the confirmation succeeds, so a rerun from elsewhere (the sidebar's
    probe resolving) never hides it.
    """
    who = str(st.session_state.get("reviewer") or "").strip()
    sure_key, tick_needed = f"review_writeback_sure_{suite_task}", f"_review_writeback_tick_needed_{suite_task}"
    with st.form(f"review_writeback_{suite_task}", border=False, enter_to_submit=False):
        st.checkbox(f"Leave these {n_rejected} case(s) out of every later {TASK_TITLES[suite_task]} run",
                    key=sure_key)
        if not who:  # the confirmation records who gave it: never an empty name
            st.caption("Enter your name above to confirm: the confirmation records who gave it.")
        label = "Apply the new rule" if changed else "Confirm write-back"
        st.form_submit_button(label, key=f"review_writeback_confirm_{suite_task}", disabled=not who,
                              on_click=press_confirm, args=(suite_task, sure_key, tick_needed))
    if presses.take(f"review_writeback::{suite_task}") and who:  # pressed with the box ticked
        store(write=True).confirm_writeback(suite_task, minimum, who)
        st.session_state.pop(tick_needed, None)
        st.rerun()
    if st.session_state.get(tick_needed):  # kept until confirmed: a rerun from elsewhere never wipes the message
        st.warning("Tick the box above to confirm: later runs then leave these cases out.")


def press_confirm(suite_task: str, sure_key: str, tick_needed: str) -> None:
    """The confirmation's ``on_click``, with the tick as the form sent it: ticked, the press is noted for the page to
    confirm; unticked, the warning is asked for (kept until a confirmation succeeds)."""
    if st.session_state.get(sure_key):
        presses.note(f"review_writeback::{suite_task}")
    else:
        st.session_state[tick_needed] = True


def judge_view(task: Any, reviewer: str) -> None:
    from alict_core.review import reviewer_queue

    queue = reviewer_queue(store(), task.name, reviewer, claim=False)  # a page view claims nothing
    if not queue.items:
        st.caption(f"{literal(reviewer)} has no set of this task yet.")
        st.button("Start reviewing (take a set)", key="review_claim", type="primary", on_click=presses.note,
                  args=(f"review_claim::{task.name}",))
        if presses.take(f"review_claim::{task.name}"):
            drop_notice(f"review_claim::{task.name}")
            if store(write=True).claim_set(task.id, reviewer) is None:
                keep_notice(f"review_claim::{task.name}", task.suite_task, "info",
                            "Every set of this task already has its reviewers; ask for another task.")
            else:
                st.session_state.pop("review_index", None)
                st.rerun()
        show_notice(f"review_claim::{task.name}", task.suite_task)
        return
    total, done = len(queue.items), len(queue.judged)
    index = int(st.session_state.setdefault("review_index", queue.next_index))
    st.progress(done / total, text=f"{literal(reviewer)}: {done} of {total} cases judged")
    st.caption(" · ".join(f"set {s + 1}: {d}/{n}" for s, (d, n) in queue.progress_per_set().items()))
    if index >= total:
        c1, c2 = st.columns(2)
        c1.button("← Back", on_click=go, args=(total - 1,), key="review_back_end", shortcut="Left")
        if done < total:
            st.info(f"End of your cases; {total - done} skipped case(s) still to judge.")
            c2.button("Go to the first unjudged case", on_click=go, args=(queue.next_index,), key="review_first_open")
            return
        st.success("All your cases are judged — thank you.")
        c2.button("Take another set", key="review_another_set", on_click=presses.note,
                  args=(f"review_another::{task.name}",))
        if presses.take(f"review_another::{task.name}"):
            drop_notice(f"review_claim::{task.name}")
            got = store(write=True).claim_set(task.id, reviewer)
            if got is None:
                keep_notice(f"review_claim::{task.name}", task.suite_task, "info", "No set needs another reviewer.")
            else:
                st.session_state.pop("review_index", None)  # resume at the new set's first case
                st.rerun()
        show_notice(f"review_claim::{task.name}", task.suite_task)
        return
    item = queue.items[index]
    item_steps = steps(item)
    draft = st.session_state.get("review_draft") or {}
    if draft.get("item") != item.id:
        draft = {"item": item.id}
    step = next((s for s in item_steps if s not in draft), item_steps[0])
    next_index = next((i for i in range(index + 1, total) if queue.items[i].id not in queue.judged), total)

    st.markdown(f"**Case {index + 1} of {total}** · set {item.set_no + 1} · {item.kind}")
    left, right = st.columns([3, 2])
    with left:
        if item.kind == "expansion" and item.seed_text:
            st.caption("Seed sentence")
            st.markdown(f"> {literal(item.seed_text)}")
            st.caption("Expanded sentence")
        st.markdown(f"### {literal(item.text)}")
    with right:
        st.markdown(f"**{literal(item.lc_title or item.lc_id)}**")
        st.caption(literal(item.lc_description or ""))
    saved = store().judgement(item.id, reviewer)
    if saved is not None:
        st.caption(f"Saved: relevance {saved.relevance}, label {saved.label_score}"
                   + (f", validity {saved.validity}" if saved.validity else "") + " — scoring again replaces it.")
    text, options = question(step, task.suite_task)
    st.markdown(f"**{text}** ({item_steps.index(step) + 1}/{len(item_steps)}; press 1–5)")
    cols = st.columns(5)
    for value, (col, caption) in enumerate(zip(cols, options, strict=True), start=1):
        col.button(caption, key=f"review_{step}_{value}", shortcut=str(value), width="stretch", wrap=True,
                   on_click=score, args=(step, value, item.id, reviewer, item_steps, next_index))
    st.text_input("Note (optional)", key=f"review_note_{item.id}", max_chars=2000)
    nav1, nav2, _ = st.columns([1, 1, 4])
    nav1.button("← Back", on_click=go, args=(max(0, index - 1),), key="review_back", shortcut="Left",
                disabled=index == 0)
    nav2.button("Skip →", on_click=go, args=(min(total, index + 1),), key="review_next", shortcut="Right")


def main() -> None:
    widgets.header("Review", "Judge generated test cases: LC relevance, label and (for expansions) whether the seed's "
                   "label still holds. Model predictions are not shown.")
    suite_task = state.get("task") or SENTIMENT.name
    review_store = store()
    tasks = review_store.tasks(suite_task)
    with st.expander("New review task", expanded=not tasks):
        with guarded("creating the review task"):
            create_task_form(suite_task)
    show_notice("create", suite_task)  # outside the expander: it folds once a task exists
    tasks = review_store.tasks(suite_task)
    if not tasks:
        st.info(f"No review tasks for {TASK_TITLES[suite_task]} yet.")
        return
    names = [t.name for t in tasks]
    state.ensure_choice("review", names)
    c1, c2 = st.columns(2)
    name = c1.selectbox("Review task", names, key="review")
    reviewer = c2.text_input("Your name", key="reviewer", max_chars=100).strip()
    task = next(t for t in tasks if t.name == name)
    with st.expander("Validity of this task so far", key="review_validity"):  # keyed: opened, it stays open
        with guarded("computing the validity metrics"):
            metrics_view(task)
    if not reviewer:
        st.info("Enter your name to start (or resume) reviewing.")
        return
    from alict_core.review.store import ReviewError, check_name

    try:  # said now, not when a click would create the reviewer
        check_name(reviewer, "your name", 100)
    except ReviewError as exc:
        st.error(f"{exc}; use letters, digits and spaces.")
        return
    reset_position((task.name, reviewer))
    judge_view(task, reviewer)


run_page(main, "showing the review")

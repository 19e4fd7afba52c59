"""The review page's validity metrics of a task and the write-back (which cases later runs leave out, and its
confirmation)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from alict_app import presses
from alict_app.formatting import TASK_TITLES, literal
from alict_app.review_tasks import store


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

    from alict_core.review.store import MAX_MIN_AGREEING
    from alict_core.review.writeback import DEFAULT_MIN_AGREEING, writeback_status

    review_store = store()
    rule = review_store.writeback_rule(suite_task)
    minimum = int(st.number_input("Reviewers who must agree to reject a case", min_value=1, max_value=MAX_MIN_AGREEING,
                                  value=int(rule.min_agreeing) if rule else DEFAULT_MIN_AGREEING,
                                  key=f"review_min_agreeing_{suite_task}",
                                  help="A case is rejected when at least this many reviewers, a strict majority of "
                                  "its reviewers, give a label that disagrees with its expectation or a relevance "
                                  "of 2 or less. The expansions of a rejected seed go with it."))
    status = writeback_status(suite_task, url=review_store.url, min_agreeing=minimum)
    rejected = status["rejected"]
    seeds = f", and every expansion of the {len(status['rejected_seeds'])} rejected seed(s)" \
        if status["rejected_seeds"] else ""
    if rule is not None and int(rule.min_agreeing) != minimum:  # a preview of another rule: not what runs use
        st.markdown(f"**Write-back on** with at least {rule.min_agreeing} agreeing reviewers. Under the rule set "
                    f"here (at least {int(minimum)}), **{len(rejected)} case(s){seeds}** would be left out of later "
                    f"{TASK_TITLES[suite_task]} runs once you confirm it.")
    elif rule is not None:
        st.markdown(f"**Write-back on** (at least {rule.min_agreeing} agreeing reviewers; confirmed"
                    + (f" by {literal(rule.confirmed_by)}" if rule.confirmed_by else "") + f"). **Rejected cases** "
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

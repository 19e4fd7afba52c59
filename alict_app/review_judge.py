"""The review page's judging view: one case at a time, its questions answered by buttons (keys 1–5), back and
skip, resumable at the reviewer's first unjudged case."""

from __future__ import annotations

from typing import Any

import streamlit as st

from alict_app import presses
from alict_app.formatting import literal
from alict_app.review_tasks import drop_notice, keep_notice, show_notice, store

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


SAVE = "review_save"  # the press of a case's last score: saved by the page (inside its error boundary)


def score(step: str, value: int, item_id: int, reviewer: str, suite_steps: list[str], next_index: int) -> None:
    """Button callback: record one score; the last one asks the page to save the judgement (``save_pending``: a
    refused note raised inside the callback, outside the page's error boundary, and the judgement was lost)."""
    draft = dict(st.session_state.get("review_draft") or {})
    if draft.get("item") != item_id:
        draft = {"item": item_id}
    draft[step] = value
    st.session_state["review_draft"] = draft
    if all(s in draft for s in suite_steps):
        presses.note(SAVE, (item_id, reviewer, suite_steps[-1], next_index))


def save_pending() -> None:
    """Save the judgement whose last score was pressed, then move on; a refused one (a note with a control
    character, a database that cannot be written) is one message and the scores stay for another try."""
    from alict_core.common.errors import AlictError

    pending = presses.take(SAVE)
    if pending is None:
        return
    item_id, reviewer, last_step, next_index = pending
    draft = dict(st.session_state.get("review_draft") or {})
    note = st.session_state.get(f"review_note_{item_id}", "")
    try:
        store(write=True).judge(item_id, reviewer, relevance=draft["relevance"], label_score=draft["label"],
                                validity=draft.get("validity"), note=note)
    except AlictError as exc:
        draft.pop(last_step, None)  # the last question is asked again, the earlier answers are kept
        st.session_state["review_draft"] = draft
        st.error(f"Not saved: {literal(exc)}", icon=":material/warning:")
        return
    st.session_state["review_saved"] = item_id
    go(next_index)


def judge_view(task: Any, reviewer: str) -> None:
    from alict_core.review import reviewer_queue

    save_pending()
    queue = reviewer_queue(store(), task.name, reviewer, claim=False)  # a page view claims nothing
    if not queue.items:
        no_set_yet(task, reviewer)
        return
    total, done = len(queue.items), len(queue.judged)
    index = int(st.session_state.setdefault("review_index", queue.next_index))
    st.progress(done / total, text=f"{literal(reviewer)}: {done} of {total} cases judged")
    st.caption(" · ".join(f"set {s + 1}: {d}/{n}" for s, (d, n) in queue.progress_per_set().items()))
    if index >= total:
        end_of_cases(task, reviewer, queue)
    else:
        case_view(task, reviewer, queue, index)


def no_set_yet(task: Any, reviewer: str) -> None:
    """The reviewer holds no set of the task: the button that takes one."""
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


def end_of_cases(task: Any, reviewer: str, queue: Any) -> None:
    """Past the last case: back, the first skipped case, or (all judged) another set."""
    total, done = len(queue.items), len(queue.judged)
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


def case_view(task: Any, reviewer: str, queue: Any, index: int) -> None:
    """Case ``index`` of the queue: its text and LC, its saved judgement, the current question's buttons."""
    total = len(queue.items)
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
    note_key = f"review_note_{item.id}"
    if saved is not None and note_key not in st.session_state:  # a later session: scoring again kept no note
        st.session_state[note_key] = str(getattr(saved, "note", "") or "")
    st.text_input("Note (optional)", key=note_key, max_chars=2000)
    nav1, nav2, _ = st.columns([1, 1, 4])
    nav1.button("← Back", on_click=go, args=(max(0, index - 1),), key="review_back", shortcut="Left",
                disabled=index == 0)
    nav2.button("Skip →", on_click=go, args=(min(total, index + 1),), key="review_next", shortcut="Right")

"""Metamorphic relations on derivation-tree edges, as DIR test cases for the existing runner (paper §4.3).

Every edge parent → child inserts one component c (the child's adjunct as inserted). A *judge*
model labels c on its own (the paper judges with the model under test; here one judge is fixed when
the cases are made, so one suite serves every model — pass the model under test as judge to
reproduce the paper exactly). Each case has ``text`` = parent, ``variants`` = (child,) and a
``direction`` expectation with tolerance ``threshold`` (default 0.1):

* **sentiment** (the paper's relation): a positive c must not raise P(negative) by more than the
  threshold (expected: P(negative) goes "down"); a negative c must not raise P(positive). A neutral c
  gives no test.
* **hate speech** (ours): an adjunct cannot create hate out of nothing and cannot clean hate away.
  If c or the parent is judged hateful, P(non-hateful) must not rise by more than the threshold
  (inserting a hateful component never makes a text less hateful; a harmless detail inserted into a
  hateful text does not make it acceptable). If both are non-hateful, P(non-hateful) must not fall by
  more than the threshold (a harmless detail in a harmless text does not make it hateful).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from alict_core.cases.testcases import TestCase, check_expected
from alict_core.common.errors import AlictError
from alict_core.lego.assemble import DerivationTree, Node
from alict_core.models.protocol import checked_proba
from alict_core.tasks import HATE_SPEECH, SENTIMENT, TASKS, task_list

LC_ID = "nlplego"
CAPABILITY = "NLPLego: adjunct insertion (DIR)"


def _judge(judge: Any, texts: Sequence[str]) -> dict[str, str]:
    unique = list(dict.fromkeys(t for t in texts if t))
    if not unique:
        return {}
    proba = checked_proba(judge, unique)
    return {text: judge.labels[int(i)] for text, i in zip(unique, np.argmax(proba, axis=1), strict=True)}


def _sentiment_expectation(component: str) -> tuple[str, str] | None:
    if component == "positive":
        return "negative", "down"
    if component == "negative":
        return "positive", "down"
    return None


def _hate_expectation(component: str, parent: str) -> tuple[str, str]:
    if "hateful" in (component, parent):
        return "non-hateful", "down"
    return "non-hateful", "up"


def tree_cases(trees: Sequence[DerivationTree], task: str, judge: Any, *, threshold: float = 0.1) -> list[TestCase]:
    """DIR test cases for every edge of ``trees`` whose relation applies (see the module docstring)."""
    if task not in TASKS:
        raise AlictError(f"NLPLego oracles: unknown task {task!r}; valid tasks: {task_list()}")
    edges = [(tree, parent, child) for tree in trees for parent, child in tree.edges()]
    components = [child.inserted_text.strip(" ,") for _, _, child in edges]
    parents = [parent.text for _, parent, _ in edges] if task == HATE_SPEECH.name else []
    labels = _judge(judge, components + parents)
    cases: list[TestCase] = []
    for (tree, parent, child), component in zip(edges, components, strict=True):
        c_label = labels.get(component, "")
        rule = (
            _sentiment_expectation(c_label)
            if task == SENTIMENT.name
            else _hate_expectation(c_label, labels.get(parent.text, ""))
        )
        if rule is None:
            continue
        watched, direction = rule
        case_id = child.id
        top = _level_one_ancestor(tree, child)
        kind = "seed" if child.level == 1 else "expansion"
        expected = check_expected(
            {"kind": "direction", "labels": [watched], "direction": direction, "tolerance": threshold},
            f"NLPLego edge {child.id}",
        )
        cases.append(
            TestCase(
                case_id=case_id,
                lc_id=LC_ID,
                kind=kind,
                seed_id=case_id if kind == "seed" else top,
                text=parent.text,
                expected=expected,
                test_type="DIR",
                capability=CAPABILITY,
                task=task,
                variants=(child.text,),
                description=f"insert {component!r} (judged {c_label} by {judge.name}): P({watched}) must not "
                f"{'rise' if direction == 'down' else 'fall'} by more than {threshold}",
                meta={
                    "tree": tree.seed_id,
                    "parent": parent.id,
                    "node": child.id,
                    "level": child.level,
                    "adjunct": child.adjunct,
                    "component": component,
                    "component_label": c_label,
                    "mutation": child.mutation.kind,
                    "judge": judge.name,
                },
            )
        )
    return cases


def _level_one_ancestor(tree: DerivationTree, node: Node) -> str:
    index = tree.by_id()
    while node.parent is not None and index[node.parent].parent is not None:
        node = index[node.parent]
    return node.id

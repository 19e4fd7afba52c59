"""Hand-edited harden export table: the rows `harden train` / `harden evaluate` read back from an export go
through the strict-input path of a cases file. An over-long text (over ``ALICT_LIMIT_TEXT_CHARS``), an empty or
NUL text, a number or bool where a text or label is meant, a row of another shape: one message naming
``file:line``, the field and the limit, before any model is loaded; never trained on silently.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory) -> Path:
    """A real jsonl export of 12 seed cases of one LC (every split holds rows)."""
    from alict_core.harden.export import export_hardening_data
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel, small_cases

    root = tmp_path_factory.mktemp("hx")
    run_dir = run_suite(small_cases(12), [KeywordModel()], cache_root=root / "p").save(root / "run")
    export_hardening_data(run_dir, root / "hx", lcs=["sentiment-lc01"], formats=("jsonl",))
    return root / "hx"


def _edited(export_dir: Path, tmp_path: Path, split: str, change) -> Path:
    """A copy of the export whose first row of ``split`` is changed by ``change(row)``."""
    import shutil

    copy = tmp_path / "edited"
    shutil.copytree(export_dir, copy)
    path = copy / f"{split}.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[0])
    change(row)
    lines[0] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # the edit recorded in export.json (as a writer that also rewrites it would): the row check must hold by itself,
    # not only behind the file hashes `harden export` records (pass 11, N6)
    from alict_core.harden.export import split_hashes

    settings = json.loads((copy / "export.json").read_text(encoding="utf-8"))
    (copy / "export.json").write_text(json.dumps({**settings, "files": split_hashes(copy)}), encoding="utf-8")
    return copy


def _set(**values):
    return lambda row: row.update(values)


def _drop(key: str):
    return lambda row: row.pop(key)


ROWS = [  # (id, change of the first row, needles, env)
    ("text-over-the-limit", _set(text="good " * 2001), ["train.jsonl:1", "field 'text'", "10,005 characters",
                                                        "over the limit of 10,000", "ALICT_LIMIT_TEXT_CHARS"], {}),
    ("text-over-a-lower-limit", _set(text="a good film indeed"), ["train.jsonl:1", "field 'text'",
                                                                   "over the limit of 10"],
     {"ALICT_LIMIT_TEXT_CHARS": "10"}),
    ("variant-over-the-limit", _set(variants=["fine", "x" * 10_001]), ["train.jsonl:1", "field 'variants'",
                                                                        "over the limit of 10,000"], {}),
    ("text-empty", _set(text="  "), ["train.jsonl:1", "field 'text'", "empty text"], {}),
    ("text-nul", _set(text="a\x00b"), ["train.jsonl:1", "field 'text'", "NUL"], {}),
    ("text-a-number", _set(text=12345), ["train.jsonl:1", "field 'text'", "got int"], {}),
    ("text-a-bool", _set(text=True), ["train.jsonl:1", "field 'text'", "got bool"], {}),
    ("text-missing", _drop("text"), ["train.jsonl:1", "field 'text'", "is missing"], {}),
    ("label-a-bool", _set(label=True), ["train.jsonl:1", "field 'label'"], {}),
    ("label-a-number", _set(label=1), ["train.jsonl:1", "field 'label'"], {}),
    ("allowed-labels-a-text", _set(allowed_labels="positive"), ["train.jsonl:1", "field 'allowed_labels'"], {}),
    ("allowed-labels-numbers", _set(allowed_labels=[0, 1]), ["train.jsonl:1", "field 'allowed_labels[0]'"], {}),
    ("expected-a-list", _set(expected=["positive"]), ["train.jsonl:1", "field 'expected'"], {}),
    ("expected-unknown-kind", _set(expected={"kind": "telepathy"}), ["train.jsonl:1", "field 'expected'"], {}),
    ("expected-bool-labels", _set(expected={"kind": "label", "labels": [True]}), ["train.jsonl:1",
                                                                                  "field 'expected'"], {}),
    ("lc-id-null", _set(lc_id=None), ["train.jsonl:1", "field 'lc_id'"], {}),
    ("split-unknown", _set(split="holdout"), ["train.jsonl:1", "field 'split'"], {}),
    ("kind-unknown", _set(kind="mutant"), ["train.jsonl:1", "field 'kind'"], {}),
]


@pytest.mark.parametrize("change,needles,env", [row[1:] for row in ROWS], ids=[row[0] for row in ROWS])
def test_a_hand_edited_training_row_is_refused_by_train(cli, tmp_path, monkeypatch, export_dir, change, needles,
                                                        env):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    edited = _edited(export_dir, tmp_path, "train", change)
    # vader is no model harden can retrain: reaching the model check would be another message
    outcome = cli("harden", "train", "--export", str(edited), "--model", "vader")
    assert_clean_error(outcome, 2, *needles, "harden export")


@pytest.mark.parametrize("split", ["train", "validation", "test"])
def test_every_split_is_read_through_the_row_check(tmp_path, export_dir, split):
    from alict_core.common.errors import AlictError
    from alict_core.harden.export import read_split

    assert read_split(export_dir, split), "an untouched export reads back"
    edited = _edited(export_dir, tmp_path, split, _set(text="good " * 2001))
    with pytest.raises(AlictError, match=rf"^{split}\.jsonl:1: field 'text': has 10,005 characters, over the limit"):
        read_split(edited, split)

"""Library robustness table: specs, references, LC ids, limits, caches and atomic folders."""

from __future__ import annotations

import json
import time

import pytest

from alict_core.common.config import SPECS_DIR
from alict_core.common.errors import AlictError, SpecError
from alict_core.common.limits import LimitError, limits
from alict_core.common.manifest import CorruptArtefactError, atomic_dir, load_checked, save_checked, verify_file
from alict_core.common.refs import ReferenceError_, check_name, resolve_inside
from alict_core.lcspec import SpecValidationError, load_spec, parse_spec_text
from alict_core.lcspec.lcids import parse_lc_id

BASE_SPEC = (SPECS_DIR / "sentiment" / "sentiment-lc04.yaml").read_text(encoding="utf-8")

SPEC_BAD = [  # (YAML text or bytes, needles)
    ("a: " + "[" * 5000 + "]" * 5000, ["nested deeper than 32"]),
    ("a:\n" + "".join("  " * i + "b:\n" for i in range(1, 60)) + "  " * 60 + "c: 1\n", ["nested deeper"]),
    ("x: 1\n" * 60_000, ["over the spec size limit"]),
    (BASE_SPEC.replace('include: ["This is"', "include: [" + ",".join("a" for _ in range(100_000))
                       + ', "This is"', 1), ["more than 1,000 entries"]),
    ("words: [" + ", ".join(str(i) for i in range(2000)) + "]", ["more than 1,000 entries"]),
    ("- just\n- a list\n", ["must be a YAML mapping"]),
    ("key: [unclosed", ["invalid YAML"]),
    ("", ["must be a YAML mapping"]),
]


@pytest.mark.parametrize("text,needles", SPEC_BAD, ids=[f"spec-{i}" for i in range(len(SPEC_BAD))])
def test_spec_text_is_refused_quickly(text, needles):
    started = time.process_time()  # CPU time: the work done, not the machine's load
    with pytest.raises(SpecValidationError) as info:
        parse_spec_text(text, "user.yaml")
    assert time.process_time() - started < 10
    message = str(info.value)
    assert message.startswith("user.yaml") and "\n" not in message
    for needle in needles:
        assert needle in message, (needle, message)


@pytest.mark.parametrize("data,needle", [
    (BASE_SPEC.encode("utf-16"), "not UTF-8"),
    (b"id: caf\xe9\n", "not UTF-8"),
    (b"x: 1\n" * 60_000, "over the spec size limit"),
], ids=["utf16", "latin1", "big"])
def test_spec_file_is_refused(tmp_path, data, needle):
    path = tmp_path / "spec.yaml"
    path.write_bytes(data)
    with pytest.raises(SpecValidationError, match=needle):
        load_spec(path)


SPEC_LIMITS_ENV = [("ALICT_LIMIT_SPEC_DEPTH", "4", "a: {b: {c: {d: {e: 1}}}}", "nested deeper than 4"),
                   ("ALICT_LIMIT_PREDICATE_ITEMS", "3", "w: [1, 2, 3, 4]", "more than 3 entries"),
                   ("ALICT_LIMIT_SPEC_BYTES", "10", "abc: defghijk", "over the spec size limit of 10")]


@pytest.mark.parametrize("variable,value,text,needle", SPEC_LIMITS_ENV, ids=[v[0] for v in SPEC_LIMITS_ENV])
def test_spec_limits_are_configurable(monkeypatch, variable, value, text, needle):
    monkeypatch.setenv(variable, value)
    with pytest.raises(SpecValidationError, match=needle) as info:
        parse_spec_text(text, "s.yaml")
    assert variable in str(info.value)


@pytest.mark.parametrize("value", ["lots", "0", "-5", "1.5", " "])
def test_invalid_limit_setting(monkeypatch, value):
    monkeypatch.setenv("ALICT_LIMIT_TEXT_CHARS", value)
    if not value.strip():
        assert limits().text_chars == 10_000
        return
    with pytest.raises(LimitError, match="ALICT_LIMIT_TEXT_CHARS"):
        limits()


KNOWN = [f"sentiment-lc{i:02d}" for i in range(1, 12)] + ["sentiment-x01"]


@pytest.mark.parametrize("value,expected", [("sentiment-lc04", "sentiment-lc04"), ("lc04", "sentiment-lc04"),
                                            ("LC4", "sentiment-lc04"), ("4", "sentiment-lc04"),
                                            ("04", "sentiment-lc04"),
                                            (" lc11 ", "sentiment-lc11"), ("sentiment-x01", "sentiment-x01"),
                                            ("x01", "sentiment-x01"), ("X1", "sentiment-x01")])
def test_lc_id_forms_accepted(value, expected):
    assert parse_lc_id("sentiment", value, KNOWN) == expected


@pytest.mark.parametrize("value", ["1.4", "-4", "4x", "hate_speech-lc04", "lc12", "x02", None, 4, "", "lc-4", "0x4"])
def test_lc_id_forms_refused(value):
    with pytest.raises(SpecError, match="valid names: sentiment-lc01"):
        parse_lc_id("sentiment", value, KNOWN)


@pytest.mark.parametrize("name", ["../x", "/etc/passwd", ".hidden", "a/b", "a\\b", "", "x" * 200, "a\x00b", "..",
                                  "a..b", " lead", "new\nline", 7, None])
def test_references_are_plain_names(tmp_path, name):
    with pytest.raises(ReferenceError_) as info:
        resolve_inside(tmp_path, name, "run id")
    assert str(tmp_path) not in str(info.value)


def test_reference_inside_its_root(tmp_path):
    (tmp_path / "abc123").mkdir()
    assert resolve_inside(tmp_path, "abc123", "run id") == (tmp_path / "abc123").resolve()
    (tmp_path / "link").symlink_to("/")
    with pytest.raises(ReferenceError_, match="outside its folder"):
        resolve_inside(tmp_path, "link", "run id")
    with pytest.raises(ReferenceError_, match="not found"):
        resolve_inside(tmp_path, "nope", "run id")
    assert check_name("run-1.v2_x+y", "run id") == "run-1.v2_x+y"


def test_run_refuses_texts_over_the_limit(tmp_path):
    from alict_core.runner import build_cases, run_suite
    from tests.robustness.support import KeywordModel

    seeds = [{"id": "s", "lc_id": "LC", "text": "good " * 3000, "test_type": "MFT",
              "expected": {"kind": "label", "labels": ["positive"]}}]
    model = KeywordModel()
    with pytest.raises(LimitError, match="case 's' of LC has 15,000 characters"):
        run_suite(build_cases(seeds), [model], cache_root=tmp_path)
    assert model.seen == [] and not any(tmp_path.iterdir())


GROUP = BASE_SPEC.split("search:")[1].split("name:")[1].split()[0]


def _huge_spec() -> str:
    words = ", ".join(f"w{i}" for i in range(1000))
    return BASE_SPEC.split("rules:")[0] + "rules:\n  - name: huge\n    concat:\n" + "".join(
        f"      - [{words}]\n" for _ in range(4)) + "      - {group: GROUP}\n    expected: {label: positive}\n"


def test_cross_product_of_10_to_the_12_is_sampled_or_refused(sentiment_corpus):
    from alict_core.seeds import find_seeds

    spec = parse_spec_text(_huge_spec().replace("GROUP", GROUP), "huge.yaml")
    started = time.process_time()  # CPU time: the work done, not the machine's load
    capped = find_seeds(spec, sentiment_corpus, max_seeds=50)
    assert capped.counts()["candidates"] >= 10**12 and len(capped.seeds) == 50
    with pytest.raises(LimitError, match="candidate seeds of sentiment-lc04: [0-9,]+ is over the limit"):
        find_seeds(spec, sentiment_corpus, max_seeds=None)
    assert time.process_time() - started < 10


# --- caches: verified, quarantined, rebuilt -----------------------------------------------------------

def _write_rows(rows):
    return lambda tmp: tmp.write_text(json.dumps(rows))


CACHE_FAULTS = {
    "changed": lambda p: p.write_text(json.dumps([1, 2, 4])),
    "truncated": lambda p: p.write_bytes(p.read_bytes()[:3]),
    "empty": lambda p: p.write_bytes(b""),
    "no-manifest": lambda p: p.with_name(p.name + ".manifest.json").unlink(),
    "garbage-manifest": lambda p: p.with_name(p.name + ".manifest.json").write_text("{"),
    "other-key": lambda p: save_checked(p, "vocabulary", "other", 3, _write_rows([1, 2, 3])),
    "other-kind": lambda p: save_checked(p, "grammar", "k", 3, _write_rows([1, 2, 3])),
    "old-format": lambda p: p.with_name(p.name + ".manifest.json").write_text(
        json.dumps({"format": 0, "kind": "vocabulary", "key": "k", "rows": 3, "files": {}})),
}


@pytest.mark.parametrize("fault", list(CACHE_FAULTS), ids=list(CACHE_FAULTS))
def test_bad_cache_entry_is_quarantined_not_served(tmp_path, fault, caplog):
    path = tmp_path / "vocab.json"
    save_checked(path, "vocabulary", "k", 3, _write_rows([1, 2, 3]))
    assert load_checked(path, "vocabulary", "k", lambda p: json.loads(p.read_text())) == [1, 2, 3]
    CACHE_FAULTS[fault](path)
    assert load_checked(path, "vocabulary", "k", lambda p: json.loads(p.read_text()),
                        quarantine_root=tmp_path / "q") is None
    assert not path.exists() and len(list((tmp_path / "q" / "vocabulary").iterdir())) >= 1
    assert any("rebuilding" in r.getMessage() for r in caplog.records)


def test_legacy_annotation_table_is_adopted_when_it_reads(tmp_path):
    path = tmp_path / "t.json"
    path.write_text("[1, 2]")
    assert load_checked(path, "annotations", "k", lambda p: json.loads(p.read_text()), adopt_legacy=True) == [1, 2]
    assert verify_file(path, "annotations", "k").rows == 2


def test_unreadable_legacy_annotation_table_is_quarantined(tmp_path):
    path = tmp_path / "t.parquet"
    path.write_bytes(b"PAR1 broken")
    from alict_core.data.corpus import _read_annotations

    assert load_checked(path, "annotations", "k", _read_annotations, adopt_legacy=True,
                        quarantine_root=tmp_path / "q") is None
    assert not path.exists()


def test_parse_cache_shard_tampering_is_detected(tmp_path):
    import nltk

    from alict_core.parsing.benepar_backend import ParseCache

    cache = ParseCache("fp", root=tmp_path)
    cache.put_many([(["a", "film"], nltk.Tree("S", [nltk.Tree("DT", ["a"]), nltk.Tree("NN", ["film"])]))])
    shard = next((tmp_path / "fp").glob("*.jsonl"))
    shard.write_text(shard.read_text().replace('"NN"', '"VB"'))
    fresh = ParseCache("fp", root=tmp_path)
    assert fresh.get(["a", "film"]) is None  # quarantined: parsed again, never served


def test_grammar_cache_is_rebuilt_when_tampered(tmp_path, monkeypatch):
    import alict_core.grammar.reference as reference

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(reference, "_CACHED", None)
    first = reference.load_reference_grammar()
    path = reference.grammar_path()
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "source": "tampered"}))
    monkeypatch.setattr(reference, "_CACHED", None)
    again = reference.load_reference_grammar()
    assert again.to_dict() == first.to_dict()
    assert list((tmp_path / "quarantine" / "grammar").iterdir())


# --- atomic folders ------------------------------------------------------------------------------------

def test_atomic_dir_keeps_old_content_when_the_writer_fails(tmp_path):
    target = tmp_path / "out"
    with atomic_dir(target) as tmp:
        (tmp / "a.txt").write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_dir(target, owned=("a.txt",)) as tmp:
            (tmp / "a.txt").write_text("new")
            raise RuntimeError("writer died")
    assert (target / "a.txt").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out"], "no temporary folder left"


@pytest.mark.parametrize("setup", ["file", "foreign"])
def test_atomic_dir_never_replaces_what_it_did_not_write(tmp_path, setup):
    target = tmp_path / "out"
    if setup == "file":
        target.write_text("precious")
    else:
        target.mkdir()
        (target / "precious.txt").write_text("precious")
    with pytest.raises(AlictError):
        with atomic_dir(target, owned=("a.txt",)) as tmp:
            (tmp / "a.txt").write_text("new")
    assert "precious" in (target.read_text() if setup == "file" else (target / "precious.txt").read_text())


def test_atomic_dir_merge_keeps_other_files(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "lc1.jsonl").write_text("one")
    with atomic_dir(target, owned=("*.jsonl",), merge=True) as tmp:
        (tmp / "lc2.jsonl").write_text("two")
    assert sorted(p.name for p in target.iterdir()) == ["lc1.jsonl", "lc2.jsonl"]


def test_interrupted_swap_is_recovered(tmp_path):
    from alict_core.common.manifest import own_name
    from alict_core.runner.store import list_runs

    runs = tmp_path / "runs"
    old = runs / own_name(".r1.old-")  # the name the swap gives the old copy
    old.mkdir(parents=True)
    (old / "meta.json").write_text("{}")
    (runs / ".r2.tmp-abc").mkdir()
    (runs / ".r2.tmp-abc" / "meta.json").write_text("{}")
    assert [p.name for p in list_runs(runs)] == ["r1"]


def test_corrupt_manifest_json_is_one_line(tmp_path):
    path = tmp_path / "x.json"
    save_checked(path, "vocabulary", "k", 1, _write_rows([1]))
    path.with_name("x.json.manifest.json").write_text('{"format": 1, "kind": "vocabulary"}')
    with pytest.raises(CorruptArtefactError, match="malformed manifest"):
        verify_file(path, "vocabulary", "k")


def test_a_foreign_manifest_json_does_not_make_a_folder_replaceable(tmp_path):
    target = tmp_path / "web-app"
    target.mkdir()
    (target / "manifest.json").write_text('{"name": "my web app", "icons": []}')
    (target / "index.html").write_text("precious")
    with pytest.raises(AlictError, match="already holds other files"):
        with atomic_dir(target) as tmp:
            (tmp / "a.txt").write_text("new")
    assert (target / "index.html").read_text() == "precious"


def test_stale_temporary_folders_are_cleaned(tmp_path):
    import os

    from alict_core.common.manifest import own_name

    stale = tmp_path / own_name(".out.tmp-")  # a killed writer's staging folder
    stale.mkdir()
    os.utime(stale, (0, 0))
    fresh = tmp_path / own_name(".other.tmp-")
    fresh.mkdir()
    with atomic_dir(tmp_path / "out") as tmp:
        (tmp / "a.txt").write_text("x")
    assert not stale.exists() and fresh.exists(), "only old temporary folders are removed"


@pytest.mark.parametrize("batch_size", [0, -1, 10**9, 2.5, True, "64"])
def test_run_suite_batch_size_is_range_checked(tmp_path, batch_size):
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel, small_cases

    with pytest.raises(AlictError, match="batch_size must be a whole number"):
        run_suite(small_cases(2), [KeywordModel()], batch_size=batch_size, cache_root=tmp_path)


@pytest.mark.parametrize("cap", [-1, 2.5, True, "many"])
def test_find_seeds_cap_is_checked(sentiment_corpus, cap):
    from alict_core.lcspec import get_spec
    from alict_core.seeds import find_seeds

    with pytest.raises(LimitError, match="max_seeds of sentiment-lc04"):
        find_seeds(get_spec("sentiment", "4"), sentiment_corpus, max_seeds=cap)


def _numeric_paths(node, prefix=()):
    if isinstance(node, dict):
        return [p for key, value in node.items() for p in _numeric_paths(value, (*prefix, key))]
    if isinstance(node, list):
        return [p for i, value in enumerate(node) for p in _numeric_paths(value, (*prefix, i))]
    return [prefix] if isinstance(node, (int, float)) and not isinstance(node, bool) else []


@pytest.mark.parametrize("name", ["sentiment-lc02", "sentiment-lc08"])
@pytest.mark.parametrize("extreme", [2**31 - 1, -(2**31 - 1), 2**31, 10**30, 1e308, float("inf")],
                         ids=["int-max", "int-min", "over", "1e30", "1e308", "inf"])
def test_extreme_numbers_in_a_spec_are_refused_or_searched(sentiment_corpus, name, extreme):
    """Every number of a spec set to an extreme: refused by the schema, or find_seeds ends in a result or one
    clear error (never OverflowError: whole numbers are bounded to machine integers)."""
    import yaml

    from alict_core.seeds import find_seeds

    doc = yaml.safe_load((SPECS_DIR / "sentiment" / f"{name}.yaml").read_text(encoding="utf-8"))
    doc.setdefault("sampling", {}).update({"seed": 0, "max_per_source": 3, "max_seeds": 1000})
    for path in _numeric_paths(doc):
        changed = yaml.safe_load(yaml.safe_dump(doc))
        target = changed
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = extreme
        try:
            spec = parse_spec_text(yaml.safe_dump(changed), "x.yaml")
        except SpecValidationError:
            continue
        assert isinstance(extreme, int) and abs(extreme) <= 2**31 - 1, (path, extreme)  # bounds and finite floats
        try:
            find_seeds(spec, sentiment_corpus, max_seeds=5)
        except AlictError:
            pass


SEED_ROWS = [  # (a change to a good seed row, what the message names); each was accepted (a silent coercion)
    ({"expected": {"kind": "label", "labels": [True]}}, "expected.labels must be a list of label names"),
    ({"expected": {"kind": "label", "labels": "positive"}}, "expected.labels must be a list of label names"),
    ({"expected": {"kind": "direction", "labels": ["positive"], "tolerance": True, "direction": "up"},
      "test_type": "DIR"}, "expected.tolerance must be a number from 0 to 1"),
    ({"expected": {"kind": "direction", "labels": ["positive"], "tolerance": -5, "direction": "up"},
      "test_type": "DIR"}, "expected.tolerance must be a number from 0 to 1"),
    ({"expected": {"kind": "invariance", "labels": [], "tolerance": float("nan")}, "test_type": "INV"},
     "expected.tolerance must be a number from 0 to 1"),
    ({"text": 12345}, "text must be a non-empty text"),
    ({"text": "  "}, "text must be a non-empty text"),
    # hostile pass 2: the seed id `true` was stored as "True", a number as its digits
    ({"id": True}, "id must be a non-empty text"),
    ({"id": 7}, "id must be a non-empty text"),
    ({"id": ""}, "id must be a non-empty text"),
    ({"lc_id": ["sentiment-lc04"]}, "lc_id must be a non-empty text"),
]


@pytest.mark.parametrize("change,needle", SEED_ROWS, ids=[f"seed-{i}" for i in range(len(SEED_ROWS))])
def test_seed_rows_are_strict(change, needle):
    """`run --seeds` rows: no bool, number or blank where a label, tolerance or text is meant."""
    from alict_core.common.errors import AlictError
    from alict_core.runner import build_cases

    seed = {"id": "s1", "lc_id": "sentiment-lc04", "task": "sentiment", "text": "a good film", "test_type": "MFT",
            "expected": {"kind": "label", "labels": ["positive"]}, **change}
    with pytest.raises(AlictError, match=needle):
        build_cases([seed])



@pytest.mark.parametrize("accepted", ["no", "false", 0, 1, None, [False]])
def test_expansion_rows_accepted_is_a_bool(accepted):
    """Hostile pass 2: an `--expansions` row with `"accepted": "no"` was run as an accepted expansion (a truthy
    string); 0 / 1 / null were read as booleans too."""
    from alict_core.common.errors import AlictError
    from alict_core.runner import build_cases

    seed = {"id": "s1", "lc_id": "sentiment-lc04", "task": "sentiment", "text": "a good film", "test_type": "MFT",
            "expected": {"kind": "label", "labels": ["positive"]}}
    row = {"seed_id": "s1", "text": "a very good film", "accepted": accepted}
    with pytest.raises(AlictError, match="accepted must be true or false"):
        build_cases([seed], [row])
    assert [c.kind for c in build_cases([seed], [{**row, "accepted": False}])] == ["seed"]

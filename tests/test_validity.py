"""Validity checks: each defect flagged on generated text, never on the corpus's own wording."""

from __future__ import annotations

from alict_core.cases.validity import format_summary, text_defects, validate
from alict_core.seeds.types import Seed, Segment


def reasons(text, bases=(), cased=True):
    return [r for r, _ in text_defects(text, bases, cased=cased)]


def test_each_generated_defect_is_flagged():
    assert reasons("This is not not Chabrol 's best .") == ["double_negation", "repeated_word"]
    assert reasons("This is not n't my favorite .") == ["double_negation"]
    assert reasons("I liked the the film .") == ["repeated_word"]
    assert reasons("I thought that it was good . ? yes") == ["two_final_marks"]
    assert reasons("It was good , . But now I hate it .") == ["stray_punctuation"]
    assert reasons("It opens Friday . the film is a delight .") == ["lower_case_after_period"]
    assert reasons("It opens Friday  now .") == ["stray_space"]


def test_english_and_corpus_wording_are_not_flagged():
    assert reasons("Do I think that that is terrible ? no .") == []  # "that that" is English; "? no" an answer
    assert reasons("Do I agree that we did n't ? no .") == []
    corpus = "The the Beatles tribute is wow ! ! fun ."
    assert reasons("I thought that " + corpus, [corpus]) == []  # the corpus's own defects are not ours
    assert reasons("people say they left . however i hate them .", cased=False) == []  # HateXplain is lower-cased


def seed(sid, text, lc="lc", segments=None, protected=()):
    segments = segments if segments is not None else [Segment("g", "s" + sid, 0, len(text))]
    return Seed(sid, lc, "sentiment", text, "MFT", {"kind": "label", "labels": ["neutral"], "tolerance": None},
                [s.source_id for s in segments], "r", "replace", {}, [list(p) for p in protected], segments)


def test_validate_counts_per_lc_and_reason_and_checks_rule_text():
    negated = "This is not n't good ."
    seeds = [
        seed("1", "It is fine ."), seed("2", "it is  good ."), seed("3", "It is fine ."),
        seed("4", negated, protected=[(0, len("This is not"))]),  # the rule's "not" is judged, the corpus part not
    ]
    expansions = [{"id": "x1", "seed_id": "1", "text": "It is fine fine .", "accepted": True},
                  {"id": "x2", "seed_id": "1", "text": "It is a fine .", "accepted": False}]
    report = validate(seeds, expansions, task="sentiment")
    assert report.counts() == {"lc": {"double_negation": 1, "duplicate": 1, "repeated_word": 1, "stray_space": 1}}
    assert report.flagged_ids == {"2", "3", "4", "x1"}
    assert report.summary()[0]["seeds"] == 4 and report.summary()[0]["expansions"] == 1
    assert "duplicate=1" in format_summary(report)


def test_run_excludes_flagged_cases_unless_kept_and_records_why(tmp_path, monkeypatch, capsys):
    import json

    from alict_core.cli import main
    from alict_core.runner import RunResult

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    lc = "sentiment-lc05"
    texts = ["This is not a film .", "This is not a film .", "This is not not a film .", "This is not a town ."]
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps({"id": f"s{i}", "lc_id": lc, "task": "sentiment", "text": t, "test_type": "MFT",
                                         "expected": {"kind": "label", "labels": ["neutral"]}}) + "\n"
                             for i, t in enumerate(texts)))
    base = ["run", "--task", "sentiment", "--models", "vader", "--lc", lc, "--seeds", str(seeds), "--quiet"]
    assert main(base + ["--out", str(tmp_path / "a")]) == 0
    assert "validity: 2 flagged cases excluded" in capsys.readouterr().out
    result = RunResult.load(tmp_path / "a")
    assert sorted(c.case_id for c in result.case_list) == ["s0", "s3"]
    assert result.extra["validity"]["excluded"] == {lc: {"double_negation": 1, "duplicate": 1, "repeated_word": 1}}
    assert main(base + ["--keep-flagged", "--out", str(tmp_path / "b")]) == 0
    assert len(RunResult.load(tmp_path / "b").case_list) == 4
    assert main(base + ["--keep-flagged", "--sample-per-lc", "3", "--sample-seed", "5",
                        "--out", str(tmp_path / "c")]) == 0
    assert len(RunResult.load(tmp_path / "c").case_list) == 3


def test_sample_per_lc_keeps_seed_groups_whole_and_is_seeded():
    """100 seeds × 5 expansions, 60 cases: every sampled expansion has its seed (sampling kinds apart kept ~4)."""
    from alict_core.cases.testcases import TestCase
    from alict_core.runner.sampling import sample_per_lc

    def case(case_id, lc, kind, seed_id):
        return TestCase(case_id, lc, kind, seed_id, f"text {case_id}",
                        {"kind": "label", "labels": ["neutral"], "tolerance": None}, "MFT")

    cases = [case(f"a-s{i}", "a", "seed", f"a-s{i}") for i in range(100)]
    cases += [case(f"a-s{i}-x{k}", "a", "expansion", f"a-s{i}") for i in range(100) for k in range(5)]
    cases += [case(f"b-s{i}", "b", "seed", f"b-s{i}") for i in range(3)]
    sample = sample_per_lc(cases, 60, seed=1)
    in_a = [c for c in sample if c.lc_id == "a"]
    seeds = {c.case_id for c in in_a if c.kind == "seed"}
    assert len(in_a) == 60 and len(seeds) == 10  # ten whole groups of six
    assert all(c.seed_id in seeds for c in in_a if c.kind == "expansion")
    assert all(sum(c.seed_id == s for c in in_a) == 6 for s in seeds)
    assert [c.lc_id for c in sample].count("b") == 3
    assert [c.case_id for c in sample_per_lc(cases, 60, seed=1)] == [c.case_id for c in sample]
    assert [c.case_id for c in sample_per_lc(cases, 60, seed=2)] != [c.case_id for c in sample]
    assert len(sample_per_lc(cases, 4, seed=0)) == 6 + 3  # one group of six is kept even above N


def test_report_says_how_many_cases_were_excluded_and_why():
    from alict_core.report.html import validity_section

    html = "\n".join(validity_section({"excluded": {"sentiment-lc07": {"double_negation": 3}}, "n_flagged": 3,
                                        "kept_flagged": False}))
    assert "3 generated cases were flagged" in html and "excluded from the run" in html
    assert "sentiment-lc07" in html and "double_negation" in html
    assert validity_section(None) == []


def test_a_flagged_expansion_without_an_id_is_really_excluded():
    from alict_core.cases.validity import apply_validity
    from alict_core.runner import build_cases

    seeds = [seed("1", "It is fine .")]
    expansions = [{"seed_id": "1", "text": "It is fine fine .", "accepted": True},  # no "id": repeated word
                  {"seed_id": "1", "text": "It is very fine .", "accepted": True}]
    cases = build_cases([s.to_dict() for s in seeds], expansions)
    kept, record = apply_validity(seeds, expansions, cases, task="sentiment")
    assert record["n_flagged"] == 1 and "1 flagged cases excluded" in record["note"]
    assert [c.text for c in kept] == ["It is fine .", "It is very fine ."]  # the note is true: it did not run

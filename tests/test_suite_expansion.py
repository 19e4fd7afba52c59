"""``expand --suite``: imported HateCheck / CheckList cases grown with the same validation as LC seeds."""

from __future__ import annotations

import csv

from alict_core.expansion.suite import NO_PREDICATES, expand_suite, suite_seeds
from alict_core.suites import import_suite
from tests.test_neutral_known import Masked, WordParser


def write_hatecheck(path):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["functionality", "case_id", "test_case", "label_gold"])
        writer.writerow(["derog_neg_emote_h", "1", "I hate the women in your country.", "hateful"])
        writer.writerow(["ident_neutral_nh", "2", "We are a group of women.", "non-hateful"])
    return path


def before_noun(seed_id, tree, top_k, max_masks):
    """An RB slot after the copula where there is one ("We are [MASK] a group"), else a JJ slot before the noun."""
    tokens = tree.leaves()
    if "are" in tokens:
        i = tokens.index("are") + 1
        return [Masked(seed_id, tokens[:i] + ["[MASK]"] + tokens[i:], [i], ["RB"])]
    i = next(k for k, t in enumerate(tokens) if t in {"country", "group"})
    return [Masked(seed_id, tokens[:i] + ["[MASK]"] + tokens[i:], [i], ["JJ"])]


class Suggester:
    fingerprint = "suite-test"

    def suggest(self, masked_texts, top_k=10):
        return [[[("very", 0.5), ("indeed", 0.3), ("own", 0.25), ("glorbish", 0.2)]] for _ in masked_texts]


def test_suite_cases_become_seeds_and_expansions_inherit_their_expectation(tmp_path):
    cases = import_suite(write_hatecheck(tmp_path / "hc.csv"), "hate_speech")
    groups = suite_seeds(cases, "hate_speech")
    assert sorted(groups) == ["hatecheck:derog_neg_emote_h", "hatecheck:ident_neutral_nh"]
    assert groups["hatecheck:derog_neg_emote_h"][0]["text"] == "I hate the women in your country ."  # PTB tokens
    results = expand_suite(cases, "hate_speech", WordParser(), Suggester(), masker=before_noun, out_dir=tmp_path)
    rows = results["hatecheck:ident_neutral_nh"].rows
    accepted = [r["text"] for r in rows if r["accepted"]]
    assert accepted == ["We are indeed a group of women ."]  # "very" is polar, "glorbish" unknown
    assert all(r["reasons"]["predicates"] == NO_PREDICATES for r in rows if r["verdicts"]["predicates"])
    from alict_core.runner import build_cases

    seeds = [s for g in groups.values() for s in g]
    built = build_cases(seeds, [r for res in results.values() for r in res.rows])
    grown = [c for c in built if c.kind == "expansion" and c.lc_id == "hatecheck:ident_neutral_nh"]
    assert len(grown) == 1 and grown[0].expected["labels"] == ["non-hateful"]


def test_cli_expand_suite_writes_one_file_per_group(tmp_path, monkeypatch, capsys):
    import alict_core.commands.expand as command
    import alict_core.expansion.search as pipeline
    import alict_core.parsing as parsing
    from alict_core.cli import main

    monkeypatch.setattr(parsing, "get_parser", lambda name=None: WordParser())
    monkeypatch.setattr(command, "load_suggester", lambda name: Suggester())
    monkeypatch.setattr(pipeline, "default_masker", lambda grammar=None: before_noun)
    suite = write_hatecheck(tmp_path / "hc.csv")
    out = tmp_path / "out"
    assert main(["expand", "--task", "hate_speech", "--suite", str(suite), "--out", str(out), "--no-cache"]) == 0
    printed = capsys.readouterr().out
    assert "rejected:" in printed and "polarity:unknown=1" in printed
    assert sorted(p.name for p in out.glob("*.jsonl")) == ["hatecheck_derog_neg_emote_h.jsonl",
                                                           "hatecheck_ident_neutral_nh.jsonl"]


def test_run_takes_the_suite_expansions_as_cases(tmp_path, monkeypatch):
    from alict_core.cli import main
    from alict_core.runner import RunResult

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    suite = write_hatecheck(tmp_path / "hc.csv")
    cases = import_suite(suite, "hate_speech")
    results = expand_suite(cases, "hate_speech", WordParser(), Suggester(), masker=before_noun, out_dir=tmp_path)
    out = tmp_path / "exp"
    for lc_id, result in results.items():
        result.to_jsonl(out / f"{lc_id.replace(':', '_')}.jsonl")
    assert main(["run", "--task", "hate_speech", "--models", "profanity-check", "--no-lcs", "--suite", str(suite),
                 "--expansions", str(out), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    run = RunResult.load(tmp_path / "run")
    grown = [c for c in run.case_list if c.kind == "expansion"]
    by_seed = {c.seed_id: c for c in grown}
    assert by_seed["hatecheck-2"].text == "We are indeed a group of women ."
    assert by_seed["hatecheck-2"].expected["labels"] == ["non-hateful"]
    assert by_seed["hatecheck-1"].expected["labels"] == ["hateful"] and len(grown) == 2

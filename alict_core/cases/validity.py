"""The ``validate`` step: automatic validity checks on generated test cases (seeds and expansions).

A case is *flagged* for each defect found; flagged cases are excluded from runs unless kept on purpose.

Checks on the text (judged on what generation added, never on the corpus's own wording or its PTB
spacing: a defect already present in the corpus sentences a case was built from is not flagged):

- ``double_negation``: two negations within two tokens ("is not not", "is not n't", "never not");
- ``repeated_word``: the same word twice in a row ("the the"; "that that" and "had had" are English);
- ``two_final_marks``: two sentence-final marks in a row ("good . ? yes");
- ``stray_punctuation``: two punctuation tokens in a row at a join (", ." or ". ,");
- ``lower_case_after_period``: a lower-case word right after a sentence-final period (cased corpora only:
  HateXplain is lower-cased throughout, so the hate-speech task does not get this check);
- ``stray_space``: a doubled, leading or trailing space;
- ``duplicate``: the same text (case and spacing aside) as an earlier case of the same LC.

Checks on seeds that a person makes (``alict_core.seeds.checks``, issue #27): ``negation_before_adverb``,
``negated_relative_clause``, ``negation_outside_scope``, ``negated_idiom``, ``stance_without_group``,
``template_before_fragment``.

Checks on expansions (against the LC spec):

- ``inserted_word_polar`` / ``inserted_word_unknown``: an inserted word that is polar, or that
  SentiWordNet does not know, where the LC allows neutral words only;
- ``expansion_fails_lc``: the expansion no longer satisfies its LC's search predicates on the corpus part;
- the insertion patterns of ``alict_core/cases/expansion_patterns.py`` (issue 27's E1–E8, E11):
  ``preposition_before_non_np``, ``and_pronoun_after_pronoun``, ``article_before_bare_noun``,
  ``article_before_non_noun``, ``conjunction_inside_phrase``, ``determiner_in_one_conjunct``, ``broken_idiom``,
  ``comma_and_between_adjectives``, ``article_before_name``, ``stray_that``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from alict_core.cases.expansion_patterns import PATTERN_REASONS, expansion_pattern_defects
from alict_core.seeds.checks import SEED_REASONS, fragment_defects, seed_defects
from alict_core.seeds.types import Seed, Segment, expansion_case_id
from alict_core.tasks import TASKS

REASONS = (
    "double_negation", "repeated_word", "two_final_marks", "stray_punctuation", "lower_case_after_period",
    "stray_space", "duplicate", "inserted_word_polar", "inserted_word_unknown", "expansion_fails_lc",
    *PATTERN_REASONS,
    *SEED_REASONS,
)
CASED_TASKS = frozenset(name for name, task in TASKS.items() if task.cased)
NEGATIONS = frozenset({"not", "n't", "never", "no", "cannot"})
FINAL_MARKS = frozenset({".", "!", "?"})
PUNCTUATION = FINAL_MARKS | {",", ";", ":"}
GRAMMATICAL_REPEATS = frozenset({"that", "had"})
_WORD = re.compile(r"^[A-Za-z]+$")


@dataclass(frozen=True)
class Flag:
    """One defect of one case."""

    case_id: str
    lc_id: str
    reason: str
    detail: str


@dataclass
class ValidityReport:
    """Every flag, and how many seeds and expansions of each LC were checked."""

    flags: list[Flag] = field(default_factory=list)
    checked: dict[str, Counter] = field(default_factory=dict)

    @property
    def flagged_ids(self) -> set[str]:
        return {f.case_id for f in self.flags}

    def counts(self) -> dict[str, dict[str, int]]:
        """LC -> reason -> number of flagged cases (a case with two defects counts under both)."""
        out: dict[str, dict[str, int]] = {}
        seen: set[tuple[str, str]] = set()
        for flag in self.flags:
            if (flag.case_id, flag.reason) in seen:
                continue
            seen.add((flag.case_id, flag.reason))
            lc = out.setdefault(flag.lc_id, {})
            lc[flag.reason] = lc.get(flag.reason, 0) + 1
        return {lc: dict(sorted(reasons.items())) for lc, reasons in sorted(out.items())}

    def summary(self) -> list[dict[str, Any]]:
        """One row per LC: checked seeds / expansions, flagged cases, and counts per reason."""
        counts = self.counts()
        flagged = Counter(lc for lc, _ in {(f.lc_id, f.case_id) for f in self.flags})
        rows = []
        for lc in sorted(set(self.checked) | set(counts)):
            checked = self.checked.get(lc, Counter())
            rows.append({"lc_id": lc, "seeds": checked["seed"], "expansions": checked["expansion"],
                         "flagged": flagged[lc], **counts.get(lc, {})})
        return rows

    def to_dict(self) -> dict[str, Any]:
        return {"excluded": self.counts(), "n_flagged": len(self.flagged_ids),
                "flags": [vars(f) for f in self.flags[:200]]}


# ------------------------------------------------------------------------------------ text checks


def _pairs(tokens: Sequence[str]) -> Counter:
    return Counter(zip(tokens, tokens[1:], strict=False))


def _negation_pairs(tokens: Sequence[str]) -> Counter:
    lower = [t.lower() for t in tokens]
    found: Counter = Counter()
    for i, token in enumerate(lower):
        if token in NEGATIONS:
            for j in range(i + 1, min(i + 3, len(lower))):
                if lower[j] in PUNCTUATION:
                    break  # "did n't ? no": an answer, not a double negation
                if lower[j] in NEGATIONS:
                    found[(token, lower[j])] += 1
    return found


def _new(case: Counter, base: Counter) -> list:
    """Items ``case`` has more often than ``base`` (what generation added)."""
    return [item for item, n in case.items() if n > base.get(item, 0)]


def text_defects(text: str, base_texts: Iterable[str] = (), *, cased: bool = True) -> list[tuple[str, str]]:
    """(reason, detail) for each defect of ``text`` not already in ``base_texts`` (the corpus sentences it
    was built from, or the seed an expansion came from)."""
    out: list[tuple[str, str]] = []
    if text != text.strip() or "  " in text:
        out.append(("stray_space", "doubled, leading or trailing space"))
    tokens = text.split()
    bases = [b.split() for b in base_texts]
    base_pairs: Counter = Counter()
    base_negations: Counter = Counter()
    for base in bases:
        base_pairs.update(_pairs(base))
        base_negations.update(_negation_pairs(base))
    for a, b in _new(_negation_pairs(tokens), base_negations):
        out.append(("double_negation", f"{a!r} then {b!r}"))
    for a, b in _new(_pairs(tokens), base_pairs):
        if a.lower() == b.lower() and _WORD.match(a) and a.lower() not in GRAMMATICAL_REPEATS:
            out.append(("repeated_word", f"{a} {b}"))
        elif a in FINAL_MARKS and b in FINAL_MARKS:
            out.append(("two_final_marks", f"{a} {b}"))
        elif a in PUNCTUATION and b in PUNCTUATION:
            out.append(("stray_punctuation", f"{a} {b}"))
        elif cased and a == "." and b[:1].islower():
            out.append(("lower_case_after_period", f". {b}"))
    return out


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


# ------------------------------------------------------------------------------------ cases


def _seed(row: Any) -> Seed:
    """A ``Seed`` from a seed or its dict (hand-written seed files may lack provenance fields)."""
    if isinstance(row, Seed):
        return row
    row = dict(row)
    return Seed(
        id=str(row["id"]), lc_id=str(row.get("lc_id", "")), task=str(row.get("task", "")), text=str(row["text"]),
        test_type=str(row.get("test_type", "MFT")), expected=dict(row.get("expected") or {}),
        source_ids=list(row.get("source_ids") or []), rule=str(row.get("rule", "")),
        rule_kind=str(row.get("rule_kind", "")), slots=dict(row.get("slots") or {}),
        protected_spans=[list(p) for p in row.get("protected_spans") or []],
        segments=[s if isinstance(s, Segment) else Segment(**s) for s in row.get("segments") or []],
    )


def _seed_bases(seed: Seed) -> list[str]:
    """The corpus parts of a seed: each segment's text, without the text a rule inserted into it."""
    bases = []
    for segment in seed.segments or []:
        text, cursor, kept = seed.text, segment.start, []
        for start, end in sorted((a, b) for a, b in seed.protected_spans if segment.start <= a < segment.end):
            kept.append(text[cursor:start])
            cursor = end
        kept.append(text[cursor : segment.end])
        bases.append(" ".join(" ".join(kept).split()))
    return bases  # a seed without provenance (hand-written file) is judged as a whole


def validate(seeds: Iterable[Any], expansions: Iterable[Mapping[str, Any]] = (), *, task: str,
             specs: Mapping[str, Any] | None = None, check_lc: bool = True,
             check_seed_clauses: bool = True) -> ValidityReport:
    """Run every check on the seeds (``Seed`` or their dicts) and the accepted expansions.

    Seed checks (``alict_core.seeds.checks``) run on every seed; ``check_seed_clauses`` adds the one that
    tags template-inserted segments with spaCy (``template_before_fragment``).

    ``specs`` (LC id -> ``LCSpec``) enables the expansion checks against each LC: inserted-word polarity
    under the LC's policy and its search predicates (``check_lc``; needs spaCy tagging of the expansions).
    """
    report = ValidityReport()
    cased = task in CASED_TASKS
    seen: dict[tuple[str, str], str] = {}
    seed_by_id: dict[str, Seed] = {}

    def add(case_id: str, lc_id: str, defects: Iterable[tuple[str, str]]) -> None:
        report.flags.extend(Flag(case_id, lc_id, reason, detail) for reason, detail in defects)

    def duplicate(case_id: str, lc_id: str, text: str) -> list[tuple[str, str]]:
        key = (lc_id, _normal(text))
        if key in seen:
            return [("duplicate", f"same text as {seen[key]}")]
        seen[key] = case_id
        return []

    for raw in seeds:
        seed = _seed(raw)
        seed_by_id[seed.id] = seed
        report.checked.setdefault(seed.lc_id, Counter())["seed"] += 1
        add(seed.id, seed.lc_id, text_defects(seed.text, _seed_bases(seed), cased=cased)
            + duplicate(seed.id, seed.lc_id, seed.text) + seed_defects(seed))
    if check_seed_clauses:
        for seed_id, defects in fragment_defects(list(seed_by_id.values())).items():
            add(seed_id, seed_by_id[seed_id].lc_id, defects)
    accepted = [dict(r) for r in expansions if r.get("accepted", True) and str(r.get("seed_id")) in seed_by_id]
    for row in accepted:
        seed = seed_by_id[str(row["seed_id"])]
        case_id = expansion_case_id(row, seed.id)
        report.checked.setdefault(seed.lc_id, Counter())["expansion"] += 1
        add(case_id, seed.lc_id, text_defects(str(row["text"]), [seed.text], cased=cased)
            + duplicate(case_id, seed.lc_id, str(row["text"])))
    if specs and accepted:
        _check_expansions_against_lcs(report, accepted, seed_by_id, specs, check_lc)
    return report


def _check_expansions_against_lcs(report: ValidityReport, rows: list[dict[str, Any]], seeds: dict[str, Seed],
                                  specs: Mapping[str, Any], check_lc: bool) -> None:
    """Inserted-word polarity (known and allowed) and the LC predicates, one spaCy pass over all texts."""
    from alict_core.data.annotate import annotate_token_lists
    from alict_core.data.polarity_lexicon import token_polarity
    from alict_core.seeds.recheck import expansion_predicates_hold

    rows = [r for r in rows if seeds[str(r["seed_id"])].lc_id in specs]
    annotations = annotate_token_lists([str(r["text"]).split() for r in rows]) if rows else []
    for row, annotation in zip(rows, annotations, strict=True):
        seed = seeds[str(row["seed_id"])]
        spec = specs[seed.lc_id]
        case_id = expansion_case_id(row, seed.id)
        allowed = set(spec.expansion.allowed_polarity)
        positions = list((row.get("masked") or {}).get("mask_positions") or [])
        words = list(row.get("words") or [])
        for position, word in zip(positions, words, strict=False):
            if position >= len(annotation.tokens):
                continue
            polarity = token_polarity(word, annotation.lemmas[position], annotation.upos[position])
            if polarity not in allowed:
                reason = "inserted_word_unknown" if polarity == "unknown" else "inserted_word_polar"
                report.flags.append(Flag(case_id, seed.lc_id, reason, f"{word!r} is {polarity}"))
        if len(annotation.tags) == len(str(row["text"]).split()):
            for reason, detail in expansion_pattern_defects(str(row["text"]).split(), annotation.tags, positions,
                                                            seed.text.split()):
                report.flags.append(Flag(case_id, seed.lc_id, reason, detail))
        if check_lc:
            ok, why = expansion_predicates_hold(spec, seed, str(row["text"]), annotation=annotation)
            if not ok:
                report.flags.append(Flag(case_id, seed.lc_id, "expansion_fails_lc", why))


def format_summary(report: ValidityReport) -> str:
    """A plain-text table: per LC, cases checked, flagged, and counts per reason."""
    rows = report.summary()
    if not rows:
        return "no cases checked"
    lines = [f"{'lc':<20} {'seeds':>6} {'exps':>6} {'flagged':>7}  reasons"]
    for row in rows:
        reasons = ", ".join(f"{r}={row[r]}" for r in REASONS if row.get(r)) or "-"
        lines.append(f"{row['lc_id']:<20} {row['seeds']:>6} {row['expansions']:>6} {row['flagged']:>7}  {reasons}")
    return "\n".join(lines)


def exclusion_note(report: ValidityReport, kept_flagged: bool) -> str:
    """One line for run output: how many flagged cases were excluded (or kept), per LC and reason."""
    counts = report.counts()
    if not counts:
        return "validity: no flagged cases"
    verb = "kept (--keep-flagged)" if kept_flagged else "excluded"
    parts = ["; ".join(f"{lc}: " + ", ".join(f"{r}={n}" for r, n in reasons.items()) for lc, reasons in counts.items())]
    return f"validity: {len(report.flagged_ids)} flagged cases {verb} — " + parts[0]


def apply_validity(seeds: Sequence[Any], expansions: Sequence[Mapping[str, Any]], cases: Sequence[Any], *,
                   task: str, specs: Mapping[str, Any] | None = None,
                   keep_flagged: bool = False) -> tuple[list[Any], dict[str, Any]]:
    """(cases without the flagged ones unless ``keep_flagged``, the run-metadata record of the checks).

    The record (stored as ``RunResult.extra["validity"]``): counts per LC and reason, how many cases were
    flagged, whether they were kept, and a one-line note for terminal output.
    """
    report = validate(seeds, expansions, task=task, specs=specs)
    record = {**report.to_dict(), "kept_flagged": keep_flagged, "note": exclusion_note(report, keep_flagged)}
    flagged = report.flagged_ids
    kept = list(cases) if keep_flagged else [c for c in cases if c.case_id not in flagged]
    return kept, record

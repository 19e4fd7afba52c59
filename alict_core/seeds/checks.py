"""Seed checks a person makes: generated seeds whose expected label or LC does not hold (issue #27, P1–P10).

Each check looks at what a rule added to a corpus sentence and names the defect. The shipped specs'
guards avoid all of them; the checks catch a spec edited in the workspace (or an older seed file) that
produces them again. ``validate`` runs them on every seed.

- ``negation_before_adverb``: the inserted "not" stands before a sentence adverb ("is not surely",
  "is not ultimately"): not English negation, the claim stays as it was;
- ``negated_relative_clause``: the negated target is a relative clause ("a portrait that is not undercut"):
  the sentence's own claim is not negated;
- ``negation_outside_scope``: a contrast or elaboration follows the negated clause ("This is not a train
  wreck -- a stupefying attempt ..."): the rest keeps the original polarity;
- ``negated_idiom``: "that is not to say", ", that is not ,": an idiom, not a claim;
- ``stance_without_group``: an appended stance on "them" ("and i hate them") after a post that names no
  group (no identity term, plural group noun or slur): "them" refers to nobody;
- ``template_before_fragment``: a template that needs a clause ("I think that ...", "given that ...") is
  followed by a fragment ("I think that a witty , gorgeous movie").
"""

from __future__ import annotations

from typing import Sequence

from alict_core.seeds.types import Seed
from alict_core.tasks import HATE_SPEECH

SEED_REASONS = (
    "negation_before_adverb", "negated_relative_clause", "negation_outside_scope", "negated_idiom",
    "stance_without_group", "template_before_fragment",
)
SENTENCE_ADVERBS = frozenset({
    "surely", "certainly", "definitely", "probably", "ultimately", "generally", "actually", "just", "also",
    "still", "even", "mostly", "undoubtedly", "clearly", "simply", "always", "indeed", "obviously", "apparently",
    "perhaps", "maybe", "usually", "often", "largely", "essentially", "basically", "only", "constantly",
    "easily", "arguably", "already", "never", "ever", "now", "finally",
})
CONTRASTS = frozenset({"but", "though", "although", "yet", "while", "whereas", "however", "--", ":", ";"})
RELATIVES = frozenset({"that", "which", "who"})
CLAUSE_OPENERS = ("that", "given that")
# Plural nouns (and plural slurs) that name a group though HateCheck's lists lack them; the same
# list as hate LC5/LC6's ``subject`` condition.
GROUP_NOUNS = frozenset({
    "women", "immigrants", "muslims", "moslems", "jews", "blacks", "whites", "gays", "refugees", "arabs",
    "mexicans", "lesbians", "homosexuals", "christians", "hindus", "africans", "asians", "migrants", "latinos",
    "hispanics", "indians", "negroes", "females", "islamists", "somalis", "pakistanis", "sikhs", "catholics",
    "transgenders", "niggers", "kikes", "queers", "muzzies", "trannies", "dykes", "faggots", "fags", "spics",
    "beaners", "ragheads", "sandniggers", "mudslimes",
})


def _protected_token_spans(seed: Seed) -> list[tuple[int, int]]:
    """Token index spans [a, b) of the text a rule inserted (single-space-joined text)."""
    spans = []
    for start, end in seed.protected_spans:
        a = seed.text[:start].count(" ")
        spans.append((a, a + len(seed.text[start:end].split())))
    return spans


def _replace_defects(seed: Seed, lower: Sequence[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for a, b in _protected_token_spans(seed):
        inserted = lower[a:b]
        if "not" not in inserted:
            continue
        after = lower[b] if b < len(lower) else ""
        if after in SENTENCE_ADVERBS:
            out.append(("negation_before_adverb", f"'not {after}'"))
        before = lower[a - 1] if a > 0 else ""
        if inserted and inserted[0] in RELATIVES and before and before not in {",", ":", ";", "--"}:
            out.append(("negated_relative_clause", f"'{before} {' '.join(inserted)}'"))
        if after == "to" or (before == "," and after == ","):
            out.append(("negated_idiom", f"'{' '.join(inserted)} {after}'"))
        contrast = next((t for t in lower[b:] if t in CONTRASTS), None)
        if contrast is not None:
            out.append(("negation_outside_scope", f"{contrast!r} after the negated clause"))
    return out


def _stance_defects(seed: Seed, lower: Sequence[str]) -> list[tuple[str, str]]:
    from alict_core.data.annotate import term_classes

    inserted = {i for a, b in _protected_token_spans(seed) for i in range(a, b)}
    if not any(lower[i] == "them" for i in inserted if i < len(lower)):
        return []
    corpus_part = [t for i, t in enumerate(lower) if i not in inserted]
    marked = zip(corpus_part, term_classes(corpus_part), strict=True)
    if any(t in GROUP_NOUNS or {"identity", "slur"} & marks for t, marks in marked):
        return []  # a group named by an identity term, a plural group noun or a slur
    return [("stance_without_group", "'them' in the added stance, no identity group in the post")]


def seed_defects(seed: Seed) -> list[tuple[str, str]]:
    """(reason, detail) for each defect of one seed that text alone shows (no tagger needed)."""
    lower = [t.lower() for t in seed.text.split()]
    out: list[tuple[str, str]] = []
    if seed.rule_kind == "replace":
        out += _replace_defects(seed, lower)
    if seed.rule_kind == "concat" and seed.task == HATE_SPEECH.name:
        out += _stance_defects(seed, lower)
    return out


def clause_segments(seed: Seed) -> list[str]:
    """The corpus segments of a concat seed that a template opens with "that" (they must be clauses)."""
    if seed.rule_kind != "concat":
        return []
    out = []
    for segment in seed.segments or []:
        before = seed.text[: segment.start].rstrip().lower()
        if before.endswith(CLAUSE_OPENERS):
            out.append(seed.text[segment.start : segment.end])
    return out


def fragment_defects(seeds: Sequence[Seed]) -> dict[str, list[tuple[str, str]]]:
    """Seed id -> ``template_before_fragment`` defects, one spaCy pass over the segments that need a clause."""
    from alict_core.data.annotate import annotate_token_lists
    from alict_core.lcspec.predicates import is_clause

    pending = [(seed.id, text) for seed in seeds for text in clause_segments(seed)]
    if not pending:
        return {}
    annotations = annotate_token_lists([text.split() for _, text in pending])
    out: dict[str, list[tuple[str, str]]] = {}
    for (seed_id, _text), annotation in zip(pending, annotations, strict=True):
        lower = [t.lower() for t in annotation.tokens]
        if not is_clause(annotation.tags, lower):
            out.setdefault(seed_id, []).append(("template_before_fragment", f"'that {' '.join(lower[:6])} …'"))
    return out

"""NLPLego disassembly: a sentence → derivation template p0 with slots + ordered adjuncts (paper §3.2, §4.1).

Adjunct candidates come from the spaCy dependency parse (adjectives ``amod``, adverbs ``advmod``,
prepositional phrases ``prep``, participial verb phrases ``acl``, clauses ``relcl``/``advcl``) and,
when a constituency parser is given, from its ``SBAR`` subordinate clauses. Each candidate is the
contiguous subtree of its head word plus the commas that set it off.

**Compression rule (replaces SLAHAN, which is not available offline).** A candidate is removed when
(1) its relation is an adjunct relation and it is not an argument by the lexical rules below, (2) no
larger candidate contains it (nested adjuncts travel with their host), and (3) the template without it
(and without every adjunct removed before it, left to right) still passes :func:`grammatical`: one
root of the same kind as the seed's (verbal or not), a subject when the seed's root had one, a
complement when the seed's copula had one, and no dangling function word at the end. Argument rules:
negations and degree words (``not``, ``never``, ``more``, ``most``, ``so``, ``too`` ...) and wh-words
are never adjuncts; ``of`` phrases are noun arguments; a prepositional phrase right after its verb
whose preposition typically marks an object (``on``, ``at``, ``about``, ``to``, ``into``, ``with``,
``for``, ``from``, ``of``, ``upon``) is the verb's argument; a phrase completing a copula is the
predicate; infinitival ``acl`` clauses complete their noun.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from alict_core.common.errors import AlictError
from alict_core.data.nlp import get_dependency_nlp

ADJUNCT_KINDS = {
    "amod": "adjective",
    "advmod": "adverb",
    "npadvmod": "adverb",
    "prep": "prepositional phrase",
    "acl": "verb phrase",
    "relcl": "subordinate clause",
    "advcl": "subordinate clause",
}
NOT_ADJUNCT_WORDS = frozenset(
    """not n't never no more most less least so too as how when where why whenever wherever however very rather
    quite enough only even just also there here then than else ever much all any each such same other own instead
    together apart away back down up out off home forward around along aside ahead""".split()
)
ARGUMENT_PREPS = frozenset({"on", "at", "about", "to", "into", "onto", "with", "for", "from", "of", "upon"})
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "expl", "csubj", "csubjpass"})
COMPLEMENT_DEPS = frozenset({"acomp", "attr", "oprd", "ccomp", "xcomp", "dobj"})
DANGLING_END = frozenset({"ADP", "DET", "CCONJ", "SCONJ", "PART"})





@dataclass(frozen=True)
class Adjunct:
    """One removable component: token indices ``start..end`` (end exclusive) of the seed, plus its commas."""

    index: int  # 1-based slot number, left to right
    start: int
    end: int
    kind: str  # adjective | adverb | prepositional phrase | verb phrase | subordinate clause
    relation: str  # the dependency label of its head word (or "SBAR")
    head: int  # token index of the adjunct's own head word
    commas: tuple[int, ...] = ()

    def tokens(self) -> tuple[int, ...]:
        return tuple(sorted({*range(self.start, self.end), *self.commas}))


@dataclass(frozen=True)
class Token:
    """A seed token as the renderer needs it."""

    text: str
    space: str
    pos: str
    tag: str
    lemma: str
    is_stop: bool


@dataclass
class Disassembly:
    """``D(s) -> {p0, B}``: the seed's tokens, its adjuncts left to right, and the template tokens."""

    text: str
    tokens: list[Token]
    adjuncts: list[Adjunct]
    grammatical_seed: bool = True
    notes: list[str] = field(default_factory=list)

    @property
    def template_tokens(self) -> set[int]:
        removed = {i for a in self.adjuncts for i in a.tokens()}
        return {i for i in range(len(self.tokens)) if i not in removed}

    def render(self, inserted: Iterable[int] = (), replacements: dict[int, str] | None = None) -> str:
        """The sentence with the template plus the adjuncts numbered ``inserted`` (1-based), words replaced."""
        keep = set(self.template_tokens)
        chosen = set(inserted)
        for adjunct in self.adjuncts:
            if adjunct.index in chosen:
                keep.update(adjunct.tokens())
        return render_tokens(self.tokens, sorted(keep), replacements or {})

    @property
    def template(self) -> str:
        """s0: the basic sentence structure."""
        return self.render()

    def template_with_slots(self) -> str:
        """p0: s0 with ``[i]`` where adjunct i goes."""
        keep = sorted(self.template_tokens)
        marks = {a.start: a.index for a in self.adjuncts}
        parts: list[str] = []
        for i, token in enumerate(self.tokens):
            if i in marks:
                parts.append(f"[{marks[i]}]")
            if i in keep:
                parts.append(token.text)
        return _tidy(" ".join(parts))

    def adjunct_text(self, adjunct: Adjunct, replacements: dict[int, str] | None = None) -> str:
        return render_tokens(self.tokens, list(range(adjunct.start, adjunct.end)), replacements or {}, capitalise=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "template": self.template,
            "template_slots": self.template_with_slots(),
            "adjuncts": [
                {
                    "index": a.index,
                    "text": self.adjunct_text(a),
                    "kind": a.kind,
                    "relation": a.relation,
                    "start": a.start,
                    "end": a.end,
                    "commas": list(a.commas),
                }
                for a in self.adjuncts
            ],
        }


_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?])")
_DOUBLE_COMMA = re.compile(r",\s*(?=[,.;:!?])")


def _tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = _DOUBLE_COMMA.sub("", text)
    return re.sub(r"^[,;:]\s*", "", text)


_AN_EXCEPTIONS = ("hour", "honest", "honor", "honour", "heir")
_A_EXCEPTIONS = ("uni", "use", "usu", "uti", "eu", "one", "once", "ur")


def article_for(word: str) -> str:
    """ "a" or "an" before ``word`` (spelling rule with the common exceptions: an hour, a unique, a one)."""
    low = word.lower()
    if low.startswith(_AN_EXCEPTIONS):
        return "an"
    if low.startswith(_A_EXCEPTIONS) or not low[:1].isalpha():
        return "a"
    return "an" if low[:1] in "aeiou" else "a"


def render_tokens(
    tokens: Sequence[Token], keep: Sequence[int], replacements: dict[int, str], *, capitalise: bool = True
) -> str:
    """Join the kept tokens with their own spacing, fix "a"/"an" before a new neighbour, the first letter's case,
    and drop commas left stranded."""
    words = [replacements.get(i, tokens[i].text) for i in keep]
    for n, i in enumerate(keep[:-1]):
        if words[n].lower() in ("a", "an") and (keep[n + 1] != i + 1 or keep[n + 1] in replacements):
            fixed = article_for(words[n + 1])
            words[n] = fixed.capitalize() if words[n][0].isupper() else fixed
    parts: list[str] = []
    first = True
    keep_set = set(keep)
    for n, i in enumerate(keep):
        word = words[n]
        if first and capitalise:
            if word[:1].islower():
                word = word[:1].upper() + word[1:]
            first = word in {",", ";", ":"}
        parts.append(word + (tokens[i].space if i + 1 in keep_set else " "))
    return _tidy("".join(parts))


def grammatical(doc: Any, reference: Any | None = None) -> bool:
    """Does ``doc`` parse as a sentence of the same shape as ``reference`` (default: as a clause)?

    One root; verbal root if the reference's was; a subject if the reference's root had one; a
    complement if the reference's copula had one; not ending on a preposition / determiner / conjunction.
    """
    words = [t for t in doc if not t.is_punct]
    if not words or words[-1].pos_ in DANGLING_END and words[-1].dep_ != "prt":
        return False
    roots = [t for t in doc if t.dep_ == "ROOT"]
    if len(roots) != 1:
        return False
    root = roots[0]
    ref_root = next((t for t in reference if t.dep_ == "ROOT"), None) if reference is not None else None
    verbal = root.pos_ in ("VERB", "AUX")
    if ref_root is None:
        return verbal and any(c.dep_ in SUBJECT_DEPS for c in root.children)
    if verbal != (ref_root.pos_ in ("VERB", "AUX")):
        return False
    if any(c.dep_ in SUBJECT_DEPS for c in ref_root.children) and not any(
        c.dep_ in SUBJECT_DEPS for c in root.children
    ):
        return False
    if ref_root.lemma_ == "be" and any(c.dep_ in COMPLEMENT_DEPS for c in ref_root.children):
        return any(c.dep_ in COMPLEMENT_DEPS | {"prep"} for c in root.children)
    return True


def is_sentence(doc: Any) -> bool:
    """A full clause: one verbal root with a subject (or an imperative verb), ending well."""
    return grammatical(doc) or _imperative(doc)


def _imperative(doc: Any) -> bool:
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    return bool(root is not None and root.tag_ == "VB" and root.i == next(t.i for t in doc if not t.is_punct))


def _is_candidate(token: Any) -> bool:
    kind = ADJUNCT_KINDS.get(token.dep_)
    if kind is None or token.lower_ in NOT_ADJUNCT_WORDS or token.tag_.startswith("W"):
        return False
    if token.dep_ in ("advmod", "npadvmod") and token.pos_ not in ("ADV", "NOUN"):
        return False
    if token.dep_ == "amod" and token.pos_ not in ("ADJ", "VERB"):
        return False
    if token.dep_ == "acl" and (
        token.tag_ == "VB" or any(c.dep_ == "aux" and c.lower_ == "to" for c in token.children)
    ):
        return False  # infinitival clause completing its noun ("the ability to act")
    head = token.head
    if head.lemma_ == "be" and token.i > head.i and not any(c.dep_ in COMPLEMENT_DEPS for c in head.children):
        return False  # "The show is over", "The reason is because ...": the predicate of a copula
    if token.dep_ == "prep":
        return _prep_is_adjunct(token)
    return True


def _prep_is_adjunct(token: Any) -> bool:
    head = token.head
    if token.lower_ == "of" or not any(c.dep_ == "pobj" or c.dep_ == "pcomp" for c in token.children):
        return False
    if head.pos_ in ("ADJ", "ADV") and token.i > head.i and token.lower_ in ARGUMENT_PREPS:
        return False  # "due to", "full of", "similar to": the adjective's complement
    if head.pos_ in ("VERB", "AUX") and token.i > head.i:
        between = [t for t in head.doc[head.i + 1 : token.i] if not t.is_punct]
        objects = [c for c in head.children if c.dep_ in COMPLEMENT_DEPS | {"dative", "prt"}]
        if all(t.dep_ in ("prt", "neg", "advmod") for t in between) and (token.lower_ in ARGUMENT_PREPS or not objects):
            return False  # "relies on", "looks at", "gets over": the verb's prepositional object
    return True


def _span(token: Any) -> tuple[int, int]:
    return token.left_edge.i, token.right_edge.i + 1


def _commas(doc: Any, start: int, end: int, taken: set[int], word_level: bool) -> tuple[int, ...]:
    """The commas that set off ``doc[start:end]``.

    The following comma at the sentence start; both around a parenthetical phrase; the preceding one
    before the end or, for a single word in a list ("gorgeous, witty, seductive"), always.
    """
    before = start - 1
    after = end
    has_before = before >= 0 and doc[before].text == "," and before not in taken
    has_after = after < len(doc) and doc[after].text == "," and after not in taken
    at_start = before < 0 or (doc[before].text == "," and before in taken)
    at_end = after >= len(doc) or doc[after].is_punct and doc[after].text != ","
    if has_after and at_start:
        return (after,)  # "On May 3, downtown ..."
    if word_level:
        return (before,) if has_before else ()
    if has_after and has_before:
        return (before, after)  # "The film, which is long, is good."
    if has_before and at_end:  # "..., which is long."
        return (before,)
    return ()


def sbar_spans(tree: Any) -> list[tuple[int, int]]:
    """Token spans (start, end) of the SBAR constituents (subordinate clauses) of an ``nltk.Tree``."""
    spans: list[tuple[int, int]] = []

    def walk(node: Any, start: int) -> int:
        if isinstance(node, str):
            return start + 1
        position = start
        for child in node:
            position = walk(child, position)
        if node.label() == "SBAR":
            spans.append((start, position))
        return position

    walk(tree, 0)
    return spans


def _candidates(doc: Any, clauses: Sequence[tuple[int, int]]) -> list[tuple[int, int, str, str, int]]:
    found = []
    for token in doc:
        if _is_candidate(token):
            start, end = _span(token)
            if token.dep_ == "relcl" and start < token.i and doc[start].i == token.head.i:
                start = token.i  # never take the noun with its clause
            if not (start <= token.head.i < end):
                found.append((start, end, ADJUNCT_KINDS[token.dep_], token.dep_, token.i))
    for start, end in clauses:
        heads = [t for t in doc[start:end] if not (start <= t.head.i < end)]
        if len(heads) == 1 and heads[0].dep_ not in ("ROOT", "ccomp", "xcomp", "csubj", "pcomp", "conj", "pobj"):
            found.append((start, end, "subordinate clause", "SBAR", heads[0].i))
    found.sort(key=lambda c: (c[0], -(c[1] - c[0])))
    outer: list[tuple[int, int, str, str, int]] = []
    for cand in found:  # keep maximal spans; drop nested and crossing ones
        if any(o[0] <= cand[0] and cand[1] <= o[1] or o[0] < cand[0] < o[1] for o in outer):
            continue
        outer.append(cand)
    return outer


def disassemble(
    text: str, *, parser: Any | None = None, nlp: Any | None = None, max_adjuncts: int | None = None
) -> Disassembly:
    """``D(s)``: the template and the removable adjuncts of ``text`` (left to right, at most ``max_adjuncts``)."""
    return disassemble_many([text], parser=parser, nlp=nlp, max_adjuncts=max_adjuncts)[0]


def disassemble_many(
    texts: Sequence[str], *, parser: Any | None = None, nlp: Any | None = None, max_adjuncts: int | None = None
) -> list[Disassembly]:
    """Disassemble several sentences; spaCy and the constituency ``parser`` (optional) each run once, batched."""
    for n, text in enumerate(texts):
        if not isinstance(text, str) or not text.strip():
            raise AlictError(f"disassemble: sentence #{n} is empty")
    nlp = nlp or get_dependency_nlp()
    docs = list(nlp.pipe([t.strip() for t in texts]))
    clauses: list[list[tuple[int, int]]] = [[] for _ in docs]
    if parser is not None:
        clauses = [sbar_spans(tree) for tree in parser.parse_batch([[t.text for t in doc] for doc in docs])]
    return [_disassemble_doc(doc, spans, nlp, max_adjuncts) for doc, spans in zip(docs, clauses, strict=True)]


def _disassemble_doc(doc: Any, clauses: Sequence[tuple[int, int]], nlp: Any, max_adjuncts: int | None) -> Disassembly:
    tokens = [Token(t.text, t.whitespace_, t.pos_, t.tag_, t.lemma_, t.is_stop) for t in doc]
    result = Disassembly(doc.text, tokens, [], grammatical_seed=is_sentence(doc))
    chosen: list[Adjunct] = []
    taken: set[int] = set()
    for start, end, kind, relation, head in _candidates(doc, clauses):
        if max_adjuncts is not None and len(chosen) >= max_adjuncts:
            break
        commas = _commas(doc, start, end, taken, word_level=relation in ("amod", "advmod", "npadvmod"))
        trial = Adjunct(len(chosen) + 1, start, end, kind, relation, head, commas)
        probe = Disassembly(result.text, tokens, [*chosen, trial])
        if grammatical(nlp(probe.template), doc):
            chosen.append(trial)
            taken.update(commas)
        else:
            result.notes.append(
                f"kept {relation} {doc[start:end].text!r}: the template would not parse as the seed did"
            )
    result.adjuncts = chosen
    return result

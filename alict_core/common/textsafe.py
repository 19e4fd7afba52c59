"""Names from files the user (or an attacker) hands in, made safe for a terminal and for XML.

A suite's ``lc_id`` or ``capability`` printed raw by the CLI could carry terminal escapes (``\\x1b[2K\\r`` erases a
FAIL line) or bidi overrides (text shown in another order than it is). Suite importers refuse such names
(:func:`control_char`); every suite-derived name the CLI prints goes through :func:`printable` as well (runs saved
before that check, other sources).
"""

from __future__ import annotations

import functools
import json
import unicodedata
from typing import Any

# Bidi embeddings/overrides/isolates and marks: shown text would not be the stored text.
BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def is_control(char: str) -> bool:
    """C0 and C1 control characters, DEL, and bidi controls."""
    code = ord(char)
    return code < 0x20 or 0x7F <= code <= 0x9F or char in BIDI


def control_char(value: str) -> str | None:
    """The first control or bidi character of ``value`` (as ``U+XXXX``), or None."""
    for char in value:
        if is_control(char):
            return f"U+{ord(char):04X}"
    return None


def printable(value: object) -> str:
    """``value`` as text with every control or bidi character written as an escape (``\\x1b``, ``\\u202e``)."""
    text = str(value)
    if not any(is_control(char) for char in text):
        return text
    return "".join(char.encode("unicode_escape").decode("ascii") if is_control(char) else char for char in text)


def _xml_legal(code: int) -> bool:
    return (code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD
            or 0x10000 <= code <= 0x10FFFF)


def xml_text(value: str) -> str:
    """``value`` with every character XML 1.0 does not allow (C0 controls, lone surrogates, U+FFFE/U+FFFF) written
    as a visible escape (``\\x01``), so the document stays well-formed and the reader still sees what was there."""
    if all(_xml_legal(ord(char)) for char in value):
        return value
    return "".join(char if _xml_legal(ord(char)) else f"\\x{ord(char):02x}" if ord(char) < 0x100
                   else f"\\u{ord(char):04x}" for char in value)


def printable_frame(frame: Any) -> Any:
    """A copy of a pandas frame whose text cells went through :func:`printable` (for ``to_string`` on a terminal)."""
    from pandas.api.types import is_object_dtype, is_string_dtype

    frame = frame.copy()
    for column in frame.columns:  # pandas 3 reads text columns as dtype "str", not object: both are escaped
        if is_object_dtype(frame[column].dtype) or is_string_dtype(frame[column].dtype):
            frame[column] = frame[column].map(lambda value: printable(value) if isinstance(value, str) else value)
    return frame


LOOKALIKE_SCRIPTS = frozenset({"LATIN", "CYRILLIC", "GREEK"})  # scripts with letters that look alike


def lookalike_key(name: str) -> str:
    """The key under which two names look alike: every dash read as '-', every space as ' ', then Unicode-normalised
    (NFKC) and case-folded ('ANN', full-width 'ａｎｎ', 'ann‐b' with U+2010)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", _plain_dashes(name)).casefold())


def _plain_dashes(name: str) -> str:
    """Every dash as '-' and every space as ' '."""
    return "".join("-" if unicodedata.category(char) == "Pd" else " " if unicodedata.category(char) == "Zs"
                   else char for char in name)


def mixed_scripts(name: str) -> list[str]:
    """The look-alike scripts (Latin, Cyrillic, Greek) whose letters ``name`` mixes, when more than one ('vаder' with a
    Cyrillic 'а')."""
    found = {unicodedata.name(char, "").split(" ")[0] for char in name if char.isalpha()} & LOOKALIKE_SCRIPTS
    return sorted(found) if len(found) > 1 else []


# Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt) and the blank-looking letters and symbols
# (Hangul fillers, the braille blank): each draws as nothing, so 'vader' + one of them looks like 'vader'.
INVISIBLE_RANGES = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
                    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x2800, 0x2800),
                    (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8),
                    (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))


def invisible_char(name: str) -> str | None:
    """The first character of ``name`` that draws as nothing (``U+XXXX``), or None."""
    for char in name:
        code = ord(char)
        if any(low <= code <= high for low, high in INVISIBLE_RANGES):
            return f"U+{code:04X}"
    return None


@functools.lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    """Each character Unicode's confusables data (TR39, as shipped by ``confusable_homoglyphs``) maps to its
    prototype ('ɑ' → 'a', 'ı' → 'i', '−' → '-', '1' → 'l', and to several characters where TR39 says so: 'm' → 'rn',
    'ﬁ' → 'fi'; 'rnary' passed beside 'mary' while only one-character prototypes were read)."""
    from importlib.resources import files

    data = json.loads((files("confusable_homoglyphs") / "confusables.json").read_text(encoding="utf-8"))
    return {char: entries[0]["c"] for char, entries in data.items()
            if len(entries) == 1 and entries[0]["c"] != char}


LONG_DASH = "\u30fc"  # TR39's prototype of the em dash and box lines ('─'), which a name reads as '-'


def skeleton(name: str) -> str:
    """``name`` read by its shapes: dashes and spaces as in ``lookalike_key``, every character replaced by its TR39
    prototype, then case-folded ('maiI' with a capital I and 'mail', 'hates0nar' with a zero and 'hatesonar' read
    alike; folding first turned 'I' into 'i' and left '0' apart). Accents stay (decomposed, they are kept as marks):
    'josé' is not 'jose'."""
    prototypes = _prototypes()
    decomposed = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", _plain_dashes(name)))
    mapped = unicodedata.normalize("NFD", "".join(prototypes.get(char, char) for char in decomposed))
    folded = "".join(prototypes.get(char, char) for char in mapped.casefold())
    return unicodedata.normalize("NFD", folded.replace(LONG_DASH, "-"))  # a box line or em dash reads as a dash


def looks_alike(first: str, second: str) -> bool:
    """Whether two names read alike: case, width, dashes ('ANN', 'ａｎｎ', 'ann‐b'), or letters that look alike
    ('vɑder' with a Latin alpha, 'mınılm' with dotless i's, 'рор' in Cyrillic, 'minilm−sst' with a minus sign,
    'miniIm-sst' with a capital I, 'textbl0b' with a zero)."""
    return lookalike_key(first) == lookalike_key(second) or skeleton(first) == skeleton(second)

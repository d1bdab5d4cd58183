"""Evidence for one (training segment, eval item) candidate, every part in the finding's evidence
(a bare cosine fails on template-like sets, whose unrelated items sit close together):

``cosine``    the best segment cosine (code on both sides: the mean of the whole-text and doc cosines)
``lexical``   TF-IDF cosine of the identifier-split words (:mod:`.tfidf`)
``margin``    similarity (cosine + w_lexical·lexical) over the unit's next-best eval item's
``mutual``    1 when the training segment is closer to the eval segment than its nearest other item's
``overlap``   rapidfuzz ``token_set_ratio`` of the two normalized segments, in [0, 1]
``entities``  share of the eval segment's numbers and names found in the training segment (1: none)
``conflict``  1 when both carry two or more entities and share none (one template, other values; not
              for code, whose rephrasings rename identifiers)
``align_*``   token alignment recall / precision / f1 (:mod:`.align`)
``values``    share of the eval segment's numbers found in the training segment (1: none)

How they are decided: :mod:`.decision`.

>>> lexical("Book a trip to Rome for 2 people", "Book a trip to Madrid for 4 people")[2]
1
>>> values_agree("radius 10, height 5", "height of 5 and a radius of 10")
1.0
>>> values_agree("trips for 6 people", "a trip for six travellers")
1.0
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from ...text.normalize import normalize

_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:[.,]\d+)?")
_QUOTED = re.compile(r"[\"“']([^\"”']{2,60})[\"”']")
_NAMED = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)*|[A-Za-z]+\d\w*)")


@dataclass
class Parts:
    cosine: float
    lexical: float
    margin: float
    mutual: int
    overlap: float
    entities: float
    conflict: int
    align_recall: float = 0.0
    align_precision: float = 0.0
    align_f1: float = 0.0
    values: float = 1.0

    def as_dict(self) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}


_DEFINED = re.compile(
    r"\b(?:def|function|func|fn|class)\s+([A-Za-z_]\w*)|\b([A-Za-z_]\w*)\s*=\s*(?:function\b|\([^()]*\)\s*=>)"
)


def defined_names(code: str) -> set[str]:
    """The functions and classes ``code`` defines, by name (Python, JavaScript, Go, Rust).

    >>> sorted(defined_names("def string_xor(a: str, b: str) -> str:\\n    ...\\nconst add = (x, y) => x + y"))
    ['add', 'string_xor']
    """
    return {a or b for a, b in _DEFINED.findall(code)}


def same_signature(eval_code: str, train_code: str) -> bool:
    """True when the training code defines a function (or class) of the eval code's, by name.

    >>> same_signature("def string_xor(a, b):", "def string_xor(x, y): return x"), same_signature("def string_xor(a, b):", "def xor(A, B):")
    (True, False)
    """
    wanted = defined_names(eval_code)
    return bool(wanted) and bool(wanted & defined_names(train_code))


def numbers(text: str) -> set[str]:
    return {m.replace(",", ".").lstrip("+") for m in _NUMBER.findall(text)}


def named(text: str) -> set[str]:
    out = {normalize(q) for q in _QUOTED.findall(text)}
    out |= {normalize(m) for m in _NAMED.findall(text)}
    return {x for x in out if x}


def lexical(eval_text: str, train_text: str) -> tuple[float, float, int]:
    """``(overlap, entities, conflict)`` for an eval segment against a training segment."""
    from rapidfuzz import fuzz  # here: a run that names no embedding method imports this module, not rapidfuzz

    overlap = fuzz.token_set_ratio(normalize(eval_text), normalize(train_text)) / 100.0
    wanted = numbers(eval_text) | named(eval_text)
    have = numbers(train_text) | named(train_text)
    if not wanted:
        return overlap, 1.0, 0
    norm_train = " " + normalize(train_text) + " "
    found = sum(1 for x in wanted if x in have or f" {normalize(x)} " in norm_train)
    conflict = int(found == 0 and len(wanted) >= 2 and len(have) >= 2)
    return overlap, found / len(wanted), conflict


_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
}
_WORD = re.compile(r"[a-z]+")


def _values(text: str) -> set[str]:
    """Numbers of ``text``, spelled-out ones ("six" → "6", up to twenty) included."""
    return numbers(text) | {_NUMBER_WORDS[w] for w in _WORD.findall(text.lower()) if w in _NUMBER_WORDS}


def values_agree(eval_text: str, train_text: str) -> float:
    """Share of the eval text's numbers found in the training text (1.0 when it has none)."""
    want = numbers(eval_text)
    if not want:
        return 1.0
    have = _values(train_text)
    return sum(1 for x in want if x in have) / len(want)

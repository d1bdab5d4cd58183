"""Evidence for one (training segment, eval item) candidate and the calibrated decision.

A bare cosine threshold fails on template-like sets (ToolBench's "I'm planning a trip…", MMLU's
"Find the degree of the field extension Q(√2) over Q"): unrelated items of one template sit close
together. Each candidate therefore gets these parts, all reported in the finding's evidence:

``cosine``    segment cosine: the best cosine between a segment of the training unit and one of the
              eval item; for code on both sides the mean of the whole-text and the doc-segment
              cosines (two views of one program agree; a chance match of one does not)
``lexical``   TF-IDF cosine of the identifier-split words (:mod:`auditor.methods.embedding.tfidf`)
``margin``    similarity (cosine + w_lexical·lexical) minus that of the training unit's next-best eval
              item; a finding needs a positive margin (``require_best``): one training unit, one item
``mutual``    1 when the training segment is closer to the matched eval segment than that segment's
              nearest segment of another eval item is (the record would be its nearest neighbour)
``overlap``   rapidfuzz ``token_set_ratio`` of the two matched segments' normalized texts, in [0, 1]
``entities``  share of the eval segment's numbers and named tokens (capitalised words, quoted
              strings, identifiers with digits) found in the training segment; 1 when it has none
``conflict``  1 when both segments carry at least two entities (numbers, names) and share none:
              the same template filled with other values ("a trip to Rome" / "a trip to Madrid");
              not used for code, whose rephrasings rename identifiers

``align_recall`` / ``align_precision`` / ``align_f1``  BERTScore-style token alignment of the two
              segments (:mod:`auditor.methods.embedding.align`)
``values``    share of the eval segment's numbers found in the training segment (1 when it has none)

How they become a decision (conclusive / suspected / nothing) is :mod:`auditor.methods.embedding.decision`.

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

from rapidfuzz import fuzz

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
    """The functions and classes ``code`` defines, by name (Python ``def`` / ``class``, JavaScript
    ``function`` and arrow functions, Go ``func``, Rust ``fn``).

    >>> sorted(defined_names("def string_xor(a: str, b: str) -> str:\\n    ...\\nconst add = (x, y) => x + y"))
    ['add', 'string_xor']
    """
    return {a or b for a, b in _DEFINED.findall(code)}


def same_signature(eval_code: str, train_code: str) -> bool:
    """True when the training code defines a function (or class) of the eval code's, by name: a copy of
    *that* item's code, not of another function of the same kind.

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

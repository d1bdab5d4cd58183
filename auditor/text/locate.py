"""Which field of a training record holds a match: the ``field`` evidence of text-tier findings.

The text tiers search a training record's views as text; a finding names where in the *record* the
eval item sits by walking the record's raw object (:func:`auditor.records.fields.strings`, every
string with its path) once more: the first string whose normalized text contains the eval item's
normalized text (at word boundaries), else the string sharing the most of its distinct words. Only
records behind a finding pay for it, and a record with several findings is normalized once (a
one-record cache that holds the raw object, so its identity cannot be reused meanwhile).

>>> raw = {"instruction": "Answer the question.", "input": "Find me FLIGHTS to Paris, please!"}
>>> locate_field(raw, "find me flights to paris please")
'input'
>>> locate_field({"messages": [{"role": "user", "content": "book a hotel in Rome for two"}]}, "hotel in rome")
'messages[0].content'
>>> locate_field({"a": "nothing alike"}, "book a flight") is None
True
"""

from __future__ import annotations

from typing import Any

from ..records.fields import strings
from .normalize import normalize

_cache: list[Any] = [None, []]  # [raw object, [(path, " normalized text ")]]


def _normalized(raw: Any) -> list[tuple[str, str]]:
    if _cache[0] is not raw:
        _cache[0], _cache[1] = raw, [(p, f" {normalize(s)} ") for p, s in strings(raw)]
    return _cache[1]


def locate_field(raw: Any, text: str) -> str | None:
    """The path of the string of ``raw`` that holds ``text`` (see the module doc), or None when
    ``raw`` is None or no string shares a word with it."""
    target = normalize(text)
    if raw is None or not target:
        return None
    needle = f" {target} "
    words = set(target.split())
    best, where = 0, None
    for path, norm in _normalized(raw):
        if needle in norm:
            return path
        score = len(words.intersection(norm.split()))
        if score > best:
            best, where = score, path
    return where

"""The ``exact`` method's kernel: the hashes of a training text's exact-match units (the whole text
and each non-blank line), for a whole batch at once, from the :class:`~auditor.text.batch.TokenBatch`
the n-gram kernel reads too (:mod:`auditor.methods._ngram_kernel`). No errors are raised here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xxhash

from ..text.batch import _EMPTY_HASH, PLAIN_BYTES, TokenBatch, _simple, token_batch
from ..text.camel import _ASCII_WHITESPACE


def exact_units(text: str, lines: bool) -> list[tuple[str, int]]:
    """``(unit, hash of normalized text)`` for the whole text and (when ``lines``) each non-blank line.

    Same result as hashing :func:`auditor.text.normalize.normalize` of each unit.

    >>> [u for u, _ in exact_units("Hi there\\n\\nBook it!", lines=True)]
    ['whole', 'line 1', 'line 3']
    """
    return exact_units_batch([text], lines)[0]


def exact_units_batch(texts: Sequence[str], lines: bool) -> list[list[tuple[str, int]]]:
    """:func:`exact_units` of each text, for a whole batch at once: the whole texts' hashes come from
    their :class:`~auditor.text.batch.TokenBatch` (shared with the n-gram tier), the non-blank lines of
    multi-line texts are normalized together in one more batch; remembered on the batch, so checks
    sharing a training set hash each text once.

    >>> from auditor.text.normalize import text_hash as h
    >>> exact_units_batch(["Hi!", "Hi\\n\\nyou"], lines=True) == [
    ...     [("whole", h("hi"))],
    ...     [("whole", h("hi you")), ("line 1", h("hi")), ("line 3", h("you"))],
    ... ]
    True
    """
    batch, positions = token_batch(texts)
    key = ("exact units", lines)
    units = batch.memo.get(key)
    if units is None:
        units = batch.memo[key] = _batch_units(batch, lines)
    return [units[p] for p in positions]


def _batch_units(batch: TokenBatch, lines: bool) -> list[list[tuple[str, int]]]:
    units = [[("whole", h)] for h in batch.whole_hashes()]
    if not lines:
        return units
    plain: list[int] = []
    other: list[int] = []
    for k, text in enumerate(batch.texts):
        if "\n" in text:
            (plain if "%" not in text and _simple(text) else other).append(k)
    if plain:
        other += _plain_line_units(batch, plain, units)
    owners: list[tuple[int, str]] = []
    pieces: list[str] = []
    for k in sorted(other):
        for i, line in enumerate(batch.texts[k].split("\n"), start=1):
            if line.strip():
                owners.append((k, _line_name(i)))
                pieces.append(line)
    if pieces:
        for (k, unit), h in zip(owners, TokenBatch(pieces).whole_hashes()):
            units[k].append((unit, h))
    return units


_LINE_NAMES: list[str] = []


def _line_name(i: int) -> str:
    """``"line {i}"``, each made once."""
    while len(_LINE_NAMES) <= i:
        _LINE_NAMES.append(f"line {len(_LINE_NAMES)}")
    return _LINE_NAMES[i]


#: bytes that are no whitespace (``str.isspace``) but that normalization makes a space: a line of
#: them alone (``?!.``) is a unit of its own (its normalized text empty), a line of whitespace is not
_BLANKED = bytes(1 if (PLAIN_BYTES[i] == 32 and chr(i) not in _ASCII_WHITESPACE and i < 128) else 0 for i in range(256))


def _plain_line_units(batch: TokenBatch, ks: list[int], units: list[list[tuple[str, int]]]) -> list[int]:
    """The line units of the plain multi-line texts ``ks`` of ``batch`` (ASCII that ``normalize`` only
    lowers, translates and splits in camel-cased runs, no ``%``), appended to ``units``, read from the
    batch's buffer: such a text normalizes line by line (a newline is whitespace, and nothing that
    changes it crosses one), so line ``i``'s normalized text is the run of the text's tokens between
    its newlines. Token counts per line come from the texts translated in bytes; a text where they do
    not add up to the batch's (a camel-cased run was split: that adds tokens) is returned, for the
    per-line path. Lines of whitespace only are no unit, as there.
    """
    texts = [batch.texts[k] for k in ks]
    raw = "\n".join(texts).encode("ascii")
    r = np.frombuffer(raw, dtype=np.uint8)
    word = np.frombuffer(raw.translate(PLAIN_BYTES), dtype=np.uint8) != 32
    token_at = np.flatnonzero(word & np.concatenate(([True], ~word[:-1])))  # where each token starts
    bounds = np.concatenate(([-1], np.flatnonzero(r == 10), [len(r)]))
    first_byte, end_byte = bounds[:-1] + 1, bounds[1:]  # of every line of every text
    lo, hi = np.searchsorted(token_at, first_byte), np.searchsorted(token_at, end_byte)
    per_text = np.fromiter((t.count("\n") + 1 for t in texts), dtype=np.int64, count=len(texts))
    first_line = np.concatenate(([0], np.cumsum(per_text)[:-1]))
    ks_arr = np.asarray(ks, dtype=np.int64)
    starts = batch.token_starts
    ok = np.add.reduceat(hi - lo, first_line) == starts[ks_arr + 1] - starts[ks_arr] - 1
    blanked = np.flatnonzero(np.frombuffer(raw.translate(_BLANKED), dtype=np.uint8))
    marked = np.searchsorted(blanked, end_byte) > np.searchsorted(blanked, first_byte)
    text_of = np.repeat(np.arange(len(texts)), per_text)
    keep = np.flatnonzero(ok[text_of] & ((hi > lo) | marked))
    t = text_of[keep]
    # a line's first token in the batch: its text's first token there, plus its place in the text
    base = starts[ks_arr[t]] - lo[first_line[t]]
    offs = batch.token_offsets
    a, b = offs[lo[keep] + base], offs[hi[keep] + base] - 1
    view = batch.data.data
    numbers = (keep - first_line[t] + 1).tolist()
    for k, n, x, y in zip(ks_arr[t].tolist(), numbers, a.tolist(), b.tolist()):
        units[k].append((_line_name(n), xxhash.xxh64_intdigest(view[x:y]) if y > x else _EMPTY_HASH))
    return [k for k, good in zip(ks, ok.tolist()) if not good]

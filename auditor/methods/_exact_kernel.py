"""The ``exact`` method's kernel: the hashes of a training text's exact-match units (the whole text
and each non-blank line), for a whole batch at once, from the :class:`~auditor.text.batch.TokenBatch`
the n-gram kernel reads too (:mod:`auditor.methods._ngram_kernel`). No errors are raised here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import xxhash

from ..text.batch import _EMPTY_HASH, TokenBatch, token_batch
from ..text.kernel import head_hits
from ..text.lines import LineSpans, lines_in_buffer, plain_line_spans, slow_line_spans
from ..text.tokens import distinct

#: the most bytes of an item's normalized text a batch's buffer is searched for at each token start
#: (:func:`_holders`)
HEAD_BYTES = 8


@dataclass(frozen=True)
class ItemKeys:
    """What a search for some normalized texts (its items) reads in a batch (:func:`text_keys`): their
    :func:`span_keys`, sorted and distinct, for the lines worth hashing; and for the texts worth
    splitting into lines at all (:func:`_holders`), the first ``width`` bytes of each (``heads``: as
    little-endian uint64s, sorted, distinct; ``width`` 0: an item is empty, every text is worth it),
    each item's head, length and last ``width`` bytes (``pair_heads``, sorted, ``pair_lengths``,
    ``pair_tails``) and their xxh64s."""

    keys: np.ndarray
    width: int
    heads: np.ndarray
    pair_heads: np.ndarray
    pair_lengths: np.ndarray
    pair_tails: np.ndarray
    hashes: frozenset[int]

    def ident(self) -> bytes:
        """What tells this search's units from another's (a batch remembers the units of each)."""
        return self.keys.tobytes() + np.array(sorted(self.hashes), dtype=np.uint64).tobytes()


def exact_units(text: str, lines: bool) -> list[tuple[str, int]]:
    """``(unit, hash of normalized text)`` for the whole text and (when ``lines``) each non-blank line.

    Same result as hashing :func:`auditor.text.normalize.normalize` of each unit.

    >>> [u for u, _ in exact_units("Hi there\\n\\nBook it!", lines=True)]
    ['whole', 'line 1', 'line 3']
    """
    return exact_units_batch([text], lines)[0]


def exact_units_batch(texts: Sequence[str], lines: bool, keys: ItemKeys | None = None) -> list[list[tuple[str, int]]]:
    """:func:`exact_units` of each text, for a whole batch at once: the whole texts' hashes come from
    their :class:`~auditor.text.batch.TokenBatch` (shared with the n-gram tier), the non-blank lines of
    multi-line texts are normalized together in one more batch; remembered on the batch, so checks
    sharing a training set hash each text once.

    With ``keys`` (:func:`text_keys` of the normalized texts a search looks for), only the lines whose
    normalized text has one of these keys (its length and first 8 bytes) are hashed and listed: a line
    with another key equals none of those texts; and a text is split into lines only where a line of
    it may equal one (:func:`_holders`). Whole texts are always listed.

    >>> from auditor.text.normalize import text_hash as h
    >>> exact_units_batch(["Hi!", "Hi\\n\\nyou"], lines=True) == [
    ...     [("whole", h("hi"))],
    ...     [("whole", h("hi you")), ("line 1", h("hi")), ("line 3", h("you"))],
    ... ]
    True
    """
    batch, positions = token_batch(texts)
    memo_key = ("exact units", lines, None if keys is None else keys.ident())
    units = batch.memo.get(memo_key)
    if units is None:
        units = batch.memo[memo_key] = _batch_units(batch, lines, keys)
    return [units[p] for p in positions]


def span_keys(data: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A uint64 of each byte span ``data[a[i]:b[i]]`` (``b <= a``: empty) from its length and first
    8 bytes: equal spans have equal keys, so a span whose key is not among a text's differs from it.

    >>> d = np.frombuffer(b"book it now|book it now|book it later", dtype=np.uint8)
    >>> k = span_keys(d, np.array([0, 12, 24, 3]), np.array([11, 23, 37, 3])).tolist()
    >>> k[0] == k[1], k[0] == k[2], k[3] == span_keys(d, np.array([5]), np.array([2])).tolist()[0]
    (True, False, True)
    """
    n = np.maximum(b - a, 0)
    key = n.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    if not len(data):
        return key
    last = len(data) - 1
    for j in range(8):
        byte = data[np.minimum(a + j, last)].astype(np.uint64) * (n > j)
        key ^= byte << np.uint64(8 * j)
    return key


def text_keys(texts: Sequence[bytes]) -> ItemKeys:
    """The :class:`ItemKeys` of ``texts`` (normalized, as bytes): what a search passes to
    :func:`exact_units_batch` as ``keys``.

    >>> k = text_keys([b"book it now", b"book a car"])
    >>> k.width, len(k.keys), len(k.heads), sorted(k.pair_lengths.tolist())
    (8, 2, 2, [10, 11])
    """
    data = np.frombuffer(b"".join(texts), dtype=np.uint8)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    ends = np.cumsum(lengths)
    width = min(HEAD_BYTES, int(lengths.min())) if len(texts) else HEAD_BYTES
    heads = np.fromiter((int.from_bytes(t[:width], "little") for t in texts), dtype=np.uint64, count=len(texts))
    tails = np.fromiter(
        (int.from_bytes(t[len(t) - width :], "little") for t in texts), dtype=np.uint64, count=len(texts)
    )
    order = np.lexsort((lengths, heads))
    return ItemKeys(
        keys=distinct(span_keys(data, ends - lengths, ends)),
        width=width,
        heads=distinct(heads),
        pair_heads=heads[order],
        pair_lengths=lengths[order],
        pair_tails=tails[order],
        hashes=frozenset(map(xxhash.xxh64_intdigest, texts)),
    )


def _holders(batch: TokenBatch, items: ItemKeys) -> set[int] | None:
    """The texts of ``batch`` whose normalized text holds an item's at a token start (None: an item is
    empty, any text may hold it): where a line's normalized text lies in the batch's buffer
    (:mod:`auditor.text.lines`: a plain text's lines, a slow one's pieced as a whole) it starts at a
    token, so a line of another text equals no item. The buffer is read at each token start for the
    items' first bytes (the kernel's ``head_hits``), and only there for each item of those bytes.

    >>> b = TokenBatch(["Hi\\nBook it now!", "book it later\\nok", "Take it\\nBook"])
    >>> _holders(b, text_keys([b"book it now", b"take it"]))
    {0, 2}
    """
    if not items.width:
        return None
    data, offsets = batch.data, batch.token_offsets
    at = offsets[head_hits(data, offsets, items.heads, items.width)]
    at = at[at + items.width <= len(data)]  # an item's whole head lies in the buffer (its text at least)
    if not len(at):
        return set()
    head = _read(data, at, items.width)  # each hit's first bytes, as the kernel read them (a hit has them all)
    lo = np.searchsorted(items.pair_heads, head, side="left")
    count = np.searchsorted(items.pair_heads, head, side="right") - lo
    pair = np.repeat(lo - (np.cumsum(count) - count), count) + np.arange(int(count.sum()))  # (hit, item of its head)
    start = np.repeat(at, count)
    end = start + items.pair_lengths[pair]
    keep = np.flatnonzero(end < len(data))
    start, end, pair = start[keep], end[keep], pair[keep]
    # an item's text ends where a token does, with its last bytes
    keep = np.flatnonzero((data[end] == 32) & (_read(data, end - items.width, items.width) == items.pair_tails[pair]))
    view = data.data
    found = [
        a for a, b in zip(start[keep].tolist(), end[keep].tolist()) if xxhash.xxh64_intdigest(view[a:b]) in items.hashes
    ]
    return set((np.searchsorted(batch.text_offsets, found, side="right") - 1).tolist())


def _wanted(items: ItemKeys | None, data: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Which spans may equal a text of ``items`` (all of them without ``items``)."""
    if items is None:
        return np.ones(len(a), dtype=bool)
    keys = items.keys
    if not len(keys) or not len(a):
        return np.zeros(len(a), dtype=bool)
    k = span_keys(data, a, b)
    return keys[np.minimum(np.searchsorted(keys, k), len(keys) - 1)] == k


def _batch_units(batch: TokenBatch, lines: bool, keys: ItemKeys | None = None) -> list[list[tuple[str, int]]]:
    units = [[("whole", h)] for h in batch.whole_hashes()]
    if not lines:
        return units
    plain: list[int] = []
    other: list[int] = []
    slow = set(batch.slow)  # not plain ASCII: ``normalize`` may read a line break there
    holders = None if keys is None else _holders(batch, keys)
    for k, text in enumerate(batch.texts):
        if "\n" not in text:
            continue
        if k not in slow:
            if holders is None or k in holders:
                plain.append(k)
        elif holders is None or k in holders or not lines_in_buffer(batch, k):
            other.append(k)
    other = _span_units(batch, plain_line_spans(batch, plain), units, keys) + _span_units(
        batch, slow_line_spans(batch, other), units, keys
    )
    owners: list[tuple[int, int]] = []
    pieces: list[str] = []
    for k in sorted(other):
        its_lines = batch.texts[k].split("\n")
        held = [i for i, line in enumerate(its_lines) if line and not line.isspace()]  # line.strip(): not blank
        owners += [(k, i + 1) for i in held]
        pieces += [its_lines[i] for i in held]
    if not pieces:
        return units
    lines_batch = TokenBatch(pieces)
    if keys is None:
        for (k, i), h in zip(owners, lines_batch.whole_hashes()):
            units[k].append((_line_name(i), h))
        return units
    offs = lines_batch.text_offsets
    a, b = offs[:-1], offs[1:] - 3  # each piece's normalized text: before " \x00 "
    view = lines_batch.data.data
    for j in np.flatnonzero(_wanted(keys, lines_batch.data, a, b)).tolist():
        k, i = owners[j]
        x, y = int(a[j]), int(b[j])
        units[k].append((_line_name(i), xxhash.xxh64_intdigest(view[x:y]) if y > x else _EMPTY_HASH))
    return units


def _read(data: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """The ``width`` bytes of ``data`` at each of ``at`` (all inside it) as little-endian uint64s."""
    out = np.zeros(len(at), dtype=np.uint64)
    for i in range(width):
        out |= data[at + i].astype(np.uint64) << np.uint64(8 * i)
    return out


_LINE_NAMES: list[str] = []


def _line_name(i: int) -> str:
    """``"line {i}"``, each made once."""
    while len(_LINE_NAMES) <= i:
        _LINE_NAMES.append(f"line {len(_LINE_NAMES)}")
    return _LINE_NAMES[i]


def _span_units(
    batch: TokenBatch, spans: LineSpans, units: list[list[tuple[str, int]]], keys: ItemKeys | None = None
) -> list[int]:
    """The line units of the multi-line texts of ``spans``, appended to ``units``, read from the batch's
    buffer (:mod:`auditor.text.lines`); the texts whose lines are not there (``spans.missed``) are
    returned, for the per-line path. Lines of whitespace only are no unit, as there; with ``keys``, only
    lines that may equal a text looked for are (:func:`exact_units_batch`).
    """
    keep = np.flatnonzero(spans.marked)
    text, number, a, b = spans.text[keep], spans.number[keep], spans.start[keep], spans.end[keep]
    if keys is not None:
        want = np.flatnonzero(_wanted(keys, batch.data, a, b))
        text, number, a, b = text[want], number[want], a[want], b[want]
    view = batch.data.data
    for k, n, x, y in zip(text.tolist(), number.tolist(), a.tolist(), b.tolist()):
        units[k].append((_line_name(n), xxhash.xxh64_intdigest(view[x:y]) if y > x else _EMPTY_HASH))
    return spans.missed

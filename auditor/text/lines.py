"""The lines of a :class:`~auditor.text.batch.TokenBatch`'s texts, read from its buffer: where each line's
normalized text lies there, with no line normalized again (the exact tier's line units, the
boilerplate census of a sample's lines). Plain texts always (:func:`plain_line_spans`); slow texts
where they normalize line by line as a whole (:func:`slow_line_spans`).

A plain text (ASCII that ``normalize`` only lowers, translates and splits in camel-cased runs, none of
the batch's ``slow`` texts) normalizes line by line: a newline is whitespace, and nothing that changes
the text crosses one. So line ``i``'s normalized text is the run of the text's tokens between its
newlines. Token counts per line come from the texts in one pass of the kernel
(:func:`~auditor.text.kernel.line_tokens`), plus the tokens a camel-cased run split in the line gained
(the batch's :attr:`~auditor.text.batch.TokenBatch.splits`: a run holds no whitespace, so it lies in one
line). A text whose counts do not add up to the batch's is left out (``missed``), for a per-line path.

>>> from auditor.text.batch import TokenBatch
>>> batch = TokenBatch(["Hi, you!\\n\\nBookAFlightToParis now", "one line", "caf\\u00e9\\nx"])
>>> spans = plain_line_spans(batch, [0, 1])
>>> [batch.data[a:b].tobytes() for a, b in zip(spans.start, spans.end)]
[b'hi you', b'', b'book a flight to paris now', b'one line']
>>> spans.text.tolist(), spans.number.tolist(), spans.marked.tolist(), spans.missed
([0, 0, 0, 1], [1, 2, 3, 1], [True, False, True, True], [])

No errors are raised here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import kernel
from .batch import PLAIN_BYTES, TokenBatch
from .kernel import line_tokens
from .pieces import piece


@dataclass
class LineSpans:
    """Every line of some texts of a batch, in text order then line order: its text (its index in
    the batch), its number in the text (from 1), where its normalized text starts and ends in the
    batch's ``data`` (``end <= start``: empty), and whether it holds anything but whitespace (``marked``:
    a line of punctuation alone normalizes to nothing but is a line of text). ``missed``: the texts
    asked for whose lines are not here."""

    text: np.ndarray
    number: np.ndarray
    start: np.ndarray
    end: np.ndarray
    marked: np.ndarray
    missed: list[int]


def plain_line_spans(batch: TokenBatch, ks: Sequence[int]) -> LineSpans:
    """The :class:`LineSpans` of the plain texts ``ks`` of ``batch`` (in ascending order, none of ``batch.slow``)."""
    return _spans(batch, list(ks), [batch.texts[k].encode("ascii") for k in ks])


def slow_line_spans(batch: TokenBatch, ks: Sequence[int]) -> LineSpans:
    """The :class:`LineSpans` of the slow texts ``ks`` of ``batch`` (ascending) that normalize line by line
    as a whole: a text whose piece (what the batch read, :attr:`~auditor.text.batch.TokenBatch.kept`) is
    its lines' pieces joined by newlines, as a line on its own gives it. ``undo_evasion`` reads across
    lines (a tag closed lines later, an override, a hyphenated wrap): a text where it did is ``missed``,
    as is one whose piece the batch did not keep. Marks say whether a line holds more than whitespace
    (``str.strip``), as the text's own line does; a text with a line whose piece holds a line break
    (``%0A``) is missed too. A text the batch knows to be pieced line by line (its ``local`` texts,
    :func:`~auditor.text.pieces.piece_by_lines`) is not pieced again: its piece's lines and marks are its lines'.

    >>> from auditor.text.batch import TokenBatch
    >>> batch = TokenBatch(["Caf\\u00e9 menu\\n<b>Book</b> it", "<think>x\\n</think> y", "wrapped infor-\\nmation"])
    >>> spans = slow_line_spans(batch, [0, 1, 2])
    >>> [batch.data[a:b].tobytes() for a, b in zip(spans.start, spans.end)], spans.missed
    ([b'cafe menu', b'book it'], [1, 2])
    """
    good: list[int] = []
    raws: list[bytes] = []
    marked: list[tuple[int, bool]] = []  # (line of the joined pieces, its mark): the slow lines'
    lines_before = 0
    for k in ks:
        whole = batch.kept.get(k)
        text = batch.texts[k]
        breaks = text.count("\n")
        if whole is None or whole.count(b"\n") != breaks:  # a line's piece holds a break (%0A)
            continue
        if k not in batch.local:  # its lines' pieces, compared with its piece; their marks
            joined, marks = _lines_pieced(text)
            if joined != whole:
                continue
            marked += [(lines_before + i, mark) for i, mark in marks]
        good.append(k)
        raws.append(whole)
        lines_before += breaks + 1
    spans = _spans(batch, good, raws, marked)
    spans.missed += sorted(set(ks) - set(good))
    return spans


def lines_in_buffer(batch: TokenBatch, k: int) -> bool:
    """Whether the slow text ``k`` of ``batch`` has its lines in the batch's buffer, read there by
    :func:`slow_line_spans` without piecing a line again: the batch pieced it line by line (its
    ``local`` texts) and no line's piece holds a line break. Each of its lines then starts at a token
    of the buffer, as a plain text's lines do.

    >>> from auditor.text.batch import TokenBatch
    >>> batch = TokenBatch(["Caf\\u00e9 menu\\nok", "<b>Bo</b>ok\\nx"])
    >>> lines_in_buffer(batch, 0), lines_in_buffer(batch, 1)
    (True, False)
    """
    whole = batch.kept.get(k)
    return k in batch.local and whole is not None and whole.count(b"\n") == batch.texts[k].count("\n")


def _lines_pieced(text: str) -> tuple[bytes, list[tuple[int, bool]]]:
    """``text``'s lines, each as the batch takes it alone (its piece, :func:`~auditor.text.pieces.piece`,
    where it is slow; as it is, where it is plain), joined by newlines; and the number and mark
    (``str.strip``) of each slow line (the kernel's ``slow_lines``). Plain runs of lines are copied whole.

    >>> _lines_pieced("Hi\\n<b>Bo</b>ok\\n \\u00a0\\nok")
    (b'Hi\\nBook\\n  \\nok', [(1, True), (2, False)])
    """
    out: list[bytes] = []
    marks: list[tuple[int, bool]] = []
    done = line = 0  # where the text not copied yet starts (a line's start), and that line's number
    for start, end in kernel.impl.slow_lines(text):
        line += text.count("\n", done, start)
        out += (text[done:start].encode("ascii"), piece(text[start:end]))
        marks.append((line, bool(text[start:end].strip())))
        done = end
    out.append(text[done:].encode("ascii"))
    return b"".join(out), marks


def span_chars(batch: TokenBatch, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """How many characters each span ``batch.data[start:end]`` holds (0 where ``end <= start``): its
    bytes, but for UTF-8 continuation bytes.

    >>> from auditor.text.batch import TokenBatch
    >>> b = TokenBatch(["\\u65e5\\u672c ok"])  # two characters of 3 bytes each, a space, "ok"
    >>> span_chars(b, np.array([0, 0, 7, 5]), np.array([9, 6, 9, 3])).tolist()
    [5, 2, 2, 0]
    """
    size = np.maximum(end - start, 0)
    follow = np.flatnonzero((batch.data & 0xC0) == 0x80)  # few: not a count per byte
    if len(follow):
        size -= np.where(size > 0, np.searchsorted(follow, end) - np.searchsorted(follow, start), 0)
    return size


def span_hashes(batch: TokenBatch, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """xxh64 of each span ``batch.data[start:end]`` (what ``text_hash`` gives its text), as uint64s:
    one kernel call (:func:`~auditor.text.kernel` ``token_hashes`` over the spans' bounds; the gaps
    between spans are hashed too, and dropped). The spans must ascend and none may reach the next
    one's start (a line's: its line break lies between); each is followed by a byte of the buffer.

    >>> from auditor.text.batch import TokenBatch
    >>> from auditor.text.normalize import text_hash
    >>> b = TokenBatch(["Hi, you!\\nok", "x"])
    >>> span_hashes(b, np.array([0, 7, 12]), np.array([6, 9, 13])).tolist() == [text_hash(t) for t in ("hi you", "ok", "x")]
    True
    """
    if not len(start):
        return np.empty(0, dtype=np.uint64)
    bounds = np.empty(2 * len(start), dtype=np.int64)
    bounds[0::2], bounds[1::2] = start, np.maximum(end, start) + 1  # token_hashes leaves the last byte out
    new = np.concatenate(([True], bounds[1:] != bounds[:-1]))  # a span that ends where the next starts
    hashes = np.frombuffer(kernel.impl.token_hashes(batch.data, bounds[new]), dtype=np.uint64)
    return hashes[(np.cumsum(new) - 1)[0::2]]


def _spans(batch: TokenBatch, ks: list[int], raws: list[bytes], marked: Sequence[tuple[int, bool]] = ()) -> LineSpans:
    """The spans of texts ``ks`` whose pieces before squeezing are ``raws``: each line's mark from its
    piece (a plain line is its own piece), but for the lines ``marked`` gives (line, mark) for."""
    if not ks:
        empty = np.zeros(0, dtype=np.int64)
        return LineSpans(empty, empty, empty, empty, np.zeros(0, dtype=bool), [])
    counts, marks, breaks = line_tokens(b"\n".join(raws), PLAIN_BYTES)
    lengths = np.fromiter(map(len, raws), dtype=np.int64, count=len(raws))
    text_start = np.concatenate(([0], np.cumsum(lengths + 1)))
    first_line = np.searchsorted(breaks, text_start[:-1])  # the breaks before a text: its first line's number
    per_text = np.diff(np.append(first_line, len(counts)))
    ks_arr = np.asarray(ks, dtype=np.int64)
    if len(splits := batch.splits):  # the tokens a camel-cased run split gained, in its line
        at = np.minimum(np.searchsorted(ks_arr, splits[:, 0]), len(ks_arr) - 1)
        mine = ks_arr[at] == splits[:, 0]
        line = np.searchsorted(breaks, text_start[at[mine]] + splits[mine, 1])
        counts = counts + np.bincount(line, weights=splits[mine, 2], minlength=len(counts)).astype(np.int64)
    hi = np.cumsum(counts)
    lo = hi - counts
    starts = batch.token_starts
    ok = np.add.reduceat(counts, first_line) == starts[ks_arr + 1] - starts[ks_arr] - 1
    text_of = np.repeat(np.arange(len(ks)), per_text)
    keep = np.flatnonzero(ok[text_of])
    t = text_of[keep]
    base = starts[ks_arr[t]] - lo[first_line[t]]  # a line's first token in the batch: its text's, plus its place
    offs = batch.token_offsets
    return LineSpans(
        text=ks_arr[t],
        number=keep - first_line[t] + 1,
        start=offs[lo[keep] + base],
        end=offs[hi[keep] + base] - 1,
        marked=_marks(marks, marked)[keep],
        missed=[k for k, good in zip(ks, ok.tolist()) if not good],
    )


def _marks(marks: np.ndarray, marked: Sequence[tuple[int, bool]]) -> np.ndarray:
    """The kernel's marks of the lines as booleans, those of the lines ``marked`` names set as it says."""
    out = marks > 0
    if len(marked):
        at = np.array(marked, dtype=np.int64).reshape(-1, 2)
        out[at[:, 0]] = at[:, 1].astype(bool)
    return out

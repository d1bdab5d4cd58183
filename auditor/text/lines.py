"""The lines of a :class:`~auditor.text.batch.TokenBatch`'s plain texts, read from its buffer: where each
line's normalized text lies there, with no line normalized again (the exact tier's line units, the
boilerplate census of a sample's lines).

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

from .batch import PLAIN_BYTES, TokenBatch
from .kernel import line_tokens


@dataclass
class LineSpans:
    """Every line of some plain texts of a batch, in text order then line order: its text (its index in
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
    if not len(ks):
        empty = np.zeros(0, dtype=np.int64)
        return LineSpans(empty, empty, empty, empty, np.zeros(0, dtype=bool), [])
    texts = [batch.texts[k] for k in ks]
    counts, marks, breaks = line_tokens("\n".join(texts).encode("ascii"), PLAIN_BYTES)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
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
    text_of = np.repeat(np.arange(len(texts)), per_text)
    keep = np.flatnonzero(ok[text_of])
    t = text_of[keep]
    base = starts[ks_arr[t]] - lo[first_line[t]]  # a line's first token in the batch: its text's, plus its place
    offs = batch.token_offsets
    return LineSpans(
        text=ks_arr[t],
        number=keep - first_line[t] + 1,
        start=offs[lo[keep] + base],
        end=offs[hi[keep] + base] - 1,
        marked=marks[keep] > 0,
        missed=[k for k, good in zip(ks, ok.tolist()) if not good],
    )

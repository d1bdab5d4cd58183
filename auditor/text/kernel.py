"""The batch kernel: the byte and array loops of the scan in C (``_batchc.c``, built at install where a
C compiler is found) or, without one, their Python twin (:mod:`auditor.text._batchpy`), chosen once at
import (:data:`impl`; a test sets it to the twin to run a whole audit on it). The functions here are
the kernel's calls the methods make on arrays; :class:`~auditor.text.batch.TokenBatch` calls the rest.

>>> import numpy as np
>>> h, k = np.array([5, 7, 9], dtype=np.uint64), np.array([9, 5, 9], dtype=np.uint64)
>>> np.frombuffer(lookup(h.tobytes(), k.tobytes()), dtype=np.int64).tolist()
[2, 0, 1]

Errors: ``TypeError`` for buffers of the wrong kind (not whole uint64s or int64s), ``ValueError`` for a
run past the values (:func:`distinct_runs`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from types import ModuleType

import numpy as np

impl: ModuleType
try:  # the byte loops in C, built at install where a C compiler is found
    from . import _batchc as impl
except ImportError:  # pragma: no cover - an install without a C compiler: the same in Python
    from . import _batchpy as impl


def compiled() -> bool:
    """Whether the kernel in use is the C module (the Python twin reads a batch's tokens with Arrow)."""
    return impl.__name__ == "auditor.text._batchc"


def distinct_runs(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values of each run ``values[starts[i] : starts[i] + lengths[i]]`` (uint64s),
    one run after the other, and where each begins (``len(starts) + 1`` offsets), in one pass of the
    kernel (C where built: a bucket sort on the top bits); ``ValueError`` for a run past the values.
    :func:`auditor.methods._shingles.distinct_packed` shows it at work."""
    out, offsets = impl.distinct_runs(
        np.ascontiguousarray(values, dtype=np.uint64).data,
        np.ascontiguousarray(starts, dtype=np.int64).data,
        np.ascontiguousarray(lengths, dtype=np.int64).data,
    )
    return np.frombuffer(out, dtype=np.uint64), np.frombuffer(offsets, dtype=np.int64)


def head_hits(data: np.ndarray, offsets: np.ndarray, heads: np.ndarray, width: int) -> np.ndarray:
    """The indexes of the ``offsets`` (positions in the bytes ``data``) whose first ``width`` bytes
    there (1 to 8, zeros past the end), read as a little-endian uint64, are one of ``heads`` (sorted
    uint64s), in one pass of the kernel (C where built). Raises ``TypeError`` for another width."""
    return np.frombuffer(
        impl.head_hits(
            data, np.ascontiguousarray(offsets, dtype=np.int64), np.ascontiguousarray(heads, dtype=np.uint64), width
        ),
        dtype=np.int64,
    )


def lookup(hashes: bytes | memoryview, keys: bytes) -> bytearray:
    """For each uint64 of ``hashes`` (a batch's :meth:`~auditor.text.batch.TokenBatch.token_hashes`), 1 +
    the index of its first copy among the uint64 ``keys`` (a vocabulary's token hashes), or 0; as int64s,
    in one hash-table pass of the kernel (C where built). Raises ``TypeError`` for buffers that are not
    whole uint64s."""
    return impl.lookup(hashes, keys)


def char_ranges(code_points: Iterable[int], outside: bool = False) -> bytes:
    """Code points as the inclusive ranges :func:`first_in` takes: uint32 pairs ``lo, hi``, sorted,
    disjoint; with ``outside``, every other code point's.

    >>> np.frombuffer(char_ranges([0x200B, 0xAD, 0x200C, 0x200D]), dtype=np.uint32).tolist()
    [173, 173, 8203, 8205]
    >>> np.frombuffer(char_ranges(range(0x80), outside=True), dtype=np.uint32).tolist()
    [128, 1114111]
    """
    pairs: list[list[int]] = []
    for cp in sorted(set(code_points)):
        if pairs and pairs[-1][1] == cp - 1:
            pairs[-1][1] = cp
        else:
            pairs.append([cp, cp])
    if outside:
        bounds = [-1, *(x for lo, hi in pairs for x in (lo, hi)), sys.maxunicode + 1]
        pairs = [[a + 1, b - 1] for a, b in zip(bounds[::2], bounds[1::2]) if b - a > 1]
    return np.array(pairs, dtype=np.uint32).reshape(-1, 2).tobytes()


def first_in(text: str, ranges: bytes) -> int:
    """The index of the first character of ``text`` whose code point lies in ``ranges`` (:func:`char_ranges`),
    or -1: one pass of the kernel over the text (C where built; a regular expression's character class
    scans several times slower), ASCII skipped at once where no range holds any.

    >>> first_in("caf\u00e9 \u200b", char_ranges([0x200B])), first_in("cafe", char_ranges([0x200B]))
    (5, -1)
    """
    return impl.first_in(text, ranges)


def char_set(text: str) -> set[str]:
    """``set(text)``, made by the kernel: in C, each code point marked in a bitmap and one ``str`` made per
    distinct character (``set`` makes one per character: ~4x the time on accented prose).

    >>> sorted(char_set("caf\u00e9 cafe"))
    [' ', 'a', 'c', 'e', 'f', 'é']
    """
    return impl.char_set(text)


def line_runs(text: str, most: int) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of whole lines of ``text`` that holds a character not ASCII or a NUL,
    with the blank lines between two such lines, at most ``most`` characters a run (but for a longer
    line, a run alone): one pass of the kernel.

    >>> line_runs("ok\\ncaf\u00e9\\n\\n na\u00efve\\nplain\\n\u00e0", 8192)
    [(3, 15), (22, 23)]
    """
    return impl.line_runs(text, most)


def blank_lines(text: str) -> int:
    """How many lines of ``text`` (split at ``\\n``) hold only whitespace (``str.isspace``), or nothing.

    >>> blank_lines("a\\n \\n\\nb")
    2
    """
    return impl.blank_lines(text)


def line_tokens(raw: bytes, table: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per line of ASCII ``raw`` (split at ``\\n``): its tokens (runs of bytes that ``table``, such as the
    batch's :data:`~auditor.text.batch.PLAIN_BYTES`, does not make a space), whether it holds anything
    but whitespace, and where each ``\\n`` stands; one pass of the kernel.

    >>> from auditor.text.batch import PLAIN_BYTES
    >>> [a.tolist() for a in line_tokens(b"Hi, you\\n \\n?!\\nok", PLAIN_BYTES)]
    [[2, 0, 0, 1], [1, 0, 1, 1], [7, 9, 12]]
    """
    counts, marks, breaks = impl.line_tokens(raw, table)
    return (
        np.frombuffer(counts, dtype=np.int64),
        np.frombuffer(marks, dtype=np.uint8),
        np.frombuffer(breaks, dtype=np.int64),
    )

"""The byte loops of a :class:`~auditor.text.batch.TokenBatch` in Python: what the C module
``auditor.text._batchc`` (``_batchc.c``, built at install where a C compiler is found) does, function
for function, for an install without one. ``batch.py`` imports the C module when it is there; the
tests check that both give the same results (``tests/test_batch_kernel.py``).

Each function raises ``TypeError`` for arguments of the wrong type, as its C twin does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from .camel import _ASCII_WHITESPACE

#: after every text of a batch: a token of its own (a NUL, then the space every token has)
SEPARATOR = b" \x00 "
_WHITESPACE = _ASCII_WHITESPACE.encode("ascii")
#: byte -> ``a`` (lower-case letter), ``A`` (capital), a space (whitespace), ``.`` (anything else)
_CASES = bytes(97 if 97 <= i <= 122 else 65 if 65 <= i <= 90 else 32 if i in _WHITESPACE else 46 for i in range(256))


def not_plain(texts: Sequence[str]) -> list[int]:
    """The indexes of ``texts`` that are not ASCII or hold ``&``, ``<``, ``%``, a NUL, an ESC or a
    hyphen ending a line (``-\\n``, ``-\\r\\n``): the others are copied into a batch as they are.

    >>> not_plain(["Hi there", "caf\\u00e9", "a&b", "x-\\ny", "x- y", "50%"])
    [1, 2, 3, 5]
    """
    return [
        i
        for i, t in enumerate(texts)
        if not t.isascii()
        or "&" in t
        or "<" in t
        or "%" in t
        or "\x00" in t
        or "\x1b" in t
        or "-\n" in t
        or "-\r\n" in t
    ]


def join(pieces: Sequence[str | bytes]) -> bytes:
    """Each piece (ASCII ``str`` or ``bytes``) followed by :data:`SEPARATOR`.

    >>> join(["ab", b"c"])
    b'ab \\x00 c \\x00 '
    """
    if not all(isinstance(p, bytes) or (isinstance(p, str) and p.isascii()) for p in pieces):
        raise TypeError("join() takes bytes or ASCII str")
    return b"".join((p if isinstance(p, bytes) else p.encode("ascii")) + SEPARATOR for p in pieces)


def camel_runs(raw: bytes, humps: int) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each whitespace-delimited run of ``raw`` that holds a lower-case letter
    followed by a capital (``aA``) and at least ``humps`` pieces between its humps (``aA`` and
    ``AAa``, counted in the run).

    >>> camel_runs(b"BookAFlightToParis iPhone x HTTPServerError", 3)
    [(0, 18), (28, 43)]
    """
    cases = raw.translate(_CASES)
    out = []
    hit = cases.find(b"aA")
    while hit >= 0:
        start, end = cases.rfind(b" ", 0, hit) + 1, cases.find(b" ", hit)
        end = len(raw) if end < 0 else end
        if cases.count(b"aA", start, end) + cases.count(b"AAa", start, end) + 1 >= humps:
            out.append((start, end))
        hit = cases.find(b"aA", end)
    return out


def squeeze(raw: bytes, table: bytes) -> tuple[bytearray, bytes, bytes, bytes]:
    """``raw`` translated by ``table`` with runs of spaces squeezed to one and leading spaces dropped,
    and, as int64 buffers: the token offsets (0, then one past each space), the text offsets (0,
    then two past each NUL) and the token starts (0, then one more than the spaces before each NUL).

    >>> data, tokens, texts, starts = squeeze(b"  Hi  you \\x00 x \\x00 ", bytes(range(256)))
    >>> bytes(data), np.frombuffer(tokens, dtype=np.int64).tolist(), np.frombuffer(starts, dtype=np.int64).tolist()
    (b'Hi you \\x00 x \\x00 ', [0, 3, 7, 9, 11, 13], [0, 3, 5])
    """
    if len(table) != 256:
        raise TypeError("squeeze() takes a table of 256 bytes")
    translated = np.frombuffer(raw.translate(table), dtype=np.uint8)
    word = translated != 32
    keep = word.copy()
    keep[1:] |= word[:-1]  # a byte of a word, or the first space after one
    data = translated[keep]
    ends = np.flatnonzero(data == 32)
    nuls = np.flatnonzero(data == 0)
    tokens = np.concatenate(([0], ends + 1)).astype(np.int64)
    texts = np.concatenate(([0], nuls + 2)).astype(np.int64)
    starts = np.concatenate(([0], np.searchsorted(ends, nuls + 1) + 1)).astype(np.int64)
    return bytearray(data.tobytes()), tokens.tobytes(), texts.tobytes(), starts.tobytes()


def _nbytes(buffer: bytes | memoryview) -> int:
    """The size of ``buffer`` in bytes, as C's buffer protocol counts it (``len`` of a memoryview of a
    numpy int64 array is its count of items)."""
    return memoryview(buffer).nbytes


def token_hashes(data: bytes | memoryview, offsets: bytes | memoryview) -> bytes:
    """xxh64 of each token ``data[o[j] : o[j + 1] - 1]`` (its space left out), ``o`` the int64
    ``offsets``, as uint64s; one Python hash per distinct token (Arrow's ``dictionary_encode``).

    >>> import xxhash
    >>> np.frombuffer(token_hashes(b"ab c \\x00 ", np.array([0, 3, 5, 7]).tobytes()), dtype=np.uint64).tolist() == [
    ...     xxhash.xxh64_intdigest(t) for t in (b"ab", b"c", b"\\x00")]
    True
    """
    import pyarrow.compute as pc
    import xxhash

    from .arrowbuf import int32s, large_binary

    if _nbytes(offsets) % 8 or not _nbytes(offsets):
        raise TypeError("token_hashes() takes int64 offsets, at least one")
    offs = np.frombuffer(offsets, dtype=np.int64)
    if len(offs) > 1 and (offs[0] < 0 or (np.diff(offs) <= 0).any() or offs[-1] > _nbytes(data)):
        raise ValueError("token_hashes(): offsets out of order or past the data")
    if len(offs) == 1:
        return b""
    encoded = pc.dictionary_encode(large_binary(len(offs) - 1, offs, np.frombuffer(data, dtype=np.uint8)))
    distinct = encoded.dictionary.to_pylist()
    hashes = np.fromiter((xxhash.xxh64_intdigest(t[:-1]) for t in distinct), dtype=np.uint64, count=len(distinct))
    return hashes[int32s(encoded.indices)].tobytes()


def head_hits(data: bytes | memoryview, offsets: bytes | memoryview, heads: bytes | memoryview, width: int) -> bytes:
    """The ``j`` of each int64 ``offsets[j]`` whose first ``width`` bytes of ``data`` (1 to 8, zeros past
    its end), read as a little-endian uint64, are one of the uint64 ``heads`` (sorted), as int64s.

    >>> heads = np.array([int.from_bytes(b"bo", "little")], dtype=np.uint64).tobytes()
    >>> np.frombuffer(head_hits(b"book a boat", np.array([0, 5, 7, 11]).tobytes(), heads, 2), dtype=np.int64).tolist()
    [0, 2]
    """
    if _nbytes(offsets) % 8 or _nbytes(heads) % 8 or not 1 <= width <= 8:
        raise TypeError("head_hits() takes int64 offsets, uint64 heads and a width of 1 to 8")
    d = np.frombuffer(data, dtype=np.uint8)
    offs = np.frombuffer(offsets, dtype=np.int64)
    hd = np.frombuffer(heads, dtype=np.uint64)
    inside = np.flatnonzero((offs >= 0) & (offs < len(d)))
    if not len(hd) or not len(inside):
        return b""
    padded = np.concatenate((d, np.zeros(8, dtype=np.uint8)))
    words = np.ndarray((len(d) + 1,), dtype="<u8", buffer=padded, strides=(1,))  # the 8 bytes at each byte
    w = words[offs[inside]] & np.uint64((1 << (8 * width)) - 1)
    at = np.minimum(np.searchsorted(hd, w), len(hd) - 1)
    return inside[hd[at] == w].astype(np.int64).tobytes()


def lookup(hashes: bytes | memoryview, keys: bytes) -> bytearray:
    """For each uint64 of ``hashes``: 1 + the index of its first copy among the uint64 ``keys``, or 0
    when none holds it; as int64s.

    >>> h, k = np.array([5, 7, 9], dtype=np.uint64), np.array([9, 5, 9], dtype=np.uint64)
    >>> np.frombuffer(lookup(h.tobytes(), k.tobytes()), dtype=np.int64).tolist()
    [2, 0, 1]
    """
    if _nbytes(hashes) % 8 or _nbytes(keys) % 8:
        raise TypeError("lookup() takes uint64 buffers")
    h, k = np.frombuffer(hashes, dtype=np.uint64), np.frombuffer(keys, dtype=np.uint64)
    if not len(k):
        return bytearray(len(h) * 8)
    distinct, first = np.unique(k, return_index=True)
    at = np.minimum(np.searchsorted(distinct, h), len(distinct) - 1)
    return bytearray(np.where(distinct[at] == h, first[at] + 1, 0).astype(np.int64).tobytes())


def distinct_runs(
    values: bytes | memoryview, starts: bytes | memoryview, lengths: bytes | memoryview
) -> tuple[bytearray, bytes]:
    """The sorted distinct uint64s of each run ``values[starts[i] : starts[i] + lengths[i]]``, one run
    after the other, and where each run's begin (int64s, one more than the runs).

    >>> v = np.array([5, 3, 5, 9, 1, 1], dtype=np.uint64)
    >>> out, offs = distinct_runs(v.tobytes(), np.array([0, 3, 2]).tobytes(), np.array([3, 3, 0]).tobytes())
    >>> np.frombuffer(out, dtype=np.uint64).tolist(), np.frombuffer(offs, dtype=np.int64).tolist()
    ([3, 5, 1, 9], [0, 2, 4, 4])
    """
    if _nbytes(values) % 8 or _nbytes(starts) % 8 or _nbytes(starts) != _nbytes(lengths):
        raise TypeError("distinct_runs() takes uint64 values and as many int64 starts as lengths")
    v = np.frombuffer(values, dtype=np.uint64)
    s, n = np.frombuffer(starts, dtype=np.int64), np.frombuffer(lengths, dtype=np.int64)
    if ((s < 0) | (n < 0) | (s > len(v) - n)).any():
        raise ValueError("distinct_runs(): a run past the values")
    runs = []
    for a, k in zip(s.tolist(), n.tolist()):
        run = np.sort(v[a : a + k])
        runs.append(run[np.concatenate(([True], run[1:] != run[:-1]))] if k else run)
    offsets = np.concatenate(([0], np.cumsum([len(r) for r in runs], dtype=np.int64))).astype(np.int64)
    return bytearray(np.concatenate(runs).tobytes() if runs else b""), offsets.tobytes()


def line_tokens(raw: bytes, table: bytes) -> tuple[bytes, bytes, bytes]:
    """Per line of ``raw`` (split at ``\\n``): the tokens in it (runs of bytes that ``table`` does not
    translate to a space; int64s), whether it holds a byte that is no ASCII whitespace (uint8s), and
    where each ``\\n`` stands (int64s, one fewer than the lines).

    >>> from auditor.text.batch import PLAIN_BYTES
    >>> counts, marks, breaks = line_tokens(b"Hi, you\\n \\n?!\\nok", PLAIN_BYTES)
    >>> [np.frombuffer(counts, dtype=np.int64).tolist(), list(marks), np.frombuffer(breaks, dtype=np.int64).tolist()]
    [[2, 0, 0, 1], [1, 0, 1, 1], [7, 9, 12]]
    """
    if len(table) != 256:
        raise TypeError("line_tokens() takes a table of 256 bytes")
    r = np.frombuffer(raw, dtype=np.uint8)
    breaks = np.flatnonzero(r == 10)
    first, end = np.concatenate(([0], breaks + 1)), np.concatenate((breaks, [len(r)]))
    word = np.frombuffer(raw.translate(table), dtype=np.uint8) != 32
    word[breaks] = False  # a line break ends a token whatever the table says
    token_at = np.flatnonzero(word & np.concatenate(([True], ~word[:-1])))
    counts = np.searchsorted(token_at, end) - np.searchsorted(token_at, first)
    held = np.flatnonzero(~np.isin(r, np.frombuffer(_ASCII_WHITESPACE.encode("ascii"), dtype=np.uint8)))
    marks = np.searchsorted(held, end) > np.searchsorted(held, first)
    return counts.astype(np.int64).tobytes(), marks.astype(np.uint8).tobytes(), breaks.astype(np.int64).tobytes()


#: the pattern of each ``ranges`` :func:`first_in` was given, made once
_RANGE_PATTERNS: dict[bytes, re.Pattern] = {}


def first_in(text: str, ranges: bytes) -> int:
    """The index of the first character of ``text`` whose code point lies in one of ``ranges`` (uint32
    pairs ``lo, hi``, inclusive, sorted, disjoint), or -1.

    >>> first_in("abc\u200bd", np.array([0x80, 0x9F, 0x200B, 0x200F], dtype=np.uint32).tobytes())
    3
    """
    if not isinstance(text, str):
        raise TypeError(f"first_in() takes str, not {type(text).__name__}")
    if _nbytes(ranges) % 8:
        raise TypeError("first_in() takes ranges as uint32 pairs")
    key = bytes(ranges)
    pattern = _RANGE_PATTERNS.get(key)
    if pattern is None:
        pairs = np.frombuffer(key, dtype=np.uint32).reshape(-1, 2).tolist()
        body = "".join(re.escape(chr(a)) + ("" if a == b else "-" + re.escape(chr(b))) for a, b in pairs)
        pattern = _RANGE_PATTERNS[key] = re.compile(f"[{body}]" if body else "(?!)")
    m = pattern.search(text)
    return -1 if m is None else m.start()


def char_set(text: str) -> set[str]:
    """The distinct characters of ``text``.

    >>> sorted(char_set("caf\u00e9 \U0001f600 cafe"))
    [' ', 'a', 'c', 'e', 'f', '\u00e9', '\U0001f600']
    """
    if not isinstance(text, str):
        raise TypeError(f"char_set() takes str, not {type(text).__name__}")
    return set(text)


#: a character that keeps its line off the plain path of a text past ASCII: not ASCII, or NUL
_PAST_ASCII = re.compile("[^\x01-\x7f]")


def line_runs(text: str, most: int) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of whole lines of ``text`` (split at ``\\n``) that holds a character
    not ASCII or a NUL, with the blank lines (ASCII whitespace only) between two such lines, in runs
    of at most ``most`` characters (but for a line longer than that, a run alone).

    >>> line_runs("ok\\ncaf\u00e9\\n\\n na\u00efve\\nplain\\n\u00e0", 8192), line_runs("\u00e9\\n\u00e9", 2)
    ([(3, 15), (22, 23)], [(0, 1), (2, 3)])
    """
    if not isinstance(text, str):
        raise TypeError(f"line_runs() takes str, not {type(text).__name__}")
    runs: list[tuple[int, int]] = []
    done = 0  # where the text not looked at yet starts: a line's start, or the break before it
    while m := _PAST_ASCII.search(text, done):  # the next line to normalize, found by a character of it
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        done = len(text) if end < 0 else end
        if runs and done - runs[-1][0] <= most and text[runs[-1][1] : start].isspace():
            runs[-1] = (runs[-1][0], done)
        else:
            runs.append((start, done))
    return runs


def blank_lines(text: str) -> int:
    """How many lines of ``text`` (split at ``\\n``) hold only whitespace (``str.isspace``), or nothing.

    >>> blank_lines("a\\n \\n\\n\u3000\\nb"), blank_lines("")
    (3, 1)
    """
    if not isinstance(text, str):
        raise TypeError(f"blank_lines() takes str, not {type(text).__name__}")
    return [*map(str.strip, text.split("\n"))].count("")


#: a character that makes a line slow on its own: not ASCII, NUL, or one of ``& < % ESC``
_SLOW_CHAR = re.compile("[^\\x01-\\x1a\\x1c-\\x24\\x27-\\x3b\\x3d-\\x7f]")


def slow_lines(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each line of ``text`` (split at ``\\n``) that :func:`not_plain` names on its
    own: one holding a character that is not ASCII, a NUL, ``&``, ``<``, ``%`` or ESC (a line alone
    holds no line break for a hyphen to end).

    >>> slow_lines("plain\\ncaf\\u00e9\\n50%\\nx-\\n")
    [(6, 10), (11, 14)]
    """
    if not isinstance(text, str):
        raise TypeError(f"slow_lines() takes str, not {type(text).__name__}")
    out = []
    done = 0
    while m := _SLOW_CHAR.search(text, done):
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        end = len(text) if end < 0 else end
        out.append((start, end))
        done = end
    return out

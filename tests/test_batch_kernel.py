"""The token batch's byte loops: the C module (auditor/text/_batchc.c, built at install) and its
Python twin (auditor/text/_batchpy.py, what an install without a C compiler runs) give the same
results on generated input and on every string of every file in ../shared/data and
tests/data/foreign; a batch built on the Python twin normalizes every text as ``normalize`` does.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import reference_paths as ref
import xxhash
from helpers import SHARED
from hypothesis import given, settings
from hypothesis import strategies as st
from test_detector import planted_rows
from test_fast_paths import FOREIGN, _file_strings, _text_files

from auditor import Dataset, DatasetSpec, Detector
from auditor.text import _batchpy
from auditor.text import kernel as batch_kernel
from auditor.text.batch import _BATCH_BYTES, PLAIN_BYTES, TokenBatch, forget_batch
from auditor.text.camel import _ASCII_WHITESPACE, MIN_HUMPS

_batchc = pytest.importorskip(
    "auditor.text._batchc", reason="auditor.text._batchc was not built (no C compiler at install)"
)


def test_the_install_runs_the_c_kernel():
    """The README's install builds the C module, and the batch uses it."""
    assert importlib.util.find_spec("auditor.text._batchc") is not None
    assert batch_kernel.impl is _batchc


def _same(texts: list[str]) -> None:
    """Both kernels, step by step as a batch runs them, give equal results on ``texts``."""
    slow = _batchc.not_plain(texts)
    assert slow == _batchpy.not_plain(texts)
    assert [_batchc.char_set(t) for t in texts] == [set(t) for t in texts]
    for t in texts:
        assert _batchc.line_runs(t, 8192) == _batchpy.line_runs(t, 8192)
        assert _batchc.line_runs(t, 40) == _batchpy.line_runs(t, 40)
        assert _batchc.blank_lines(t) == _batchpy.blank_lines(t)
    pieces: list[str | bytes] = list(texts)
    for i in slow:
        pieces[i] = texts[i].encode("utf-8", "surrogatepass")
    raw = _batchc.join(pieces)
    assert raw == _batchpy.join(pieces)
    for humps in (1, 2, MIN_HUMPS, 5):
        assert _batchc.camel_runs(raw, humps) == _batchpy.camel_runs(raw, humps), humps
    for table in (_BATCH_BYTES, bytes(range(256))):
        c, p = _batchc.squeeze(raw, table), _batchpy.squeeze(raw, table)
        assert type(c[0]) is type(p[0]) is bytearray
        assert c == p
    data, offsets = c[0], c[1]  # squeezed by the identity table: tokens of every byte value
    hashes = _batchc.token_hashes(data, offsets)
    assert hashes == _batchpy.token_hashes(data, offsets)
    ends = np.frombuffer(offsets, dtype=np.int64)
    tokens = [bytes(data[a : b - 1]) for a, b in zip(ends, ends[1:])]
    assert np.frombuffer(hashes, dtype=np.uint64).tolist() == [xxhash.xxh64_intdigest(t) for t in tokens]
    keys = np.frombuffer(hashes, dtype=np.uint64)[::3].tobytes()  # some found, some twice, some not
    assert _batchc.lookup(hashes, keys) == _batchpy.lookup(hashes, keys)
    # as a batch passes them: memoryviews of numpy arrays, whose len() counts items, not bytes
    ints, words = np.frombuffer(offsets, dtype=np.int64).copy(), np.frombuffer(hashes, dtype=np.uint64).copy()
    for kernel in (_batchc, _batchpy):
        assert kernel.token_hashes(np.frombuffer(data, dtype=np.uint8).data, ints.data) == hashes
        assert kernel.lookup(words.data, keys) == _batchc.lookup(hashes, keys)
    for width in (1, 3, 8):  # some tokens' first bytes as heads: where a search of the exact tier looks
        heads = np.unique([int.from_bytes(bytes(t[:width]), "little") for t in tokens[::4]]).astype(np.uint64)
        assert _batchc.head_hits(data, offsets, heads, width) == _batchpy.head_hits(data, offsets, heads, width)


_ALPHABET = [*"aAbBzZ09 ,.-%&<>\t\n\r\x0b\x0c\x1c\x1f\x00\x1b\x7f", "-\n", "-\r\n", "é", "\u00a0", "\ud800", "🙂"]
_WORDS = ["Book", "A", "Flight", "To", "Paris", "I", "HTTP", "Server", "iPhone", "ID", "s"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_ALPHABET + _WORDS), max_size=30).map("".join), max_size=8))
def test_generated_texts_give_the_same_results_in_c_and_python(texts):
    _same(texts)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.integers(min_value=0, max_value=6))
def test_any_bytes_give_the_same_runs_and_squeeze_in_c_and_python(raw, humps):
    assert _batchc.camel_runs(raw, humps) == _batchpy.camel_runs(raw, humps)
    assert _batchc.squeeze(raw, _BATCH_BYTES) == _batchpy.squeeze(raw, _BATCH_BYTES)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_token_hashes_are_xxh64_for_any_bytes_of_any_length(raw):
    """One token of every length 0..300 (the C XXH64 has paths for 32-byte stripes, 8, 4 and 1 bytes)."""
    for token in (raw, raw[:31], raw[:32], raw[:33], raw[:7], raw[:4]):
        data = token + b" "
        offsets = np.array([0, len(data)], dtype=np.int64).tobytes()
        for kernel in (_batchc, _batchpy):
            assert np.frombuffer(kernel.token_hashes(data, offsets), dtype=np.uint64).tolist() == [
                xxhash.xxh64_intdigest(token)
            ]


def _hashed(tokens: list[bytes]) -> list[list[int]]:
    """The token hashes of ``tokens`` (each followed by a space in one buffer) by each kernel."""
    data = b"".join(t + b" " for t in tokens)
    offsets = np.concatenate(([0], np.cumsum([len(t) + 1 for t in tokens]))).astype(np.int64).tobytes()
    return [np.frombuffer(k.token_hashes(data, offsets), dtype=np.uint64).tolist() for k in (_batchc, _batchpy)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=10), max_size=60), st.integers(1, 4))
def test_short_tokens_repeated_are_hashed_as_xxh64_in_c_and_python(tokens, repeat):
    """Tokens of up to 8 bytes, which the C kernel looks up in its cache of short tokens' hashes:
    repeated (found there), differing only in trailing NULs (``a`` and ``a\\x00``: the same bytes
    loaded, another length), and last in the buffer (fewer than 8 bytes left to load)."""
    tokens = [t for t in tokens for _ in range(repeat)] + [t + b"\x00" for t in tokens] + tokens
    want = [xxhash.xxh64_intdigest(t) for t in tokens]
    assert _hashed(tokens) == [want, want]


def test_every_one_and_two_byte_token_twice_is_hashed_as_xxh64():
    """More distinct short tokens than the C kernel's cache holds (65,792, each twice): its entries
    are overwritten by others that fall on them, and none gives another token's hash."""
    tokens = [bytes([a]) for a in range(256)] + [bytes([a, b]) for a in range(256) for b in range(256)]
    tokens += tokens[::-1]
    c, p = _hashed(tokens)
    assert c == p == [xxhash.xxh64_intdigest(t) for t in tokens]


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=60),
    st.lists(st.integers(-3, 64), max_size=30),
    st.lists(st.binary(min_size=1, max_size=8), max_size=6),
    st.integers(1, 8),
)
def test_head_hits_are_the_offsets_starting_with_a_head_in_c_and_python(data, offsets, heads, width):
    """Offsets anywhere (before the data, inside, at its end, past it), heads of any bytes; what is
    found is each offset whose first ``width`` bytes (zeros past the end) are a head."""
    values = sorted({int.from_bytes(h[:width], "little") for h in heads})
    offs, hs = np.array(offsets, dtype=np.int64).tobytes(), np.array(values, dtype=np.uint64).tobytes()
    want = [
        j
        for j, o in enumerate(offsets)
        if 0 <= o < len(data) and int.from_bytes(data[o : o + width], "little") in values
    ]
    for kernel in (_batchc, _batchpy):
        assert np.frombuffer(kernel.head_hits(data, offs, hs, width), dtype=np.int64).tolist() == want
    with pytest.raises(TypeError):
        _batchc.head_hits(data, offs, hs, 9)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1)), st.lists(st.integers(0, 2**64 - 1)), st.integers(0, 5))
def test_lookup_gives_the_first_index_of_each_hash_in_c_and_python(hashes, keys, shared):
    keys = keys + hashes[:shared] + keys[:shared]  # some hashes found, some keys twice
    h, k = np.array(hashes, dtype=np.uint64).tobytes(), np.array(keys, dtype=np.uint64).tobytes()
    first: dict[int, int] = {}
    for i, key in enumerate(keys, start=1):
        first.setdefault(key, i)
    for kernel in (_batchc, _batchpy):
        assert np.frombuffer(kernel.lookup(h, k), dtype=np.int64).tolist() == [first.get(x, 0) for x in hashes]


_RUN_VALUES = st.one_of(
    st.integers(0, 2**64 - 1),  # hashes
    st.integers(0, 40),  # crowded: values that are no hashes, words repeated
    st.sampled_from([0, 2**63, 2**64 - 1]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_RUN_VALUES, max_size=400), st.lists(st.tuples(st.integers(0, 400), st.integers(0, 400)), max_size=6))
def test_distinct_runs_gives_each_runs_sorted_distinct_values_in_c_and_python(values, spans):
    v = np.array(values, dtype=np.uint64)
    runs = [(min(a, len(v)), min(n, len(v) - min(a, len(v)))) for a, n in spans]
    starts, lengths = (np.array([r[i] for r in runs], dtype=np.int64) for i in (0, 1))
    want = [sorted(set(values[a : a + n])) for a, n in runs]
    for kernel in (_batchc, _batchpy):
        out, offsets = kernel.distinct_runs(v.tobytes(), starts.tobytes(), lengths.tobytes())
        got, offs = np.frombuffer(bytes(out), dtype=np.uint64).tolist(), np.frombuffer(offsets, dtype=np.int64).tolist()
        assert [got[a:b] for a, b in zip(offs, offs[1:])] == want and len(offs) == len(runs) + 1


def test_distinct_runs_sorts_long_runs_of_hashes_and_of_repeated_words_in_c_as_in_python():
    rng = np.random.default_rng(7)
    hashes = rng.integers(0, 2**64, 300_000, dtype=np.uint64)
    words = rng.choice(hashes[:900], 200_000)  # a text's words: a few hundred, each many times
    v = np.concatenate((hashes, words, np.arange(5000, dtype=np.uint64) << np.uint64(40)))
    starts = np.array([0, 300_000, 500_000, 0, 250_000], dtype=np.int64)
    lengths = np.array([300_000, 200_000, 5000, 70_000, 255_000], dtype=np.int64)
    c, p = (k.distinct_runs(v.tobytes(), starts.tobytes(), lengths.tobytes()) for k in (_batchc, _batchpy))
    assert bytes(c[0]) == bytes(p[0]) and c[1] == p[1]
    assert np.frombuffer(c[1], dtype=np.int64)[-1] == len(np.frombuffer(bytes(c[0]), dtype=np.uint64))


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from([*"aB9 ,.-%<\t\r\x0b\x1c\x1f\x00", "\n", "\n\n", "Hi you", "\xff"]), max_size=40).map(
        "".join
    )
)
def test_line_tokens_count_each_lines_tokens_in_c_and_python(text):
    raw = text.encode("latin-1")
    assert _batchc.line_tokens(raw, PLAIN_BYTES) == _batchpy.line_tokens(raw, PLAIN_BYTES)
    counts, marks, breaks = (
        np.frombuffer(b, dtype=d).tolist() for b, d in zip(_batchc.line_tokens(raw, PLAIN_BYTES), ("i8", "u1", "i8"))
    )
    lines = raw.split(b"\n")
    assert counts == [len(line.translate(PLAIN_BYTES).split()) for line in lines]
    assert marks == [int(bool(line.decode("latin-1").strip(_ASCII_WHITESPACE))) for line in lines]
    assert breaks == [i for i, b in enumerate(raw) if b == 10]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from([*"ab -&<%\x1b\x00\x7f\x80", "\n", "\u00e9", "\u2019", "\U0001f600", "\n\n"]), max_size=40
    ).map("".join)
)
def test_slow_lines_are_the_lines_not_plain_on_their_own_in_c_and_python(text):
    lines, at, want = text.split("\n"), 0, []
    slow = set(_batchc.not_plain(lines))  # what a batch of the lines alone would read one by one
    for i, line in enumerate(lines):
        if i in slow:
            want.append((at, at + len(line)))
        at += len(line) + 1
    assert _batchc.slow_lines(text) == _batchpy.slow_lines(text) == want


_RANGE_CHARS = st.sampled_from([*"ab\n\x00\x7f", "\x80", "\u00ad", "\u00e9", "\u200b", "\u2019", "\ud800", "\uffff"])


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_RANGE_CHARS | st.sampled_from(["\U0001f600", "\U000e0041", "\U0010ffff"]), max_size=30).map("".join),
    st.lists(_RANGE_CHARS | st.characters(), max_size=6),
    st.booleans(),
)
def test_the_first_character_in_ranges_is_found_in_c_and_python(text, chars, outside):
    ranges = batch_kernel.char_ranges(map(ord, chars), outside=outside)
    want = next((i for i, c in enumerate(text) if (c in chars) != outside), -1)
    assert _batchc.first_in(text, ranges) == _batchpy.first_in(text, ranges) == want


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        _RANGE_CHARS | st.sampled_from(["\U0001f600", "\U000e0041", "\U0010ffff", "\u00ff", "\u0100"]), max_size=40
    ).map("".join)
    | st.text(max_size=60)
)
def test_a_texts_characters_are_its_set_in_c_and_python(text):
    """Latin-1, two-byte and four-byte strings; code points at each bitmap's edges, past U+FFFF, surrogates."""
    assert _batchc.char_set(text) == _batchpy.char_set(text) == set(text)


_LINE_CHARS = st.sampled_from([*"a \t\r\n\n\x00\x1c\x0b", "\u00e9", "\u3000", "\u2028", "\x85", "\U0001f600", "xyz"])


@settings(max_examples=500, deadline=None)
@given(st.lists(_LINE_CHARS, max_size=40).map("".join), st.sampled_from([0, 1, 3, 8, 8192]))
def test_runs_of_lines_past_ascii_and_blank_lines_are_found_in_c_and_python(text, most):
    """Runs joined across blank lines (ASCII whitespace) only, cut at ``most`` characters; blank lines by ``str.isspace``."""
    runs = _batchc.line_runs(text, most)
    assert runs == _batchpy.line_runs(text, most)
    lines = [(m, m + len(x)) for m, x in zip(np.cumsum([0] + [len(x) + 1 for x in text.split("\n")]), text.split("\n"))]
    past = [(a, b) for a, b in lines if any(c == "\x00" or not c.isascii() for c in text[a:b])]
    assert [p for p in past if not any(a <= p[0] and p[1] <= b for a, b in runs)] == []  # every such line in a run
    assert _batchc.blank_lines(text) == _batchpy.blank_lines(text) == sum(not x.strip() for x in text.split("\n"))


def test_wrong_arguments_raise_type_error_in_c_and_python():
    for kernel in (_batchc, _batchpy):
        for call in (
            lambda k=kernel: k.not_plain(["a", b"b"]),
            lambda k=kernel: k.join(["a", 1]),
            lambda k=kernel: k.join(["caf\u00e9"]),
            lambda k=kernel: k.squeeze(b"a", b"short"),
            lambda k=kernel: k.token_hashes(b"a ", b"\x00" * 12),
            lambda k=kernel: k.lookup(b"\x00" * 8, b"\x00" * 9),
            lambda k=kernel: k.distinct_runs(b"\x00" * 8, b"\x00" * 8, b"\x00" * 16),
            lambda k=kernel: k.line_tokens(b"a", b"short"),
            lambda k=kernel: k.slow_lines(b"bytes"),
            lambda k=kernel: k.first_in(b"bytes", b""),
            lambda k=kernel: k.first_in("a", b"\x00" * 4),
            lambda k=kernel: k.char_set(b"bytes"),
            lambda k=kernel: k.line_runs(b"bytes", 1),
            lambda k=kernel: k.blank_lines(b"bytes"),
        ):
            with pytest.raises(TypeError):
                call()
        with pytest.raises(ValueError):  # a run past the values
            kernel.distinct_runs(b"\x00" * 16, np.array([1]).tobytes(), np.array([2]).tobytes())


def _roots():
    return [FOREIGN, *([SHARED] if SHARED.is_dir() else [])]


@pytest.mark.parametrize("root", _roots(), ids=lambda p: p.name)
def test_every_string_of_every_real_file_gives_the_same_results_in_c_and_python(root):
    checked = 0
    for path in _text_files(root):
        texts = _file_strings(path)
        for i in range(0, len(texts), 4096):
            _same(texts[i : i + 4096])
        checked += len(texts)
    assert checked > 1000


def test_a_batch_on_the_python_kernel_normalizes_real_text_as_the_reference(monkeypatch):
    """What an install without a C compiler runs: the whole batch, on every string of the foreign files."""
    monkeypatch.setattr(batch_kernel, "impl", _batchpy)
    forget_batch()
    checked = 0
    for path in _text_files(FOREIGN):
        texts = _file_strings(path)
        for i in range(0, len(texts), 1024):
            chunk = texts[i : i + 1024]
            b = TokenBatch(chunk)
            assert [b.normalized(k) for k in range(len(chunk))] == [ref.normalize(t).encode() for t in chunk], path
            counts = [len(ref.tokens(t)) + 1 for t in chunk]
            assert b.token_starts.tolist() == np.concatenate(([0], np.cumsum(counts, dtype=np.int64))).tolist()
            assert [h.tolist() for h in b.text_token_hashes(range(len(chunk)))] == [
                [xxhash.xxh64_intdigest(w.encode()) for w in ref.tokens(t)] for t in chunk
            ], path
            checked += len(chunk)
    assert checked > 1000


def test_the_python_kernel_gives_the_same_findings_as_the_c_kernel(monkeypatch):
    """Indexes built and training rows searched on each kernel (the batch's tiers: exact, n-gram,
    MinHash): the same findings, planted StableToolBench queries among them."""
    rows = planted_rows(list(Dataset(DatasetSpec("stabletoolbench", ["stabletoolbench"], role="eval")).records()))
    rows += [{"text": t} for t in _file_strings(next(iter(_text_files(FOREIGN))))[:2000]]

    def findings() -> list[tuple]:
        forget_batch()
        found = Detector("stabletoolbench", methods=["exact", "ngram", "minhash"]).search(rows)
        return sorted((f.eval_id, f.train_id, f.method, f.conclusive) for f in found)

    in_c = findings()
    monkeypatch.setattr(batch_kernel, "impl", _batchpy)
    assert findings() == in_c
    assert sum(t.startswith("leak") for _, t, _, _ in in_c) >= 20

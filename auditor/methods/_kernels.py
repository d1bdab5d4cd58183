"""Fast kernels for the scan's hot path: n-gram containment over a whole batch, and exact-match units.

The n-gram kernel avoids hashing every training n-gram in Python. The batch is normalized at once
(:class:`~auditor.text.batch.TokenBatch`: one buffer, no Python object per token) and each training
token is mapped to an id in the *eval vocabulary* with Arrow's hash tables
(:class:`~auditor.text.batch.VocabLookup`; tokens absent from every eval item get id 0). An n-gram
that contains a token of no eval item cannot be an eval n-gram, so only windows free of id 0 are
hashed (a rare-token prefilter that drops almost every window of unrelated text), with numpy, in the same polynomial-of-xxh64 hash as
:func:`auditor.text.tokens.ngram_hashes` — so the persisted index tables are unchanged. A
separator (id 0) between records keeps windows inside one record.

>>> import numpy as np
>>> from auditor.text.tokens import ngram_hashes, token_hashes
>>> grams = np.unique(ngram_hashes(token_hashes("a b c d".split()), 3))
>>> scanner = NgramScanner(["a", "b", "c", "d"], {3: (grams, np.zeros(len(grams), dtype=np.int64))})
>>> scanner.matches(["x a b c d y", "a b x c d", "b c d"], n_eval=1)
[(0, 0, 2), (2, 0, 1)]

No errors are raised here: empty texts and empty tables give no matches.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import xxhash

from ..text.batch import _EMPTY_HASH, PLAIN_BYTES, TokenBatch, VocabLookup, _simple, forget_batch, token_batch
from ..text.evasion import _ASCII_WHITESPACE
from ..text.tokens import _P


class NgramScanner:
    """Counts, per training text and eval item, the item's distinct n-grams present in the text.

    ``vocab_tokens``: every token of every eval item (a superset is fine); ``tables``: n →
    ``(sorted n-gram hashes, eval position of each)`` as built by the ``ngram`` index.
    """

    def __init__(self, vocab_tokens: Iterable[str], tables: dict[int, tuple[np.ndarray, np.ndarray]]):
        vocab: dict[bytes, int] = {}
        for t in vocab_tokens:
            b = t.encode("utf-8")
            if b not in vocab:
                vocab[b] = len(vocab) + 1
        self.vocab = vocab
        th = np.zeros(len(vocab) + 1, dtype=np.uint64)
        for b, i in vocab.items():
            th[i] = xxhash.xxh64_intdigest(b)
        self.token_hash = th
        self.tables = tables
        self._register()

    def _register(self) -> None:
        """Add this vocabulary to the process's shared one; ``_local`` maps a shared id to this
        scanner's id (0: not in it; grown with zeros as the shared vocabulary grows)."""
        for b in self.vocab:
            if b not in _SHARED_VOCAB:
                _SHARED_VOCAB[b] = len(_SHARED_VOCAB) + 1
        local = np.zeros(len(_SHARED_VOCAB) + 1, dtype=np.int64)
        for b, i in self.vocab.items():
            local[_SHARED_VOCAB[b]] = i
        self._local = local

    def _local_ids(self, shared: np.ndarray) -> np.ndarray:
        """This scanner's ids of tokens given as shared ids (ids added to the shared vocabulary after
        this scanner are not in it: 0)."""
        if len(self._local) < len(_SHARED_VOCAB) + 1:
            grown = np.zeros(len(_SHARED_VOCAB) + 1, dtype=self._local.dtype)
            grown[: len(self._local)] = self._local
            self._local = grown
        return self._local[shared]

    def __getstate__(self):  # shared ids belong to one process: rebuilt where it is unpickled
        state = dict(self.__dict__)
        state.pop("_local", None)
        return state

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)
        self._register()

    def matches(self, texts: Sequence[str], n_eval: int) -> list[tuple[int, int, int]]:
        """``(text index, eval position, distinct matched n-grams)``, sorted by text then eval position."""
        keys = [docs * np.int64(n_eval) + self.tables[n][1][entries] for n, docs, entries in self.hits(texts)]
        if not keys:
            return []
        uniq, counts = np.unique(np.concatenate(keys), return_counts=True)
        return [(int(k // n_eval), int(k % n_eval), int(c)) for k, c in zip(uniq.tolist(), counts.tolist())]

    def hits(self, texts: Sequence[str]) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """Every eval n-gram found, once per text: ``(n, text indices, table entries)`` per table
        holding a hit, where entry ``e`` of table ``n`` is the n-gram ``tables[n][0][e]`` of eval item
        ``tables[n][1][e]`` (an n-gram several items hold is one entry per item)."""
        if not self.tables or not texts:
            return []
        shared, starts = _shared_ids(texts)
        ids = self._local_ids(shared)
        zeros = np.empty(len(ids) + 1, dtype=np.int64)  # zeros[i]: how many 0 ids before token i
        zeros[0] = 0
        np.cumsum(ids == 0, out=zeros[1:])
        th = self.token_hash
        out: list[tuple[int, np.ndarray, np.ndarray]] = []
        for n, (H, _) in self.tables.items():
            count = len(ids) - n + 1
            if count <= 0 or not len(H):
                continue
            starts_ok = np.flatnonzero(zeros[n : n + count] == zeros[:count])
            if not len(starts_ok):
                continue
            h = np.zeros(len(starts_ok), dtype=np.uint64)
            with np.errstate(over="ignore"):
                for j in range(n):
                    h = h * _P + th[ids[starts_ok + j]]
            left = np.searchsorted(H, h, "left")
            right = np.searchsorted(H, h, "right")
            hit = right > left
            if not hit.any():
                continue
            doc = np.searchsorted(starts, starts_ok[hit], "right") - 1
            h, left, right = h[hit], left[hit], right[hit]
            # one count per distinct n-gram of a text
            order = np.lexsort((h, doc))
            doc, h, left, right = doc[order], h[order], left[order], right[order]
            first = np.ones(len(h), dtype=bool)
            first[1:] = (doc[1:] != doc[:-1]) | (h[1:] != h[:-1])
            doc, left, right = doc[first], left[first], right[first]
            lengths = right - left
            offsets = np.repeat(left - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
            out.append((n, np.repeat(doc, lengths), offsets + np.arange(lengths.sum())))
        return out


#: every scanner's tokens under one id space, so that the scanners of several checks (one pass over
#: a training set) map a batch's tokens once: :func:`_shared_ids`, then a numpy lookup per scanner.
#: It only grows, so its size names its state.
_SHARED_VOCAB: dict[bytes, int] = {}
#: the lookup of the shared vocabulary at the size it was built for: ``[size, VocabLookup]``
_SHARED_LOOKUP: list = []


def reset_shared_vocabulary() -> None:
    """Forget the shared vocabulary and every cached lookup built on it (tests only: in a scan the
    vocabulary only grows, and a cache keyed by its size would be stale after a reset)."""
    _SHARED_VOCAB.clear()
    _SHARED_LOOKUP.clear()
    forget_batch()


def _shared_lookup() -> VocabLookup:
    if not _SHARED_LOOKUP or _SHARED_LOOKUP[0] != len(_SHARED_VOCAB):
        _SHARED_LOOKUP[:] = [len(_SHARED_VOCAB), VocabLookup(_SHARED_VOCAB)]  # ids in insertion order
    return _SHARED_LOOKUP[1]


def _shared_ids(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Shared-vocabulary ids of the tokens of ``texts``, each text followed by a 0 (its separator),
    and where each text starts; a batch's tokens are mapped once per state of the shared vocabulary."""
    batch, positions = token_batch(texts)
    key = ("shared ids", len(_SHARED_VOCAB))
    ids = batch.memo.get(key)
    if ids is None:
        ids = batch.memo[key] = _shared_lookup().ids(batch)
    if positions == list(range(len(batch))):
        return ids, batch.token_starts[:-1]
    return _select(ids, batch.token_starts, np.asarray(positions, dtype=np.int64))


def _select(ids: np.ndarray, token_starts: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ids of the batch texts ``positions`` (each with its separator), in that order, and where
    each starts. Texts ``[a b 0] [0] [c 0]`` at positions ``[2, 0]`` → ``[c 0 a b 0]``, ``[0 2]``.

    >>> _select(np.array([5, 6, 0, 0, 7, 0]), np.array([0, 3, 4, 6]), np.array([2, 0]))
    (array([7, 0, 5, 6, 0]), array([0, 2]))
    """
    first = token_starts[positions]
    counts = token_starts[positions + 1] - first
    starts = np.zeros(len(positions), dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    return ids[np.repeat(first - starts, counts) + np.arange(int(counts.sum()))], starts


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

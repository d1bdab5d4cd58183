"""The ``ngram`` method's kernel, the scan's hot path: n-gram containment over a whole batch.

The n-gram kernel avoids hashing every training n-gram in Python. The batch is normalized at once
(:class:`~auditor.text.batch.TokenBatch`: one buffer, no Python object per token) and each training
token is mapped to an id in the *eval vocabulary* by its xxh64 in one hash-table pass of the batch
kernel (:func:`~auditor.text.kernel.lookup`; tokens absent from every eval item get id 0). An n-gram
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

from ..text.batch import forget_batch, token_batch
from ..text.kernel import lookup
from ..text.tokens import _P

#: the top bits of an n-gram hash a scanner's bitmap of a table is indexed by (1 MiB of bools a table)
BITMAP_BITS = 20
_SHIFT = np.uint64(64 - BITMAP_BITS)


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
        #: its ids are the shared ones (the first scanner of a process, the one of most runs): no mapping
        self._same = bool(np.array_equal(local, np.arange(len(local))))

    def _local_ids(self, shared: np.ndarray) -> np.ndarray:
        """This scanner's ids of tokens given as shared ids (ids added to the shared vocabulary after
        this scanner are not in it: 0). Where they are the shared ids and the vocabulary has not grown
        since, ``shared`` itself.

        >>> s = NgramScanner(["zq1", "zq2"], {})
        >>> s._local_ids(np.array([_SHARED_VOCAB["zq2".encode()], 0])).tolist()
        [2, 0]
        """
        if len(self._local) < len(_SHARED_VOCAB) + 1:
            grown = np.zeros(len(_SHARED_VOCAB) + 1, dtype=self._local.dtype)
            grown[: len(self._local)] = self._local
            self._local = grown
            self._same = False  # the ids added since are not this scanner's
        return shared if self._same else self._local[shared]

    def _bitmap(self, n: int) -> np.ndarray:
        """Which values of a hash's top :data:`BITMAP_BITS` bits table ``n``'s n-grams take: the windows
        of a batch are looked up in the table only where theirs is one (made once per table and process)."""
        bitmaps = self.__dict__.setdefault("_bitmaps", {})
        if n not in bitmaps:
            bitmap = np.zeros(1 << BITMAP_BITS, dtype=bool)
            bitmap[(self.tables[n][0] >> _SHIFT).astype(np.intp)] = True
            bitmaps[n] = bitmap
        return bitmaps[n]

    def __getstate__(self):  # shared ids belong to one process: rebuilt where it is unpickled
        state = dict(self.__dict__)
        state.pop("_local", None)
        state.pop("_bitmaps", None)  # 1 MiB a table: made again where it is used
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
            maybe = np.flatnonzero(self._bitmap(n)[(h >> _SHIFT).astype(np.intp)])  # nearly no window is an eval n-gram
            h = h[maybe]
            left = np.searchsorted(H, h, "left")
            right = np.searchsorted(H, h, "right")
            hit = right > left
            if not hit.any():
                continue
            doc = np.searchsorted(starts, starts_ok[maybe[hit]], "right") - 1
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
#: xxh64 of each token of the shared vocabulary, in id order, at the size it was built for: ``[size, bytes]``
_SHARED_HASHES: list = []


def reset_shared_vocabulary() -> None:
    """Forget the shared vocabulary and every cached lookup built on it (tests only: in a scan the
    vocabulary only grows, and a cache keyed by its size would be stale after a reset)."""
    _SHARED_VOCAB.clear()
    _SHARED_HASHES.clear()
    forget_batch()


def _shared_hashes() -> bytes:
    if not _SHARED_HASHES or _SHARED_HASHES[0] != len(_SHARED_VOCAB):
        hashes = np.fromiter(map(xxhash.xxh64_intdigest, _SHARED_VOCAB), dtype=np.uint64, count=len(_SHARED_VOCAB))
        _SHARED_HASHES[:] = [len(_SHARED_VOCAB), hashes.tobytes()]  # ids in insertion order
    return _SHARED_HASHES[1]


def _shared_ids(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Shared-vocabulary ids of the tokens of ``texts``, each text followed by a 0 (its separator),
    and where each text starts; a batch's tokens are mapped once per state of the shared vocabulary,
    by their xxh64 (:meth:`~auditor.text.batch.TokenBatch.token_hashes`, which the n-gram hashes are
    made of, so a token is mapped to the vocabulary token whose n-grams it makes)."""
    batch, positions = token_batch(texts)
    key = ("shared ids", len(_SHARED_VOCAB))
    ids = batch.memo.get(key)
    if ids is None:
        ids = np.frombuffer(lookup(batch.token_hashes().data, _shared_hashes()), dtype=np.int64)
        ids[batch.token_starts[1:] - 1] = 0  # separators: no vocabulary token, whatever their hash
        batch.memo[key] = ids
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

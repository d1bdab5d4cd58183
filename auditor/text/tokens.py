"""Token and n-gram hashes shared by the n-gram, MinHash and boilerplate tiers and the scan kernels.

Tokens (from :func:`auditor.text.normalize.tokens`) are hashed with xxh64; an n-gram's hash is a 64-bit
polynomial hash of its token hashes, so a window slides in numpy without re-hashing text.

>>> th = token_hashes(["a", "b", "c"])
>>> len(ngram_hashes(th, 2)), len(ngram_hashes(th, 4))
(2, 0)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xxhash

from .kernel import distinct_runs

_P = np.uint64(0x100000001B3)  # FNV prime as polynomial base (odd → invertible mod 2**64)
_TOKEN_CACHE: dict[str, int] = {}
_TOKEN_CACHE_MAX = 2_000_000


def distinct(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values of a 1-D array (sort-based; faster here than ``np.unique``'s hash path)."""
    a = np.sort(a)
    return a[np.concatenate(([True], a[1:] != a[:-1]))] if len(a) else a


def token_hashes(toks: list[str]) -> np.ndarray:
    """xxh64 of each token (cached), as uint64."""
    cache = _TOKEN_CACHE
    hashes = list(map(cache.get, toks))  # one C loop; misses are None
    if None in hashes:
        for i, h in enumerate(hashes):
            if h is None:
                t = toks[i]
                h = hashes[i] = xxhash.xxh64_intdigest(t.encode("utf-8"))
                if len(cache) < _TOKEN_CACHE_MAX:
                    cache[t] = h
    return np.array(hashes, dtype=np.uint64)


def ngram_hashes(th: np.ndarray, n: int) -> np.ndarray:
    """Polynomial hashes of every window of ``n`` token hashes (empty when fewer tokens)."""
    count = len(th) - n + 1
    if count <= 0:
        return np.empty(0, dtype=np.uint64)
    h = np.zeros(count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(n):
            h = h * _P + th[j : j + count]
    return h


def ngram_hashes_at(th: np.ndarray, n: int, starts: np.ndarray) -> np.ndarray:
    """``ngram_hashes(th, n)[starts]``, hashing those windows only (each start at most ``len(th) - n``).

    >>> th = token_hashes(list("abcdefgh"))
    >>> ngram_hashes_at(th, 3, np.array([0, 4, 5])).tolist() == ngram_hashes(th, 3)[[0, 4, 5]].tolist()
    True
    """
    h = np.zeros(len(starts), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(n):
            h = h * _P + th[starts + j]
    return h


def packed_ngram_hashes(all_hashes: Sequence[np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each item's ``ngram_hashes(th, n)`` (items given by their token hashes), packed: the values one
    item after the other, and where each item's begin (``len(all_hashes) + 1`` offsets). Hashed in one
    pass over the items' tokens joined, the windows across two items left out.

    >>> items = [token_hashes(list("abcd")), token_hashes(["x"]), token_hashes(list("efg"))]
    >>> values, offsets = packed_ngram_hashes(items, 2)
    >>> offsets.tolist(), values.tolist() == np.concatenate([ngram_hashes(th, 2) for th in items]).tolist()
    ([0, 3, 3, 5], True)
    """
    lengths = np.fromiter(map(len, all_hashes), dtype=np.int64, count=len(all_hashes))
    counts = np.maximum(lengths - n + 1, 0)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    if not offsets[-1]:
        return np.empty(0, dtype=np.uint64), offsets
    every = ngram_hashes(np.concatenate(all_hashes).astype(np.uint64, copy=False), n)
    firsts = np.concatenate(([0], np.cumsum(lengths)[:-1]))  # each item's first token
    return every[np.repeat(firsts - offsets[:-1], counts) + np.arange(offsets[-1])], offsets


def covered_tokens(starts: np.ndarray, n: int, length: int) -> np.ndarray:
    """Which of ``length`` tokens lie in an n-gram whose start is marked in ``starts``.

    >>> covered_tokens(np.array([True, False, False, False, True]), 3, 7).astype(int).tolist()
    [1, 1, 1, 0, 1, 1, 1]
    """
    marks = np.zeros(length + 1, dtype=np.int64)
    at = np.flatnonzero(starts)
    np.add.at(marks, at, 1)
    np.add.at(marks, np.minimum(at + n, length), -1)
    return np.cumsum(marks[:length]) > 0


def shared_grams(all_hashes: Sequence[np.ndarray], n: int, share: float, min_items: int) -> np.ndarray:
    """The ``n``-gram hashes (sorted) that at least ``share`` of the items (each given by its token
    hashes, :func:`token_hashes` of its tokens) hold, and ``min_items`` of them: in eval items, the
    template text every item is rendered in. Empty when ``share`` is 0.

    >>> items = [token_hashes(f"answer the question below and then stop question {w} is what".split()) for w in "abcd"]
    >>> len(shared_grams(items, 8, 0.5, 3)), len(shared_grams(items[:2], 8, 0.5, 3)), len(shared_grams(items, 8, 0, 3))
    (1, 0, 0)
    """
    if share <= 0:
        return np.empty(0, dtype=np.uint64)
    values, offsets = packed_ngram_hashes(all_hashes, n)
    if int((np.diff(offsets) > 0).sum()) < min_items:  # items of n tokens or more
        return np.empty(0, dtype=np.uint64)
    per_item, _ = distinct_runs(values, offsets[:-1], np.diff(offsets))  # each item's n-grams once
    grams, counts = np.unique(per_item, return_counts=True)
    return grams[counts >= max(min_items, share * len(all_hashes))]

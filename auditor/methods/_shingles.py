"""The shingle sets ``minhash`` sketches and verifies: a text's shingle hashes (:func:`shingle_hashes`),
a set as its sorted distinct hashes (:func:`distinct`; many at once, packed: :func:`distinct_packed`),
a set asked about many hashes at once (:class:`HashSet`), which sets may reach a Jaccard with some
eval set (:func:`may_reach` by their hashes, :func:`sized_sets` by their size), many sets packed in one array
(:func:`packed`) and the sizes of pairwise intersections, vectorized (:func:`intersections`: the
exact Jaccard or containment a candidate is verified on). No errors are raised here.
"""

from __future__ import annotations

import numpy as np

from ..text.kernel import distinct_runs
from ..text.normalize import normalize, tokens
from ..text.tokens import distinct, ngram_hashes, token_hashes
from ._minhash_sketch import fmix


def distinct_packed(
    values: np.ndarray, offsets: np.ndarray, runs: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`distinct` of each run ``values[offsets[i]:offsets[i + 1]]`` (of the runs ``i`` in ``runs``,
    all without), packed (:func:`packed`): one kernel call for a batch's sets, not one sort per set.

    >>> v, offs = distinct_packed(np.array([5, 3, 5, 9, 1, 1], dtype=np.uint64), np.array([0, 3, 6]))
    >>> v.tolist(), offs.tolist()
    ([3, 5, 1, 9], [0, 2, 4])
    """
    starts, lengths = offsets[:-1], np.diff(offsets)
    if runs is not None:
        starts, lengths = starts[runs], lengths[runs]
    return distinct_runs(values.astype(np.uint64, copy=False), starts, lengths)


def shingle_hashes(text: str, shingle: str = "word", size: int = 3) -> np.ndarray:
    """64-bit hashes of the shingles of ``normalize(text)``, in text order (with repeats).

    >>> len(shingle_hashes("a b c d", "word", 3)), len(shingle_hashes("abcd", "char", 3))
    (2, 2)
    """
    if shingle == "word":
        return ngram_hashes(token_hashes(tokens(text)), size)
    norm = normalize(text)
    if not norm:
        return np.empty(0, dtype=np.uint64)
    cps = np.frombuffer(norm.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    return ngram_hashes(fmix(cps, 64), size)


def intersections(a: np.ndarray, a_start: np.ndarray, a_len: np.ndarray, b: np.ndarray, b_start: np.ndarray, b_len: np.ndarray) -> np.ndarray:  # fmt: skip
    """|A_k ∩ B_k| for each pair ``k`` of distinct-hash sets ``A_k = a[a_start[k]:a_start[k] + a_len[k]]``
    (``B_k`` likewise), vectorized: the pairs' hashes tagged with the pair, sorted, equal neighbours counted.

    >>> a, b = np.array([1, 2, 3, 7], dtype=np.uint64), np.array([2, 3, 4, 7, 9], dtype=np.uint64)
    >>> intersections(a, np.array([0, 3]), np.array([3, 1]), b, np.array([0, 3]), np.array([3, 2])).tolist()
    [2, 1]
    """
    k = len(a_len)
    if not k:
        return np.zeros(0, dtype=np.int64)

    def gather(src: np.ndarray, start: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        first = np.concatenate(([0], np.cumsum(n)[:-1]))
        return np.repeat(np.arange(k), n), src[np.repeat(start - first, n) + np.arange(int(n.sum()))]

    ka, ha = gather(a, a_start, a_len)
    kb, hb = gather(b, b_start, b_len)
    keys, hashes = np.concatenate((ka, kb)), np.concatenate((ha, hb))
    order = np.lexsort((hashes, keys))
    keys, hashes = keys[order], hashes[order]
    same = (keys[1:] == keys[:-1]) & (hashes[1:] == hashes[:-1])
    return np.bincount(keys[1:][same], minlength=k)


class HashSet:
    """Sorted distinct 64-bit hashes, asked about many hashes at once (:meth:`contains`): a bitmap of
    their top :attr:`BITS` bits answers most of them (hashes are uniform there), ``searchsorted``
    only those it lets through — several times faster than searching every hash.

    >>> HashSet(np.array([3, 2**63 + 5], dtype=np.uint64)).contains(np.array([5, 3, 2**63 + 5], dtype=np.uint64)).tolist()
    [False, True, True]
    """

    BITS = 20

    def __init__(self, hashes: np.ndarray):
        self.sorted = distinct(hashes.astype(np.uint64, copy=False))
        self._shift = np.uint64(64 - self.BITS)
        self._bitmap = np.zeros(1 << self.BITS, dtype=bool)
        self._bitmap[(self.sorted >> self._shift).astype(np.intp)] = True

    def __len__(self) -> int:
        return len(self.sorted)

    def contains(self, hashes: np.ndarray) -> np.ndarray:
        """Whether each of ``hashes`` (uint64) is in the set."""
        out = np.zeros(len(hashes), dtype=bool)
        if not len(self.sorted):
            return out
        maybe = np.flatnonzero(self._bitmap[(hashes >> self._shift).astype(np.intp)])
        found = hashes[maybe]
        out[maybe] = self.sorted[np.minimum(np.searchsorted(self.sorted, found), len(self.sorted) - 1)] == found
        return out


def may_reach(values: np.ndarray, offsets: np.ndarray, union: HashSet, share: float) -> np.ndarray:
    """Whether at least ``share`` of each set (sorted distinct hashes, packed: :func:`packed`) lies in ``union``.
    A set with Jaccard ``share`` or more with some set inside ``union`` does (``|A ∩ B| >= J |A ∪ B| >= J |A|``),
    so a set that does not pairs with none of them at that Jaccard: the search sketches it for nothing.

    >>> u = HashSet(np.array([1, 2, 3], dtype=np.uint64))
    >>> sets = [np.array([1, 2, 3, 4], np.uint64), np.array([1, 9], np.uint64), np.array([], np.uint64)]
    >>> may_reach(*packed(sets), u, 0.6).tolist()
    [True, False, True]
    """
    n = np.diff(offsets)
    if share <= 0 or not len(union) or not len(n):
        return np.full(len(n), share <= 0) | (n == 0)
    hit = union.contains(values[offsets[0] : offsets[-1]])
    seen = np.concatenate(([0], np.cumsum(hit)))
    inside = seen[offsets[1:] - offsets[0]] - seen[offsets[:-1] - offsets[0]]  # each set's hashes in union
    return inside >= share * n * (1 - 1e-12)  # the slack: float rounding of the score


def sized_sets(
    values: np.ndarray, offsets: np.ndarray, eval_offsets: np.ndarray, share: float
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """The sets (packed hashes: :func:`packed`) that may have at most ``bound = largest / share``
    distinct hashes, ``largest`` the most an eval set holds (``eval_offsets``: the eval sets packed),
    by position, and the distinct hashes of each (:func:`distinct_packed`; of the others, none). A set
    with more than ``bound`` has Jaccard below ``share`` with every eval set (``J(A, B) <= |B| / |A|``),
    so the search sketches it for nothing. A longer set is told by the distinct hashes of its first
    ``2 x bound + 1``, a lower bound of its own (a long document is left out after sorting a prefix of
    it, not all of it); a set they do not tell is kept.

    >>> v, offs = packed([np.arange(9, dtype=np.uint64), np.zeros(9, dtype=np.uint64), np.arange(3, dtype=np.uint64)])
    >>> fit, (kept, kept_offsets) = sized_sets(v, offs, np.array([0, 3]), 0.75)
    >>> fit.tolist(), kept.tolist(), kept_offsets.tolist()
    ([1, 2], [0, 0, 1, 2], [0, 0, 1, 4])
    """
    n = np.diff(offsets)
    fit = np.arange(len(n))
    if share > 0:
        largest = int(np.diff(eval_offsets).max()) if len(eval_offsets) > 1 else 0
        bound = int(largest / share * (1 + 1e-9))  # the slack: float rounding of the score
        longer = np.flatnonzero(n > bound)
        if len(longer):
            _, counted = distinct_runs(values, offsets[:-1][longer], np.minimum(n[longer], 2 * bound + 1))
            fit = np.setdiff1d(fit, longer[np.diff(counted) > bound], assume_unique=True)
    kept, kept_offsets = distinct_packed(values, offsets, fit)
    lengths = np.zeros(len(n), dtype=np.int64)
    lengths[fit] = np.diff(kept_offsets)
    return fit, (kept, np.concatenate(([0], np.cumsum(lengths))).astype(np.int64))


def packed(sets: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Hash sets as one array and the offsets of each set in it (``offsets[i]:offsets[i + 1]``)."""
    lengths = np.fromiter(map(len, sets), dtype=np.int64, count=len(sets))
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    return (np.concatenate(sets) if sets else np.empty(0, dtype=np.uint64)), offsets


def sets_of_at_least(
    values: np.ndarray, offsets: np.ndarray, least: int
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Which packed runs (:func:`packed`) hold ``least`` distinct values or
    more, and the distinct values of those, packed (the others' empty), sorted: one kernel call.

    >>> ok, (v, offs) = sets_of_at_least(*packed([np.array([3, 1, 3], dtype=np.uint64), np.array([2], dtype=np.uint64)]), 2)
    >>> ok.tolist(), v.tolist(), offs.tolist()
    ([True, False], [1, 3], [0, 2, 2])
    """
    uniq, bounds = distinct_packed(values.astype(np.uint64, copy=False), offsets)
    counts = np.diff(bounds)
    indexed = counts >= least
    kept = np.where(indexed, counts, 0)
    return indexed, (uniq[np.repeat(indexed, counts)], np.concatenate(([0], np.cumsum(kept))).astype(np.int64))


def gathered(values: np.ndarray, offsets: np.ndarray, runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The runs ``runs`` of packed ``values`` (:func:`packed`), packed in their turn.

    >>> v, offs = gathered(np.array([1, 2, 3, 4, 5]), np.array([0, 2, 3, 5]), np.array([2, 0]))
    >>> v.tolist(), offs.tolist()
    ([4, 5, 1, 2], [0, 2, 4])
    """
    lengths = (offsets[1:] - offsets[:-1])[runs]
    out = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    at = np.repeat(offsets[:-1][runs] - out[:-1], lengths) + np.arange(int(out[-1]))
    return values[at], out

"""Vectorized MinHash signatures and LSH banding, bit-compatible with datasketch.

:func:`permutations` draws the same permutation parameters as ``datasketch.MinHash`` for a given
``num_perm``, ``seed`` and ``scheme``; :func:`signatures` applies them to many documents at once
(numpy, one ``minimum.reduceat`` per chunk) instead of one ``update_batch`` per document. For the same
input hash values the result equals ``MinHash(num_perm, seed, hashfunc=..., scheme=...).hashvalues``.

Schemes (as in datasketch >= 2.0): ``affine32`` (default; 32-bit input hashes, MurmurHash3 finalizer
then ``a*h + b mod 2**32``), ``affine64`` (64-bit) and ``legacy`` (``(a*h + b) mod (2**61-1)``
truncated to 32 bits, the only scheme before 2.0).

:func:`window_signatures` gives the signature of every window of ``blocks_per_window`` consecutive
blocks of ``block`` shingles (stride one block), for containment search of a short item inside a long
record; :func:`multi_window_signatures` does it for several window sizes at once.
:func:`band_keys` cuts signatures into ``bands`` bands of ``rows`` rows and hashes each band to
64 bits; two documents are LSH candidates when any band key is equal. :func:`lsh_params` picks
``(bands, rows)`` for a threshold with datasketch's own optimiser.

>>> import numpy as np
>>> perms = permutations(16, seed=1)
>>> hv = np.array([11, 22, 33, 44, 55], dtype=np.uint64)
>>> sig = signatures(hv, np.array([0, 3]), perms)
>>> sig.shape, bool((sig[0] == sig[1]).all())
((2, 16), False)
>>> from datasketch import MinHash
>>> m = MinHash(16, seed=1, hashfunc=int); m.update_batch([11, 22, 33])
>>> bool((m.hashvalues == sig[0]).all())
True

Raises :class:`~auditor.errors.ConfigError` for an unknown scheme or impossible band parameters.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..errors import ConfigError

SCHEMES = ("affine32", "affine64", "legacy")
_MERSENNE = np.uint64((1 << 61) - 1)
_MAX32 = np.uint64((1 << 32) - 1)
_DTYPES = {"affine32": np.uint32, "affine64": np.uint64, "legacy": np.uint64}
_WIDTHS = {"affine32": 32, "affine64": 64, "legacy": 32}
_FMIX = {
    32: (np.uint32(16), np.uint32(0x85EBCA6B), np.uint32(13), np.uint32(0xC2B2AE35), np.uint32(16)),
    64: (np.uint64(33), np.uint64(0xFF51AFD7ED558CCD), np.uint64(33), np.uint64(0xC4CEB9FE1A85EC53), np.uint64(33)),
}
#: shingle hashes per chunk (num_perm x CHUNK values in memory at once; 4096 measured fastest)
CHUNK = 4096


def _check(scheme: str) -> None:
    if scheme not in SCHEMES:
        raise ConfigError(f"unknown MinHash scheme '{scheme}' (schemes: {', '.join(SCHEMES)})")


def fold(h64: np.ndarray, scheme: str = "affine32") -> np.ndarray:
    """64-bit shingle hashes → the scheme's input width (xor of the halves for 32-bit schemes)."""
    _check(scheme)
    h64 = np.asarray(h64, dtype=np.uint64)
    if _WIDTHS[scheme] == 64:
        return h64
    return ((h64 ^ (h64 >> np.uint64(32))) & _MAX32).astype(_DTYPES[scheme] if scheme == "affine32" else np.uint64)


def fmix(hv: np.ndarray, width: int) -> np.ndarray:
    s1, m1, s2, m2, s3 = _FMIX[width]
    hv = hv ^ (hv >> s1)
    hv = hv * m1
    hv = hv ^ (hv >> s2)
    hv = hv * m2
    return hv ^ (hv >> s3)


@lru_cache(maxsize=16)
def _perms(num_perm: int, seed: int, scheme: str) -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.RandomState(seed)
    if scheme == "legacy":
        pairs = np.array(
            [
                (gen.randint(1, _MERSENNE, dtype=np.uint64), gen.randint(0, _MERSENNE, dtype=np.uint64))
                for _ in range(num_perm)
            ],
            dtype=np.uint64,
        ).T
        return pairs[0], pairs[1]
    width, dtype = _WIDTHS[scheme], _DTYPES[scheme]
    a = gen.randint(0, 1 << (width - 1), num_perm, dtype=dtype) * dtype(2) + dtype(1)
    b = gen.randint(0, 1 << width, num_perm, dtype=dtype)
    return a, b


def permutations(num_perm: int = 128, seed: int = 1, scheme: str = "affine32") -> tuple[str, np.ndarray, np.ndarray]:
    """``(scheme, a, b)``: datasketch's permutation parameters for ``num_perm``, ``seed``, ``scheme``."""
    _check(scheme)
    if num_perm < 1:
        raise ConfigError(f"num_perm must be positive, got {num_perm}")
    a, b = _perms(int(num_perm), int(seed), scheme)
    return scheme, a, b


def permuted(hv: np.ndarray, perms) -> np.ndarray:
    """Every permutation applied to every input hash: shape ``(num_perm, len(hv))`` (row per permutation)."""
    scheme, a, b = perms
    dtype = _DTYPES[scheme]
    with np.errstate(over="ignore"):
        if scheme == "legacy":
            h = np.asarray(hv, dtype=np.uint64)[None, :]
            return ((a[:, None] * h + b[:, None]) % _MERSENNE) & _MAX32
        h = fmix(np.asarray(hv, dtype=dtype), _WIDTHS[scheme])[None, :]
        m = a[:, None] * h
        m += b[:, None]
        return m


def signatures(hv: np.ndarray, offsets: np.ndarray, perms) -> np.ndarray:
    """Signatures of documents whose input hashes are ``hv[offsets[i]:offsets[i+1]]`` (last: to the end).

    Shape ``(len(offsets), num_perm)``. Documents must be non-empty. Works permutation-major on chunks
    of about :data:`CHUNK` hashes (a ``minimum.reduceat`` along contiguous rows), which is what makes
    it several times faster than one ``MinHash.update_batch`` per document.
    """
    scheme, a, _ = perms
    offsets = np.asarray(offsets, dtype=np.int64)
    n_docs = len(offsets)
    out = np.empty((len(a), n_docs), dtype=_DTYPES[scheme])
    if n_docs == 0:
        return out.T
    ends = np.append(offsets[1:], len(hv))
    if (ends <= offsets).any():
        raise ValueError("every document needs at least one shingle hash")
    doc = 0
    while doc < n_docs:
        # take whole documents up to CHUNK hashes (at least one document)
        last = max(doc + 1, int(np.searchsorted(ends, offsets[doc] + CHUNK, "right")))
        lo, hi = int(offsets[doc]), int(ends[last - 1])
        out[:, doc:last] = np.minimum.reduceat(permuted(hv[lo:hi], perms), offsets[doc:last] - lo, axis=1)
        doc = last
    return np.ascontiguousarray(out.T)


def window_signatures(hv: np.ndarray, perms, block: int, blocks_per_window: int) -> np.ndarray:
    """Signatures of the windows ``[i*block, i*block + block*blocks_per_window)`` of one document.

    A document shorter than one window gives one signature over all of it. The stride is ``block``.
    """
    return multi_window_signatures(hv, perms, [(block, blocks_per_window)])


def multi_window_signatures(hv: np.ndarray, perms, classes) -> np.ndarray:
    """:func:`window_signatures` for several ``(block, blocks_per_window)`` classes, concatenated.

    The permuted hashes are computed once for all classes (one ``num_perm x len(hv)`` array).
    """
    P = len(perms[1])
    if len(hv) == 0:
        return np.empty((0, P), dtype=_DTYPES[perms[0]])
    n = len(hv)
    m = permuted(hv, perms)
    whole = None
    out = []
    for block, bpw in classes:
        if n <= block * bpw:
            if whole is None:
                whole = m.min(axis=1)[None, :]
                out.append(whole)
            continue
        mins = np.minimum.reduceat(m, np.arange(0, n, block), axis=1).T  # one row per block
        span = 1
        while span < bpw:  # sliding minimum over bpw blocks, by doubling
            step = min(span, bpw - span)
            mins = np.minimum(mins[:-step], mins[step:])
            span += step
        out.append(mins)
    return np.ascontiguousarray(np.concatenate(out))


#: up to this ``num_perm`` the optimiser runs here, vectorized; above it, datasketch's own (its
#: integrals by scipy's ``quad``: ~0.25 s of CPU per call, in every process that builds or loads an index)
_EXACT_UP_TO = 512


@lru_cache(maxsize=64)
def lsh_params(threshold: float, num_perm: int, fp_weight: float = 0.5, fn_weight: float = 0.5) -> tuple[int, int]:
    """``(bands, rows)`` minimising the weighted false positive/negative area (datasketch's optimiser,
    ``datasketch.lsh._optimal_param``: the first ``(b, r)``, ``b`` then ``r`` ascending, ``b * r <=
    num_perm``, of least ``fp_weight * FP + fn_weight * FN``, with FP = ∫₀ᵗ 1 - (1 - sʳ)ᵇ ds and FN =
    ∫ₜ¹ (1 - sʳ)ᵇ ds). The integrands are polynomials of degree ``b * r <= num_perm``, so Gauss-Legendre
    quadrature with ``num_perm // 2 + 2`` nodes integrates them exactly (up to rounding), every pair at
    once; tests/test_minhash.py checks the result is datasketch's.

    >>> lsh_params(0.4, 128), lsh_params(0.5, 128)
    ((32, 4), (25, 5))
    """
    if not 0.0 < threshold < 1.0:
        raise ConfigError(f"LSH threshold must be between 0 and 1, got {threshold}")
    if num_perm > _EXACT_UP_TO:
        from datasketch import MinHashLSH

        lsh = MinHashLSH(threshold=threshold, num_perm=num_perm, weights=(fp_weight, fn_weight))
        return int(lsh.b), int(lsh.r)
    b = np.concatenate([np.full(num_perm // k, k) for k in range(1, num_perm + 1)]).astype(np.float64)
    r = np.concatenate([np.arange(1, num_perm // k + 1) for k in range(1, num_perm + 1)]).astype(np.float64)
    x, w = np.polynomial.legendre.leggauss(num_perm // 2 + 2)
    below = threshold * (x + 1) / 2  # nodes on [0, t]
    above = threshold + (1 - threshold) * (x + 1) / 2  # on [t, 1]
    fp = threshold / 2 * ((1 - (1 - below[None, :] ** r[:, None]) ** b[:, None]) @ w)
    fn = (1 - threshold) / 2 * (((1 - above[None, :] ** r[:, None]) ** b[:, None]) @ w)
    best = int(np.argmin(fp * fp_weight + fn * fn_weight))  # the first of least error, as datasketch's loop
    return int(b[best]), int(r[best])


_BAND_P = np.uint64(0x9E3779B97F4A7C15)


def band_keys(sigs: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """64-bit key of each band of each signature: shape ``(len(sigs), bands)``; band index mixed in."""
    if bands * rows > sigs.shape[1]:
        raise ConfigError(f"{bands} bands x {rows} rows exceed num_perm={sigs.shape[1]}")
    s = sigs[:, : bands * rows].astype(np.uint64).reshape(len(sigs), bands, rows)
    keys = np.broadcast_to(np.arange(1, bands + 1, dtype=np.uint64), (len(sigs), bands)).copy()
    with np.errstate(over="ignore"):
        for j in range(rows):
            keys = keys * _BAND_P + s[:, :, j]
        keys = fmix(keys, 64)
    return keys

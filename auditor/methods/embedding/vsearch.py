"""Inner-product search over L2-normalized vectors (so inner product = cosine).

:class:`VectorIndex` uses FAISS: an exact ``IndexFlatIP`` by default; for large eval sides
(``approximate="auto"`` and at least ``approx_min`` vectors, or ``approximate="hnsw"``/``"ivf"``) an
``IndexHNSWFlat`` (M=32, efSearch=128) or ``IndexIVFFlat`` (nlist = 4·√n, nprobe = nlist/8). The
approximate index's recall@k against the exact search is measured at build time on a sample of
the indexed vectors used as queries and reported in :meth:`VectorIndex.describe`.
:func:`brute_force` is the numpy twin of the exact search, used to check it.

>>> import numpy as np
>>> v = np.eye(3, dtype=np.float32)
>>> VectorIndex(v).search(v[:1], 2)[1][0].tolist()
[0, 1]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import ConfigError

APPROX = ("auto", "exact", "hnsw", "ivf")


def brute_force(base: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` inner products per query, ties broken by the lower index (numpy, exact)."""
    sims = queries @ base.T
    k = min(k, base.shape[0])
    order = np.lexsort((np.broadcast_to(np.arange(base.shape[0]), sims.shape), -sims), axis=1)[:, :k]
    return np.take_along_axis(sims, order, axis=1), order


class VectorIndex:
    def __init__(
        self,
        vectors: np.ndarray,
        approximate: str = "auto",
        approx_min: int = 200_000,
        seed: int = 0,
        recall_sample: int = 500,
    ):
        import faiss

        if approximate not in APPROX:
            raise ConfigError(
                f"method 'embedding': approximate must be one of {', '.join(APPROX)}, not '{approximate}'"
            )
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        n, d = self.vectors.shape
        kind = approximate
        if kind == "auto":
            kind = "hnsw" if n >= approx_min else "exact"
        if kind == "ivf" and n < 64:
            kind = "exact"
        self.kind = kind
        self.recall: float | None = None
        self.index: faiss.Index
        if kind == "exact":
            self.index = faiss.IndexFlatIP(d)
        elif kind == "hnsw":
            hnsw = faiss.IndexHNSWFlat(d, 32, faiss.METRIC_INNER_PRODUCT)
            hnsw.hnsw.efSearch = 128
            self.index = hnsw
        else:
            nlist = max(1, int(4 * np.sqrt(n)))
            ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, nlist, faiss.METRIC_INNER_PRODUCT)
            rng = np.random.default_rng(seed)
            train = self.vectors[rng.choice(n, min(n, 64 * nlist), replace=False)]
            ivf.train(train)
            ivf.nprobe = max(1, nlist // 8)
            self.index = ivf
        if n:
            self.index.add(self.vectors)
        if kind != "exact" and n:
            self.recall = self._measure_recall(seed, recall_sample)

    def _measure_recall(self, seed: int, sample: int, k: int = 10) -> float:
        rng = np.random.default_rng(seed)
        q = self.vectors[rng.choice(len(self.vectors), min(sample, len(self.vectors)), replace=False)]
        _, approx = self.search(q, k)
        _, exact = brute_force(self.vectors, q, k)
        hits = sum(len(set(a.tolist()) & set(e.tolist())) for a, e in zip(approx, exact))
        return round(hits / exact.size, 4)

    def __len__(self) -> int:
        return int(self.index.ntotal)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(similarities, ids)``, each ``(len(queries), min(k, n))``; ids -1 where fewer found."""
        k = min(k, len(self))
        if not k or not len(queries):
            return np.zeros((len(queries), 0), np.float32), np.zeros((len(queries), 0), np.int64)
        return self.index.search(np.ascontiguousarray(queries, dtype=np.float32), k)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.kind, "vectors": len(self)}
        if self.recall is not None:
            out["recall_at_10"] = self.recall
        return out

"""Inner-product search over L2-normalized vectors (inner product = cosine) with FAISS: exact
(``IndexFlatIP``) by default; from ``approx_min`` vectors (``approximate="auto"``), or as asked, HNSW
(M=32, efSearch=128) or IVF (nlist = 4·√n, nprobe = nlist/8), whose recall@10 against the exact search
(:func:`brute_force`, numpy) is measured at build on a sample of the vectors and described.

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
    SEED, RECALL_SAMPLE = 0, 500  # the IVF training sample's and the recall measure's

    def __init__(self, vectors: np.ndarray, approximate: str = "auto", approx_min: int = 200_000):
        import faiss

        if approximate not in APPROX:
            raise ConfigError(f"method 'embedding': approximate must be one of {', '.join(APPROX)}")
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        n, d = self.vectors.shape
        kind = "hnsw" if approximate == "auto" and n >= approx_min else approximate
        self.kind = kind = "exact" if kind == "auto" or (kind == "ivf" and n < 64) else kind
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
            ivf.train(self.vectors[np.random.default_rng(self.SEED).choice(n, min(n, 64 * nlist), replace=False)])
            ivf.nprobe = max(1, nlist // 8)
            self.index = ivf
        if n:
            self.index.add(self.vectors)
        if kind != "exact" and n:
            self.recall = self._measure_recall()

    def _measure_recall(self, k: int = 10) -> float:
        rng = np.random.default_rng(self.SEED)
        q = self.vectors[rng.choice(len(self.vectors), min(self.RECALL_SAMPLE, len(self.vectors)), replace=False)]
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

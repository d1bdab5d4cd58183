"""Embedding cache keyed by the 64-bit hash of a text's normalized form (:func:`auditor.text.normalize.text_hash`):
a dict ``hash → vector`` in memory; on disk a folder per model, ``keys.npy`` (``uint64[N]``, sorted),
``vectors.npy`` (``float32[N, dim]``, row i for ``keys[i]``; both without pickle) and, written last and
atomically, ``cache.json`` (format, version, model, dim, count, each array's SHA-256). A cache whose
checksums or shapes disagree raises :class:`~auditor.errors.IndexFileError`.

>>> import numpy as np, tempfile
>>> c = EmbeddingCache(2, model="demo")
>>> c.add(np.array([7], dtype=np.uint64), np.array([[0.6, 0.8]], dtype=np.float32))
>>> folder = c.save(tempfile.mkdtemp())
>>> EmbeddingCache.load(folder.parent, "demo", 2).lookup(np.array([7, 8], dtype=np.uint64))[1] is None
True
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import IndexFileError
from ...io.atomic import atomic_write_bytes, atomic_write_text

FORMAT = "auditor-embedding-cache"
VERSION = 1


def _npy_bytes(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(arr), allow_pickle=False)
    return buf.getvalue()


class EmbeddingCache:
    def __init__(self, dim: int, model: str = ""):
        self.dim = dim
        self.model = model
        self._vec: dict[int, np.ndarray] = {}
        self.unsaved = 0

    def __len__(self) -> int:
        return len(self._vec)

    def lookup(self, keys: np.ndarray) -> list[np.ndarray | None]:
        get = self._vec.get
        return [get(k) for k in keys.tolist()]

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        if vectors.shape != (len(keys), self.dim):
            raise ValueError(f"vectors of shape {vectors.shape} for {len(keys)} keys of dimension {self.dim}")
        for k, v in zip(keys.tolist(), vectors):
            self._vec[k] = v
        self.unsaved += len(keys)

    @staticmethod
    def folder_for(root: str | Path, model: str) -> Path:
        return Path(root) / model

    def save(self, root: str | Path) -> Path:
        """Write the cache under ``root/<model>/``; returns that folder."""
        folder = self.folder_for(root, self.model)
        keys = np.array(sorted(self._vec), dtype=np.uint64)
        vecs = (
            np.stack([self._vec[k] for k in keys.tolist()]).astype(np.float32)
            if len(keys)
            else np.zeros((0, self.dim), dtype=np.float32)
        )
        kb, vb = _npy_bytes(keys), _npy_bytes(vecs)
        atomic_write_bytes(folder / "keys.npy", kb)
        atomic_write_bytes(folder / "vectors.npy", vb)
        doc = {
            "format": FORMAT,
            "version": VERSION,
            "model": self.model,
            "dim": self.dim,
            "count": int(len(keys)),
            "keys_sha256": hashlib.sha256(kb).hexdigest(),
            "vectors_sha256": hashlib.sha256(vb).hexdigest(),
        }
        atomic_write_text(folder / "cache.json", json.dumps(doc, indent=1, sort_keys=True) + "\n")
        self.unsaved = 0
        return folder

    @classmethod
    def load(cls, root: str | Path, model: str, dim: int) -> EmbeddingCache:
        """The cache saved under ``root/<model>/``, or an empty one when there is none."""
        cache = cls(dim, model)
        folder = cls.folder_for(root, model)
        where = folder / "cache.json"
        if not where.exists():
            return cache
        try:
            doc: dict[str, Any] = json.loads(where.read_text())
            kb, vb = (folder / "keys.npy").read_bytes(), (folder / "vectors.npy").read_bytes()
        except (OSError, ValueError) as e:
            raise IndexFileError(f"{where}: unreadable embedding cache: {e}") from None
        if doc.get("format") != FORMAT or doc.get("version") != VERSION:
            raise IndexFileError(f"{where}: not an auditor embedding cache of version {VERSION}; delete it to rebuild")
        if doc.get("model") != model or doc.get("dim") != dim:
            raise IndexFileError(
                f"{where}: cache of model {doc.get('model')!r} (dim {doc.get('dim')}), expected {model!r} (dim {dim})"
            )
        digests = (hashlib.sha256(kb).hexdigest(), hashlib.sha256(vb).hexdigest())
        if digests != (doc.get("keys_sha256"), doc.get("vectors_sha256")):
            raise IndexFileError(f"{where}: checksum mismatch (truncated or modified); delete the folder to rebuild")
        keys = np.load(io.BytesIO(kb), allow_pickle=False)
        vecs = np.load(io.BytesIO(vb), allow_pickle=False)
        if keys.dtype != np.uint64 or vecs.shape != (len(keys), dim):
            raise IndexFileError(f"{where}: arrays of unexpected type or shape")
        cache._vec = dict(zip(keys.tolist(), vecs.astype(np.float32)))
        return cache

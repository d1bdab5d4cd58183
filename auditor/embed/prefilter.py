"""The static-embedding prefilter of the ``embedding`` tier: a model2vec model distilled locally from
the sentence encoder (the bundled MiniLM by default) ranks every training unit against the eval
segments in a few microseconds, and only units whose best static cosine reaches a threshold go on
to the MiniLM encoder and the decision.

Why: the MiniLM encoder runs ~100 texts/s on a CPU core, and in a pre-training corpus nearly every
text is far from every eval item. A static model (a token → vector table, the mean of the token
vectors of a text) encodes thousands of texts per second. A unit the prefilter passes is encoded and
decided exactly as without it (same MiniLM vectors, same candidates, same decision); a unit it stops
gets no finding. The threshold is a recall/speed trade chosen on held-out paraphrase files
(``benchmarks/bench_prefilter.py``, leave-one-file-out; see docs/methods.md).

Build (:func:`build_static_model`, needs ``model2vec``, ``skeletoken``, ``scikit-learn``, torch and
transformers; extra ``prefilter``): ``model2vec.distill.distill_from_model`` on the model's transformer
and tokenizer — one forward pass per vocabulary token, PCA to :data:`PARAMS` ``pca_dims``, SIF
weighting; ~1 min on 2 shared cores, once. Nothing is downloaded.

Cache folder ``<model cache>/<source id>-static-<key>/`` (``key``: a hash of model2vec's version and
:data:`PARAMS`), written to a temporary sibling and renamed into place; no pickle:

``model.safetensors``  the token vectors (``embeddings``, float32)
``tokenizer.json``     the tokenizer model2vec derived from the source's
``static.json``        ``{"format": "auditor-static-encoder", "version": 1, "source": SOURCE_ID,
                       "params": {...}, "model2vec": "0.10.0", "sha256": {file: digest}, "dim": 256,
                       "distill_seconds": ...}``

Loading checks the format, version, source and both files' SHA-256: a damaged file is one
:class:`~auditor.errors.IndexFileError` line naming it.

>>> folder = build_static_model(bundled_model_path(), "all-MiniLM-L6-v2-x", cache)         # doctest: +SKIP
>>> StaticEncoder(folder).encode(["book a flight to Paris"]).shape                       # doctest: +SKIP
(1, 256)
>>> pre = Prefilter(StaticEncoder(folder), 0.5).fit(["What is the capital of France?"])    # doctest: +SKIP
>>> pre.keep([["Which city is France's capital?"], ["a recipe for apple pie"]])             # doctest: +SKIP
[True, False]

Errors: :class:`~auditor.errors.MissingDependencyError` (``model2vec`` or its build packages absent),
:class:`~auditor.errors.IndexFileError` (a cached model whose files are damaged or of another source).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError, IndexFileError, MissingDependencyError
from ..io.atomic import atomic_write_text, build_folder
from .onnx import _sha256, missing
from .vsearch import VectorIndex

FORMAT = "auditor-static-encoder"
VERSION = 1
#: model2vec distillation parameters (part of the cache key)
PARAMS: dict[str, Any] = {"pca_dims": 256, "sif_coefficient": 1e-4, "quantize_to": "float32"}
#: texts are cut at this many word pieces, as the MiniLM encoder cuts them
MAX_TOKENS = 256
RUNTIME = ("model2vec", "tokenizers", "safetensors")
BUILD = ("model2vec", "skeletoken", "sklearn", "torch", "transformers", "sentence_transformers")
FILES = ("model.safetensors", "tokenizer.json")
#: the prefilter modes of ``EmbeddingConfig.prefilter``
MODES = ("static", "none")


def require_static() -> None:
    """Raise :class:`~auditor.errors.MissingDependencyError` naming the extra when the static model
    cannot be run here."""
    absent = missing(RUNTIME)
    if absent:
        raise MissingDependencyError(absent[0], "prefilter", "the static prefilter (or set prefilter = 'none')")


def model2vec_version() -> str:
    from importlib.metadata import version

    return version("model2vec")


def static_folder(cache: str | Path, source_id: str) -> Path:
    """``<cache>/<source_id>-static-<key>``: the key hashes model2vec's version and :data:`PARAMS`."""
    key = json.dumps({"model2vec": model2vec_version(), **PARAMS}, sort_keys=True)
    return Path(cache) / f"{source_id}-static-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def build_static_model(source: str | Path, source_id: str, cache: str | Path) -> Path:
    """The cached static model of ``source`` (a local sentence-transformers folder), distilled when
    absent; returns its folder. Concurrent builders are safe (the first rename wins)."""
    require_static()
    final = static_folder(cache, source_id)
    if (final / "static.json").exists():
        return final
    absent = missing(BUILD)
    if absent:
        raise MissingDependencyError(
            absent[0], "prefilter", "distilling the static prefilter (or set prefilter = 'none')"
        )

    def fill(tmp: Path) -> None:
        doc = _distill(Path(source), source_id, tmp)
        atomic_write_text(tmp / "static.json", json.dumps(doc, indent=1, sort_keys=True) + "\n")

    return build_folder(final, fill, "static.json")


def _distill(source: Path, source_id: str, out: Path) -> dict[str, Any]:
    """Distill into ``out``; returns the ``static.json`` document."""
    from model2vec.distill import distill_from_model
    from safetensors.numpy import save_file

    from .model import load_model

    st = load_model(str(source), "cpu")
    modules: list[Any] = list(st)
    t0 = time.perf_counter()
    quiet = [logging.getLogger(n) for n in ("model2vec", "skeletoken")]
    levels = [lg.level for lg in quiet]
    for lg in quiet:
        lg.setLevel(logging.ERROR)
    try:
        static = distill_from_model(
            modules[0].auto_model,
            st.tokenizer,
            device="cpu",
            pca_dims=PARAMS["pca_dims"],
            sif_coefficient=PARAMS["sif_coefficient"],
            quantize_to=PARAMS["quantize_to"],
        )
    except (ValueError, TypeError, AttributeError) as e:
        raise ConfigError(
            f"embedding model {source}: model2vec cannot distill it ({e}); set prefilter = 'none'"
        ) from None
    finally:
        for lg, level in zip(quiet, levels):
            lg.setLevel(level)
    seconds = time.perf_counter() - t0
    vectors = np.ascontiguousarray(static.embedding, dtype=np.float32)
    save_file({"embeddings": vectors}, str(out / "model.safetensors"))
    (out / "tokenizer.json").write_text(static.tokenizer.to_str(), encoding="utf-8")
    import torch

    return {
        "format": FORMAT,
        "version": VERSION,
        "source": source_id,
        "params": dict(PARAMS),
        "model2vec": model2vec_version(),
        "sha256": {f: _sha256(out / f) for f in FILES},
        "dim": int(vectors.shape[1]),
        "vocabulary": int(vectors.shape[0]),
        "max_tokens": MAX_TOKENS,
        "distill_seconds": round(seconds, 1),
        "built_with": {"torch": torch.__version__},
    }


class StaticEncoder:
    """A built static model folder: ``encode(texts)`` → ``(n, dim)`` L2-normalized float32 vectors
    (model2vec's ``StaticModel``: mean of the token vectors, at most :data:`MAX_TOKENS` word pieces).

    The folder is verified (``static.json``, both files' SHA-256) when opened; crossing a process
    boundary, the model is reopened from its folder.
    """

    def __init__(self, folder: str | Path):
        require_static()
        self.folder = Path(folder)
        self.doc = self._verified()
        self._open()

    def _verified(self) -> dict[str, Any]:
        where = self.folder / "static.json"
        try:
            doc: dict[str, Any] = json.loads(where.read_text())
        except (OSError, ValueError) as e:
            raise IndexFileError(f"{where}: unreadable ({e}); delete the folder to rebuild") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
            raise IndexFileError(
                f"{where}: not an auditor static model of version {VERSION}; delete the folder to rebuild"
            )
        if not self.folder.name.startswith(f"{doc.get('source')}-static-"):
            raise IndexFileError(
                f"{where}: a static model of source {doc.get('source')!r} in folder {self.folder.name}"
            )
        sums = doc.get("sha256") or {}
        for name in FILES:
            try:
                digest = _sha256(self.folder / name)
            except OSError as e:
                raise IndexFileError(f"{self.folder / name}: {e}; delete the folder to rebuild") from None
            if digest != sums.get(name):
                raise IndexFileError(
                    f"{self.folder / name}: checksum mismatch (truncated or modified); delete the folder to rebuild"
                )
        return doc

    def _open(self) -> None:
        from model2vec import StaticModel
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        vectors = load_file(str(self.folder / "model.safetensors"))["embeddings"]
        tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        self.model = StaticModel(
            vectors, tokenizer, normalize=True, max_length=int(self.doc.get("max_tokens", MAX_TOKENS))
        )
        self.dim = int(vectors.shape[1])

    @property
    def identity(self) -> str:
        """The folder name and the first 12 hex digits of the vectors' SHA-256."""
        return f"{self.folder.name}-{str(self.doc['sha256']['model.safetensors'])[:12]}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not len(texts):
            return np.zeros((0, self.dim), dtype=np.float32)
        v = self.model.encode(list(texts), use_multiprocessing=False, normalize=True)
        return np.ascontiguousarray(v, dtype=np.float32)

    def __getstate__(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "doc": self.doc}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.folder, self.doc = Path(state["folder"]), state["doc"]
        self._open()


class Prefilter:
    """Passes a training unit (a list of segment texts) when one of its segments has a static cosine
    of at least ``threshold`` with some eval segment (exact FAISS inner-product search, or the same
    approximate index the MiniLM search uses for large eval sides).

    Counters (handed to the caller from engine workers like the encoder's): ``units`` seen,
    ``passed``, ``texts`` encoded statically, ``seconds`` spent.
    """

    COUNTERS = ("units", "passed", "texts", "seconds")

    def __init__(self, encoder: StaticEncoder, threshold: float, approximate: str = "auto", approx_min: int = 200_000):
        self.encoder = encoder
        self.threshold = float(threshold)
        self.approximate, self.approx_min = approximate, approx_min
        self.index: VectorIndex | None = None
        self.counts: dict[str, float] = dict.fromkeys(self.COUNTERS, 0)

    def take_counts(self) -> dict[str, float]:
        """The counters since the last call, reset (an engine worker hands them to the caller)."""
        out, self.counts = self.counts, dict.fromkeys(self.COUNTERS, 0)
        return out

    def add_counts(self, counts: dict[str, float]) -> None:
        for k in self.COUNTERS:
            self.counts[k] += counts.get(k, 0)

    def fit(self, eval_texts: Sequence[str]) -> Prefilter:
        self.index = VectorIndex(self.encoder.encode(eval_texts), self.approximate, self.approx_min)
        return self

    def scores(self, units: Sequence[Sequence[str]]) -> np.ndarray:
        """Per unit, the best static cosine of its segments to any eval segment (-1 for none)."""
        if self.index is None:
            raise RuntimeError("prefilter: scores before fit()")
        t0 = time.perf_counter()
        texts = [t for u in units for t in u]
        out = np.full(len(units), -1.0, dtype=np.float32)
        if texts and len(self.index):
            sims, _ = self.index.search(self.encoder.encode(texts), 1)
            best = sims[:, 0]
            row = 0
            for i, u in enumerate(units):
                if len(u):
                    out[i] = float(best[row : row + len(u)].max())
                row += len(u)
        self.counts["texts"] += len(texts)
        self.counts["seconds"] += time.perf_counter() - t0
        return out

    def keep(self, units: Sequence[Sequence[str]]) -> list[bool]:
        """Which units go on to the sentence encoder."""
        kept = [bool(s >= self.threshold) for s in self.scores(units).tolist()]
        self.counts["units"] += len(units)
        self.counts["passed"] += sum(kept)
        return kept

    def describe(self) -> dict[str, Any]:
        c = self.counts
        units = int(c["units"])
        return {
            "model": "static",
            "model_id": self.encoder.identity,
            "threshold": self.threshold,
            "units": units,
            "passed": int(c["passed"]),
            "filtered": units - int(c["passed"]),
            "texts": int(c["texts"]),
            "seconds": round(float(c["seconds"]), 3),
            "texts_per_s": round(c["texts"] / c["seconds"], 1) if c["seconds"] else 0.0,
        }


_LOADED: dict[tuple[str, str], StaticEncoder] = {}


def load_static_encoder(model: str = "bundled", model_cache: str = "") -> StaticEncoder:
    """The static model distilled from ``model`` (``"bundled"``, a local sentence-transformers folder
    or a cached name), built in ``model_cache`` (default ``~/.cache/auditor/models``) the first
    time, opened once per process."""
    from .model import resolve_model, source_id
    from .onnx import default_model_cache

    where = resolve_model(model)
    cache = Path(model_cache).expanduser() if model_cache else default_model_cache()
    key = (where, str(cache))
    if key not in _LOADED:
        _LOADED[key] = StaticEncoder(build_static_model(where, source_id(where), cache))
    return _LOADED[key]

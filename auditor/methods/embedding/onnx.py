"""The sentence-embedding model run through ONNX Runtime: exported once, locally, from the
sentence-transformers model, optionally int8-quantized (weights per channel), cached on disk and loaded
afterwards without torch: on a CPU the int8 model roughly halves the forward pass, and a cold process
imports ``onnxruntime`` + ``tokenizers`` instead of torch (docs/methods.md#paraphrase-tier-embedding).

:func:`build_onnx_encoder` exports the transformer (``torch.onnx.export(dynamo=True)``; pooling and
normalization happen in numpy), quantizes it, and keeps it only if it agrees with the torch model on
:data:`PROBES` (:data:`MIN_PROBE_COSINE`); nothing is downloaded. The folder
``<model cache>/<source id>-onnx-<variant>/`` (``model.onnx``, ``tokenizer.json``, ``encoder.json``:
format, version, source, variant, the model's SHA-256, dim ...) is built aside and renamed into place;
loading checks the format, the source and the hash, which ends the model's :attr:`~OnnxSentenceModel.identity`
(the embedding cache's key), so vectors of two encoders are never mixed. No pickle anywhere.

>>> m = OnnxSentenceModel(build_onnx_encoder(bundled_model_path(), "all-MiniLM-L6-v2-x", "int8", cache, load_model))  # doctest: +SKIP
>>> m.encode(["book a flight to Paris"], normalize_embeddings=True).shape                             # doctest: +SKIP
(1, 384)

Errors: :class:`~auditor.errors.MissingDependencyError` (``onnxruntime``/``onnx``/``onnxscript``
absent), :class:`~auditor.errors.ConfigError` (a model that is not a mean-pooled transformer, an
export that disagrees with the torch model), :class:`~auditor.errors.IndexFileError` (a cached
model whose files are damaged or of another source).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from ...errors import ConfigError, IndexFileError, MissingDependencyError
from ...io.atomic import atomic_write_text, build_folder
from ...io.files import sha256_file

FORMAT = "auditor-onnx-encoder"
VERSION = 1
VARIANTS = ("fp32", "int8")
MIN_PROBE_COSINE = {"fp32": 0.9999, "int8": 0.95}
RUNTIME = ("onnxruntime", "tokenizers")
BUILD = ("onnxruntime", "onnx", "onnxscript", "torch", "sentence_transformers")
PROBES = (
    "book a flight from Paris to New York for two adults on 12 March",
    "What is the capital city of France?",
    "Find the area of a circle with a radius of 10 units.",
    "i need a long sleeve shirt in size xx-large, price lower than 40.00 dollars",
    "def add(a, b):\n    return a + b",
    "Calculate the greatest common divisor of 40 and 50 using the math library.",
    "x",
)


def missing(modules: Sequence[str]) -> list[str]:
    """The modules of ``modules`` that are not installed."""
    return [m for m in modules if importlib.util.find_spec(m) is None]


def default_model_cache() -> Path:
    """``$XDG_CACHE_HOME/auditor/models`` (``~/.cache/auditor/models``; ``model_cache`` sets another)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "auditor" / "models"


def _mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    m = mask[..., None].astype(np.float32)
    return (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)


def _normalize(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.maximum(n, 1e-12)


def build_onnx_encoder(
    source: str | Path, source_id: str, variant: str, cache: str | Path, load: Callable[[str, str], Any]
) -> Path:
    """The folder of the ONNX model (``variant`` ``"fp32"`` / ``"int8"``) of ``source``, a local
    sentence-transformers folder that ``load(folder, device)`` loads, built when absent (concurrent
    builders are safe: the first rename wins); ``source_id`` changes whenever the source's files do."""
    if variant not in VARIANTS:
        raise ConfigError(f"ONNX variant must be one of {', '.join(VARIANTS)}, not '{variant}'")
    final = Path(cache) / f"{source_id}-onnx-{variant}"
    if (final / "encoder.json").exists():
        return final
    absent = missing(BUILD)
    if absent:
        raise MissingDependencyError(absent[0], "embed", "building the ONNX encoder (or set backend = 'torch')")

    def fill(tmp: Path) -> None:
        doc = _export(Path(source), source_id, variant, tmp, load)
        atomic_write_text(tmp / "encoder.json", json.dumps(doc, indent=1, sort_keys=True) + "\n")

    return build_folder(final, fill, "encoder.json")


def _export(source: Path, source_id: str, variant: str, out: Path, load: Callable[[str, str], Any]) -> dict[str, Any]:
    """Export (and quantize) into ``out``; returns the ``encoder.json`` document."""
    import onnxruntime
    import torch
    from sentence_transformers import SentenceTransformer

    st: SentenceTransformer = load(str(source), "cpu")
    modules: list[Any] = list(st)
    pooling: Any = modules[1] if len(modules) > 1 else None
    cfg: dict[str, Any] = pooling.get_config_dict() if type(pooling).__name__ == "Pooling" else {}
    flags = [k for k, v in cfg.items() if k.startswith("pooling_mode_") and v is True]  # sentence-transformers < 6
    mode = str(cfg.get("pooling_mode") or ("mean" if flags == ["pooling_mode_mean_tokens"] else ",".join(flags)))
    tail_ok = len(modules) == 2 or (len(modules) == 3 and type(modules[2]).__name__ == "Normalize")
    tokenizer = st.tokenizer
    if not tail_ok or mode != "mean" or not getattr(tokenizer, "is_fast", False):
        raise ConfigError(
            f"embedding model {source}: the ONNX backend takes a transformer with mean pooling and a fast "
            f"tokenizer (this one: {[type(m).__name__ for m in modules]}, pooling '{mode}'); use backend = 'torch'"
        )
    transformer = modules[0].auto_model.eval()
    max_len = int(st.max_seq_length or 512)
    sample = tokenizer(["hello world, a probe", "a b"], padding=True, return_tensors="pt")
    inputs = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in sample]
    if inputs[:2] != ["input_ids", "attention_mask"]:
        raise ConfigError(f"embedding model {source}: its tokenizer gives {sorted(sample)}; use backend = 'torch'")

    class _Tokens(torch.nn.Module):
        def __init__(self, model: Any):
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any = None) -> Any:
            extra = {} if token_type_ids is None else {"token_type_ids": token_type_ids}
            return self.model(input_ids=input_ids, attention_mask=attention_mask, **extra).last_hidden_state

    fp32 = out / ("model.onnx" if variant == "fp32" else "model-fp32.onnx")
    axes = {k: {0: "batch", 1: "tokens"} for k in inputs}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Tokens(transformer),
            tuple(sample[k] for k in inputs),
            str(fp32),
            input_names=inputs,
            output_names=["token_embeddings"],
            dynamic_axes={**axes, "token_embeddings": {0: "batch", 1: "tokens"}},
            dynamo=True,
            external_data=False,
            verbose=False,
        )
    if variant == "int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        root = logging.getLogger()
        level = root.level
        root.setLevel(logging.ERROR)  # its "consider pre-processing" advice is for static quantization
        try:
            quantize_dynamic(str(fp32), str(out / "model.onnx"), weight_type=QuantType.QInt8, per_channel=True)
        finally:
            root.setLevel(level)
        fp32.unlink()
    fast = tokenizer.backend_tokenizer
    fast.no_padding()
    fast.enable_truncation(max_len)
    (out / "tokenizer.json").write_text(fast.to_str(), encoding="utf-8")
    # the built model must agree with the torch model before it is kept
    built = OnnxSentenceModel(out, check=False, variant=variant)
    want = st.encode(list(PROBES), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    got = built.encode(list(PROBES), normalize_embeddings=True)
    agree = float((np.asarray(want) * got).sum(axis=1).min())
    if agree < MIN_PROBE_COSINE[variant]:
        raise ConfigError(
            f"embedding model {source}: the ONNX export ({variant}) disagrees with the torch model "
            f"(probe cosine {agree:.4f} < {MIN_PROBE_COSINE[variant]}); use backend = 'torch'"
        )
    return {
        "format": FORMAT,
        "version": VERSION,
        "source": source_id,
        "variant": variant,
        "onnx_sha256": sha256_file(out / "model.onnx"),
        "dim": int(got.shape[1]),
        "max_seq_length": max_len,
        "inputs": inputs,
        "special_ids": sorted(int(i) for i in tokenizer.all_special_ids),
        "pooling": "mean",
        "probe_min_cosine": round(agree, 6),
        "built_with": {"torch": torch.__version__, "onnxruntime": onnxruntime.__version__},
    }


class OnnxSentenceModel:
    """A built ONNX encoder folder, with the sentence-transformers calls the embedding tier makes
    (``encode``, ``tokenizer``, ``max_seq_length``, the dimension). Texts run sorted by length, in
    batches of at most ``batch_size`` texts and :attr:`max_batch_tokens` tokens, or one by one for int8
    (:attr:`per_text`); ``device`` ``"cuda[:N]"`` uses ONNX Runtime's CUDA provider when installed.
    ``check=True`` verifies ``encoder.json`` and the hash; a copy in another process reopens the folder.
    """

    max_batch_tokens = 1024  # padded tokens per batch: ~16 texts of 60 word pieces

    def __init__(self, folder: str | Path, device: str = "cpu", check: bool = True, variant: str = ""):
        absent = missing(RUNTIME)
        if absent:
            raise MissingDependencyError(absent[0], "embed", "the ONNX encoder (or set backend = 'torch')")
        self.folder = Path(folder)
        self.device = device
        self.doc = self._verified() if check else {"variant": variant}
        self._open()

    @property
    def per_text(self) -> bool:
        """int8 quantizes activations per input tensor: each text runs alone, so its vector never depends
        on its batch or worker (reports stay identical across engines; ~15 % slower than batches of 8)."""
        return self.doc.get("variant") == "int8"

    def _verified(self) -> dict[str, Any]:
        where = self.folder / "encoder.json"
        try:
            doc: dict[str, Any] = json.loads(where.read_text())
        except (OSError, ValueError) as e:
            raise IndexFileError(
                f"{where}: unreadable ONNX encoder description: {e}; delete the folder to rebuild"
            ) from None
        if doc.get("format") != FORMAT or doc.get("version") != VERSION:
            raise IndexFileError(
                f"{where}: not an auditor ONNX encoder of version {VERSION}; delete the folder to rebuild"
            )
        if not self.folder.name.startswith(str(doc.get("source"))):
            raise IndexFileError(f"{where}: an encoder of source {doc.get('source')!r} in folder {self.folder.name}")
        try:
            digest = sha256_file(self.folder / "model.onnx")
        except OSError as e:
            raise IndexFileError(f"{self.folder / 'model.onnx'}: {e}; delete the folder to rebuild") from None
        if digest != doc.get("onnx_sha256"):
            raise IndexFileError(
                f"{self.folder / 'model.onnx'}: checksum mismatch (truncated or modified); delete the folder to rebuild"
            )
        return doc

    def _open(self) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # threads that spin between batches burn CPU other processes (other workers) could use:
        # measured here, 10–25 % more texts per CPU-second without spinning
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        providers: list[Any] = ["CPUExecutionProvider"]
        if self.device.startswith("cuda") and "CUDAExecutionProvider" in ort.get_available_providers():
            gpu = int(self.device.split(":")[1]) if ":" in self.device else 0
            providers.insert(0, ("CUDAExecutionProvider", {"device_id": gpu}))
        self.session = ort.InferenceSession(str(self.folder / "model.onnx"), opts, providers=providers)
        self.providers = self.session.get_providers()
        if self.providers[0] != "CPUExecutionProvider":
            self.max_batch_tokens = 65_536  # a GPU wants large batches
        self.inputs = [i.name for i in self.session.get_inputs()]
        raw = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        trunc = raw.truncation or {}
        self.max_seq_length = int(self.doc.get("max_seq_length") or trunc.get("max_length") or 512)
        raw.no_padding()
        raw.enable_truncation(self.max_seq_length)
        self.fast = raw
        self.tokenizer = SimpleNamespace(backend_tokenizer=raw)  # what the tier reads of a tokenizer
        dim = self.doc.get("dim")
        self.dim = int(dim) if dim else int(self.session.get_outputs()[0].shape[-1])

    def __getstate__(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "device": self.device, "doc": self.doc}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.folder, self.device = Path(state["folder"]), state["device"]
        self.doc = self._verified() if "onnx_sha256" in state["doc"] else dict(state["doc"])
        self._open()

    @property
    def identity(self) -> str:
        """The first 12 hex digits of the model file's SHA-256 (part of the embedding cache's key)."""
        return str(self.doc.get("onnx_sha256", ""))[:12]

    def get_sentence_embedding_dimension(self) -> int:
        return self.dim

    get_embedding_dimension = get_sentence_embedding_dimension

    def _forward(self, ids: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        width = max(1, max(len(x) for x in ids))
        input_ids = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros_like(input_ids)
        for r, x in enumerate(ids):
            input_ids[r, : len(x)] = x
            mask[r, : len(x)] = 1
        feed = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        hidden = self.session.run(None, {k: feed[k] for k in self.inputs})[0]
        return np.asarray(hidden, dtype=np.float32), mask

    def encode(
        self,
        sentences: Sequence[str],
        batch_size: int = 64,
        normalize_embeddings: bool = False,
        show_progress_bar: bool = False,
        output_value: str = "sentence_embedding",
        **_: Any,
    ) -> Any:
        """``(n, dim)`` float32 sentence vectors (mean-pooled; normalized on request), or with
        ``output_value="token_embeddings"`` one ``(tokens, dim)`` array per text (special tokens
        included, as sentence-transformers gives them)."""
        texts = list(sentences)
        tokens = output_value == "token_embeddings"
        if output_value not in ("sentence_embedding", "token_embeddings"):
            raise ConfigError(f"ONNX encoder: output_value '{output_value}' is not supported")
        ids = [e.ids for e in self.fast.encode_batch(texts)] if texts else []
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        vecs = np.zeros((len(texts), self.dim), dtype=np.float32)
        per_text: list[Any] = [None] * len(texts)
        batches: list[list[int]] = []
        batch_size = 1 if self.per_text else batch_size
        for i in order:  # rows of one batch: at most batch_size, and at most max_batch_tokens in all
            if (
                batches
                and len(batches[-1]) < batch_size
                and (len(batches[-1]) + 1) * len(ids[i]) <= self.max_batch_tokens
            ):
                batches[-1].append(i)
            else:
                batches.append([i])
        bar = None
        if show_progress_bar and importlib.util.find_spec("tqdm") is not None:
            from tqdm import tqdm

            bar = tqdm(total=len(texts), desc="Batches", unit="text", leave=False)
        for rows in batches:
            hidden, mask = self._forward([ids[i] for i in rows])
            if tokens:
                for r, i in enumerate(rows):
                    per_text[i] = hidden[r, : int(mask[r].sum())].copy()
            else:
                vecs[rows] = _mean_pool(hidden, mask)
            if bar is not None:
                bar.update(len(rows))
        if bar is not None:
            bar.close()
        if tokens:
            return per_text
        return _normalize(vecs) if normalize_embeddings else vecs

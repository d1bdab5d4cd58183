"""The ``embedding`` method's parameters (:class:`EmbeddingConfig`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...records.record import QUERY, TEXT
from ..base import MethodConfig
from .decision import Decision
from .gate import DICE as GATE_DICE
from .gate import DICE_CODE as GATE_DICE_CODE
from .gate import SHORT as GATE_SHORT
from .gate import SYNONYMS as GATE_SYNONYMS


@dataclass
class EmbeddingConfig(MethodConfig):
    model: str = "bundled"  # "bundled", a local sentence-transformers folder, or a cached name
    # "auto": torch on a GPU, else the model's int8 ONNX export (built locally, cached); "torch" = the
    # sentence-transformers model as before; "onnx" = its fp32 ONNX export (auditor.methods.embedding.model.select_backend)
    backend: str = "auto"
    device: str = "auto"  # "auto" (CUDA when torch sees one), "cpu" (forced), "cuda", "cuda:N", "mps"
    model_cache: str = ""  # built ONNX encoders: "" → ~/.cache/auditor/models (CLI: --model-cache)
    batch_size: int = 64
    cache_dir: str = ""  # "" → <index dir>/embeddings (no index dir: memory); "none" → memory
    save_every: int = 20_000  # persist the cache after this many new texts during a scan
    top_k: int = 5  # candidate eval items scored per training record
    min_cosine: float = 0.3  # candidates below this cosine are not scored
    w_lexical: float = 0.2  # candidate ranking: cosine + w_lexical * TF-IDF cosine
    require_best: bool = True  # a finding only for the eval item a training segment is closest to
    # the decision (auditor.methods.embedding.decision): score = cosine + w_align*align_f1 + w_margin*clip(margin, 0, margin_cap)
    w_align: float = Decision.w_align
    w_margin: float = Decision.w_margin
    margin_cap: float = Decision.margin_cap
    conclusive: float = Decision.conclusive  # conclusive at or above (with slot values agreeing)
    suspected: float = Decision.suspected  # suspected (kept for review, not counted) at or above
    conclusive_code: float = Decision.conclusive_code  # the same two when both sides are code
    suspected_code: float = Decision.suspected_code
    max_words: int = 160  # longer texts are also embedded as windows of this many words
    approximate: str = "auto"  # "auto" | "exact" | "hnsw" | "ivf"
    approx_min: int = 200_000  # "auto" switches to HNSW from this many eval segments
    # "lexical" (default): a training unit is encoded only if one of its segments has a weighted Dice
    # coefficient of distinct stems of at least gate_dice (gate_dice_code for code) with some eval segment,
    # near-synonyms counted at gate_synonyms, and a whole text of at most gate_short content stems passes
    # (auditor.methods.embedding.gate; docs/methods.md#lexical-gate); "none": every segment is encoded
    gate: str = "lexical"
    gate_dice: float = GATE_DICE
    gate_dice_code: float = GATE_DICE_CODE
    gate_synonyms: float = GATE_SYNONYMS  # 0 turns synonyms off
    gate_short: int = GATE_SHORT  # 0 turns it off
    train_views: tuple[str, ...] = (QUERY, TEXT)

    BOUNDS: ClassVar[dict[str, tuple[float, float]]] = {
        "batch_size": (1, 65_536),
        "top_k": (1, 1000),
        "max_words": (1, 100_000),
        "save_every": (1, 10_000_000),
        "approx_min": (1, 1_000_000_000),
        "gate_dice": (0.001, 1),
        "gate_dice_code": (0.001, 1),
        "gate_synonyms": (0, 1),
        "gate_short": (0, 64),
    }

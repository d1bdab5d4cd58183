"""The ``embedding`` method's parameters, nested by concern: ``encoder`` (:class:`EncoderConfig`),
``search`` (:class:`SearchConfig`), ``decision`` (:class:`~auditor.methods.embedding.decision.Decision`)
and ``gate`` (:class:`GateConfig`). Manifests, ``--param``, Detectors and the report name them flat
(:data:`FLAT`: ``top_k``, ``conclusive``, ``gate = "none"``, ``gate_dice`` ...) or as nested tables
(``[methods.embedding.gate]`` ``dice = 0.3``); :meth:`~EmbeddingConfig.as_params` gives them flat.

>>> c = EmbeddingConfig.from_params({"gate": "none", "gate_dice": 0.3, "top_k": 3, "decision": {"suspected": 1.5}})
>>> c.gate.rule, c.gate.dice, c.search.top_k, c.decision.suspected, c.as_params()["gate_dice"]
('none', 0.3, 3, 1.5, 0.3)
>>> EmbeddingConfig.from_params({"gate": {"dice": 0.25}}).gate_dice    # a flat name reads through
0.25

Errors: :class:`~auditor.errors.ConfigError` (a value out of range or not a choice; a suspected
threshold above its conclusive one); TypeError for an unknown parameter (the index says it in one line).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ...errors import ConfigError
from ...records.record import QUERY, TEXT
from ..base import MethodConfig
from .decision import Decision
from .gate import DICE as GATE_DICE
from .gate import DICE_CODE as GATE_DICE_CODE
from .gate import MODES as GATES
from .gate import SHORT as GATE_SHORT
from .gate import SYNONYMS as GATE_SYNONYMS
from .model import BACKENDS
from .synonyms import check_bar
from .vsearch import APPROX


@dataclass
class EncoderConfig:
    """The model and what it reads (:mod:`auditor.methods.embedding.model`) and the embedding cache."""

    model: str = "bundled"  # "bundled", a local sentence-transformers folder, or a cached name
    # "auto": torch on a GPU, else the int8 ONNX export (built locally, cached); "torch"; "onnx" (fp32)
    backend: str = "auto"
    device: str = "auto"  # "auto" (CUDA when torch sees one), "cpu" (forced), "cuda", "cuda:N", "mps"
    model_cache: str = ""  # built ONNX encoders: "" → ~/.cache/auditor/models (CLI: --model-cache)
    batch_size: int = 64
    cache_dir: str = ""  # "" → <index dir>/embeddings (no index dir: memory); "none" → memory
    save_every: int = 20_000  # persist the cache after this many new texts during a scan
    max_words: int = 160  # longer texts are also embedded as windows of this many words


@dataclass
class SearchConfig:
    """Which eval items a training unit is scored against (:mod:`auditor.methods.embedding.vsearch`)."""

    top_k: int = 5  # candidate eval items scored per training unit
    min_cosine: float = 0.3  # candidates below this cosine are not scored
    w_lexical: float = 0.2  # candidate ranking: cosine + w_lexical * TF-IDF cosine
    require_best: bool = True  # a finding only for the eval item a training unit is closest to
    approximate: str = "auto"  # "auto" | "exact" | "hnsw" | "ivf"
    approx_min: int = 200_000  # "auto" switches to HNSW from this many eval segments


@dataclass
class GateConfig:
    """The lexical gate in front of the encoder (:mod:`auditor.methods.embedding.gate`; flat names
    ``gate`` for ``rule``, ``gate_dice`` ...)."""

    rule: str = "lexical"  # "none": every segment is encoded
    dice: float = GATE_DICE
    dice_code: float = GATE_DICE_CODE
    synonyms: float = GATE_SYNONYMS  # 0 turns synonyms off
    short: int = GATE_SHORT  # 0 turns it off


GROUPS: dict[str, type] = {"encoder": EncoderConfig, "search": SearchConfig, "decision": Decision, "gate": GateConfig}
#: every flat parameter name → (group, field): a group's fields by their own names, the gate's as ``gate_*``
FLAT: dict[str, tuple[str, str]] = {
    (f.name if g != "gate" else "gate" if f.name == "rule" else f"gate_{f.name}"): (g, f.name)
    for g, cls in GROUPS.items()
    for f in dataclasses.fields(cls)
}


@dataclass
class EmbeddingConfig(MethodConfig):
    train_views: tuple[str, ...] = (QUERY, TEXT)
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    decision: Decision = field(default_factory=Decision)
    gate: GateConfig = field(default_factory=GateConfig)

    BOUNDS: ClassVar[dict[str, tuple[float, float]]] = {
        "batch_size": (1, 65_536),
        "top_k": (1, 1000),
        "max_words": (16, 100_000),
        "save_every": (1, 10_000_000),
        "approx_min": (1, 1_000_000_000),
        "gate_dice": (0.001, 1),
        "gate_dice_code": (0.001, 1),
        "gate_short": (0, 64),
    }

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> EmbeddingConfig:
        own: dict[str, Any] = {}
        nested: dict[str, dict[str, Any]] = {g: {} for g in GROUPS}
        for key, value in params.items():
            if key in GROUPS and isinstance(value, (dict, GROUPS[key])):  # a nested table, or the config
                table: dict[str, Any] = value if isinstance(value, dict) else dict(vars(value))
                names = {f.name for f in dataclasses.fields(GROUPS[key])}
                for k in table:
                    if k not in names:
                        raise TypeError(f"got an unexpected keyword argument '{key}.{k}'")
                nested[key].update(table)
            elif key in FLAT:
                nested[FLAT[key][0]][FLAT[key][1]] = value
            elif key in GROUPS:
                raise ConfigError(f"method 'embedding': {key} must be a table of parameters, not {value!r}")
            elif key not in {f.name for f in dataclasses.fields(cls)}:
                raise TypeError(f"got an unexpected keyword argument '{key}'")
            else:
                own[key] = value
        return cls(**own, **{g: GROUPS[g](**kw) for g, kw in nested.items()})

    def typed_params(self) -> Iterator[tuple[str, Any, Any]]:
        """Every parameter flat: the method's own, then each group's by its :data:`FLAT` name."""
        yield from ((n, v, t) for n, v, t in super().typed_params() if n not in GROUPS)
        hints = {g: typing.get_type_hints(c) for g, c in GROUPS.items()}
        for name, (g, f) in FLAT.items():
            yield name, getattr(getattr(self, g), f), hints[g][f]

    def __getattr__(self, name: str) -> Any:
        if name in FLAT and name not in GROUPS:  # the flat names read through to their group
            g, f = FLAT[name]
            return getattr(getattr(self, g), f)
        raise AttributeError(name)

    def check_numbers(self, method: str) -> None:
        super().check_numbers(method)
        for value, choices, name in (
            (self.encoder.backend, BACKENDS, "backend"),
            (self.search.approximate, APPROX, "approximate"),
            (self.gate.rule, GATES, "gate"),
        ):
            if value not in choices:
                raise ConfigError(f"method '{method}': {name} must be one of {', '.join(choices)}, not '{value}'")
        check_bar(self.gate.synonyms)

"""The ``embedding`` method, the paraphrase tier: :class:`EmbeddingIndex` (``index``), its parameters
(``config``) and its parts, one concept per module (docs/architecture.md). Everything heavy (torch,
sentence-transformers, faiss) is imported lazily: importing this package costs nothing without the
``embed`` extra."""

from .config import GATE_DICE, GATE_DICE_CODE, GATE_SHORT, GATE_SYNONYMS, EmbeddingConfig
from .index import EmbeddingIndex

__all__ = ["GATE_DICE", "GATE_DICE_CODE", "GATE_SHORT", "GATE_SYNONYMS", "EmbeddingConfig", "EmbeddingIndex"]

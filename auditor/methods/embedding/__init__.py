"""The ``embedding`` method, the paraphrase tier: :class:`EmbeddingIndex` (``index``) and its parts, one
concept per module:

``index``      the method: segments, encodes, searches and decides (:class:`EmbeddingIndex`)
``config``     its parameters (:class:`EmbeddingConfig`)
``model``      the bundled (or any local) sentence-transformers model, loaded offline; :class:`Encoder`
``onnx``       the encoder's ONNX export (fp32 / int8), built locally and cached
``cache``      embeddings keyed by normalized-text hash, stored as ``.npy`` + JSON (no pickle)
``segment``    long items and code cut into the segments that carry their meaning
``vsearch``    FAISS inner-product search (exact, or IVF/HNSW for large eval sets) and a numpy twin
``tfidf``      a lexical channel: TF-IDF over identifier-split words, IDF from the eval side
``evidence``   the score parts (cosine, margin, mutual best, token overlap, entities)
``align``      BERTScore-style token alignment of a candidate pair
``decision``   the fixed thresholds that make a candidate conclusive, suspected or nothing
``gate``       the lexical gate: a training unit reaches the encoder only if it shares enough words with an eval segment
``synonyms``   the gate's bundled table of word-stem neighbours
``reach``      what the encoder reads of a text (its first word pieces), for the gate

Everything heavy (torch, sentence-transformers, faiss) is imported lazily, so importing this
package costs nothing when the ``embed`` extra is absent.
"""

from .config import GATE_DICE, GATE_DICE_CODE, GATE_SHORT, GATE_SYNONYMS, EmbeddingConfig
from .index import EmbeddingIndex

__all__ = ["GATE_DICE", "GATE_DICE_CODE", "GATE_SHORT", "GATE_SYNONYMS", "EmbeddingConfig", "EmbeddingIndex"]

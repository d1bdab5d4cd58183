"""BERTScore-style token alignment of two texts (Zhang et al. 2020, without baseline rescaling): each
word piece of the eval item is greedily matched to its most similar piece of the training text (cosine
of the model's contextual token vectors) and the matches are averaged with IDF weights from the eval
side, so the words that tell an item from its siblings ("circumference", "gcd") count most; a sentence
cosine averages them away. ``recall``: how much of the eval item the training text covers;
``precision``: the same from the training side; ``f1``: their harmonic mean. Special tokens and pieces
without a letter or digit are left out; IDF is ``log((N + 1) / (df + 1))`` over the eval texts, floored
at ``min_idf``; pieces never seen there weigh the most.

>>> import numpy as np

from .reach import ModelReach
>>> a = TokenVectors(np.array([1, 2]), np.eye(2, dtype=np.float32))
>>> b = TokenVectors(np.array([1, 3]), np.array([[1, 0], [0.6, 0.8]], dtype=np.float32))
>>> r, p, f = align(a, b, {1: 1.0, 2: 1.0, 3: 1.0})
>>> round(r, 2), round(p, 2)
(0.9, 0.9)

Errors: none of its own; the model's errors pass through.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .reach import ModelReach


@dataclass(frozen=True, slots=True)
class TokenVectors:
    """A text's word-piece ids and their L2-normalized contextual vectors (special tokens removed)."""

    ids: np.ndarray  # (n,) int64
    vecs: np.ndarray  # (n, dim) float32


def host(tensor: Any) -> np.ndarray:
    """A model's output as a numpy array (torch's tensors on any device; ONNX's are arrays already)."""
    return tensor if isinstance(tensor, np.ndarray) else tensor.detach().cpu().numpy()


def align(item: TokenVectors, other: TokenVectors, idf: dict[int, float], default_idf: float = 1.0):
    """``(recall, precision, f1)`` of greedy IDF-weighted token matching of ``item`` in ``other``."""
    if not len(item.ids) or not len(other.ids):
        return 0.0, 0.0, 0.0
    sims = item.vecs @ other.vecs.T
    wi = np.array([idf.get(int(t), default_idf) for t in item.ids.tolist()])
    wo = np.array([idf.get(int(t), default_idf) for t in other.ids.tolist()])
    recall = float((sims.max(axis=1) * wi).sum() / wi.sum())
    precision = float((sims.max(axis=0) * wo).sum() / wo.sum())
    f1 = 2 * recall * precision / (recall + precision) if recall + precision > 0 else 0.0
    return recall, precision, f1


class TokenAligner:
    """Token vectors of texts (memoized) from ``model`` (a sentence model's ``output_value="token_embeddings"``),
    their word pieces from a copy of its fast tokenizer, and the eval-side IDF table, for :func:`align`."""

    def __init__(self, model: Any, batch_size: int = 64, min_idf: float = 0.1, memo: int = 50_000):
        self.model = model
        self.batch_size = batch_size
        self.min_idf = min_idf
        self.memo_size = memo
        self.memo: dict[str, TokenVectors] = {}
        self.idf: dict[int, float] = {}
        self.default_idf = 1.0
        self.tok = ModelReach.of(model).tokenizer  # truncating where the model stops, no padding
        vocab = [self.tok.id_to_token(i) or "" for i in range(self.tok.get_vocab_size(with_added_tokens=False))]
        self.skip = {i for i, t in enumerate(vocab) if not any(ch.isalnum() for ch in t)}
        self.skip |= {i for i, t in self.tok.get_added_tokens_decoder().items() if t.special}

    def fit_idf(self, texts: Sequence[str]) -> None:
        """IDF of each word piece over ``texts`` (the eval side)."""
        df: Counter = Counter()
        for i in range(0, len(texts), 512):
            df.update(t for e in self.tok.encode_batch(list(texts[i : i + 512])) for t in set(e.ids))
        n = max(1, len(texts))
        self.idf = {t: max(self.min_idf, math.log((n + 1) / (c + 1))) for t, c in df.items()}
        self.default_idf = max(self.min_idf, math.log(n + 1))

    def vectors(self, texts: Sequence[str]) -> list[TokenVectors]:
        """Token vectors of each text (computed once per distinct text while the memo holds it)."""
        todo = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if todo:
            if len(self.memo) + len(todo) > self.memo_size:
                self.memo.clear()
            embs = self.model.encode(
                todo,
                batch_size=self.batch_size,
                output_value="token_embeddings",
                convert_to_numpy=False,
                show_progress_bar=False,
            )
            for text, enc, emb in zip(todo, self.tok.encode_batch(todo), embs):
                arr = host(emb).astype(np.float32)
                ids_a = np.asarray(enc.ids[: len(arr)], dtype=np.int64)
                keep = np.array([int(t) not in self.skip for t in ids_a.tolist()], dtype=bool)
                arr, ids_a = arr[keep], ids_a[keep]
                norms = np.linalg.norm(arr, axis=1, keepdims=True)
                arr = arr / np.where(norms > 0, norms, 1.0)
                self.memo[text] = TokenVectors(ids_a, arr)
        return [self.memo[t] for t in texts]

    def score(self, item: TokenVectors, other: TokenVectors) -> tuple[float, float, float]:
        return align(item, other, self.idf, self.default_idf)

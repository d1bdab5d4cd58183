"""A TF-IDF cosine over identifier-aware words, IDF from the eval side: code rephrased into another
language keeps names and terms (``has_close_elements`` / ``hasCloseElements``) a sentence model weighs
little. Words: runs of two or more letters, camelCase and snake_case split, lower-cased; weights
``(1 + log tf) · (log((N + 1) / (df + 1)) + 1)``, L2-normalized; words unseen on the eval side ignored.

>>> t = TfIdf(["def has_close_elements(numbers)", "def sum_squares(values)"])
>>> round(t.cosine(t.vector("int hasCloseElements(float* numbers)"), 0), 3)
0.942
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_WORD = re.compile(r"[^\W\d_]{2,}")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def word_tokens(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(_CAMEL.sub(" ", text.replace("_", " ")))]


class TfIdf:
    def __init__(self, eval_texts: Sequence[str]):
        df: Counter = Counter()
        for t in eval_texts:
            df.update(set(word_tokens(t)))
        n = len(eval_texts)
        self.idf = {w: math.log((n + 1) / (c + 1)) + 1.0 for w, c in df.items()}
        self.items = [self.vector(t) for t in eval_texts]

    def vector(self, text: str) -> dict[str, float]:
        v = {w: (1.0 + math.log(c)) * self.idf[w] for w, c in Counter(word_tokens(text)).items() if w in self.idf}
        norm = math.sqrt(sum(x * x for x in v.values()))
        return {w: x / norm for w, x in v.items()} if norm else {}

    def cosine(self, vec: dict[str, float], item: int) -> float:
        other = self.items[item]
        if len(other) < len(vec):
            vec, other = other, vec
        return sum(x * other.get(w, 0.0) for w, x in vec.items())

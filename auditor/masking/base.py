"""What every part of boilerplate masking shares: its settings (:class:`BoilerplateConfig`), the mask
token and line states, the eval items' word k-grams that are never masked, and :class:`MaskSets`, what
masking reads of a :class:`~auditor.masking.boilerplate.Boilerplate` (so that the batch path,
:mod:`auditor.masking.batch`, does not import the text-by-text one it is checked against).

>>> spans(np.array([1, 2]), 2, 5).tolist()
[False, True, True, True, False]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..errors import ConfigError
from ..text.batch import TokenBatch
from ..text.tokens import distinct, ngram_hashes

MASK = "[masked]"
PLAIN, GUARDED, SHARED, REMOVED = 0, 1, 2, 3  # line states in Boilerplate.mask_text


@dataclass
class BoilerplateConfig:
    #: a line / n-gram is boilerplate when it occurs in at least this share of the sampled records
    share: float = 0.5
    #: training records sampled (the first ones of the check's training sets, split evenly)
    sample: int = 2000
    #: ... and at most this many characters of their text (split evenly too): detection normalizes the
    #: sample twice, so 2,000 records of 2 MB would cost what scanning 8 GB costs; 2,000 chat or SFT records
    #: hold ~10 M (fewer than ``min_records`` records of this size: nothing is masked, as for a short file)
    sample_chars: int = 16_000_000
    #: with fewer sampled records nothing is masked (too little to tell boilerplate from content)
    min_records: int = 10
    #: n-gram size (words) for n-gram masking
    n: int = 13
    #: tokens per record looked at when counting n-grams
    max_tokens: int = 20000
    #: text sharing a word n-gram of this size with an eval item is never masked (the ngram tier's min_n)
    protect_n: int = 8

    def __post_init__(self) -> None:
        if not 1 <= self.protect_n <= self.n:
            raise ConfigError(f"boilerplate protect_n must be between 1 and n={self.n}, not {self.protect_n!r}")


class MaskSets(Protocol):
    """What masking reads of a boilerplate: the hashes of its removed, spared (masked word by word)
    and protected lines, its sorted n-gram hashes and the sorted hashes of the eval items' word
    ``protect_n``-grams (:class:`~auditor.masking.boilerplate.Boilerplate` is one)."""

    config: BoilerplateConfig
    lines: set[int]
    spared: set[int]
    protected: set[int]
    ngrams: np.ndarray
    eval_grams: np.ndarray


def eval_gram_hashes(eval_texts: Iterable[str] | TokenBatch, k: int) -> np.ndarray:
    """Sorted distinct hashes of every word ``k``-gram of ``eval_texts`` (as the ngram tier hashes them),
    or of the texts of a batch of them."""
    batch = eval_texts if isinstance(eval_texts, TokenBatch) else TokenBatch([t for t in eval_texts if t])
    if not len(batch):
        return np.empty(0, dtype=np.uint64)
    # normalized and hashed at once, each text's k-grams sliced from the batch's
    return distinct(np.concatenate(batch.text_ngram_hashes(range(len(batch)), k)))


def eval_gram_starts(th: np.ndarray, k: int, eval_grams: np.ndarray) -> np.ndarray:
    """Whether each word k-gram of the token hashes ``th`` is one of the eval items' (a bool per start)."""
    if not len(eval_grams):
        return np.zeros(max(0, len(th) - k + 1), dtype=bool)
    grams = ngram_hashes(th, k)
    # membership in the sorted distinct eval_grams by binary search (np.isin sorted both arrays anew
    # on every call: ~27 s of the calling process's CPU for a 2,000-record sample)
    pos = np.minimum(np.searchsorted(eval_grams, grams), len(eval_grams) - 1)
    return eval_grams[pos] == grams


def spans(starts: np.ndarray, width: int, length: int) -> np.ndarray:
    """A bool per position of ``length``: inside ``[s, s + width)`` for some ``s`` of ``starts``."""
    edges = np.bincount(starts, minlength=length + width) - np.bincount(starts + width, minlength=length + width)
    return np.cumsum(edges[:length]) > 0

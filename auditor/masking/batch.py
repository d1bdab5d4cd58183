"""Boilerplate masking of a whole batch of texts at once: what :meth:`auditor.masking.boilerplate.Boilerplate.mask_text`
does text by text (and keeps as the reference), with each distinct line normalized and hashed once
and the words to mask worked out with numpy over the batch. The output is the same, text for text
(``tests/test_mask_batch.py``); eval-item text is never masked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..text.batch import TokenBatch
from ..text.tokens import ngram_hashes, ngram_hashes_at
from .base import MASK, MaskSets, spans


class BatchMask:
    """The work of :meth:`Boilerplate.mask_texts` on one batch of texts (see there).

    Arrays over the batch's lines (``removed``, ``guarded``, ``shared``, ``text_of_line``) and over
    its kept tokens, the tokens of the kept lines of each text one after the other (``line``,
    ``text``, ``covered``): what :meth:`Boilerplate._mask_words` computes per text, for all at once.
    """

    def __init__(self, bp: MaskSets, texts: Sequence[str]):
        self.bp = bp
        self.given = list(texts)
        self.lines = [line for t in self.given if t for line in t.split("\n")]
        self.per_text = np.array([t.count("\n") + 1 if t else 0 for t in self.given], dtype=np.int64)
        # shared lines recur in most texts: each distinct line is normalized and hashed once
        distinct: dict[str, int] = {}
        self.unique = np.fromiter(
            (distinct.setdefault(line, len(distinct)) for line in self.lines), dtype=np.int64, count=len(self.lines)
        )
        self.batch = TokenBatch(list(distinct))
        self._th: np.ndarray | None = None
        self._line_states()
        self._spare_straddled()
        self._coverage()

    def _token_hashes(self) -> np.ndarray:
        """The batch's token hashes (of its distinct lines), hashed once."""
        if self._th is None:
            self._th = self.batch.token_hashes()
        return self._th

    def _line_states(self) -> None:
        bp, batch, u = self.bp, self.batch, self.unique
        hashes = np.array(batch.whole_hashes(), dtype=np.uint64)
        self.n_tokens = np.diff(batch.token_starts) - 1  # each distinct line's tokens, its separator left out
        nonempty = self.n_tokens > 0  # an empty normalized line has no hash in mask_text
        guarded = nonempty & _member(hashes, bp.protected)
        removed = nonempty & ~guarded & _member(hashes, bp.lines)
        shared = nonempty & ~guarded & ~removed & _member(hashes, bp.spared)
        self.guarded, self.removed, self.shared = guarded[u], removed[u], shared[u]
        self.removed_distinct = removed
        self.text_of_line = np.repeat(np.arange(len(self.given)), self.per_text)

    def _spare_straddled(self) -> None:
        """Each removed line holding a word of an eval k-gram occurrence is shared instead (as
        :func:`~auditor.masking.boilerplate._spare_straddled` decides text by text). Such an occurrence
        lies inside the line (looked for once per distinct line) or crosses one of its line breaks
        (looked for among the windows that do, within one text), so only those windows are hashed."""
        bp, u, k = self.bp, self.unique, self.bp.config.protect_n
        if not len(bp.eval_grams) or not self.removed.any():
            return
        th, first = self._token_hashes(), self.batch.token_starts[:-1]
        touched = np.zeros(len(self.lines), dtype=bool)
        inner = np.flatnonzero(self.removed_distinct & (self.n_tokens >= k))
        if len(inner):  # windows inside a distinct removed line
            count = self.n_tokens[inner] - k + 1
            owner = np.repeat(np.arange(len(inner)), count)
            starts = first[inner][owner] + np.arange(len(owner)) - np.repeat(np.cumsum(count) - count, count)
            within = np.zeros(len(self.n_tokens), dtype=bool)
            within[inner[owner[_sorted_member(ngram_hashes_at(th, k, starts), bp.eval_grams)]]] = True
            touched |= within[u]
        # positions: every line's tokens, each text's lines one after the other; a window holding a
        # removed line's word and another's crosses that line's first or last break b: starts b - 1 ... b - k + 1
        lens = self.n_tokens[u]
        pos = np.zeros(len(self.lines) + 1, dtype=np.int64)
        np.cumsum(lens, out=pos[1:])
        ends = np.concatenate(([0], np.cumsum(self.per_text)))
        removed = np.flatnonzero(self.removed)
        owner = self.text_of_line[removed]
        low, high = np.tile(pos[ends[owner]], 2), np.tile(pos[ends[owner + 1]] - k, 2)  # starts in the text
        starts = (np.concatenate((pos[removed], pos[removed + 1]))[:, None] - np.arange(1, k)).ravel()
        ok = (starts >= low.repeat(k - 1)) & (starts <= high.repeat(k - 1))
        starts = starts[ok]  # a window next to two removed lines twice (np.unique costs more than that)
        if len(starts):
            full = th[np.repeat(first[u] - pos[:-1], lens) + np.arange(pos[-1])]
            hits = starts[_sorted_member(ngram_hashes_at(full, k, starts), bp.eval_grams)]
            touched[np.searchsorted(pos, (hits[:, None] + np.arange(k)).ravel(), side="right") - 1] = True
        spare = self.removed & touched
        self.removed &= ~spare
        self.shared |= spare

    def _coverage(self) -> None:
        """``covered``: a bool per kept token (see :meth:`Boilerplate._mask_words`)."""
        bp, u = self.bp, self.unique
        lens = np.where(self.removed, 0, self.n_tokens[u])  # each line's kept tokens
        self.line = np.repeat(np.arange(len(self.lines)), lens)
        self.text = self.text_of_line[self.line]
        covered = self.shared[self.line]
        if not len(bp.ngrams) and not covered.any():
            self.covered = covered
            return
        offsets = np.zeros(len(lens), dtype=np.int64)
        np.cumsum(lens[:-1], out=offsets[1:])
        take = np.repeat(self.batch.token_starts[:-1][u] - offsets, lens) + np.arange(len(self.line))
        th = self._token_hashes()[take] if len(take) else np.zeros(0, dtype=np.uint64)
        n, k = bp.config.n, bp.config.protect_n
        if len(bp.ngrams):
            ngrams = (
                bp.ngrams if (bp.ngrams[1:] > bp.ngrams[:-1]).all() else np.unique(bp.ngrams)
            )  # sorted, as detected
            covered |= spans(self._hits(th, n, lambda g: _sorted_member(g, ngrams)), n, len(th))
        if covered.any():
            covered &= ~self.guarded[self.line]
            if len(bp.eval_grams) and covered.any():
                # only an eval k-gram over a covered word uncovers anything: look up only those
                ends = np.concatenate(([0], np.cumsum(covered)))
                touching = (ends[k : len(th) + 1] - ends[: len(th) - k + 1]) > 0 if len(th) >= k else None
                hits = self._hits(th, k, lambda g: _sorted_member(g, bp.eval_grams), touching)
                covered &= ~spans(hits, k, len(th))
        self.covered = covered

    def _hits(self, th: np.ndarray, n: int, member: Any, candidates: np.ndarray | None = None) -> np.ndarray:
        """Starts of the word n-grams within one text whose hash ``member`` accepts (among the
        ``candidates`` starts, a bool per start, when given)."""
        grams = ngram_hashes(th, n)
        if not len(grams):
            return np.zeros(0, dtype=np.int64)
        look = self.text[: len(grams)] == self.text[n - 1 :]
        if candidates is not None:
            look &= candidates
        starts = np.flatnonzero(look)
        return starts[member(grams[starts])]

    def texts(self) -> list[str]:
        """The masked texts: unchanged ones as given, the others rebuilt from their kept lines."""
        n_texts = len(self.given)
        removed = np.bincount(self.text_of_line, weights=self.removed, minlength=n_texts)
        covered_text = np.bincount(self.text, weights=self.covered, minlength=n_texts)
        touched = np.flatnonzero((removed > 0) | (covered_text > 0))
        if not len(touched):
            return list(self.given)
        covered_line = np.bincount(self.line, weights=self.covered, minlength=len(self.lines)) > 0
        first_line = np.concatenate(([0], np.cumsum(self.per_text)))
        first_token = np.searchsorted(self.line, np.arange(len(self.lines) + 1))
        out = list(self.given)
        for i in touched.tolist():
            kept = []
            for j in range(int(first_line[i]), int(first_line[i + 1])):
                if self.removed[j]:
                    continue
                if not covered_line[j]:
                    kept.append(self.lines[j])
                    continue
                words = self.batch.normalized(int(self.unique[j])).decode("utf-8").split()
                cov = self.covered[first_token[j] : first_token[j + 1]]
                kept.append(_masked_line(words, cov))
            out[i] = "\n".join(kept)
        return out


def _masked_line(words: list[str], covered: np.ndarray) -> str:
    """``words`` joined, covered ones as one ``[masked]`` per run (as :meth:`Boilerplate._mask_words`).

    >>> _masked_line(["a", "b", "c", "d"], np.array([False, True, True, False]))
    'a [masked] d'
    """
    # by runs of covered / uncovered words (no normalized word is "[masked]": brackets are punctuation)
    bounds = [0, *(np.flatnonzero(covered[1:] != covered[:-1]) + 1).tolist(), len(words)]
    flags = covered[bounds[:-1]].tolist() if len(words) else []
    return " ".join(MASK if c else " ".join(words[a:b]) for a, b, c in zip(bounds, bounds[1:], flags))


def _member(hashes: np.ndarray, chosen: set[int]) -> np.ndarray:
    """Whether each hash is in ``chosen`` (a bool per hash)."""
    if not chosen:
        return np.zeros(len(hashes), dtype=bool)
    return np.isin(hashes, np.fromiter(chosen, dtype=np.uint64, count=len(chosen)))


def _sorted_member(values: np.ndarray, sorted_distinct: np.ndarray) -> np.ndarray:
    """Whether each value is in the non-empty sorted array ``sorted_distinct`` (binary search)."""
    pos = np.minimum(np.searchsorted(sorted_distinct, values), len(sorted_distinct) - 1)
    return sorted_distinct[pos] == values

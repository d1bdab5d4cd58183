"""Boilerplate masking: text shared by a large share of the training records is not evidence.

System prompts, tool schemas and policy text recur in most records of an agent training set. An eval
item that quotes a policy sentence would otherwise "occur" in every training record. Before a check
scans its training sets, :func:`auditor.masking.masker.prepare` reads a sample of them (the first ``sample`` records) and
:func:`~auditor.masking.detect.detect` finds

* **lines** whose normalized text occurs in at least ``share`` of the sampled records, and
* word **n-grams** (``n`` = 13, the ngram tier's size) that do, in what remains after line masking.

During the scan, every text-comparing index (``mask_boilerplate = true``, the default of
:class:`~auditor.methods.base.MethodConfig`; ``calls``, ``entities`` default to false) sees training
records whose views have those lines removed and those n-grams replaced by ``[masked]`` (a break, so
no new n-gram forms across the gap).

**Masking never hides eval-item text.** A benchmark item copied into most records (a few-shot block in
the system prompt, one task repeated) is contamination, not boilerplate, so what would be masked is
checked against every eval item, per item and per occurrence, not only as whole lines:

* a line equal to an eval item's text is never touched;
* no word inside an occurrence of any eval item's word ``protect_n``-gram (8, the ngram tier's
  ``min_n``) is masked, whether a boilerplate n-gram covers it or an n-gram straddles the item's edge;
* a shared line holding such an occurrence (``spared_lines`` in the report), or a word of one that
  straddles line breaks (in that text only), is masked word by word around the eval item's words, not
  removed; ``spared_ngrams`` counts the boilerplate n-grams that overlap an eval item (eval words kept).

So the exact and ngram tiers find what they would find unmasked; masking only keeps shared text that
is not eval text from being evidence (and from diluting the minhash and embedding tiers' scores). The check's ``boilerplate`` entry in ``report.json`` says what was masked and how much. Turn it off per method
with ``mask_boilerplate = false`` in ``[methods.NAME]``. Reading the sample raises what reading the
dataset raises (:class:`~auditor.errors.InputError` for bad input); nothing else is raised here.

>>> from auditor.masking.detect import detect
>>> from auditor.records.record import Record
>>> recs = [Record("t", str(i), f"t:{i}", {"text": f"You are a helpful agent.\\nTask {i}: book seat {i}"})
...         for i in range(20)]
>>> bp = detect(recs, [], BoilerplateConfig(min_records=10))
>>> bp.mask_record(recs[3], ("text",)).views["text"]
'Task 3: book seat 3'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, pairwise
from typing import Any

import numpy as np

from ..records.record import TEXT, Record
from ..text.normalize import normalize, text_hash
from ..text.tokens import ngram_hashes, token_hashes
from .base import GUARDED, MASK, PLAIN, REMOVED, SHARED, BoilerplateConfig, eval_gram_starts, spans
from .batch import BatchMask


@dataclass
class MaskCounts:
    """Records masked, characters masked and characters scanned by masking (one worker's, one unit's)."""

    records: int = 0
    chars: int = 0
    scanned: int = 0

    def add(self, other: MaskCounts) -> None:
        self.records += other.records
        self.chars += other.chars
        self.scanned += other.scanned


@dataclass
class Boilerplate:
    config: BoilerplateConfig
    lines: set[int] = field(default_factory=set)
    #: shared lines holding eval-item text: masked word by word, the eval item's words kept
    spared: set[int] = field(default_factory=set)
    ngrams: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))
    protected: set[int] = field(default_factory=set)
    #: sorted hashes of the eval items' word ``protect_n``-grams (text containing one is never masked)
    eval_grams: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))
    sampled: int = 0
    spared_ngrams: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)
    masked_records: int = 0
    masked_chars: int = 0
    scanned_chars: int = 0

    def mask_text(self, text: str) -> str:
        """``text`` without boilerplate lines, boilerplate n-grams replaced by ``[masked]``.

        Eval-item text is kept: lines equal to an eval item are untouched, and so is every word
        inside an occurrence of an eval item's ``protect_n``-gram, even one straddling line breaks (a
        shared line holding a word of one is masked word by word around it instead of removed)."""
        if not text:
            return text
        lines = text.split("\n")
        norms = [normalize(line) for line in lines]
        states = [self._line_state(text_hash(norm)) if norm else PLAIN for norm in norms]
        if REMOVED in states and len(self.eval_grams):
            states = _spare_straddled(norms, states, self.config.protect_n, self.eval_grams)
        keep = [i for i, s in enumerate(states) if s != REMOVED]
        lines, norms, states = [lines[i] for i in keep], [norms[i] for i in keep], [states[i] for i in keep]
        if lines and (len(self.ngrams) or SHARED in states):
            lines = self._mask_words(lines, norms, states)
        return "\n".join(lines)

    def _line_state(self, h: int) -> int:
        if h in self.protected:
            return GUARDED
        return REMOVED if h in self.lines else SHARED if h in self.spared else PLAIN

    def _mask_words(self, lines: list[str], norms: list[str], states: list[int]) -> list[str]:
        """``lines`` with masked words (``norms``: each line's ``normalize()``, so its tokens)."""
        toks_per_line = [norm.split() for norm in norms]  # tokens(line), without normalizing twice
        flat = [t for ts in toks_per_line for t in ts]
        bounds = list(pairwise(accumulate((len(ts) for ts in toks_per_line), initial=0)))  # each line's tokens
        covered = np.zeros(len(flat), dtype=bool)
        for (a, b), state in zip(bounds, states):
            if state == SHARED:
                covered[a:b] = True
        n = self.config.n
        th = token_hashes(flat)
        if len(self.ngrams) and len(flat) >= n:
            for start in np.flatnonzero(np.isin(ngram_hashes(th, n), self.ngrams)):
                covered[start : start + n] = True
        if not covered.any():
            return lines
        # never mask a word of a line equal to an eval item, nor one inside an eval item's k-gram
        for (a, b), state in zip(bounds, states):
            if state == GUARDED:
                covered[a:b] = False
        k = self.config.protect_n
        for start in np.flatnonzero(eval_gram_starts(th, k, self.eval_grams)):
            covered[start : start + k] = False
        out = []
        for line, ts, (a, b) in zip(lines, toks_per_line, bounds):
            cov = covered[a:b]
            if not cov.any():
                out.append(line)
                continue
            words = [MASK if c else t for t, c in zip(ts, cov)]
            out.append(" ".join(w for i, w in enumerate(words) if not (w == MASK and i and words[i - 1] == MASK)))
        return out

    def mask_texts(self, texts: Sequence[str]) -> list[str]:
        """``[self.mask_text(t) for t in texts]``, computed for the whole batch at once.

        Every line of every text goes into one :class:`~auditor.text.batch.TokenBatch` (normalized
        and hashed in place); each line's state (removed, guarded, shared) and each kept word's
        coverage come from numpy over the batch's token hashes, n-gram windows running over a text's
        kept lines as :meth:`mask_text`'s do (never across two texts). A text with no line removed
        and no word covered is returned as is (the same object); only texts with something masked
        are rebuilt, line by line.

        >>> from auditor.masking.detect import detect
        >>> item = "book a one way flight from boston to denver for two adults next friday"
        >>> recs = [Record("t", str(i), f"t:{i}", {"text": f"Be brief.\\nExample: {item}\\nTask {i}"})
        ...         for i in range(20)]
        >>> bp = detect(recs, [item], BoilerplateConfig(min_records=10))
        >>> texts = ["Be brief.\\nTask 7", "nothing shared\\r\\n", "", "Example: " + item]
        >>> bp.mask_texts(texts) == [bp.mask_text(t) for t in texts]
        True
        >>> bp.mask_texts(texts)[:2]
        ['Be brief.\\nTask 7', 'nothing shared\\r\\n']
        """
        return BatchMask(self, texts).texts()

    def mask_records(
        self, records: Sequence[Record], views: Iterable[str], counts: MaskCounts | None = None
    ) -> list[Record]:
        """``[self.mask_record(r, views) for r in records]``, each view masked as one batch
        (:meth:`mask_texts`); the same records, copies and counts (into ``counts`` where given, else
        into this boilerplate's totals)."""
        out = list(records)
        tally = MaskCounts()
        new_views: dict[int, dict[str, str]] = {}
        for v in views:
            texts = [r.view(v) if v == TEXT else r.views.get(v) or "" for r in records]
            for i, (text, masked) in enumerate(zip(texts, self.mask_texts(texts))):
                if not text:
                    continue
                tally.scanned += len(text)
                if masked != text:
                    tally.chars += max(0, len(text) - len(masked.replace(MASK, "")))
                    new_views.setdefault(i, dict(records[i].views))[v] = masked
        for i, views_i in new_views.items():
            tally.records += 1
            out[i] = dataclasses.replace(records[i], views=views_i)
        if counts is None:
            self.add_counts(tally)
        else:
            counts.add(tally)
        return out

    def add_counts(self, counts: MaskCounts) -> None:
        """Add records and characters masked elsewhere (a scan worker's, :class:`MaskCounts`) to the totals."""
        self.masked_records += counts.records
        self.masked_chars += counts.chars
        self.scanned_chars += counts.scanned

    def mask_record(self, record: Record, views: Iterable[str]) -> Record:
        """A copy of ``record`` whose ``views`` are masked (other views unchanged); counts chars."""
        new_views = dict(record.views)
        changed = False
        for v in views:
            text = record.view(v) if v == TEXT else record.views.get(v)
            if not text:
                continue
            masked = self.mask_text(text)
            self.scanned_chars += len(text)
            if masked != text:
                self.masked_chars += max(0, len(text) - len(masked.replace(MASK, "")))
                new_views[v] = masked
                changed = True
        if not changed:
            return record
        self.masked_records += 1
        return dataclasses.replace(record, views=new_views)

    def report(self) -> dict[str, Any]:
        return {
            "enabled": True,
            "sampled_records": self.sampled,
            "share": self.config.share,
            "lines": len(self.lines),
            "ngrams": int(len(self.ngrams)),
            "n": self.config.n,
            "spared_lines": len(self.spared),
            "spared_ngrams": self.spared_ngrams,
            "examples": self.examples,
            "masked_records": self.masked_records,
            "masked_chars": self.masked_chars,
            "scanned_chars": self.scanned_chars,
            "masked_share": round(self.masked_chars / self.scanned_chars, 6) if self.scanned_chars else 0.0,
        }


def _spare_straddled(norms: list[str], states: list[int], k: int, eval_grams: np.ndarray) -> list[int]:
    """``states`` with every removed line that holds a word of an eval ``k``-gram occurring in the
    whole text (``norms``: its lines, normalized) shared instead: masked word by word around the
    eval words. An occurrence straddling line breaks is held by no line alone (issue: ToolRL's row 42)."""
    toks = [norm.split() for norm in norms]
    th = token_hashes([t for ts in toks for t in ts])
    inside = spans(np.flatnonzero(eval_gram_starts(th, k, eval_grams)), k, len(th))
    line_of = np.repeat(np.arange(len(toks)), [len(ts) for ts in toks])
    hit = set(line_of[inside].tolist())
    return [SHARED if s == REMOVED and i in hit else s for i, s in enumerate(states)]

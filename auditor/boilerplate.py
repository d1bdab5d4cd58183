"""Boilerplate masking: text shared by a large share of the training records is not evidence.

System prompts, tool schemas and policy text recur in most records of an agent training set. An eval
item that quotes a policy sentence would otherwise "occur" in every training record. Before a check
scans its training sets, :func:`prepare` reads a sample of them (the first ``sample`` records) and
:func:`detect` finds

* **lines** whose normalized text occurs in at least ``share`` of the sampled records, and
* word **n-grams** (``n`` = 13, the ngram tier's size) that do, in what remains after line masking.

During the scan, every text-comparing index (``mask_boilerplate = true``, the default of
:class:`~auditor.methods.base.MethodConfig`; ``calls``, ``entities`` default to false) sees training
records whose views have those lines removed and those n-grams replaced by ``[masked]`` (a break, so
no new n-gram forms across the gap). A line equal to an eval item's text is never masked (a
benchmark item copied into every record is contamination, not boilerplate). The check's
``boilerplate`` entry in ``report.json`` says what was masked and how much. Turn it off per method
with ``mask_boilerplate = false`` in ``[methods.NAME]``. Reading the sample raises what reading the
dataset raises (:class:`~auditor.errors.InputError` for bad input); nothing else is raised here.

>>> from auditor.records import Record
>>> recs = [Record("t", str(i), f"t:{i}", {"text": f"You are a helpful agent.\\nTask {i}: book seat {i}"})
...         for i in range(20)]
>>> bp = detect(recs, [], BoilerplateConfig(min_records=10))
>>> bp.mask_record(recs[3], ("text",)).views["text"]
'Task 3: book seat 3'
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from .normalize import normalize, text_hash, tokens
from .records import TEXT, Record

MASK = "[masked]"


@dataclass
class BoilerplateConfig:
    #: a line / n-gram is boilerplate when it occurs in at least this share of the sampled records
    share: float = 0.5
    #: training records sampled (the first ones of the check's training sets, split evenly)
    sample: int = 2000
    #: with fewer sampled records nothing is masked (too little to tell boilerplate from content)
    min_records: int = 10
    #: n-gram size (words) for n-gram masking
    n: int = 13
    #: tokens per record looked at when counting n-grams
    max_tokens: int = 20000


@dataclass
class Boilerplate:
    config: BoilerplateConfig
    lines: set[int] = field(default_factory=set)
    ngrams: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))
    protected: set[int] = field(default_factory=set)
    sampled: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)
    masked_records: int = 0
    masked_chars: int = 0
    scanned_chars: int = 0

    def mask_text(self, text: str) -> str:
        """``text`` without boilerplate lines, boilerplate n-grams replaced by ``[masked]``."""
        if not text:
            return text
        kept = []
        for line in text.split("\n"):
            norm = normalize(line)
            h = text_hash(norm) if norm else None
            if h is not None and h in self.lines and h not in self.protected:
                continue
            kept.append(line)
        if len(self.ngrams) and kept:
            kept = self._mask_ngrams(kept)
        return "\n".join(kept)

    def _mask_ngrams(self, lines: list[str]) -> list[str]:
        from .methods.ngram import ngram_hashes, token_hashes

        toks_per_line = [tokens(line) for line in lines]
        flat = [t for ts in toks_per_line for t in ts]
        n = self.config.n
        if len(flat) < n:
            return lines
        hashes = ngram_hashes(token_hashes(flat), n)
        hit = np.isin(hashes, self.ngrams, assume_unique=False)
        if not hit.any():
            return lines
        covered = np.zeros(len(flat), dtype=bool)
        for start in np.flatnonzero(hit):
            covered[start : start + n] = True
        out, offset = [], 0
        for line, ts in zip(lines, toks_per_line):
            cov = covered[offset : offset + len(ts)]
            offset += len(ts)
            if not cov.any():
                out.append(line)
                continue
            words = [MASK if c else t for t, c in zip(ts, cov)]
            out.append(" ".join(w for i, w in enumerate(words) if not (w == MASK and i and words[i - 1] == MASK)))
        return out

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
            "examples": self.examples,
            "masked_records": self.masked_records,
            "masked_chars": self.masked_chars,
            "scanned_chars": self.scanned_chars,
            "masked_share": round(self.masked_chars / self.scanned_chars, 6) if self.scanned_chars else 0.0,
        }


def detect(sample: Sequence[Record], eval_texts: Iterable[str], config: BoilerplateConfig | None = None) -> Boilerplate:
    """Boilerplate lines and n-grams of ``sample`` (see the module doc); ``eval_texts`` are protected."""
    from .methods.ngram import ngram_hashes, token_hashes

    cfg = config or BoilerplateConfig()
    bp = Boilerplate(cfg, sampled=len(sample), protected={text_hash(normalize(t)) for t in eval_texts if t})
    if len(sample) < cfg.min_records:
        return bp
    need = max(2, int(np.ceil(cfg.share * len(sample))))
    line_df: Counter = Counter()
    first_text: dict[int, str] = {}
    for r in sample:
        seen = set()
        for line in r.view(TEXT).split("\n"):
            norm = normalize(line)
            if len(norm) < 10:
                continue
            h = text_hash(norm)
            seen.add(h)
            first_text.setdefault(h, line.strip())
        line_df.update(seen)
    bp.lines = {h for h, c in line_df.items() if c >= need} - bp.protected
    bp.examples = [
        {"kind": "line", "text": first_text[h][:160], "share": round(c / len(sample), 4)}
        for h, c in line_df.most_common()
        if h in bp.lines
    ][:5]
    grams = []
    for r in sample:
        rest = bp.mask_text(r.view(TEXT))
        th = token_hashes(tokens(rest)[: cfg.max_tokens])
        grams.append(np.unique(ngram_hashes(th, cfg.n)))
    if grams:
        allg = np.concatenate(grams)
        if len(allg):
            uniq, counts = np.unique(allg, return_counts=True)
            bp.ngrams = np.sort(uniq[counts >= need])
    if len(bp.ngrams):
        bp.examples.append({"kind": "ngrams", "count": int(len(bp.ngrams))})
    return bp


_MASKED = "_masked_views"  # meta key: views with boilerplate masked, set by Masker.premask


class MaskingIndex:
    """Wraps a built index so that its :meth:`search` sees masked training records."""

    def __init__(self, inner: Any, masker: Masker):
        self.inner = inner
        self.masker = masker

    def search(self, batch: Sequence[Record]):
        return self.inner.search(self.masker.masked(batch))

    def __getattr__(self, name: str) -> Any:
        # only reached for attributes MaskingIndex lacks; guard the ones unpickling probes before
        # ``inner`` exists (worker processes receive indexes pickled), or it would recurse forever
        if name.startswith("__") or name in ("inner", "masker"):
            raise AttributeError(name)
        return getattr(self.inner, name)


@dataclass
class Masker:
    """The boilerplate of one check and the indexes it applies to (see :func:`prepare`)."""

    boilerplate: Boilerplate | None
    indexes: list[Any]
    views: tuple[str, ...] = ()
    reason: str | None = None
    methods: list[str] = field(default_factory=list)

    def premask(self, record: Record) -> None:
        """Observer run in the calling process: mask once, count once, carry the masked views along."""
        if self.boilerplate is not None and self.methods:
            masked = self.boilerplate.mask_record(record, self.views)
            record.meta[_MASKED] = masked.views if masked is not record else None

    def masked(self, batch: Sequence[Record]) -> list[Record]:
        """The records of ``batch`` as the masking indexes see them, computed anew on every call.

        Deliberately uncached: a cache keyed by ``id(batch)`` returned an earlier batch's records
        once a worker process freed that batch and a new one reused its id (a false PASS). Records
        premasked in the calling process (:meth:`premask`) cost one ``dataclasses.replace`` here.
        """
        if self.boilerplate is None:
            return list(batch)
        return [self._premasked(r) if _MASKED in r.meta else self.boilerplate.mask_record(r, self.views) for r in batch]

    @staticmethod
    def _premasked(record: Record) -> Record:
        views = record.meta[_MASKED]
        return record if views is None else dataclasses.replace(record, views=views)

    def report(self) -> dict[str, Any]:
        if self.boilerplate is None:
            return {"enabled": False, "reason": self.reason}
        return {**self.boilerplate.report(), "methods": self.methods}


def prepare(
    indexes: Sequence[Any],
    train_datasets: Sequence[Any],
    eval_records: Sequence[Record],
    config: BoilerplateConfig | None = None,
) -> Masker:
    """Sample the training sets, detect boilerplate, wrap the indexes that mask it.

    ``Masker.indexes`` is the list to scan with (wrapped where masking applies)."""
    cfg = config or BoilerplateConfig()
    masking = [ix for ix in indexes if getattr(ix.config, "mask_boilerplate", False)]
    if not masking:
        return Masker(None, list(indexes), reason="turned off (mask_boilerplate = false) for every method")
    per = max(1, cfg.sample // max(1, len(train_datasets)))
    sample = [r for ds in train_datasets for r in islice(ds.records(), per)]
    eval_texts = {ev.view(ix.config.eval_view) for ix in masking for ev in eval_records}
    bp = detect(sample, eval_texts, cfg)
    if len(sample) < cfg.min_records:
        return Masker(
            None,
            list(indexes),
            reason=f"only {len(sample)} training records (< {cfg.min_records}): "
            "too few to tell boilerplate from content",
        )
    if not bp.lines and not len(bp.ngrams):
        return Masker(bp, list(indexes), methods=[])
    views = tuple(dict.fromkeys(v for ix in masking for v in ix.config.train_views))
    masker = Masker(bp, [], views=views, methods=[ix.name for ix in masking])
    masker.indexes = [MaskingIndex(ix, masker) if ix in masking else ix for ix in indexes]
    return masker

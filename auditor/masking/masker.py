"""Boilerplate masking applied to a check's scan: which indexes see masked training records, and how.

:func:`prepare` samples a check's training sets, detects their boilerplate
(:func:`auditor.masking.detect.detect_sample`) and returns a :class:`Masker`: the check's indexes, those
that mask boilerplate wrapped in a :class:`MaskingIndex`, whose :meth:`~MaskingIndex.search` sees the
training records with boilerplate masked (:class:`~auditor.masking.boilerplate.Boilerplate`, what is masked
and the promise that eval text never is). The calling process may mask a batch once
(:meth:`Masker.premask_batch`) and carry the masked views along to the workers.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..records.record import Record
from .base import BoilerplateConfig
from .boilerplate import Boilerplate, MaskCounts
from .detect import detect_sample

if TYPE_CHECKING:
    from ..methods.base import Finding, Index, Searcher, SharedModel


_MASKED = "_masked_views"  # meta key: views with boilerplate masked, set by Masker.premask


class MaskingIndex:
    """Wraps a built index so that its :meth:`search` sees masked training records.

    It is a :class:`~auditor.methods.base.Searcher` (what an engine uses of a scan's indexes:
    :meth:`search`, :meth:`take_counts`, :meth:`add_counts`, :meth:`shared_models`,
    :meth:`prepare_workers`), by structure: ``text/`` does not import the methods at load time; mypy
    checks it where it is one (:attr:`Masker.indexes`). The audit reads stats from ``inner``."""

    def __init__(self, inner: Index, masker: Masker):
        self.inner = inner
        self.masker = masker

    def search(self, batch: Sequence[Record]) -> list[Finding]:
        return self.inner.search(self.masker.masked(batch))

    def take_counts(self) -> Counter:
        return self.inner.take_counts()

    def add_counts(self, counts: Counter) -> None:
        self.inner.add_counts(counts)

    def shared_models(self) -> list[SharedModel]:
        return self.inner.shared_models()

    def prepare_workers(self) -> None:
        self.inner.prepare_workers()


@dataclass
class Masker:
    """The boilerplate of one check and the indexes it applies to (see :func:`prepare`)."""

    boilerplate: Boilerplate | None
    indexes: list[Searcher]
    views: tuple[str, ...] = ()
    reason: str | None = None
    methods: list[str] = field(default_factory=list)

    def premask(self, record: Record) -> None:
        """Observer run in the calling process: mask once, count once, carry the masked views along."""
        if self.boilerplate is not None and self.methods:
            masked = self.boilerplate.mask_record(record, self.views)
            record.meta[_MASKED] = masked.views if masked is not record else None

    def premask_batch(self, records: Sequence[Record], counts: MaskCounts | None = None) -> None:
        """:meth:`premask` for every record of ``records``, masked as one batch
        (:meth:`Boilerplate.mask_records`): the same masked views and counts (into ``counts`` where
        given, e.g. a scan stage's own, else into the boilerplate's totals)."""
        if self.boilerplate is not None and self.methods:
            for record, masked in zip(records, self.boilerplate.mask_records(records, self.views, counts)):
                record.meta[_MASKED] = masked.views if masked is not record else None

    @staticmethod
    def unmask(record: Record) -> None:
        """Drop the masked views :meth:`premask` attached (before another check's masker sees ``record``)."""
        record.meta.pop(_MASKED, None)

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


def masked_eval_texts(indexes: Sequence[Any], eval_records: Sequence[Record]) -> set[str] | None:
    """The eval texts that masking must protect for ``indexes`` (built or not: only their
    ``config`` is read); None when no index masks boilerplate."""
    masking = [ix for ix in indexes if ix.config.mask_boilerplate]
    if not masking:
        return None
    return {ev.view(ix.config.eval_view) for ix in masking for ev in eval_records}


def prepare(
    indexes: Sequence[Any],
    train_datasets: Sequence[Any],
    eval_records: Sequence[Record],
    config: BoilerplateConfig | None = None,
    detected: Boilerplate | None = None,
) -> Masker:
    """Sample the training sets, detect boilerplate, wrap the indexes that mask it.

    ``detected``: the boilerplate :func:`detect_sample` found for these indexes and eval records
    (e.g. in a worker); None: detect it here. ``Masker.indexes`` is the list to scan with
    (wrapped where masking applies)."""
    cfg = config or BoilerplateConfig()
    masking = [ix for ix in indexes if ix.config.mask_boilerplate]
    if not masking:
        return Masker(None, list(indexes), reason="turned off (mask_boilerplate = false) for every method")
    if detected is None:
        texts = masked_eval_texts(indexes, eval_records) or set()
        detected = detect_sample(train_datasets, [texts], cfg)[0]
    bp = detected
    if bp.sampled < cfg.min_records:
        return Masker(
            None,
            list(indexes),
            reason=f"only {bp.sampled} training records sampled (< {cfg.min_records}; the sample is the first "
            f"{cfg.sample:,} records, fewer where they reach {cfg.sample_chars:,} characters): too few to tell "
            "boilerplate from content",
        )
    if not bp.lines and not len(bp.ngrams):
        return Masker(bp, list(indexes), methods=[])
    views = tuple(dict.fromkeys(v for ix in masking for v in ix.searched_views()))
    masker = Masker(bp, [], views=views, methods=[ix.name for ix in masking])
    masker.indexes = [MaskingIndex(ix, masker) if ix in masking else ix for ix in indexes]
    return masker

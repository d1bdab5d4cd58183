"""A scan job and the work on one unit: what every engine's worker runs.

A :class:`ScanJob` is the stages that scan one training dataset in one pass, in order (for each
check: masking its boilerplate, then searching its indexes; counting error types; capturing the texts
of finding records), shipped to each worker once. :func:`scan_unit` reads one work unit in batches,
runs every stage over each batch and sends back only the findings, the unit's accounting and each
stage's counts (:class:`UnitResult`, numbered locally; :class:`~auditor.scan.driver.UnitMerger`
renumbers it).

>>> from auditor.datasets.dataset import Dataset, DatasetSpec
>>> from auditor.methods import create
>>> ev = list(Dataset(DatasetSpec("t", ["webshop:0:50"], role="eval")).records())
>>> train = Dataset(DatasetSpec("tr", ["webshop:0:100"], role="eval"))
>>> res = scan_unit(ScanJob.of([create("exact").build(ev)]), train.reader(), train.plan()[0], 0)
>>> res.records, len(res.findings) >= 50
(100, True)
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..datasets.units import Unit, UnitReader, UnitStats
from ..methods.base import Finding, Searcher
from ..records.record import TEXT, Record
from ..text.batch import forget_batch
from ..text.locate import forget_located
from .progress import LiveCounts, peak_rss_mb
from .stage import Batch, Stage
from .stages import SearchStage


@dataclass
class ScanStats:
    """What the scans of a run read and how fast (the report's ``run.scan``)."""

    records: int = 0
    chars: int = 0
    bytes: int = 0  # size on disk of the training files scanned
    seconds: float = 0.0
    units: int = 0
    worker_cpu_s: float = 0.0  # CPU seconds the workers spent on units (reading, masking, searching)
    peak_worker_rss_mb: float = 0.0  # the largest peak RSS a worker reported (MB)
    caller_cpu_s: float = 0.0  # CPU seconds of the calling process during scans (planning, merging)

    def as_dict(self) -> dict:
        rate = self.records / self.seconds if self.seconds else 0.0
        mb_rate = self.bytes / 1e6 / self.seconds if self.seconds else 0.0
        return {
            "records": self.records,
            "chars": self.chars,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "records_per_s": round(rate, 1),
            "mb_per_s": round(mb_rate, 2),
            "units": self.units,
            "worker_cpu_s": round(self.worker_cpu_s, 3),
            "caller_cpu_s": round(self.caller_cpu_s, 3),
            "peak_worker_rss_mb": self.peak_worker_rss_mb,
        }


@dataclass
class ScanJob:
    """Everything a worker needs besides its unit: the stages that scan one training dataset in one
    pass, run in order over each batch. Shipped to each worker once (local: at process start; Ray:
    one ``ray.put``)."""

    stages: list[Stage[Any]]
    batch_size: int = 512

    @classmethod
    def of(cls, indexes: Sequence[Searcher], batch_size: int = 512, check: str = "") -> ScanJob:
        """A job of one search over ``indexes`` (no masking)."""
        return cls([SearchStage(check, list(indexes))], batch_size=batch_size)

    def searchers(self) -> list[Searcher]:
        """Every stage's searchers, in order."""
        return [s for stage in self.stages for s in stage.searchers()]

    def prepare_workers(self) -> None:
        """What each searcher's workers need, built once here (:meth:`~auditor.methods.base.Searcher.prepare_workers`):
        an engine calls it before it starts its workers."""
        for searcher in self.searchers():
            searcher.prepare_workers()


@dataclass
class UnitResult:
    """What a worker sends back for one unit (local numbering; see :class:`~auditor.scan.driver.UnitMerger`)."""

    stats: UnitStats
    numbered_from: int | None
    findings: list[Finding] = field(default_factory=list)
    positional: set[int] = field(default_factory=set)  # local ordinals whose id is a position
    records: int = 0
    chars: int = 0
    counts: list[Any] = field(default_factory=list)  # per stage: its take_counts()
    cpu_s: float = 0.0
    peak_rss_mb: float = 0.0


#: characters of text (``text`` views) a batch holds at most, whatever ``batch_size`` says: a batch's
#: arrays (token offsets, hashes, ids, shingles: ~40 bytes a word) follow its text, so 512 records of
#: 2 MB would hold a GB; 512 chat or SFT records hold ~2 M characters, and so does one 2 MB record
#: (at 4 M, two of them: a worker's peak memory 1.6x a short-record run's, not 1.5x)
BATCH_CHARS = 2_000_000


def batched(items: Iterable[Record], size: int, chars: int = BATCH_CHARS) -> Iterator[list[Record]]:
    """``items`` in lists of ``size`` records, fewer where their text reaches ``chars`` characters
    (the record that reaches it is the last of its batch).

    >>> recs = [Record("t", str(i), f"t:{i}", {"text": "x" * 10}) for i in range(5)]
    >>> [len(b) for b in batched(recs, 2)], [len(b) for b in batched(recs, 4, chars=25)]
    ([2, 2, 1], [3, 2])
    """
    batch: list[Record] = []
    held = 0
    for r in items:
        batch.append(r)
        held += len(r.view(TEXT))
        if len(batch) >= size or held >= chars:
            yield batch
            batch, held = [], 0
    if batch:
        yield batch


def scan_unit(
    job: ScanJob,
    reader: UnitReader,
    unit: Unit,
    numbered_from: int | None,
    count_only: bool = False,
    live: LiveCounts | None = None,
) -> UnitResult:
    """A worker's whole task: read ``unit`` and run every stage of ``job`` over each batch of it.

    ``live``: each batch's records and characters are added to it as the batch is done (the progress
    bar reads it; :class:`~auditor.scan.progress.LiveCounts`).

    ``count_only``: read and count only (the counting pass of a position-range split). Bad input is
    reported in the result (``stats.error``), never raised; each stage's counts of the unit travel in
    ``counts`` (taken from the stages, whatever happened).
    """
    cpu0 = time.process_time()
    ustats = UnitStats()
    res = UnitResult(ustats, numbered_from)
    if count_only:
        for _ in reader.read(unit, ustats, 0):
            pass
        res.cpu_s = time.process_time() - cpu0
        return res
    try:
        for records in batched(reader.read(unit, ustats, numbered_from), job.batch_size):
            chars = sum(len(r.view(TEXT)) for r in records)  # r.raw is kept: a finding names its field
            res.chars += chars
            res.records += len(records)
            batch = Batch(records)
            for stage in job.stages:
                stage.run(batch)
            if batch.findings:
                by_ordinal = batch.by_ordinal()
                for f in batch.findings:
                    if by_ordinal[f.train_ordinal].meta.get("positional_id"):
                        res.positional.add(f.train_ordinal)
                res.findings.extend(batch.findings)
            if live is not None:
                live.add(len(records), chars)
            del batch, records  # not kept while the next batch is read (two alive at once: twice the peak)
            forget_batch()
            forget_located()
    finally:
        res.counts = [stage.take_counts() for stage in job.stages]
    res.cpu_s = time.process_time() - cpu0
    res.peak_rss_mb = peak_rss_mb()
    return res

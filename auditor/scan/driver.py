"""The scan's driver loop and merger: units through an engine's unit map, results merged in reading order.

:func:`run_scan` is the scan every engine runs: it plans the counting pass a position-range split
needs, hands units to the engine's ``run_units`` (which runs :func:`~auditor.scan.job.scan_unit`
wherever the engine runs work) and merges the results with a :class:`UnitMerger`: in unit order,
renumbered (ordinals across units; line numbers and positional ids inside a split file), each
stage's counts added to the caller's stages. So ordinals, skips, split selection and accounting are
those of a serial read and the report does not depend on the engine or the number of workers.

>>> from auditor.datasets.dataset import Dataset, DatasetSpec
>>> from auditor.methods import create
>>> from auditor.scan.job import ScanJob, ScanStats, scan_unit
>>> ev = list(Dataset(DatasetSpec("t", ["webshop:0:50"], role="eval")).records())
>>> train, stats = Dataset(DatasetSpec("tr", ["webshop:0:100"], role="eval")), ScanStats()
>>> serial = lambda job, reader, tasks, count_only: (scan_unit(job, reader, u, s, count_only) for u, s in tasks)
>>> found = list(run_scan(serial, ScanJob.of([create("exact").build(ev)]), train, stats, train.plan(), False))
>>> len(found) >= 50, stats.records
(True, 100)
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator

from ..datasets.account import DatasetAccount
from ..datasets.dataset import Dataset
from ..datasets.units import Unit, UnitReader
from ..errors import InputError
from ..io.files import file_size
from ..methods.base import Finding
from .job import ScanJob, ScanStats, UnitResult
from .progress import LiveCounts, ScanProgress


class UnitMerger:
    """Takes unit results in reading order and turns them into the serial scan's findings and counts."""

    def __init__(self, job: ScanJob, dataset: Dataset, stats: ScanStats):
        self.job = job
        self.dataset = dataset
        self.stats = stats
        self.account = DatasetAccount(dataset)
        self.peak_worker_rss_mb = 0.0

    def add(self, unit: Unit, res: UnitResult) -> list[Finding]:
        shift = self.account.shift(unit, res.numbered_from)
        if not self.account.absorb(unit, res.stats):
            return []  # its file was given up at an earlier unit (on_error = "skip")
        self.stats.records += res.records
        self.stats.chars += res.chars
        self.stats.units += 1
        self.stats.worker_cpu_s += res.cpu_s
        self.peak_worker_rss_mb = max(self.peak_worker_rss_mb, res.peak_rss_mb)
        for stage, counts in zip(self.job.stages, res.counts):
            if counts is not None:
                stage.add_counts(counts, shift)
        for f in res.findings:
            if shift.positions and f.train_ordinal in res.positional:
                f.train_id = str(int(f.train_id) + shift.positions)
            f.train_source = shift.source(f.train_source)
            f.train_ordinal += shift.ordinal
        return res.findings

    def finish(self) -> None:
        self.account.finish()


#: runs units: ``(job, reader, [(unit, numbered_from)], count_only)`` → results in the same order
UnitMap = Callable[[ScanJob, UnitReader, list[tuple[Unit, int | None]], bool], Iterator[UnitResult]]


def run_scan(
    run_units: UnitMap,
    job: ScanJob,
    dataset: Dataset,
    stats: ScanStats,
    units: list[Unit],
    progress: bool | None = None,
    live: LiveCounts | None = None,
) -> Iterator[Finding]:
    """The scan every engine runs: units through ``run_units``, results merged in order.

    ``live``: the counts ``run_units`` adds each batch to (given to :func:`~auditor.scan.job.scan_unit`
    wherever it runs), which the progress bar reads; without it the bar moves per unit."""
    start, cpu0 = time.perf_counter(), time.process_time()
    size = dataset_bytes(dataset)
    stats.bytes += size
    bar = ScanProgress(dataset.name, size, enabled=progress, live=live)
    reader = dataset.reader()
    merger = UnitMerger(job, dataset, stats)
    try:
        starts: list[int | None] = [None] * len(units)
        if dataset.split_by_position:
            starts = _ordinal_starts(run_units, job, dataset, reader, units)
        for unit, res in zip(units, run_units(job, reader, list(zip(units, starts)), False)):
            if live is None:
                bar.advance(res.records, res.chars)
            yield from merger.add(unit, res)
        merger.finish()
    finally:
        bar.close()
        stats.seconds += time.perf_counter() - start
        stats.caller_cpu_s += time.process_time() - cpu0
        stats.peak_worker_rss_mb = max(stats.peak_worker_rss_mb, merger.peak_worker_rss_mb)


def _ordinal_starts(
    run_units: UnitMap, job: ScanJob, dataset: Dataset, reader: UnitReader, units: list[Unit]
) -> list[int | None]:
    """First ordinal of each unit, from a counting pass (a position-range split selects by ordinal)."""
    if len(units) == 1:
        return [0]
    counting = dataclasses.replace(reader, split=None, hash_blocks=False)
    starts: list[int | None] = []
    total, failed = 0, None
    for unit, res in zip(units, run_units(job, counting, [(u, 0) for u in units], True)):
        starts.append(total)
        if unit.file_no == failed:
            continue
        total += res.stats.records
        if res.stats.error is not None:
            failed = unit.file_no
    return starts


def dataset_bytes(dataset: Dataset) -> int:
    """The size on disk of ``dataset``'s files (those that can be examined)."""
    total = 0
    for f in dataset.files:
        try:
            total += file_size(f)
        except (OSError, InputError):
            pass
    return total

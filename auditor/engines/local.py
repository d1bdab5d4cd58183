"""The local engine (default): the scan on every core of this machine, in worker processes.

The calling process reads the dataset (so ordinals, skips and split selection are exactly those of
a serial read) and hands batches to ``workers`` processes that hold a copy of the built indexes
(sent once, when each worker starts). At most ``2 × workers`` batches are in flight, and results
are yielded in batch order, so memory stays bounded and the findings are in the same order as a
serial scan. ``workers = 1``, or inputs smaller than ``min_parallel_bytes``, run in-process
(starting processes would cost more than it saves).

>>> from auditor.datasets import Dataset, DatasetSpec
>>> from auditor.methods import create
>>> ev = list(Dataset(DatasetSpec("t", ["webshop:0:50"], role="eval")).records())
>>> train = Dataset(DatasetSpec("tr", ["webshop:0:100"], role="eval"))
>>> stats = ScanStats()
>>> len(list(LocalEngine(workers=1).scan([create("exact").build(ev)], train, stats))) >= 50, stats.records
(True, 100)

Errors: bad input raises :class:`~auditor.errors.InputError` from the reading process, as serially.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from ..datasets import Dataset
from ..engine import ScanStats, batched, search_all
from ..errors import ConfigError, ScanError
from ..methods.base import Finding, Index
from ..progress import ScanProgress, peak_rss_mb
from .lifecycle import init_worker, spawning_guard, started_children, terminate_children_since

_WORKER_INDEXES: list[Index] = []


def _init_worker(indexes: list[Index]) -> None:
    global _WORKER_INDEXES
    _WORKER_INDEXES = indexes


def _work(batch) -> tuple[list[Finding], float]:
    return search_all(_WORKER_INDEXES, batch), peak_rss_mb()


def dataset_bytes(dataset: Dataset) -> int:
    total = 0
    for f in dataset.files:
        try:
            total += os.path.getsize(f)
        except OSError:
            pass
    return total


@dataclass
class LocalEngine:
    batch_size: int = 512
    workers: int = field(default_factory=lambda: os.cpu_count() or 1)
    min_parallel_bytes: int = 8_000_000
    progress: bool | None = None  # None: when stderr is a terminal
    name: str = field(default="local", init=False)
    #: the largest peak RSS a worker process reported (MB); 0 when the scan ran in-process
    peak_worker_rss_mb: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.workers, int) or self.workers < 1:
            raise ConfigError(f"workers must be a positive integer, not {self.workers!r}")
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, not {self.batch_size!r}")

    def scan(self, indexes: Sequence[Index], dataset: Dataset, stats: ScanStats) -> Iterator[Finding]:
        start = time.perf_counter()
        size = dataset_bytes(dataset)
        stats.bytes += size
        progress = ScanProgress(dataset.name, size, enabled=self.progress)
        parallel = self.workers > 1 and size >= self.min_parallel_bytes
        self.workers_used = self.workers if parallel else 1
        try:
            batches = self._batches(dataset, stats, progress)
            if parallel:
                yield from self._parallel(list(indexes), batches)
            else:
                for batch in batches:
                    yield from search_all(indexes, batch)
        finally:
            progress.close()
            stats.seconds += time.perf_counter() - start

    def _batches(self, dataset: Dataset, stats: ScanStats, progress: ScanProgress):
        for batch in batched(dataset.records(), self.batch_size):
            chars = 0
            for r in batch:
                r.raw = None  # not needed by any index; keeps what travels small
                chars += len(r.view("text"))
            stats.records += len(batch)
            stats.chars += chars
            progress.advance(len(batch), chars)
            yield batch

    def _parallel(self, indexes: list[Index], batches) -> Iterator[Finding]:
        ctx = mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")
        # a process pool executor, not multiprocessing.Pool: a worker that dies or fails to start
        # breaks the pool with an error instead of being restarted forever (a silent hang).
        # Workers ignore Ctrl-C and die with this process (lifecycle); this process shuts them down.
        before = started_children()
        with spawning_guard():
            pool = ProcessPoolExecutor(
                self.workers,
                mp_context=ctx,
                initializer=init_worker,
                initargs=(os.getpid(), _init_worker, (indexes,)),
            )
        try:
            pending: deque = deque()
            for batch in batches:
                with spawning_guard():  # submit starts workers (and the forkserver) on demand
                    pending.append(pool.submit(_work, batch))
                while len(pending) >= 2 * self.workers:
                    yield from self._collect(pending.popleft())
            while pending:
                yield from self._collect(pending.popleft())
        except BaseException:  # Ctrl-C, a failed batch, or the consumer stopped early
            terminate_children_since(before)
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _collect(self, result) -> list[Finding]:
        try:
            findings, rss = result.result()
        except BrokenProcessPool as e:
            raise ScanError(f"a worker process failed ({e}); rerun with --workers 1 to see the cause") from None
        self.peak_worker_rss_mb = max(self.peak_worker_rss_mb, rss)
        return findings

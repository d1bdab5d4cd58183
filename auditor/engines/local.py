"""The local engine (default): the scan on the free cores of this machine, in worker processes.

The calling process plans the dataset's work units (:meth:`auditor.datasets.dataset.Dataset.plan`) and
hands them to ``workers`` processes that hold a copy of the :class:`~auditor.scan.job.ScanJob` (its
built indexes, sent once, when each worker starts); each worker reads, parses, masks and searches
its unit and sends back findings and counts (:func:`auditor.scan.job.scan_unit`). At most
``3 × workers`` units are in flight and results are merged in unit order, so memory stays bounded
and the report equals a serial scan's. ``workers = None`` (``--workers auto``, the default) starts as many
workers as cores are free when the scan starts, cutting the units into a multiple of them
(:mod:`auditor.engines.workers`). ``workers = 1``, a single unit, or inputs smaller than
``min_parallel_bytes`` run in-process (the same units, so the same report). Workers ignore Ctrl-C
(the calling process handles it and stops them) and die with the calling process
(:mod:`auditor.engines.lifecycle`).

How workers start (``start_method``, manifest ``start_method``, ``--start-method``): ``auto`` (the
default) forks them from the calling process where that is safe, on Linux in a process running one
thread (the ``auditor`` command: they start with every module and index it has loaded, and no
forkserver or resource tracker runs, ~0.3 CPU-s of a run); in a process running other threads (a
program calling the library: DuckDB's, a BLAS pool, its own) a thread may hold a lock at the fork, so
they start from multiprocessing's forkserver, which imports their modules once
(:data:`WORKER_MODULES`); ``spawn`` where neither exists. ``fork``, ``forkserver`` and ``spawn`` force one.

>>> from auditor.datasets.dataset import Dataset, DatasetSpec
>>> from auditor.scan.job import ScanJob, ScanStats
>>> from auditor.methods import create
>>> ev = list(Dataset(DatasetSpec("t", ["webshop:0:50"], role="eval")).records())
>>> train = Dataset(DatasetSpec("tr", ["webshop:0:100"], role="eval"))
>>> stats = ScanStats()
>>> job = ScanJob.of([create("exact").build(ev)])
>>> len(list(LocalEngine(workers=1).scan(job, train, stats))) >= 50, stats.records
(True, 100)

Errors: bad input raises :class:`~auditor.errors.InputError` at its place in reading order; a worker
process that dies raises :class:`~auditor.errors.ScanError`; an unknown ``start_method`` (or one this
platform lacks) :class:`~auditor.errors.ConfigError`.
"""

from __future__ import annotations

import functools
import importlib
import multiprocessing as mp
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..datasets.dataset import Dataset
from ..datasets.units import Unit, UnitReader
from ..errors import ConfigError, ScanError
from ..methods.base import Finding, Index
from ..scan.driver import dataset_bytes, run_scan
from ..scan.job import ScanJob, ScanStats, UnitResult, scan_unit
from ..scan.progress import LiveCounts, progress_shown
from ..scan.stage import Stage
from ..text import kernel
from .base import DEFAULT_SPLIT_BYTES, Engine, EngineConfig, timed_call
from .lifecycle import (
    WorkerStopped,
    forkserver_cpu_s,
    init_worker,
    spawning_guard,
    started_children,
    stop_children_since,
    stoppable_task,
)
from .memory import release_free_memory
from .workers import CoreMeter, balanced_split

_WORKER: dict = {}


def _init_worker(job: ScanJob, reader: UnitReader, live: LiveCounts | None = None) -> None:
    _WORKER["job"], _WORKER["reader"], _WORKER["live"] = job, reader, live


def _startup_cpu() -> float:
    """This worker's CPU before its first unit or call (start-up, the job's loading); 0.0 after."""
    if _WORKER.get("started"):
        return 0.0
    _WORKER["started"] = True
    return time.process_time()


def _work(unit: Unit, numbered_from: int | None, count_only: bool, reader: UnitReader | None) -> UnitResult:
    startup = _startup_cpu()
    with stoppable_task():
        live = None if count_only else _WORKER.get("live")
        res = scan_unit(_WORKER["job"], reader or _WORKER["reader"], unit, numbered_from, count_only, live)
    res.cpu_s += startup
    return res


def _offloaded(fn: Callable[..., Any], args: tuple) -> tuple[Any, float]:
    startup = _startup_cpu()
    with stoppable_task():
        result, cpu = timed_call(fn, args)
    return result, cpu + startup


#: what ``start_method`` may be: ``auto`` chooses one of the others for each pool (:func:`start_method`)
START_METHODS = ("auto", "fork", "forkserver", "spawn")


@dataclass
class LocalOptions(EngineConfig):
    """The local engine's own options (manifest keys and flags of their own)."""

    start_method: str = field(
        default="auto",
        metadata={
            "flag": "--start-method",
            "choices": START_METHODS,
            "help": "--engine local: how worker processes start: auto (default: fork where the calling "
            "process runs one thread on Linux, else forkserver), fork, forkserver or spawn.",
        },
    )


@dataclass
class LocalEngine(Engine):
    name: ClassVar[str] = "local"
    summary: ClassVar[str] = "worker processes on this machine (default)"
    Config: ClassVar[type[EngineConfig]] = LocalOptions
    batch_size: int = 512
    workers: int | None = None  # None ("auto"): the cores free when a scan starts (auditor.engines.workers)
    min_parallel_bytes: int = 8_000_000
    #: a larger uncompressed JSON Lines file (Parquet: its row groups) is cut into units of about this size
    split_bytes: int | None = None  # None: DEFAULT_SPLIT_BYTES, cut finer for the workers (balanced_split)
    progress: bool | None = None  # None: when stderr is a terminal
    start_method: str = "auto"  # see the module doc (LocalOptions)
    #: the largest peak RSS a worker process reported (MB); 0 when the scan ran in-process
    peak_worker_rss_mb: float = field(default=0.0, init=False)
    #: worker processes of the last scan (1: it ran in-process)
    workers_used: int = field(default=1, init=False)

    def __post_init__(self) -> None:
        for key in ("workers", "batch_size", "split_bytes"):
            value = getattr(self, key)
            if value is None and key in ("workers", "split_bytes"):
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{key} must be a positive integer, not {value!r}")
        LocalOptions(self.start_method).validate()
        if self.start_method != "auto" and self.start_method not in mp.get_all_start_methods():
            raise ConfigError(f"start_method {self.start_method!r} is not available on this platform")
        self._forkserver_cpu = forkserver_cpu_s()  # what the forkserver used before this engine
        self._meter = CoreMeter()  # other processes' CPU use from now to the scan (workers auto)

    def _parallel(self, datasets: Sequence[Dataset], measure: bool = True) -> int:
        """Workers for ``datasets``: 0 when they are scanned in-process (below ``min_parallel_bytes``, one worker)."""
        if sum(dataset_bytes(d) for d in datasets) < self.min_parallel_bytes:
            return 0
        n = self.workers or self._meter.free_cores(sample=measure)
        return n if n > 1 else 0

    def warm_up(self, datasets: Sequence[Dataset]) -> None:
        """Start the forkserver now when the scan of ``datasets`` will use workers started from it
        (:func:`start_method`): it imports the workers' modules (:data:`WORKER_MODULES`) while this
        process reads the eval sets and builds the indexes, so that the first pool's workers start at
        once. Forked workers need none."""
        if self._parallel(datasets, measure=False) and _context(self.start_method).get_start_method() == "forkserver":
            from multiprocessing import forkserver

            with spawning_guard():
                forkserver.ensure_running()

    def _count_forkserver(self) -> None:
        now = forkserver_cpu_s()
        self.startup_cpu_s += max(0.0, now - self._forkserver_cpu)
        self._forkserver_cpu = now

    def scan(self, job: ScanJob | list, dataset: Dataset, stats: ScanStats) -> Iterator[Finding]:
        if not isinstance(job, ScanJob):
            job = ScanJob.of(job, self.batch_size)
        cut = self.split_bytes or DEFAULT_SPLIT_BYTES
        units = dataset.plan(cut)
        parallel = self._parallel([dataset]) if len(units) > 1 else 0
        self.workers_used = parallel or 1
        if parallel and self.split_bytes is None:  # a multiple of the workers: none is left alone at the end
            units = dataset.plan(balanced_split(dataset_bytes(dataset), parallel, cut))
        shown = progress_shown(self.progress)
        if not parallel:
            live = LiveCounts() if shown else None
            here = functools.partial(_in_process, live=live)
            yield from run_scan(here, job, dataset, stats, units, progress=self.progress, live=live)
            return
        ctx = _context(self.start_method)
        job.prepare_workers()  # once here, not in each worker (a forked one gets no pickled copy)
        release_free_memory()  # this process waits while the workers scan: none of its freed memory kept
        live = LiveCounts(shared=True, context=ctx) if shown else None
        # a process pool executor, not multiprocessing.Pool: a worker that dies or fails to start
        # breaks the pool with an error instead of being restarted forever (a silent hang).
        # Workers ignore Ctrl-C and die with this process (lifecycle); this process shuts them down.
        before, threads = started_children(), set(threading.enumerate())
        tracker = ctx.get_start_method() != "fork"  # forked workers register nothing with it
        with spawning_guard(tracker=tracker):
            pool = ProcessPoolExecutor(
                parallel,
                mp_context=ctx,
                initializer=init_worker,
                initargs=(os.getpid(), _init_worker, (job, dataset.reader(), live)),
            )
        try:

            def run(job: ScanJob, reader: UnitReader, tasks, count_only: bool) -> Iterator[UnitResult]:
                return self._ordered(pool, tasks, count_only, reader, tracker)

            yield from run_scan(run, job, dataset, stats, units, progress=self.progress, live=live)
        except BaseException:  # Ctrl-C, a failed unit, or the consumer stopped early
            stop_children_since(before)
            raise
        finally:
            _shut_down(pool, threads)
            self._count_forkserver()
            self.peak_worker_rss_mb = max(self.peak_worker_rss_mb, stats.peak_worker_rss_mb)

    def offload(
        self, fn: Callable[..., Any], calls: Sequence[tuple], datasets: Sequence[Dataset]
    ) -> Callable[..., list[Any]]:
        """Calls in worker processes while the calling process goes on (in-process, when asked
        for, where the scan would run in-process: ``workers = 1`` or inputs below
        ``min_parallel_bytes``)."""
        workers = self._parallel(datasets) if calls else 0
        if not workers:
            return super().offload(fn, calls, datasets)
        before, threads = started_children(), set(threading.enumerate())
        ctx = _context(self.start_method)
        with spawning_guard(tracker=ctx.get_start_method() != "fork"):
            pool = ProcessPoolExecutor(
                min(workers, len(calls)), mp_context=ctx, initializer=init_worker, initargs=(os.getpid(),)
            )
            futures = [pool.submit(_offloaded, fn, args) for args in calls]

        def results(cancel: bool = False) -> list[Any]:
            try:
                if cancel:  # the caller failed or was interrupted meanwhile: stop the workers
                    raise _Cancelled
                done = [f.result() for f in futures]
                self.offload_cpu_s += sum(cpu for _, cpu in done)
                return [result for result, _ in done]
            except BrokenProcessPool as e:
                stop_children_since(before)
                raise ScanError(f"a worker process died ({e}); rerun with --workers 1 to see the cause") from None
            except WorkerStopped:  # not by this process (it stops them only on its way out)
                stop_children_since(before)
                raise ScanError(_STOPPED) from None
            except _Cancelled:
                stop_children_since(before)
                return []
            except BaseException:
                stop_children_since(before)
                raise
            finally:
                _shut_down(pool, threads)
                self._count_forkserver()

        return results

    def _ordered(self, pool, tasks, count_only: bool, reader: UnitReader, tracker: bool) -> Iterator[UnitResult]:
        # the workers hold the reader of the scan; the counting pass reads without the split
        extra = reader if count_only else None
        pending: deque = deque()
        todo = iter(tasks)
        for unit, start in todo:
            with spawning_guard(tracker=tracker):  # submit starts workers (and the forkserver) on demand
                pending.append(pool.submit(_work, unit, start, count_only, extra))
            if len(pending) >= 3 * self.workers_used:
                break
        while pending:
            result = pending.popleft()
            nxt = next(todo, None)
            if nxt is not None:
                with spawning_guard(tracker=tracker):
                    pending.append(pool.submit(_work, nxt[0], nxt[1], count_only, extra))
            try:
                yield result.result()
            except BrokenProcessPool as e:
                raise ScanError(
                    f"a worker process died ({e}); no report is written for a scan with a gap. "
                    "Rerun with --workers 1 to see the cause"
                ) from None
            except WorkerStopped:  # not by this process (it stops them only on its way out)
                raise ScanError(_STOPPED) from None


#: a worker sent back :class:`WorkerStopped` while this process had not stopped it
_STOPPED = (
    "a worker process was told to stop its task by another process (signal SIGUSR1); "
    "no report is written for a scan with a gap"
)


class _Cancelled(Exception):
    pass


#: what every worker imports, loaded once by the forkserver, so that the workers forked from it start
#: with them (a worker importing them itself spent ~0.3 s of CPU before its first unit); the modules of
#: the job's stages and methods are added when the forkserver starts (:func:`worker_modules`)
WORKER_MODULES = (
    "auditor.engines.local",
    "auditor.methods",
    "auditor.masking.boilerplate",
    "auditor.masking.masker",
    "auditor.scan.job",
    # NumPy 2's ``np.unique`` (no counts, no indices) imports it on its first call, ~10 ms of each
    # process's CPU: every worker and the boilerplate task called it
    "numpy.ma",
)


def worker_modules() -> list[str]:
    """:data:`WORKER_MODULES`, then the module of every :class:`~auditor.scan.stage.Stage` and
    :class:`~auditor.methods.base.Index` subclass made so far: what a job is unpickled from (the audit's
    stages and the methods it named are imported before it warms the engine up). Declared by
    subclassing, so the engine names no module of the audit's."""
    found: dict[str, None] = dict.fromkeys(WORKER_MODULES)
    if not kernel.compiled():  # the Python twin hashes a batch's tokens with Arrow (the C kernel reads none)
        found["pyarrow.compute"] = None
    todo: list[type] = [Stage, Index]
    while todo:
        cls = todo.pop()
        found.setdefault(cls.__module__)
        todo += cls.__subclasses__()
    found.pop("__main__", None)  # the forkserver preloads it first anyway
    return list(found)


def start_method(asked: str = "auto") -> str:
    """The start method a pool made now uses: ``asked``, or for ``auto`` ``fork`` where this process
    runs one thread (Linux: its tasks in ``/proc``, native threads included), else ``forkserver``, else
    ``spawn`` (see the module doc).

    >>> start_method("spawn")
    'spawn'
    """
    if asked != "auto":
        return asked
    available = mp.get_all_start_methods()
    if "fork" in available and sys.platform.startswith("linux") and _one_thread():
        return "fork"
    return "forkserver" if "forkserver" in available else "spawn"


def _one_thread() -> bool:
    """Whether this process runs one thread, Python's or any other (a C library's pool)."""
    if threading.active_count() != 1:
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


#: seconds a pool's threads, joined, are given to leave ``/proc`` (each is listed until it has exited)
EXITING_THREAD_S = 1.0


def _shut_down(pool: ProcessPoolExecutor, since: set[threading.Thread]) -> None:
    """Shut ``pool`` down, its tasks cancelled, and wait until the threads it started (those alive
    now but not in ``since``) have left this process, not only Python (a thread Python has joined is
    listed in ``/proc`` until it has exited): the next pool's :func:`start_method` then sees the
    threads this process runs, not ones on their way out. A thread still running after the shutdown
    is not the pool's, and is not waited for; no wait is longer than :data:`EXITING_THREAD_S`."""
    started = set(threading.enumerate()) - since
    pool.shutdown(wait=True, cancel_futures=True)
    ids = {str(t.native_id) for t in started if not t.is_alive() and t.native_id is not None}
    deadline = time.monotonic() + EXITING_THREAD_S
    while ids:
        try:
            ids &= set(os.listdir("/proc/self/task"))
        except OSError:
            return
        if not ids or time.monotonic() >= deadline:
            return
        time.sleep(0.0005)


def _context(asked: str = "auto"):
    method = start_method(asked)
    ctx = mp.get_context(method)
    if method == "forkserver":
        # takes effect when this process starts its forkserver; "__main__" is multiprocessing's default
        ctx.set_forkserver_preload(["__main__", *worker_modules()])
    elif method == "fork":  # imported once here, not in each forked worker (e.g. numpy.ma, on np.unique's first call)
        for name in worker_modules():
            importlib.import_module(name)
    return ctx


def _in_process(
    job: ScanJob, reader: UnitReader, tasks, count_only: bool, live: LiveCounts | None = None
) -> Iterator[UnitResult]:
    for unit, start in tasks:
        yield scan_unit(job, reader, unit, start, count_only, None if count_only else live)

"""Engines run a scan: the calling process plans work units, workers read and search them.

Every engine implements :class:`Engine` and yields the same findings for the same input:

``local`` (default)  :class:`auditor.engines.local.LocalEngine`, worker processes on every core
                     (``workers``; in-process for small inputs or ``workers = 1``)
``ray``              :class:`auditor.engines.ray_engine.RayEngine`, Ray tasks on a local or remote
                     cluster (``address``); needs the ``[ray]`` extra

The calling process lists the training files and plans **work units** (:meth:`Dataset.plan
<auditor.datasets.dataset.Dataset.plan>`): a file whole; a byte range of about ``split_bytes`` of an
uncompressed JSON Lines file, cut at line boundaries; consecutive Parquet row groups. A compressed
file, a JSON document, CSV and the agent formats read from one document are one unit each. A worker
runs :func:`scan_unit`: it opens its unit, reads, parses, masks boilerplate, counts error types and
searches every index of every check of the scan (:class:`ScanJob`), and sends back only findings,
the texts of the records behind them and its counts. The caller's :class:`UnitMerger` takes results
in unit order and renumbers them (ordinals across units; line numbers and positional ids inside a
split file), so ordinals, skips, split selection and accounting are those of a serial read and the
report does not depend on the engine or the number of workers. A position-range ``split`` of a
dataset of several units costs a counting pass over its units first (ordinals must be known before
selection). Memory on the caller is bounded by the results in flight, never by the corpus.

>>> get_engine("local", workers=1).name
'local'
>>> get_engine("spark")
Traceback (most recent call last):
...
auditor.errors.ConfigError: unknown engine 'spark' (engines: local, ray)

Errors: a unit's bad input raises :class:`~auditor.errors.InputError` at its place in reading order,
as a serial read would; a worker that dies raises :class:`~auditor.errors.ScanError`.
"""

from __future__ import annotations

import dataclasses
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from ..datasets.account import DatasetAccount
from ..datasets.dataset import Dataset
from ..datasets.units import Unit, UnitReader, UnitStats
from ..errors import InputError
from ..io.files import file_size
from ..methods.base import Finding, Searcher
from ..records.record import TEXT, Record
from ..scan.progress import ScanProgress, peak_rss_mb

ENGINES = ("local", "ray")
#: default size of a work unit cut from one large file
DEFAULT_SPLIT_BYTES = 16 * 1024 * 1024
#: texts of finding records a unit sends back (the report shows those of the top findings)
TEXTS_PER_UNIT = 500


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
class CheckPass:
    """One check's share of a scan: findings of ``indexes`` are labelled ``check``; ``masker``
    (:class:`auditor.text.masking.Masker`) masks the records its wrapped indexes see."""

    check: str
    indexes: list[Searcher]
    masker: Any = None


@dataclass
class ScanJob:
    """Everything a worker needs besides its unit: the checks that scan one training dataset in
    one pass. Shipped to each worker once (local: at process start; Ray: one ``ray.put``)."""

    passes: list[CheckPass]
    batch_size: int = 512
    #: count the error-type labels of the records read (each training dataset once per run)
    count_error_types: bool = False

    @classmethod
    def of(cls, indexes: Sequence[Searcher], batch_size: int = 512, check: str = "") -> ScanJob:
        """A job of one pass over ``indexes`` (no masking)."""
        return cls([CheckPass(check, list(indexes))], batch_size=batch_size)


@dataclass
class UnitResult:
    """What a worker sends back for one unit (local numbering; see :class:`UnitMerger`)."""

    stats: UnitStats
    numbered_from: int | None
    findings: list[Finding] = field(default_factory=list)
    positional: set[int] = field(default_factory=set)  # local ordinals whose id is a position
    texts: dict[int, str] = field(default_factory=dict)  # local ordinal → text (finding records)
    records: int = 0
    chars: int = 0
    masking: list[tuple[int, int, int]] = field(default_factory=list)  # per pass: records, chars, scanned
    error_types: Counter = field(default_factory=Counter)
    labeled: int = 0
    index_counts: list[list[Counter]] = field(default_factory=list)  # per pass, per index (take_counts)
    cpu_s: float = 0.0
    peak_rss_mb: float = 0.0


class Engine(ABC):
    """What the audit needs of an engine: :meth:`scan`, plus what the report says about the run.

    ``workers`` is the number of workers asked for (None: the engine's default, e.g. every cluster
    CPU); :attr:`workers_used` the number the last scan ran on (default: ``workers``; the local
    engine scans small inputs in-process); ``peak_worker_rss_mb`` the largest peak RSS a worker
    reported over the engine's scans (0.0 when they ran in-process).
    """

    name: str
    workers: int | None
    peak_worker_rss_mb: float = 0.0
    #: CPU seconds that calls run by :meth:`offload` spent in workers (not in the calling process)
    offload_cpu_s: float = 0.0
    #: CPU seconds worker processes spent starting (imports, loading the job) before their first
    #: unit or call, where the engine can tell; counted in the run's worker CPU like the rest
    startup_cpu_s: float = 0.0

    @abstractmethod
    def scan(
        self, job: ScanJob, dataset: Dataset, stats: ScanStats, sinks: ScanSinks | None = None
    ) -> Iterator[Finding]:
        """Findings of ``job``'s indexes over ``dataset``, in the order of a serial read; adds to
        ``stats`` and ``sinks``. Raises :class:`~auditor.errors.InputError` for bad input and
        :class:`~auditor.errors.ScanError` when a worker dies."""

    @property
    def workers_used(self) -> int | None:
        """Workers the last scan ran on (default: ``workers``)."""
        return self.workers

    def warm_up(self, datasets: Sequence[Dataset]) -> None:
        """Start, without waiting, what the scans of ``datasets`` will need (worker processes'
        start-up), so that it overlaps the calling process's own preparation. The default does
        nothing; calling it is optional and changes no result."""
        return None

    def offload(
        self, fn: Callable[..., Any], calls: Sequence[tuple], datasets: Sequence[Dataset]
    ) -> Callable[..., list[Any]]:
        """Start ``fn(*args)`` for each ``args`` of ``calls`` where the engine runs its work, and return
        a function that waits for their results, in order (raising what ``fn`` raised); called with
        ``cancel=True`` it stops them instead (the caller failed meanwhile). ``fn`` must
        be importable and its arguments picklable; ``datasets`` are what the calls read (an engine
        may run small inputs here). The default runs the calls here, when their results are asked
        for, so errors surface where they would without an engine.

        >>> get_engine("local", workers=1).offload(divmod, [(7, 2), (9, 4)], [])()
        [(3, 1), (2, 1)]
        """
        return lambda cancel=False: [] if cancel else [fn(*args) for args in calls]


def timed_call(fn: Callable[..., Any], args: tuple) -> tuple[Any, float]:
    """``fn(*args)`` and the CPU seconds it took (how a worker runs an :meth:`Engine.offload` call)."""
    cpu0 = time.process_time()
    result = fn(*args)
    return result, time.process_time() - cpu0


@dataclass
class ScanSinks:
    """Where the caller keeps what workers count besides findings: error types
    (:class:`auditor.audit.errortypes.ErrorTypes`) and finding texts (:class:`auditor.store.texts.TextCapture`)."""

    error_types: Any = None
    capture: Any = None


def batched(items: Iterable[Record], size: int) -> Iterator[list[Record]]:
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch


def search_all(indexes: Sequence[Searcher], batch: Sequence[Record]) -> list[Finding]:
    """Every index's findings for one batch, in index order."""
    out: list[Finding] = []
    for index in indexes:
        out.extend(index.search(batch))
    return out


def _mask_counts(masker: Any) -> tuple[int, int, int]:
    bp = masker.boilerplate if masker is not None else None
    return (bp.masked_records, bp.masked_chars, bp.scanned_chars) if bp is not None else (0, 0, 0)


def _set_mask_counts(masker: Any, counts: tuple[int, int, int]) -> None:
    bp = masker.boilerplate if masker is not None else None
    if bp is not None:
        bp.masked_records, bp.masked_chars, bp.scanned_chars = counts


def scan_unit(
    job: ScanJob, reader: UnitReader, unit: Unit, numbered_from: int | None, count_only: bool = False
) -> UnitResult:
    """A worker's whole task: read ``unit``, mask, count and search it for every pass of ``job``.

    ``count_only``: read and count only (the counting pass of a position-range split). Bad input is
    reported in the result (``stats.error``), never raised; the worker's own copies of the maskers
    are left as they were (their counts travel in ``masking``).
    """
    from ..audit.errortypes import ErrorTypes
    from ..store.texts import MAX_CHARS
    from ..text.masking import Masker

    cpu0 = time.process_time()
    ustats = UnitStats()
    res = UnitResult(ustats, numbered_from)
    if count_only:
        for _ in reader.read(unit, ustats, 0):
            pass
        res.cpu_s = time.process_time() - cpu0
        return res
    error_types = ErrorTypes() if job.count_error_types else None
    before = [_mask_counts(p.masker) for p in job.passes]
    try:
        for batch in batched(reader.read(unit, ustats, numbered_from), job.batch_size):
            for r in batch:  # r.raw is kept: a finding names the field it matched from it
                res.chars += len(r.view(TEXT))
            res.records += len(batch)
            if error_types is not None:
                error_types.add(batch)
            found: list[Finding] = []
            for p in job.passes:
                for r in batch:
                    Masker.unmask(r)
                if p.masker is not None:
                    p.masker.premask_batch(batch)
                for f in search_all(p.indexes, batch):
                    f.check = p.check
                    found.append(f)
            if found:
                by_ordinal = {r.ordinal: r for r in batch}
                for f in found:
                    r = by_ordinal[f.train_ordinal]
                    if r.meta.get("positional_id"):
                        res.positional.add(r.ordinal)
                    if r.ordinal not in res.texts and len(res.texts) < TEXTS_PER_UNIT:
                        res.texts[r.ordinal] = r.whole_text()[:MAX_CHARS]  # text, then fields
                res.findings.extend(found)
    finally:
        for p, counts in zip(job.passes, before):
            after = _mask_counts(p.masker)
            res.masking.append(tuple(a - b for a, b in zip(after, counts)))  # type: ignore[arg-type]
            _set_mask_counts(p.masker, counts)
            res.index_counts.append([ix.take_counts() for ix in p.indexes])
    if error_types is not None:
        res.error_types = error_types.counts.get(reader.spec.name, Counter())
        res.labeled = error_types.labeled.get(reader.spec.name, 0)
    res.cpu_s = time.process_time() - cpu0
    res.peak_rss_mb = peak_rss_mb()
    return res


class UnitMerger:
    """Takes unit results in reading order and turns them into the serial scan's findings and counts."""

    def __init__(self, job: ScanJob, dataset: Dataset, stats: ScanStats, sinks: ScanSinks | None):
        self.job = job
        self.dataset = dataset
        self.stats = stats
        self.sinks = sinks or ScanSinks()
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
        for p, delta, index_counts in zip(self.job.passes, res.masking, res.index_counts):
            counts = _mask_counts(p.masker)
            _set_mask_counts(p.masker, tuple(c + d for c, d in zip(counts, delta)))  # type: ignore[arg-type]
            for ix, c in zip(p.indexes, index_counts):
                if c:
                    ix.add_counts(c)
        if self.job.count_error_types and self.sinks.error_types is not None:
            self.sinks.error_types.merge(self.dataset.name, res.error_types, res.labeled)
        for f in res.findings:
            if shift.positions and f.train_ordinal in res.positional:
                f.train_id = str(int(f.train_id) + shift.positions)
            f.train_source = shift.source(f.train_source)
            f.train_ordinal += shift.ordinal
        if self.sinks.capture is not None:
            for ordinal, text in res.texts.items():
                self.sinks.capture.offer(self.dataset.name, ordinal + shift.ordinal, text)
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
    sinks: ScanSinks | None,
    units: list[Unit],
    progress: bool | None = None,
) -> Iterator[Finding]:
    """The scan every engine runs: units through ``run_units``, results merged in order."""
    start, cpu0 = time.perf_counter(), time.process_time()
    size = dataset_bytes(dataset)
    stats.bytes += size
    bar = ScanProgress(dataset.name, size, enabled=progress)
    reader = dataset.reader()
    merger = UnitMerger(job, dataset, stats, sinks)
    try:
        starts: list[int | None] = [None] * len(units)
        if dataset.split_by_position:
            starts = _ordinal_starts(run_units, job, dataset, reader, units)
        for unit, res in zip(units, run_units(job, reader, list(zip(units, starts)), False)):
            bar.advance(res.records, res.chars)
            yield from merger.add(unit, res)
        merger.finish()
    finally:
        bar.close()
        stats.seconds += time.perf_counter() - start
        stats.caller_cpu_s += time.process_time() - cpu0
        stats.peak_worker_rss_mb = max(stats.peak_worker_rss_mb, merger.peak_worker_rss_mb)


def _ordinal_starts(run_units: UnitMap, job: ScanJob, dataset: Dataset, reader: UnitReader, units: list[Unit]):
    """First ordinal of each unit, from a counting pass (a position-range split selects by ordinal)."""
    if len(units) == 1:
        return [0]
    counting = dataclasses.replace(reader, split=None, hash_blocks=False)
    starts, total, failed = [], 0, None
    for unit, res in zip(units, run_units(job, counting, [(u, 0) for u in units], True)):
        starts.append(total)
        if unit.file_no == failed:
            continue
        total += res.stats.records
        if res.stats.error is not None:
            failed = unit.file_no
    return starts


def dataset_bytes(dataset: Dataset) -> int:
    total = 0
    for f in dataset.files:
        try:
            total += file_size(f)
        except (OSError, InputError):
            pass
    return total


def get_engine(name: str, **options) -> Engine:
    """The engine called ``name``; options: ``batch_size``, ``workers``, ``split_bytes``, and
    ``address`` and ``embed_actors`` (ray; the local engine ignores them).

    Raises :class:`~auditor.errors.ConfigError` for an unknown engine or option, and
    :class:`~auditor.errors.MissingDependencyError` for ``ray`` without the ``[ray]`` extra.
    """
    from ..errors import ConfigError

    options = {k: v for k, v in options.items() if v is not None}
    try:
        if name == "local":
            from .local import LocalEngine

            options.pop("address", None)
            options.pop("embed_actors", None)
            return LocalEngine(**options)
        if name == "ray":
            from .ray_engine import RayEngine

            return RayEngine(**options)
    except TypeError as e:
        raise ConfigError(f"engine '{name}': {e}") from None
    raise ConfigError(f"unknown engine '{name}' (engines: {', '.join(ENGINES)})")

"""The Ray engine (``--engine ray``): the local engine's scan as Ray tasks on a local or remote cluster.

The calling process only plans and merges. The :class:`~auditor.scan.job.ScanJob` (every check's built
eval indexes and maskers) goes into Ray's object store once per scan (``ray.put``) and each worker
process fetches it once (cached by object id). Every work unit (:meth:`auditor.datasets.dataset.Dataset.plan`:
a file, a byte range of a large JSON Lines file, Parquet row groups) is one task that opens, reads,
parses, masks and searches its unit itself (:func:`auditor.scan.job.scan_unit`) and returns only
findings and counts. Up to ``2 × workers`` tasks are in flight; results are collected as they
complete (``ray.wait``) and merged in unit order, so the report equals the local engine's.

**Paths on a cluster.** Workers open the unit's path themselves, so every node must be able to
read it: a local path mounted at the same place on every node (NFS, Lustre, a FUSE mount of an
object store), or a URL (``s3://…``, ``gs://…``; :mod:`auditor.io.remote`) that each task opens
through fsspec with the node's own credentials. The eval side is read by the calling process.

``address``: a cluster address (``"ray://host:10001"``, ``"auto"``); without it a local Ray is
started with ``workers`` CPUs (default: every core). A Ray already initialised in this process is
used as is. ``retries``: how often Ray reruns a unit whose worker died (units are idempotent);
then the scan fails. ``embed_actors``: the embedding tier's encoder in a pool of Ray actors, GPU ones
on a cluster with GPUs (:mod:`auditor.engines.ray_embed`; None: one per GPU for a torch index, else
none: the tasks encode).

>>> engine = RayEngine(workers=2, address=None)  # Ray itself starts at the first scan
>>> engine.name, engine.workers, engine.retries
('ray', 2, 1)

Errors: :class:`~auditor.errors.MissingDependencyError` (``pip install 'auditor[ray]'``) when Ray
is not installed; :class:`~auditor.errors.ConfigError` for bad options; bad input raises
:class:`~auditor.errors.InputError` at its place in reading order; a unit whose worker died (after
``retries``) or failed raises :class:`~auditor.errors.ScanError`.
"""

from __future__ import annotations

import atexit
import importlib.util
import logging
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..datasets.dataset import Dataset
from ..datasets.units import Unit, UnitReader
from ..errors import AuditorError, ConfigError, MissingDependencyError, ScanError
from ..methods.base import Finding
from ..scan.driver import run_scan
from ..scan.job import ScanJob, ScanStats, UnitResult, scan_unit
from .base import DEFAULT_SPLIT_BYTES, Engine, EngineConfig, timed_call

_JOB_CACHE: dict[str, ScanJob] = {}


def _job(holder: list) -> ScanJob:
    import ray

    key = holder[0].hex()
    if key not in _JOB_CACHE:
        _JOB_CACHE.clear()
        _JOB_CACHE[key] = ray.get(holder[0])
    return _JOB_CACHE[key]


def _shutdown_at_exit() -> None:
    """Ray's shutdown when the interpreter exits (a local Ray this engine started stops: 0.2–2 s), with
    Ctrl-C ignored: the run is over, so a Ctrl-C then must not end in a traceback from Ray's own exit
    handler (and an exit status of 1). A second Ctrl-C after an interrupted run is ignored as well;
    SIGTERM still ends the process."""
    import ray

    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: leave the handler as it is
        pass
    ray.shutdown()


def _call(fn, *args):
    """The engine's Ray task: ``fn(*args)`` on a worker (:func:`_scan_task`, offloaded calls)."""
    return fn(*args)


def _scan_task(holder: list, reader: UnitReader, unit: Unit, numbered_from: int | None, count_only: bool):
    """Ray task: one unit, read and searched on the worker (:func:`auditor.scan.job.scan_unit`)."""
    return scan_unit(_job(holder), reader, unit, numbered_from, count_only)


@dataclass
class RayOptions(EngineConfig):
    """The Ray engine's own options (manifest keys and flags of their own)."""

    address: str | None = field(
        default=None,
        metadata={
            "manifest": "ray_address",
            "flag": "--ray-address",
            "help": "Ray cluster address for --engine ray (default: a local Ray).",
        },
    )
    embed_actors: int | None = field(
        default=None,
        metadata={
            "flag": "--embed-actors",
            "range": (0, 4096),
            "help": "--engine ray: Ray actors holding the embedding model, GPU ones on GPU nodes "
            "(default: one per GPU for a torch encoder, else none: the tasks encode; 0: none).",
        },
    )


@dataclass
class RayEngine(Engine):
    name: ClassVar[str] = "ray"
    summary: ClassVar[str] = "Ray tasks on a local or remote cluster (extra [ray])"
    Config: ClassVar[type[EngineConfig]] = RayOptions
    batch_size: int = 512
    workers: int | None = None  # default: every CPU of the cluster
    address: str | None = None
    split_bytes: int = DEFAULT_SPLIT_BYTES
    retries: int = 1
    progress: bool | None = None
    #: embedding actors (:mod:`auditor.engines.ray_embed`); None: one per GPU for a torch index, else none
    embed_actors: int | None = None
    peak_worker_rss_mb: float = field(default=0.0, init=False)
    _remote: Any = field(default=None, init=False, repr=False)
    #: the last scan's embedding pool: actors, model loads, texts and calls (empty without a pool)
    embed_pool: dict[str, Any] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        if importlib.util.find_spec("ray") is None:
            raise MissingDependencyError("ray", "ray", "engine 'ray'")
        for key in ("workers", "batch_size", "split_bytes"):
            value = getattr(self, key)
            if value is None and key == "workers":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{key} must be a positive integer, not {value!r}")
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise ConfigError(f"retries must be a non-negative integer, not {self.retries!r}")
        n = self.embed_actors
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 0):
            raise ConfigError(f"embed_actors must be a non-negative integer, not {n!r}")
        if self.address and str(self.address).startswith("ray://") and importlib.util.find_spec("grpc") is None:
            raise ConfigError(
                f"ray address '{self.address}': a ray:// address needs Ray's client (package 'grpcio'), "
                "which is not installed; install it with: pip install 'ray[client]'"
            )

    def _init(self) -> None:
        import ray

        if not ray.is_initialized():
            kwargs: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "logging_level": logging.WARNING,
            }
            if self.address:
                kwargs["address"] = self.address
            else:
                # CPU embedding actors hold a CPU each: the tasks keep `workers` of their own
                kwargs["num_cpus"] = (self.workers or os.cpu_count() or 1) + (self.embed_actors or 0)
            # Ray's local cluster enables token authentication by default and says so with a WARNING
            # on every run; the behaviour is kept (RAY_AUTH_MODE still decides), the line is not shown
            auth_log = logging.getLogger("ray._private.authentication.authentication_token_setup")
            level = auth_log.level
            auth_log.setLevel(logging.ERROR)
            try:
                ray.init(**kwargs)
            finally:
                auth_log.setLevel(level)
            atexit.register(_shutdown_at_exit)  # runs before Ray's own exit handler (registered at import)
        if self.workers is None:
            self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)) - (self.embed_actors or 0))

    def scan(self, job: ScanJob | list, dataset: Dataset, stats: ScanStats) -> Iterator[Finding]:
        from .ray_embed import EmbedPool  # the embedding actors' module (numpy, the ONNX glue): a scan's only

        if not isinstance(job, ScanJob):
            job = ScanJob.of(job, self.batch_size)
        self._init()
        units = dataset.plan(self.split_bytes)
        pool = EmbedPool.start(job, self.embed_actors)  # no actors: the tasks run the encoder themselves
        holder = [pool.put(job)]  # in a list, so Ray passes the reference and the worker caches it
        task = self._task()

        def run(job: ScanJob, reader: UnitReader, tasks, count_only: bool) -> Iterator[UnitResult]:
            return self._stream(task, holder, reader, tasks, count_only)

        try:
            yield from run_scan(run, job, dataset, stats, units, progress=self.progress)
            self.embed_pool = pool.counts()
        finally:
            self.peak_worker_rss_mb = max(self.peak_worker_rss_mb, stats.peak_worker_rss_mb)
            pool.close()

    def offload(
        self, fn: Callable[..., Any], calls: Sequence[tuple], datasets: Sequence[Dataset]
    ) -> Callable[..., list[Any]]:
        """Each call a Ray task (started now; the calling process goes on)."""
        import ray

        self._init()
        task = self._task()
        refs = [task.remote(timed_call, fn, args) for args in calls]

        def results(cancel: bool = False) -> list[Any]:
            if cancel:
                for ref in refs:
                    ray.cancel(ref, force=True)
                return []
            done = [self._get(ref) for ref in refs]
            self.offload_cpu_s += sum(cpu for _, cpu in done)
            return [result for result, _ in done]

        return results

    def _task(self):
        """The one remote function of this engine (``_call``), exported to the cluster once: each
        ``ray.remote`` of a new function pickles and registers it from the driver again."""
        import ray

        if self._remote is None:
            self._remote = ray.remote(num_cpus=1, max_retries=self.retries)(_call)
        return self._remote

    def _stream(self, task, holder, reader: UnitReader, tasks, count_only: bool) -> Iterator[UnitResult]:
        """Results in unit order, collected as tasks complete (``ray.wait``), ``2 × workers`` in flight."""
        import ray

        reader_ref = ray.put(reader)
        window = 2 * (self.workers or 1)
        pending: dict[Any, int] = {}
        ready: dict[int, UnitResult] = {}
        submitted = done = 0
        died = False  # a task's worker or embedding actor died: the tasks still out end by themselves
        try:
            while done < len(tasks):
                while submitted < len(tasks) and len(pending) + len(ready) < window:
                    unit, start = tasks[submitted]
                    pending[task.remote(_scan_task, holder, reader_ref, unit, start, count_only)] = submitted
                    submitted += 1
                if done not in ready:
                    finished, _ = ray.wait(list(pending), num_returns=1)
                    for ref in finished:
                        ready[pending.pop(ref)] = self._get(ref)
                    continue
                yield ready.pop(done)
                done += 1
        except ScanError:
            died = True
            raise
        finally:
            _stop(list(pending), settle=died)

    @staticmethod
    def _get(ref) -> Any:  # a UnitResult, or an offloaded call's (result, cpu seconds)
        import ray
        from ray.exceptions import RayError, RayTaskError

        try:
            return ray.get(ref)
        except RayTaskError as e:
            cause = getattr(e, "cause", None)
            if isinstance(cause, AuditorError):
                raise cause from None
            raise ScanError(f"a Ray task failed: {cause or e}") from None
        except RayError as e:
            raise ScanError(
                f"a Ray worker died ({type(e).__name__}); no report is written for a scan with a gap"
            ) from None


#: how long the tasks still out may take to end by themselves after one failed (a dead actor fails them all)
SETTLE_S = 30.0


def _stop(refs: list, settle: bool) -> None:
    """Stop the tasks of ``refs`` that have not ended. Cancelling a task just as it completes crashes
    Ray's driver process (``Check failed: it != submissible_tasks_.end()``, a race in Ray's task manager:
    ray-project/ray#54798), which is what happened when an embedding actor died: every task waiting on it
    fails at once. So the finished ones are never cancelled and, with ``settle`` (a task failed because
    its worker or actor died), the others get :data:`SETTLE_S` to end first."""
    import ray

    if not refs:
        return
    _, refs = ray.wait(refs, num_returns=len(refs), timeout=SETTLE_S if settle else 0)
    for ref in refs:
        ray.cancel(ref, force=True)

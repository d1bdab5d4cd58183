"""Engines run a scan: the calling process plans work units, workers read and search them.

Every engine implements :class:`Engine` and yields the same findings for the same input. Engines
register themselves by ``name`` in :data:`ENGINES` (an :class:`auditor.registry.Registry`, as methods and
adapters do); the built-in ones, declared there by name and module and imported when first asked for:

``local`` (default)  :class:`auditor.engines.local.LocalEngine`, worker processes on every core
                     (``workers``; in-process for small inputs or ``workers = 1``)
``ray``              :class:`auditor.engines.ray_engine.RayEngine`, Ray tasks on a local or remote
                     cluster (``address``); needs the ``[ray]`` extra

What a scan does is the :mod:`auditor.scan` package's: the calling process lists the training files and
plans **work units** (:meth:`Dataset.plan <auditor.datasets.dataset.Dataset.plan>`); a worker runs
:func:`~auditor.scan.job.scan_unit` on a unit (reads, parses and runs the job's stages: masking,
error-type counting, search, text capture) and sends back only findings and counts; the caller's
:func:`~auditor.scan.driver.run_scan` merges the results in unit order, so ordinals, skips, split
selection and accounting are those of a serial read and the report does not depend on the engine
or the number of workers. An engine only decides where :func:`~auditor.scan.job.scan_unit` runs (its
``run_units``). Memory on the caller is bounded by the results in flight, never by the corpus.

Each engine declares its own options in a nested ``Config`` dataclass (:class:`EngineConfig`): the
manifest keys and command-line flags the registry offers (``ray``: ``ray_address`` /
``--ray-address``, ``embed_actors`` / ``--embed-actors``).

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
import inspect
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..datasets.dataset import Dataset
from ..errors import ConfigError
from ..methods.base import Finding
from ..registry import Registry
from ..scan.job import ScanJob, ScanStats

#: default size of a work unit cut from one large file
DEFAULT_SPLIT_BYTES = 16 * 1024 * 1024

#: every engine by name; the built-in ones declared (their modules imported on first use)
ENGINES: Registry[type[Engine]] = Registry("engine")
ENGINES.declare("local", "auditor.engines.local")
ENGINES.declare("ray", "auditor.engines.ray_engine")


@dataclass
class EngineConfig:
    """The options of one engine beyond those every engine takes (``batch_size``, ``workers``,
    ``split_bytes``): the base of each engine's nested ``Config``. Each field is an option of the
    engine's constructor; its metadata says how users give it: ``manifest`` (the manifest key; default
    the field's name), ``flag`` (a command-line flag; none by default), ``help``, ``range``
    (``(low, high)`` for an integer) and ``choices`` (the strings it may be).

    >>> sorted(registry()["ray"].Config.options())
    ['address', 'embed_actors']
    """

    @classmethod
    def options(cls) -> dict[str, dataclasses.Field]:
        return {f.name: f for f in dataclasses.fields(cls)}

    def validate(self) -> None:
        """Raise :class:`~auditor.errors.ConfigError` for an option of the wrong type or range, or not
        one of its choices."""
        for f in dataclasses.fields(self):
            value, span, choices = getattr(self, f.name), f.metadata.get("range"), f.metadata.get("choices")
            if value is not None and choices is not None and value not in choices:
                key = f.metadata.get("manifest", f.name)
                raise ConfigError(f"{key} must be one of {', '.join(choices)}, not {value!r}")
            if value is None or span is None:
                continue
            low, high = span
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                key = f.metadata.get("manifest", f.name)
                raise ConfigError(f"{key} must be an integer from {low} to {high:,}, not {value!r}")


class Engine(ABC):
    """What the audit needs of an engine: :meth:`scan`, plus what the report says about the run.

    ``workers`` is the number of workers asked for (None: the engine's default, e.g. every cluster
    CPU); :attr:`workers_used` the number the last scan ran on (default: ``workers``; the local
    engine scans small inputs in-process); ``peak_worker_rss_mb`` the largest peak RSS a worker
    reported over the engine's scans (0.0 when they ran in-process).
    """

    #: the engine's name (``--engine NAME``, manifest ``engine``); a subclass with a name registers itself
    name: ClassVar[str] = ""
    #: one line for ``--help`` and the docs
    summary: ClassVar[str] = ""
    #: the engine's own options (manifest keys, flags)
    Config: ClassVar[type[EngineConfig]] = EngineConfig
    workers: int | None
    peak_worker_rss_mb: float = 0.0
    #: CPU seconds that calls run by :meth:`offload` spent in workers (not in the calling process)
    offload_cpu_s: float = 0.0
    #: CPU seconds worker processes spent starting (imports, loading the job) before their first
    #: unit or call, where the engine can tell; counted in the run's worker CPU like the rest
    startup_cpu_s: float = 0.0

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls.name:
            ENGINES.register(cls.name, cls)

    @abstractmethod
    def scan(self, job: ScanJob, dataset: Dataset, stats: ScanStats) -> Iterator[Finding]:
        """Findings of ``job``'s stages over ``dataset``, in the order of a serial read (the job's stages
        get their counts); adds to ``stats``. Raises :class:`~auditor.errors.InputError` for bad input
        and :class:`~auditor.errors.ScanError` when a worker dies. Run units through
        :func:`auditor.scan.driver.run_scan` for that order."""

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


def registry() -> dict[str, type[Engine]]:
    """Every engine by name, each imported (:func:`names` imports none)."""
    return ENGINES.all()


def names() -> list[str]:
    """Every engine's name, the default (``local``) first; imports none."""
    return sorted(ENGINES.names(), key=lambda n: (n != "local", n))


def engine_class(name: str) -> type[Engine]:
    """The engine registered as ``name``; :class:`~auditor.errors.ConfigError` when none is."""
    return ENGINES.get(name)


def get_engine(name: str, **options: Any) -> Engine:
    """The engine called ``name`` made with ``options`` (None values left out): ``batch_size``,
    ``workers``, ``split_bytes`` and its own (its ``Config``, e.g. ``address`` and ``embed_actors`` for
    ``ray``). Another engine's option is ignored (a manifest names options of several engines).

    Raises :class:`~auditor.errors.ConfigError` for an unknown engine or option, and
    :class:`~auditor.errors.MissingDependencyError` for an engine whose extra is not installed.
    """
    cls = engine_class(name)
    options = {k: v for k, v in options.items() if v is not None}
    params = inspect.signature(cls).parameters
    others = {o for c in registry().values() for o in c.Config.options()}
    options = {k: v for k, v in options.items() if k in params or k not in others}
    try:
        return cls(**options)
    except TypeError as e:
        raise ConfigError(f"engine '{name}': {e}") from None

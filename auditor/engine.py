"""Engines run a scan: stream a training dataset in batches through built indexes.

Every engine implements :class:`Engine` and must yield the same findings for the same input:

``local`` (default)  :class:`auditor.engines.local.LocalEngine`, worker processes on every core
                     (``workers``; in-process for small inputs or ``workers = 1``)
``ray``              :class:`auditor.engines.ray_engine.RayEngine`, Ray Data ``map_batches`` on a
                     local or remote cluster (``address``); needs the ``[ray]`` extra

The dataset is always read by the caller's process, in order, so record ordinals, skips and split
selection are the same whatever the engine; only batches travel. Memory is bounded by the eval
indexes and ``batch_size`` × the batches in flight, never by the corpus.

>>> get_engine("local", workers=1).name
'local'
>>> get_engine("spark")
Traceback (most recent call last):
...
auditor.errors.ConfigError: unknown engine 'spark' (engines: local, ray)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Protocol

from .datasets import Dataset
from .methods.base import Finding, Index
from .records import Record

ENGINES = ("local", "ray")


@dataclass
class ScanStats:
    """What the scans of a run read and how fast (the report's ``run.scan``)."""

    records: int = 0
    chars: int = 0
    bytes: int = 0  # size on disk of the training files scanned
    seconds: float = 0.0

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
        }


class Engine(Protocol):
    name: str
    workers: int

    def scan(self, indexes: Sequence[Index], dataset: Dataset, stats: ScanStats) -> Iterator[Finding]: ...


class ObservedDataset:
    """A dataset whose records pass through ``observers`` in the calling process as they are read.

    Engines read data in the calling process and ship batches to workers; whatever must see every
    training record exactly once and keep state (error-type counts, boilerplate masking statistics)
    observes here, not as an index (an index's state stays in the worker that ran it).
    """

    def __init__(self, dataset: Dataset, observers: Sequence):
        self._dataset = dataset
        self._observers = list(observers)

    def records(self) -> Iterator[Record]:
        for record in self._dataset.records():
            for observe in self._observers:
                observe(record)
            yield record

    def __getattr__(self, name: str):
        return getattr(self._dataset, name)


def batched(items: Iterable[Record], size: int) -> Iterator[list[Record]]:
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch


def search_all(indexes: Sequence[Index], batch: Sequence[Record]) -> list[Finding]:
    """Every index's findings for one batch, in index order (what each engine runs per batch)."""
    out: list[Finding] = []
    for index in indexes:
        out.extend(index.search(batch))
    return out


def get_engine(name: str, **options) -> Engine:
    """The engine called ``name``; options: ``batch_size``, ``workers``, and ``address`` (ray).

    Raises :class:`~auditor.errors.ConfigError` for an unknown engine or option, and
    :class:`~auditor.errors.MissingDependencyError` for ``ray`` without the ``[ray]`` extra.
    """
    from .errors import ConfigError

    options = {k: v for k, v in options.items() if v is not None}
    try:
        if name == "local":
            from .engines.local import LocalEngine

            options.pop("address", None)
            return LocalEngine(**options)
        if name == "ray":
            from .engines.ray_engine import RayEngine

            return RayEngine(**options)
    except TypeError as e:
        raise ConfigError(f"engine '{name}': {e}") from None
    raise ConfigError(f"unknown engine '{name}' (engines: {', '.join(ENGINES)})")

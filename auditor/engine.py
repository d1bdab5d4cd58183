"""Engines run a scan: stream a training dataset in batches through built indexes.

The local engine runs in this process; other engines (Ray) implement the same :class:`Engine`
protocol and must yield the same findings for the same input.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import islice
from typing import Iterable, Iterator, Protocol, Sequence

from .datasets import Dataset
from .methods.base import Finding, Index
from .records import Record


@dataclass
class ScanStats:
    records: int = 0
    chars: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict:
        rate = self.records / self.seconds if self.seconds else 0.0
        return {"records": self.records, "chars": self.chars, "seconds": round(self.seconds, 3),
                "records_per_s": round(rate, 1)}


class Engine(Protocol):
    name: str

    def scan(self, indexes: Sequence[Index], dataset: Dataset, stats: ScanStats) -> Iterator[Finding]: ...


def batched(items: Iterable[Record], size: int) -> Iterator[list[Record]]:
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch


@dataclass
class LocalEngine:
    """Single-process engine: read a batch, run every index on it, yield findings."""

    batch_size: int = 512
    name: str = field(default="local", init=False)

    def scan(self, indexes: Sequence[Index], dataset: Dataset, stats: ScanStats) -> Iterator[Finding]:
        start = time.perf_counter()
        for batch in batched(dataset.records(), self.batch_size):
            stats.records += len(batch)
            stats.chars += sum(len(r.view("text")) for r in batch)
            for index in indexes:
                yield from index.search(batch)
        stats.seconds += time.perf_counter() - start


def get_engine(name: str, **options) -> Engine:
    from .errors import ConfigError

    if name == "local":
        return LocalEngine(**options)
    raise ConfigError(f"unknown engine '{name}' (engines: local)")

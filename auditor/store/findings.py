"""Where findings go while a scan runs.

:class:`FindingStore` is the interface the audit uses; every store keeps, per eval item and method,
the ``keep`` best-scoring training matches (ties broken by training dataset and position, so the
result does not depend on arrival order) and counts every finding. :class:`MemoryFindingStore`
keeps them in memory (memory follows the number of contaminated eval items, not the corpus);
:class:`~auditor.store.findings_db.DuckDBFindingStore` keeps every finding in a DuckDB file.

>>> store = MemoryFindingStore(keep=1)
>>> for score in (0.6, 0.9):
...     store.add(Finding("ev", "1", "ev#1", "tr", "7", "tr:7", "ngram", score, eval_ordinal=1, train_ordinal=6))
>>> store.total, [f.score for f in store.findings()], store.contaminated("")
(2, [0.9], {('ev', 1)})
>>> store.close()  # nothing to release in memory
"""

from __future__ import annotations

import dataclasses
import heapq
from abc import ABC, abstractmethod
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, ClassVar

from ..methods.base import Finding
from ..registry import Registry

#: every finding store by name (manifest ``findings_store``); ``duckdb`` declared, imported when first used
STORES: Registry[type[FindingStore]] = Registry("findings store")
STORES.declare("duckdb", "auditor.store.findings_db")


@dataclass
class StoreConfig:
    """A store's own options (the base of each store's nested ``Config``); each field is an option of
    its constructor, its metadata says how a manifest gives it: ``manifest`` (the key; default the
    field's name) and ``folder`` (a path confined to the manifest's folder)."""

    @classmethod
    def options(cls) -> dict[str, dataclasses.Field]:
        return {f.name: f for f in dataclasses.fields(cls)}


class FindingStore(ABC):
    """The findings of a run: every finding goes to :meth:`add`; the report reads the best ones.

    ``keep`` is the number of training matches kept per (check, eval item, method); ``total`` counts
    every finding added. :meth:`close` releases what the store holds (a database file); call it once
    the run is over, also on failure.
    """

    #: the store's name (manifest ``findings_store``); a subclass with a name registers itself
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    Config: ClassVar[type[StoreConfig]] = StoreConfig
    keep: int
    total: int

    def __init__(self, keep: int = 5) -> None:
        self.keep = keep
        self.total = 0

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls.name:
            STORES.register(cls.name, cls)

    @abstractmethod
    def add(self, f: Finding) -> None:
        """Take one finding (in any order; the result does not depend on it)."""

    @abstractmethod
    def findings(self) -> list[Finding]:
        """The kept findings (``keep`` best per check, eval item and method) in a deterministic order."""

    @abstractmethod
    def contaminated(self, check: str, conclusive_only: bool = True) -> set[tuple[str, int]]:
        """Eval items (dataset, ordinal) of ``check`` with at least one (conclusive) finding."""

    @property
    @abstractmethod
    def train_hits(self) -> dict[tuple[str, int], Finding]:
        """(train dataset, train ordinal) → its best conclusive finding (for --write-clean)."""

    def close(self) -> None:  # noqa: B027 (optional, with a default)
        """Release what the store holds; default: nothing to release."""


class MemoryFindingStore(FindingStore):
    """A :class:`FindingStore` in memory."""

    name = "memory"
    summary = "in memory (memory follows the number of contaminated eval items)"

    def __init__(self, keep: int = 5):
        self.keep = keep
        self._best: dict[tuple, list] = defaultdict(list)  # key → heap of (rank, Finding)
        self.match_counts: dict[tuple, int] = defaultdict(int)
        self.total = 0
        self._train_hits: dict[tuple[str, int], Finding] = {}

    @staticmethod
    def _key(f: Finding) -> tuple:
        return (f.check, f.eval_dataset, f.eval_ordinal, f.method)

    @staticmethod
    def _rank(f: Finding) -> tuple:
        # heap keeps the smallest at the top: smaller rank = worse finding
        # a conclusive finding outranks any non-conclusive one (a suspected paraphrase never displaces proof)
        return (f.conclusive, f.score, tuple(-ord(c) for c in f.train_dataset[:32]), -f.train_ordinal)

    def add(self, f: Finding) -> None:
        key = self._key(f)
        self.total += 1
        self.match_counts[key] += 1
        if f.conclusive:
            tkey = (f.train_dataset, f.train_ordinal)
            old = self._train_hits.get(tkey)
            if old is None or f.score > old.score:
                self._train_hits[tkey] = f
        heap = self._best[key]
        item = (self._rank(f), id(f), f)
        if len(heap) < self.keep:
            heapq.heappush(heap, item)
        elif item[0] > heap[0][0]:
            heapq.heapreplace(heap, item)

    @property
    def train_hits(self) -> dict[tuple[str, int], Finding]:
        return self._train_hits

    def findings(self) -> list[Finding]:
        """Kept findings in a deterministic order."""
        out = [item[2] for heap in self._best.values() for item in heap]
        return sorted(out, key=Finding.sort_key)

    def contaminated(self, check: str, conclusive_only: bool = True) -> set[tuple[str, int]]:
        out = set()
        for (c, ds, ordinal, _), heap in self._best.items():
            if c == check and heap and (not conclusive_only or any(i[2].conclusive for i in heap)):
                out.add((ds, ordinal))
        return out


def store_names() -> list[str]:
    """Every finding store's name, sorted; imports none."""
    return STORES.names()


def store_class(name: str) -> type[FindingStore]:
    """The store registered as ``name``; :class:`~auditor.errors.ConfigError` when none is.

    >>> store_class("memroy")
    Traceback (most recent call last):
    ...
    auditor.errors.ConfigError: unknown findings store 'memroy' (did you mean 'memory'?) (findings stores: duckdb, memory)
    """
    return STORES.get(name)


def make_store(name: str, keep: int = 5, **options: Any) -> FindingStore:
    """The store called ``name`` keeping ``keep`` findings per eval item and method, with its own options.

    >>> make_store("memory", keep=2).keep
    2
    """
    return store_class(name)(keep=keep, **options)

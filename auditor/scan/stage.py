"""A scan's per-batch work, declared: a :class:`Stage` runs over each batch of training records in a
worker and keeps its own counts, which the calling process adds to its own copy of the stage.

The audit assembles a job's stages (:class:`~auditor.scan.job.ScanJob`) — counting error types,
masking boilerplate, searching indexes, capturing finding texts — and every engine runs them in
order, batch by batch (:func:`~auditor.scan.job.scan_unit`). A stage's worker copy counts into itself;
:meth:`Stage.take_counts` hands those counts over and resets them after each unit, and the caller's
copy adds them (:meth:`Stage.add_counts`) as the unit's result is merged, in reading order, with the
unit's :class:`~auditor.datasets.account.Shift` (what renumbers a unit's local ordinals). Nothing is
counted twice when the "worker" is the calling process: a stage's own counts and its totals are
kept apart.

>>> from auditor.records.record import Record
>>> class Count(Stage[int]):
...     def __init__(self):
...         self.seen, self.total = 0, 0
...     def run(self, batch):
...         self.seen += len(batch.records)
...     def take_counts(self):
...         seen, self.seen = self.seen, 0
...         return seen
...     def add_counts(self, counts, shift):
...         self.total += counts
>>> stage = Count()
>>> stage.run(Batch([Record("d", "1", "d:1", {"text": "a"})]))
>>> stage.add_counts(stage.take_counts(), None)
>>> stage.total, stage.seen
(1, 0)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

from ..methods.base import Finding, Searcher
from ..records.record import Record

if TYPE_CHECKING:
    from ..datasets.account import Shift

C = TypeVar("C")


@dataclass
class Batch:
    """One batch of a unit's training records and the findings the stages have made of it so far."""

    records: list[Record]
    findings: list[Finding] = field(default_factory=list)

    def by_ordinal(self) -> dict[int, Record]:
        return {r.ordinal: r for r in self.records}


class Stage(ABC, Generic[C]):
    """One step of the per-batch work; ``C`` is the type of its counts (picklable)."""

    @abstractmethod
    def run(self, batch: Batch) -> None:
        """Work on one batch in a worker: read or change its records, add findings."""

    def take_counts(self) -> C | None:
        """What this copy counted since the last call, handed over and reset (None: nothing to add)."""
        return None

    def add_counts(self, counts: C, shift: Shift) -> None:
        """Add a worker copy's counts for one unit (``shift``: that unit's renumbering); default: none."""
        return None

    def searchers(self) -> Sequence[Searcher]:
        """What this stage searches with (an engine may host their shared models once, e.g. the Ray
        engine's embedding actors: :meth:`auditor.methods.base.Searcher.shared_models`)."""
        return ()

"""The scan's built-in stages: boilerplate masking (:class:`MaskStage`) and index search (:class:`SearchStage`).

A check's share of a scan is a mask stage for its :class:`~auditor.masking.masker.Masker` followed by a
search stage over the masker's indexes; findings of a search stage are labelled with its check.

>>> from auditor.datasets.dataset import Dataset, DatasetSpec
>>> from auditor.methods import create
>>> ev = list(Dataset(DatasetSpec("e", ["webshop:0:5"], role="eval")).records())
>>> stage = SearchStage("c", [create("exact").build(ev)])
>>> batch = Batch(ev[:2])
>>> stage.run(batch)
>>> [(f.check, f.method) for f in batch.findings]
[('c', 'exact'), ('c', 'exact')]
"""

from __future__ import annotations

from collections import Counter

from ..datasets.account import Shift
from ..masking.boilerplate import MaskCounts
from ..masking.masker import Masker
from ..methods._located import located_by_record
from ..methods.base import Searcher
from .stage import Batch, Stage


class SearchStage(Stage[list[Counter]]):
    """Every index's findings for the batch, in index order, labelled ``check``; counts: each index's
    :meth:`~auditor.methods.base.Searcher.take_counts`."""

    def __init__(self, check: str, indexes: list[Searcher]):
        self.check = check
        self.indexes = indexes

    def run(self, batch: Batch) -> None:
        with located_by_record():  # each record's findings located together, after every index
            for index in self.indexes:
                for f in index.search(batch.records):
                    f.check = self.check
                    batch.findings.append(f)

    def take_counts(self) -> list[Counter]:
        return [ix.take_counts() for ix in self.indexes]

    def add_counts(self, counts: list[Counter], shift: Shift) -> None:
        for ix, c in zip(self.indexes, counts):
            if c:
                ix.add_counts(c)

    def searchers(self) -> list[Searcher]:
        return self.indexes


class MaskStage(Stage[MaskCounts]):
    """The batch's records with ``masker``'s boilerplate masked (earlier masks dropped first); counts:
    records masked, characters masked and scanned, added to the caller's boilerplate totals."""

    def __init__(self, masker: Masker):
        self.masker = masker
        self.counts = MaskCounts()

    def run(self, batch: Batch) -> None:
        for r in batch.records:
            Masker.unmask(r)
        self.masker.premask_batch(batch.records, self.counts)

    def take_counts(self) -> MaskCounts:
        counts, self.counts = self.counts, MaskCounts()
        return counts

    def add_counts(self, counts: MaskCounts, shift: Shift) -> None:
        if self.masker.boilerplate is not None:
            self.masker.boilerplate.add_counts(counts)

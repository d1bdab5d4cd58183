"""Where findings go while a scan runs.

:class:`FindingStore` keeps, per eval item and method, the ``keep`` best-scoring training matches
(ties broken by training dataset and position, so the result does not depend on arrival order) and
the total number of matching training records. Memory follows the number of contaminated eval
items, not the corpus.
"""

from __future__ import annotations

import heapq
from collections import defaultdict

from ..methods.base import Finding


class FindingStore:
    def __init__(self, keep: int = 5):
        self.keep = keep
        self._best: dict[tuple, list] = defaultdict(list)  # key → heap of (rank, Finding)
        self.match_counts: dict[tuple, int] = defaultdict(int)
        self.total = 0
        #: (train dataset, train ordinal) → its best conclusive finding (for --write-clean)
        self.train_hits: dict[tuple[str, int], Finding] = {}

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
            old = self.train_hits.get(tkey)
            if old is None or f.score > old.score:
                self.train_hits[tkey] = f
        heap = self._best[key]
        item = (self._rank(f), id(f), f)
        if len(heap) < self.keep:
            heapq.heappush(heap, item)
        elif item[0] > heap[0][0]:
            heapq.heapreplace(heap, item)

    def findings(self) -> list[Finding]:
        """Kept findings in a deterministic order."""
        out = [item[2] for heap in self._best.values() for item in heap]
        return sorted(out, key=Finding.sort_key)

    def contaminated(self, check: str, conclusive_only: bool = True) -> set[tuple[str, int]]:
        """Eval items (dataset, ordinal) of ``check`` with at least one (conclusive) finding."""
        out = set()
        for (c, ds, ordinal, _), heap in self._best.items():
            if c == check and heap and (not conclusive_only or any(i[2].conclusive for i in heap)):
                out.add((ds, ordinal))
        return out

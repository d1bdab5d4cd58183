"""``exact``: normalized-text hash equality.

An eval item's view (default ``query``) is normalized (:func:`auditor.text.normalize.normalize`) and
hashed. A training record matches when one of its views (default ``query`` and ``text``), or one
line of them, normalizes to the same text — so a verbatim copy pasted as one turn of a long
trajectory is found too. Score is 1.0.

>>> from auditor.records.record import Record
>>> ev = Record("bench", "q1", "b.json#0", {"query": "Find flights to Paris!"})
>>> tr = Record("train", "t9", "t.jsonl:3", {"text": "system: be nice\\nfind FLIGHTS to paris"})
>>> [(f.eval_id, f.train_id, f.score, f.evidence["unit"]) for f in ExactIndex().build([ev]).search([tr])]
[('q1', 't9', 1.0, 'line 2')]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..records.record import FIELDS, QUERY, TEXT, Record
from ..text.batch import TokenBatch, token_batch
from ._exact_kernel import ItemKeys, exact_units_batch, text_keys
from .base import Finding, Index, MethodConfig
from .ngram import SHORT_MIN_N


@dataclass
class ExactConfig(MethodConfig):
    #: ``fields``: every other string of a training record (:mod:`auditor.records.fields`), each a line
    train_views: tuple[str, ...] = (QUERY, TEXT, FIELDS)
    #: also compare each line of a train view (catches a copy embedded as one turn)
    lines: bool = True
    #: items whose normalized text has fewer characters are not indexed (too generic to prove anything)
    min_chars: int = 10
    #: off: a whole-item match is proof whatever the rest of the record holds, and a multi-line item
    #: (a tau2 task) sharing one line with the training boilerplate must still match whole
    mask_boilerplate: bool = False


class ExactIndex(Index[ExactConfig]):
    name = "exact"
    Config = ExactConfig
    fixed_threshold = 1.0  # a normalized hash matches or not
    summary = "normalized-text hash equality (NFKC, case, punctuation, whitespace), whole views and lines"
    #: :meth:`_line_keys`, made on the first search
    _keys: ItemKeys | None = None

    def _build(self) -> None:
        self.table: dict[int, list[int]] = {}
        # normalized at once, in the batch the fingerprint and the sameness rule read (token_batch)
        batch, at = token_batch([ev.view(self.config.eval_view) for ev in self.eval_records])
        lengths, digests = batch.char_lengths(), batch.whole_hashes()  # text_hash(normalize(view)) of each
        for pos, i in enumerate(at):
            if lengths[i] < self.config.min_chars:
                self.not_indexed[f"normalized {self.config.eval_view} shorter than {self.config.min_chars} chars"] += 1
                continue
            self.table.setdefault(digests[i], []).append(pos)
        self._keys = None

    def _line_keys(self) -> ItemKeys:
        """:func:`~auditor.methods._exact_kernel.text_keys` of the indexed items' normalized texts, made once."""
        if self._keys is None:
            view = self.config.eval_view
            positions = sorted({p for ps in self.table.values() for p in ps})
            # a batch of its own: made at the first search, it must not displace the scan's (token_batch)
            batch = TokenBatch([self.eval_records[p].view(view) for p in positions])
            self._keys = text_keys([batch.normalized(i) for i in range(len(positions))])
        return self._keys

    def covered(self, records: Sequence[Record]) -> list[bool]:
        """Items indexed here with at least :data:`~auditor.methods.ngram.SHORT_MIN_N` tokens: a copy as
        a whole view or line is found. A one- or two-word item is not vouched for (a line "book it"
        in a training set is no proof of anything, and its absence proves nothing either); nor is a copy
        inside a longer line, which is the ``ngram`` tier's (containment)."""
        batch, at = token_batch([r.view(self.config.eval_view) for r in records])
        long = (batch.char_lengths() >= self.config.min_chars) & (batch.token_counts() >= SHORT_MIN_N)
        return long[at].tolist()

    def search(self, batch: Sequence[Record]) -> list[Finding]:
        out: list[Finding] = []
        table = self.table
        views = self.config.train_views
        texts = [text for tr in batch for view in views if (text := tr.views.get(view))]
        # in the order of ``texts``; of the lines, only those that may equal an item are hashed
        per_text = iter(exact_units_batch(texts, self.config.lines, self._line_keys()))
        for tr in batch:
            hits: dict[int, tuple[str, str]] = {}
            for view in views:
                if not tr.views.get(view):
                    continue
                for unit, digest in next(per_text):
                    for pos in table.get(digest, ()):
                        hits.setdefault(pos, (view, unit))
            for pos, (view, unit) in sorted(hits.items()):
                out.append(self.finding(self.eval_records[pos], tr, 1.0, train_view=view, unit=unit))
        return out

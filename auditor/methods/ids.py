"""``id``: native-id equality between an eval item and a training record — evidence, never proof.

ToolBench ids are scoped by group (``G1`` ... ``G3``), tau2 ids are small integers shared by every
domain: equal ids alone prove nothing, so findings of this method are ``conclusive = False`` and
never fail a check. They corroborate content findings and feed provenance. A training record's
candidate ids are its own id and ``meta['ref_ids']`` (e.g. ``33737`` from ToolBench-V's
``G1@33737``); when both sides carry ``meta['group']`` the groups must agree.

>>> from auditor.records.record import Record
>>> ev = Record("stb", "33737", "G1.json#4", {"query": "q"}, meta={"group": "G1"})
>>> tr = Record("v", "G1@33737", "v.json#0", {"query": "x"}, meta={"group": "G1", "ref_ids": ["33737"]})
>>> [(f.eval_id, f.train_id, f.conclusive) for f in IdIndex().build([ev]).search([tr])]
[('33737', 'G1@33737', False)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..records.record import Record
from .base import Finding, Index, MethodConfig


@dataclass
class IdConfig(MethodConfig):
    mask_boilerplate: bool = False  # ids are compared, not text


class IdIndex(Index[IdConfig]):
    name = "id"
    Config = IdConfig
    conclusive = False
    summary = "native-id equality (group-aware); reported as evidence, never counted as contamination"

    def _build(self) -> None:
        self.table: dict[str, list[int]] = {}
        for pos, ev in enumerate(self.eval_records):
            if ev.meta.get("positional_id"):
                self.not_indexed["id is a file position, not a native id"] += 1
                continue
            self.table.setdefault(ev.id, []).append(pos)

    def proof_target(self, ev: Record, evidence: dict[str, Any]) -> str:
        """The id matched, not the item's text: it is what the report shows in the training record."""
        return str(evidence.get("matched_id", ev.id))

    def reads(self, record: Record) -> bool:
        """A record whose id is its position in its file has no id to compare (:meth:`search` skips it)."""
        return not record.meta.get("positional_id")

    def unread(self) -> str:
        return "every record's id is its position in its file, not an id of its own"

    def search(self, batch: Sequence[Record]) -> list[Finding]:
        out: list[Finding] = []
        for tr in batch:
            if tr.meta.get("positional_id"):
                continue
            candidates = [tr.id, *tr.meta.get("ref_ids", ())]
            seen: set[int] = set()
            for cid in candidates:
                for pos in self.table.get(str(cid), ()):
                    ev = self.eval_records[pos]
                    if pos in seen or ev.dataset == tr.dataset and ev.ordinal == tr.ordinal:
                        continue
                    g_ev, g_tr = ev.meta.get("group"), tr.meta.get("group")
                    if g_ev and g_tr and g_ev != g_tr:
                        continue
                    seen.add(pos)
                    out.append(self.finding(ev, tr, 1.0, matched_id=str(cid), group=g_ev or g_tr))
        return out

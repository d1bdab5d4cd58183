"""``calls``: the eval item's canonical tool-call sequence found in a training trajectory.

Compares the ``calls`` view (one canonical call per line, :mod:`auditor.records.toolcalls`: name + sorted-key
JSON arguments with normalized scalars, so key order, whitespace and ``"1"`` vs ``1`` do not matter) of
eval items that carry calls (RefineToolBench corrections, ToolBench answer trees, tau2
``evaluation_criteria.actions``) with the ``calls`` view of training records. Match kinds, best first:

``sequence``  identical call sequence                                    score 1.0
``contained`` every eval call occurs in the training calls, in order      score 1.0
``call_set``  the same set of calls, another order                        score 1.0
``similar``   share of eval calls matched in order (difflib blocks)       finding at ``>= threshold``

Conclusive or evidence? A ``sequence`` / ``contained`` match of at least ``conclusive_min_calls``
(2) distinct calls, one of them with arguments, is conclusive: a training trajectory that performs the
eval task's exact multi-step solution with the same argument values (ids, dates, amounts) is that
task's solution. Everything else (a single call, a call set in another order, a similar sequence) is
evidence only — one ``get_weather({"city":"Paris"})`` occurs naturally in many tasks.
Names in ``ignore`` (``think``; ``Finish`` is never a call) are dropped on both sides.

>>> from auditor.records.record import Record
>>> ev = Record("bench", "t1", "b#0", {"calls": 'get_user({"id":7})\\ncancel({"order":"#W1"})'})
>>> tr = Record("train", "x", "t:1", {"calls": 'get_user({"id":7})\\nlist_orders({})\\ncancel({"order":"#W1"})'})
>>> f = CallsIndex().build([ev]).search([tr])[0]
>>> f.evidence["kind"], f.score, f.conclusive
('contained', 1.0, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from ..records.record import Record
from ..records.toolcalls import call_name, split_calls
from .base import Finding, Index, MethodConfig


@dataclass
class CallsConfig(MethodConfig):
    eval_view: str = "calls"
    train_views: tuple[str, ...] = ("calls",)
    #: findings of kind ``similar`` need at least this share of the eval calls, in order
    threshold: float = 0.8
    #: ``sequence`` / ``contained`` matches with at least this many distinct calls are conclusive
    conclusive_min_calls: int = 2
    #: call names ignored on both sides (lower case)
    ignore: tuple[str, ...] = ("think",)
    mask_boilerplate: bool = False


class CallsIndex(Index[CallsConfig]):
    name = "calls"
    Config = CallsConfig
    summary = (
        "canonical tool-call sequences (name + normalized sorted-key arguments): identical, contained, "
        "same set, similar; multi-call exact solutions are conclusive"
    )

    def _seq(self, text: str) -> list[str]:
        ignore = {n.lower() for n in self.config.ignore}
        return [c for c in split_calls(text) if call_name(c) not in ignore]

    def covered(self, records: Sequence[Record]) -> list[bool]:
        least = self.config.conclusive_min_calls
        return [len(set(self._seq(r.view(self.config.eval_view)))) >= least for r in records]

    def stats(self) -> dict:
        """Base stats plus how many eval items hold calls whose positional arguments stayed unbound
        (no schema known: they match only calls written the same way; :mod:`auditor.records.callparse`)."""
        return super().stats() | {
            "eval_items_with_unbound_calls": sum(1 for ev in self.eval_records if ev.meta.get("calls_unbound"))
        }

    def _build(self) -> None:
        self.seqs: list[list[str]] = []
        self.by_call: dict[str, set[int]] = {}
        for pos, ev in enumerate(self.eval_records):
            seq = self._seq(ev.view(self.config.eval_view))
            self.seqs.append(seq)
            if not seq:
                self.not_indexed[f"no tool calls in the eval {self.config.eval_view} view"] += 1
                continue
            for c in set(seq):
                self.by_call.setdefault(c, set()).add(pos)

    def search(self, batch: Sequence[Record]) -> list[Finding]:
        out: list[Finding] = []
        for tr in batch:
            tseq = [c for v in self.config.train_views for c in self._seq(tr.views.get(v, ""))]
            if not tseq:
                continue
            tset = set(tseq)
            candidates: set[int] = set()
            for c in tset:
                candidates |= self.by_call.get(c, set())
            for pos in sorted(candidates):
                ev = self.eval_records[pos]
                if ev.dataset == tr.dataset and ev.ordinal == tr.ordinal:
                    continue
                found = self._match(self.seqs[pos], tseq, tset)
                if found is None:
                    continue
                kind, score, matched = found
                distinct = set(self.seqs[pos])
                conclusive = (
                    kind in ("sequence", "contained")
                    and len(distinct) >= self.config.conclusive_min_calls
                    and any(not c.endswith("({})") for c in distinct)
                )
                f = self.finding(
                    ev,
                    tr,
                    score,
                    kind=kind,
                    view="calls",
                    matched_calls=matched[:10],
                    eval_calls=len(self.seqs[pos]),
                    train_calls=len(tseq),
                    train_positions=[i + 1 for i, c in enumerate(tseq) if c in set(matched)][:20],
                )
                if ev.meta.get("calls_unbound") or tr.meta.get("calls_unbound"):
                    f.evidence["unbound_positional_calls"] = True  # compared as written, no schema known
                f.conclusive = conclusive
                out.append(f)
        return out

    def _match(self, eseq: list[str], tseq: list[str], tset: set[str]) -> tuple[str, float, list[str]] | None:
        if eseq == tseq:
            return "sequence", 1.0, list(eseq)
        it = iter(tseq)
        if all(c in it for c in eseq):  # in-order subsequence
            return "contained", 1.0, list(eseq)
        if set(eseq) == tset:
            return "call_set", 1.0, list(eseq)
        sm = SequenceMatcher(None, eseq, tseq, autojunk=False)
        matched = [c for b in sm.get_matching_blocks() for c in eseq[b.a : b.a + b.size]]
        score = len(matched) / len(eseq)
        if score >= self.config.threshold:
            return "similar", round(score, 6), matched
        return None

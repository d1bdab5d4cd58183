"""Findings grouped for a reader: one row per (check, eval item), the methods as columns.

``report.json`` keeps the best training matches per eval item *and method*, so one leaked item
shows up once per method that found it; reports show it once. Shared by the Markdown and HTML
renderings (and any later section that lists items).

>>> fs = [{"check": "c", "eval_dataset": "e", "eval_id": "1", "eval_ordinal": 0, "train_dataset": "t",
...        "train_id": "9", "train_ordinal": 4, "method": m, "score": s, "conclusive": True}
...       for m, s in (("exact", 1.0), ("ngram", 0.8))]
>>> rows = item_rows(fs)
>>> len(rows), rows[0].scores, rows[0].eval_ref, rows[0].train_refs, rows[0].status
(1, {'exact': 1.0, 'ngram': 0.8}, 'e 1', ['t 9'], 'conclusive')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .counts import finding_status
from .results import FindingRow


def eval_ref(f: FindingRow) -> str:
    return f.get("eval_ref") or f"{f['eval_dataset']} {f['eval_id']}"


def train_ref(f: FindingRow) -> str:
    return f.get("train_ref") or f"{f['train_dataset']} {f['train_id']}"


_LINE = re.compile(r":(\d+)$")


def _positional(f: FindingRow, side: str) -> bool:
    """Whether one side's record has no id of its own: its id is its 0-based position and its source
    names the 1-based line (``text.jsonl:825`` for id ``824``)."""
    rid, source = str(f.get(f"{side}_id", "")), str(f.get(f"{side}_source", ""))
    m = _LINE.search(source)
    return bool(m and rid.isdigit() and int(m.group(1)) == int(rid) + 1)


def shown_ref(f: FindingRow, side: str) -> str:
    """How reports name one side's record (``side``: ``"eval"`` / ``"train"``), numbered one way: its
    ref, or for a record without an id of its own (:func:`_positional`) its dataset and source line,
    never its 0-based position beside the 1-based line.

    >>> f = {"train_dataset": "corpus", "train_id": "824", "train_source": "corpus/text.jsonl:825"}
    >>> shown_ref(f, "train"), shown_ref({**f, "train_id": "q-7"}, "train")
    ('corpus (corpus/text.jsonl:825)', 'corpus q-7')
    """
    if _positional(f, side):
        return f"{f.get(f'{side}_dataset', '')} ({f.get(f'{side}_source', '')})"
    return eval_ref(f) if side == "eval" else train_ref(f)


def record_label(f: FindingRow, side: str) -> str:
    """:func:`shown_ref` with the record's source (once).

    >>> f = {"train_dataset": "corpus", "train_id": "824", "train_source": "corpus/text.jsonl:825"}
    >>> record_label(f, "train")
    'corpus (corpus/text.jsonl:825)'
    >>> record_label({**f, "train_id": "q-7"}, "train")
    'corpus q-7 (corpus/text.jsonl:825)'
    """
    ref, source = shown_ref(f, side), str(f.get(f"{side}_source", ""))
    return ref if _positional(f, side) or not source else f"{ref} ({source})"


@dataclass
class ItemRow:
    """One eval item of one check with everything found for it."""

    check: str
    eval_ref: str
    best: FindingRow  # the finding shown with texts: conclusive first, then the highest score
    conclusive: bool = False  # a conclusive method found it (it counts as contaminated)
    scores: dict[str, float] = field(default_factory=dict)  # best score per method
    train_refs: list[str] = field(default_factory=list)  # distinct training records, best first
    status: str = "evidence only"  # the row's standing (:func:`auditor.report.counts.finding_status`)

    @property
    def proves(self) -> bool:
        """Conclusive or suspected: the renderings show its texts (its proof) whatever its rank."""
        return self.status == "conclusive" or self.status.startswith("suspected")


#: a row's status is the strongest of its findings': conclusive, then a reviewer's confirmation, then
#: an open question, then a dismissal
_STANDING = ("conclusive", "suspected: confirmed", "suspected: unreviewed", "suspected: dismissed", "evidence only")


def _rank(f: FindingRow) -> tuple:
    return (not f.get("conclusive", True), -float(f["score"]))


def item_rows(findings: list[FindingRow]) -> list[ItemRow]:
    """Rows, contaminated items first, then by the number of methods and the best score."""
    rows: dict[tuple, ItemRow] = {}
    for f in sorted(findings, key=_rank):
        key = (f["check"], f["eval_dataset"], f.get("eval_ordinal"), f["eval_id"])
        row = rows.get(key)
        if row is None:
            row = rows[key] = ItemRow(f["check"], shown_ref(f, "eval"), f)
        row.conclusive |= bool(f.get("conclusive", True))
        status = finding_status(f)
        if _STANDING.index(status) < _STANDING.index(row.status):
            row.status = status
        m = f["method"]
        row.scores[m] = max(row.scores.get(m, float("-inf")), float(f["score"]))
        ref = shown_ref(f, "train")
        if ref not in row.train_refs:
            row.train_refs.append(ref)
    return sorted(rows.values(), key=lambda r: (not r.conclusive, -len(r.scores), _rank(r.best), r.check, r.eval_ref))


def methods_in(rows: list[ItemRow], findings: list[FindingRow]) -> list[str]:
    """Method columns: conclusive methods first, each in name order; only methods with findings."""
    conclusive = {f["method"]: bool(f.get("conclusive", True)) for f in findings}
    return sorted({m for r in rows for m in r.scores}, key=lambda m: (not conclusive.get(m, True), m))


def counts_line(rows: list[ItemRow], findings: list[FindingRow], shown: int) -> str:
    """What the numbers count, in one sentence (the rows' ``status`` column says which is which)."""
    hit = sum(r.conclusive for r in rows)
    by: dict[str, int] = {}
    for r in rows:
        by[r.status] = by.get(r.status, 0) + 1
    suspected = sum(n for s, n in by.items() if s.startswith("suspected"))
    text = f"{hit} eval item{'s' if hit != 1 else ''} with conclusive findings"
    if suspected:
        state = ", ".join(f"{by[s]} {s.split(': ')[1]}" for s in _STANDING if s.startswith("suspected") and s in by)
        text += f", {suspected} with only suspected findings ({state})"
    if by.get("evidence only"):
        text += f", {by['evidence only']} with evidence-only findings (id, entities: never counted)"
    text += (
        f"; {len(findings)} finding{'s' if len(findings) != 1 else ''} in report.json (the best training "
        f"matches per item and method). One row per eval item and check"
    )
    return text + (f", the first {shown} shown." if shown < len(rows) else ".")

"""A check's verdict from its counts: the one rule, typed, in one place.

Every eval item with findings falls in one class (:class:`ItemCounts`): *conclusive* (a conclusive
method found it), or, with only suspected findings (possible paraphrases, ``evidence.tier =
"suspected"``), *confirmed* (a reviewer confirmed one of them: :mod:`auditor.audit.decisions`),
*unreviewed* (at least one of them has no decision yet) or *dismissed* (a reviewer dismissed every
one). Conclusive and confirmed items are the check's contamination. ``fail_on`` says what counts
against the allowance:

- ``conclusive`` (default): conclusive + confirmed items;
- ``suspected``: also every suspected item a reviewer did not dismiss (the unreviewed ones);
- ``unreviewed``: as ``conclusive``, and any unreviewed item fails the check whatever the allowance
  (the reviewer's loop in CI: fail on what nobody has looked at yet).

A check that could not check everything is ``incomplete``, never ``pass``; an empty eval side too.
"Everything" includes the methods it asked for: one that indexed no eval item or read none of a
training set's records (:func:`auditor.audit.unchecked.not_checked`) leaves the check ``incomplete``.

>>> c = ItemCounts(eval_items=500, conclusive=38, suspected=5, unreviewed=5)
>>> counted(c, "conclusive"), counted(c, "suspected")
(38, 43)
>>> decide(c, allowance=40, fail_on="conclusive"), decide(c, allowance=40, fail_on="suspected")
('pass', 'fail')
>>> decide(c, allowance=40, fail_on="unreviewed")
'fail'
>>> decide(ItemCounts(500, 38, suspected=5, dismissed=5), allowance=40, fail_on="unreviewed")
'pass'
>>> decide(ItemCounts(500, 0), allowance=0, fail_on="conclusive", unchecked=True)
'incomplete'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ..report.kinds import suspected_kinds

#: what counts against a check's allowance (``fail_on`` / ``--fail-on``)
FAIL_ON = ("conclusive", "suspected", "unreviewed")
Verdict = Literal["pass", "fail", "incomplete"]


@dataclass(frozen=True)
class ItemCounts:
    """Eval items of one check by class. ``suspected`` counts every item with only suspected findings
    (``confirmed + unreviewed + dismissed``); the ``confirmed`` ones count as contamination."""

    eval_items: int
    conclusive: int
    confirmed: int = 0
    suspected: int = 0
    unreviewed: int = 0
    dismissed: int = 0

    @property
    def contaminated(self) -> int:
        """Items that are contamination: conclusive, or suspected and confirmed by a reviewer."""
        return self.conclusive + self.confirmed


def counted(counts: ItemCounts, fail_on: str) -> int:
    """Items counted against the allowance under ``fail_on`` (see the module doc)."""
    if fail_on == "suspected":
        return counts.conclusive + counts.suspected - counts.dismissed
    return counts.contaminated


def decide(counts: ItemCounts, allowance: int, fail_on: str, unchecked: bool = False) -> Verdict:
    """``pass`` / ``fail`` / ``incomplete`` for one check.

    ``unchecked``: some records or files were skipped, some eval items no conclusive method covers, or
    a method the check asked for checked nothing (:attr:`~auditor.report.results.NotChecked.incomplete`).
    Raises ValueError for an unknown ``fail_on``.
    """
    if fail_on not in FAIL_ON:
        raise ValueError(f"fail_on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    if counts.eval_items == 0:
        return "incomplete"
    if counted(counts, fail_on) > allowance or (fail_on == "unreviewed" and counts.unreviewed):
        return "fail"
    return "incomplete" if unchecked else "pass"


def combine(verdicts: list[str]) -> Verdict:
    """The run's verdict from its checks' and provenance entries': ``fail`` if any fails, else
    ``incomplete`` if any is, else ``pass``.

    >>> combine(["pass", "incomplete"]), combine(["incomplete", "fail"]), combine([])
    ('incomplete', 'fail', 'pass')
    """
    if "fail" in verdicts:
        return "fail"
    return "incomplete" if "incomplete" in verdicts else "pass"


def unreviewed_kinds(report: Any) -> str:
    """:func:`suspected_kinds` of a report's unreviewed suspected findings (``report.findings`` rows)."""
    return suspected_kinds(
        str(f.get("method"))
        for f in report.findings
        if not f.get("conclusive", True)
        and (f.get("evidence") or {}).get("tier") == "suspected"
        and (f.get("decision") or "unreviewed") == "unreviewed"
    )


def suspected_note(
    counts: ItemCounts, fail_on: str, methods: Iterable[str] = (), report_json: str = "REPORT.json"
) -> str:
    """The check's note on its suspected items: how many, what they are (``methods``: those of its
    suspected findings), how reviewed, whether they count, and the command that reviews them
    (``report_json``: the report's path, when known)."""
    review = ", ".join(
        f"{n} {what}"
        for n, what in (
            (counts.unreviewed, "unreviewed"),
            (counts.confirmed, "confirmed (counted as contamination)"),
            (counts.dismissed, "dismissed"),
        )
        if n
    )
    how = {
        "suspected": "the unreviewed ones count (fail_on = suspected)",
        "unreviewed": "an unreviewed one fails the check (fail_on = unreviewed)",
    }.get(fail_on, "unreviewed ones do not decide the verdict (fail_on = conclusive)")
    return (
        f"{counts.suspected} eval items have only suspected findings ({suspected_kinds(methods)}; listed for "
        f"review): {review}; {how}; review them with: auditor review {report_json}"
    )

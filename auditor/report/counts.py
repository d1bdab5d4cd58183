"""How every rendering states a check's counts: conclusive and suspected apart, review state, allowance.

One phrase, the same in the summary line, the Markdown and HTML tables, JUnit and stdout
(:func:`counts_phrase`): ``"38 conclusive + 6 suspected (6 unreviewed) of 500 eval items,
allowance 0"``. Suspected items (only possible-paraphrase findings) are never folded into a
"contaminated" count unless a reviewer confirmed them or ``fail_on`` counts them, and then the
phrase says how many count and why. A report written before these counts existed reads with its
``contaminated_items`` as conclusive and every suspected item unreviewed.

>>> from auditor.report.results import CheckResult
>>> c = CheckResult(name="c", train=["t"], eval=["e"], methods=["minhash"], eval_items=500,
...                 contaminated_items=38, suspected=5, unreviewed=5, verdict="fail", fail_on="suspected",
...                 counted_items=43, allowance=40)
>>> counts_phrase(c)
'38 conclusive + 5 suspected (5 unreviewed) of 500 eval items; 43 counted (fail_on = suspected), allowance 40'
>>> method_counts(CheckResult(name="c", train=[], eval=[], methods=[], eval_items=9, contaminated_items=0,
...     verdict="pass", items_by_method={"minhash": 43}, conclusive_by_method={"minhash": 38},
...     suspected_by_method={"minhash": 5}), "minhash")
'38 conclusive + 5 suspected'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .results import CheckResult, DecisionsRead, FindingRow

OPEN_SHOWN = 20  # unreviewed suspected items a report lists per check


def conclusive(c: CheckResult) -> int:
    """Eval items a conclusive method found (contaminated ones minus reviewer-confirmed ones)."""
    return c.contaminated_items - c.confirmed


def conclusive_share(c: CheckResult) -> float:
    """:func:`conclusive` as a share of the eval items (0 for none, or for a count that is not a number:
    a report built in code is not validated, and the page must still render it escaped)."""
    n = c.eval_items
    return conclusive(c) / n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 0.0


def unreviewed(c: CheckResult) -> int:
    """Suspected items nobody decided (an older report: all its suspected items)."""
    reviewed = c.unreviewed + c.confirmed + c.dismissed
    return c.unreviewed if reviewed else c.suspected


def counted(c: CheckResult) -> int:
    """Eval items counted against the allowance (an older report: recomputed from its counts)."""
    if c.counted_items or not (c.contaminated_items or c.suspected):
        return c.counted_items
    return c.contaminated_items + (c.suspected - c.confirmed - c.dismissed if c.fail_on == "suspected" else 0)


def review_state(c: CheckResult) -> str:
    """``"6 unreviewed"``, ``"1 confirmed, 3 unreviewed, 2 dismissed"`` ...; "" without suspected items."""
    parts = [(c.confirmed, "confirmed"), (unreviewed(c), "unreviewed"), (c.dismissed, "dismissed")]
    return ", ".join(f"{n} {what}" for n, what in parts if n)


def suspected_cell(c: CheckResult) -> str:
    """A checks table's suspected cell: ``"6 (6 unreviewed)"``."""
    state = review_state(c)
    return f"{c.suspected} ({state})" if state else str(c.suspected)


def counts_phrase(c: CheckResult) -> str:
    """The check's counts in one phrase (see the module doc)."""
    state = review_state(c)
    text = f"{conclusive(c)} conclusive + {c.suspected} suspected{f' ({state})' if state else ''} of {c.eval_items} eval items"
    n = counted(c)
    if c.fail_on == "suspected":
        text += f"; {n} counted (fail_on = suspected)"
    elif c.confirmed:
        text += f"; {n} counted (conclusive + confirmed)"
    if c.fail_on == "unreviewed":
        text += "; fail_on = unreviewed"
    return f"{text}, allowance {c.allowance}"


def method_counts(c: CheckResult, method: str) -> str:
    """Eval items one method found: ``"38 conclusive + 5 suspected"``, ``"41 conclusive"``, ``"4 (evidence
    only)"`` for a method that proves nothing (``id``, ``entities``)."""
    total = c.items_by_method.get(method, 0)
    if method not in c.conclusive_by_method or not isinstance(total, int):  # an older report: one number
        return str(total)
    k, s = c.conclusive_by_method.get(method, 0), c.suspected_by_method.get(method, 0)
    if not k and not s:
        return f"{total} (evidence only)" if total else "0"
    rest = total - k - s
    parts = [f"{k} conclusive", *([f"{s} suspected"] if s else []), *([f"{rest} evidence only"] if rest else [])]
    return " + ".join(parts)


def finding_status(f: FindingRow) -> str:
    """A finding's standing for a reader: ``conclusive``, ``suspected: unreviewed`` / ``confirmed`` /
    ``dismissed``, or ``evidence only`` (``id``, ``entities`` ...)."""
    if f.get("conclusive", True):
        return "conclusive"
    if (f.get("evidence") or {}).get("tier") == "suspected":
        return f"suspected: {f.get('decision') or 'unreviewed'}"
    return "evidence only"


def open_items(findings: Iterable[FindingRow], c: CheckResult) -> list[str]:
    """The eval items of check ``c`` (among a report's ``findings``) with an unreviewed suspected finding and nothing that settles
    them (no conclusive finding, no confirmed one), best score first, named as reports name them."""
    best: dict[tuple, tuple[float, str]] = {}
    settled: set[tuple] = set()
    for f in findings:
        if f.get("check") != c.name:
            continue
        item = (f.get("eval_dataset"), f.get("eval_ordinal"), f.get("eval_id"))
        status = finding_status(f)
        if status in ("conclusive", "suspected: confirmed"):
            settled.add(item)
        elif status == "suspected: unreviewed":
            ref = f.get("eval_ref") or f"{f.get('eval_dataset')} {f.get('eval_id')}"
            score = float(f.get("score", 0))
            if item not in best or score > best[item][0]:
                best[item] = (score, ref)
    ranked = sorted(((s, ref) for item, (s, ref) in best.items() if item not in settled), key=lambda x: (-x[0], x[1]))
    return [ref for _, ref in ranked]


def decisions_line(decisions: DecisionsRead | None) -> str:
    """Which review decisions the run read, in one sentence ("" when it read no file): the file's
    name only (its folder is the reader's; report.json has the path)."""
    if decisions is None or not decisions.file:
        return ""
    name = str(decisions.file).replace("\\", "/").rsplit("/", 1)[-1]
    read, applied = decisions.read, decisions.applied
    if not read:
        return f"Review decisions: none yet ({name}; auditor review writes it)."
    return f"Review decisions: {read} read from {name}, {applied} applied to this report's suspected findings."


def not_checked_lines(c: CheckResult, name: bool = False, incomplete_only: bool = False) -> list[str]:
    """One line per method that checked nothing of check ``c`` (``checks[].not_checked``), methods
    with one reason on one line: ``"not checked: embedding — not selected: the paraphrase tier runs
    only when named (--method embedding); …"``; ``name``: say which check (a run of several);
    ``incomplete_only``: only the methods the check asked for (what makes it incomplete).

    >>> from auditor.report.results import CheckResult, NotChecked
    >>> c = CheckResult(name="c", train=["t"], eval=["e"], methods=["exact"], eval_items=9, contaminated_items=0,
    ...     verdict="incomplete", not_checked=[NotChecked("ngram", "not_run", "not selected"),
    ...     NotChecked("minhash", "not_run", "not selected"),
    ...     NotChecked("exact", "nothing_searched", "read none of its 3 records", dataset="t", incomplete=True)])
    >>> for line in not_checked_lines(c): print(line)
    not checked: ngram, minhash — not selected
    not checked: exact on training set t — read none of its 3 records; asked for, so the check is at best incomplete
    """
    groups: dict[tuple[str, str, bool], list[str]] = {}
    for n in c.not_checked:
        if incomplete_only and not n.incomplete:
            continue
        where = f" on training set {n.dataset}" if n.dataset else ""
        groups.setdefault((where, n.reason, n.incomplete), []).append(n.method)
    check = f" (check {c.name})" if name else ""
    return [
        f"not checked: {', '.join(ms)}{where}{check} — {reason}"
        + ("; asked for, so the check is at best incomplete" if incomplete else "")
        for (where, reason, incomplete), ms in groups.items()
    ]

"""``junit.xml``: the report as JUnit XML for CI dashboards — one ``<testcase>`` per check.

A failing check is a ``<failure>`` whose message names the top findings (eval item, training record,
method, score); an ``incomplete`` check is an ``<error>`` (it could not check everything, which is never
reported as clean). Follows the common (Jenkins / Ant ``junit-10.xsd``) layout: ``<testsuites>`` with
one ``<testsuite name tests failures errors skipped time timestamp>``.

>>> from auditor.report import Report
>>> r = Report("pass", {}, [{"name": "c", "train": ["t"], "eval": ["e"], "methods": ["exact"],
...     "eval_items": 3, "contaminated_items": 0, "verdict": "pass"}], [])
>>> 'tests="1" failures="0" errors="0"' in render_junit(r)
True
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ._items import eval_ref, item_rows, train_ref
from .counts import counts_phrase, finding_status, not_checked_lines
from .model import Report, register_format
from .results import CheckResult, FindingRow
from .review_list import review_junit_note

TOP = 5


def _counts(f: FindingRow, check: CheckResult) -> bool:
    """Does finding ``f`` count against the check (conclusive, confirmed by a reviewer, or an
    unreviewed suspected one under ``fail_on = "suspected"`` / ``"unreviewed"``)?"""
    status = finding_status(f)
    if status in ("conclusive", "suspected: confirmed"):
        return True
    return status == "suspected: unreviewed" and check.fail_on in ("suspected", "unreviewed")


def render_junit(report: Report) -> str:
    """The JUnit XML document as a string."""
    run = report.run
    checks = report.checks
    failures = sum(c.verdict == "fail" for c in checks)
    errors = sum(c.verdict == "incomplete" for c in checks)
    seconds = float(run.seconds or 0)
    root = ET.Element(
        "testsuites",
        name="auditor",
        tests=str(len(checks)),
        failures=str(failures),
        errors=str(errors),
        time=f"{seconds:.3f}",
    )
    suite = ET.SubElement(
        root,
        "testsuite",
        name="auditor",
        tests=str(len(checks)),
        failures=str(failures),
        errors=str(errors),
        skipped="0",
        time=f"{seconds:.3f}",
        timestamp=(run.started or "")[:19] or "1970-01-01T00:00:00",
        hostname="localhost",
        id="0",
        package="auditor",
    )
    ET.SubElement(suite, "properties")
    for c in checks:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"auditor.{'+'.join(c.eval)}",
            name=c.name,
            time=f"{seconds / max(1, len(checks)):.3f}",
        )
        summary = f"{counts_phrase(c)}; train: {', '.join(c.train)}; eval: {', '.join(c.eval)}"
        if c.verdict == "fail":
            mine = [f for f in report.findings if f["check"] == c.name and _counts(f, c)]
            rows = item_rows(mine)
            # what counts first (conclusive, confirmed), then the unreviewed suspected items that
            # count under fail_on = suspected / unreviewed: each kind has its TOP entries
            settled = [r for r in rows if r.status in ("conclusive", "suspected: confirmed")]
            waiting = [r for r in rows if r.status == "suspected: unreviewed"]
            items = settled[:TOP] + waiting[:TOP]
            names = "; ".join(  # one entry per eval item, its status, the methods that found it
                f"{r.best['eval_dataset']}#{r.best['eval_id']}{_file(r.best, 'eval')} in "
                f"{r.best['train_dataset']}#{r.best['train_id']}{_file(r.best, 'train')} "
                f"({r.status}: {', '.join(f'{m} {s:.2f}' for m, s in r.scores.items())})"
                for r in items
            )
            more = [
                f"{len(x) - TOP} more {what}"
                for x, what in ((settled, "counted"), (waiting, "unreviewed"))
                if len(x) > TOP
            ]
            message = f"{summary}. Top findings: {names}" + (f" (and {', '.join(more)})" if more else "")
            el = ET.SubElement(case, "failure", type="contamination", message=message)
            el.text = "\n".join(  # the same items in the same order, each finding's records
                f"{r.best['eval_dataset']}#{r.best['eval_id']} [{r.status}] {f['method']} score "
                f"{float(f['score']):.3f}: eval {f['eval_source']} in train {f['train_source']}"
                + (f" (review id {f['review_id']})" if f.get("review_id") else "")
                for r in items
                for f in _of_row(mine, r.best)
            )
        elif c.verdict == "incomplete":
            why = not_checked_lines(c, incomplete_only=True) + c.notes  # methods asked for that checked nothing too
            el = ET.SubElement(
                case,
                "error",
                type="incomplete",
                message=f"{summary}; not everything was checked: " + "; ".join(why),
            )
            el.text = "\n".join(why)
        note = review_junit_note(report, c.name)
        if note:  # suspected findings: a note on the test case, whatever its verdict
            ET.SubElement(case, "system-out").text = note
    ET.SubElement(suite, "system-out").text = report.summary_line()
    ET.SubElement(suite, "system-err").text = ""
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _of_row(findings: list[FindingRow], best: FindingRow) -> list[FindingRow]:
    """The counted findings of ``best``'s eval item, best score first (one per method: its best)."""
    key = (best["eval_dataset"], best.get("eval_ordinal"), best["eval_id"])
    seen: dict[str, FindingRow] = {}
    for f in sorted(findings, key=lambda f: -float(f["score"])):
        if (f["eval_dataset"], f.get("eval_ordinal"), f["eval_id"]) == key:
            seen.setdefault(f["method"], f)
    return list(seen.values())


def _file(f: FindingRow, side: str) -> str:
    """`` (I3.json)`` when the finding's ``*_ref`` names the record's file (ids repeat across files)."""
    if side == "eval":
        plain, ref = f"{f['eval_dataset']} {f['eval_id']}", eval_ref(f)
    else:
        plain, ref = f"{f['train_dataset']} {f['train_id']}", train_ref(f)
    return ref[len(plain) :] if ref.startswith(plain) else ""


register_format("junit", render_junit)

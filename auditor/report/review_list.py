"""The review list: *suspected* findings (possible paraphrases, partial copies …), ranked, with both texts side by side.

Suspected findings (``conclusive = false``, ``evidence.tier = "suspected"``; see
:mod:`auditor.methods.embedding.decision`) do not decide the verdict unless ``fail_on = "suspected"`` or
``"unreviewed"`` (or a reviewer confirmed them: :mod:`auditor.audit.decisions`), but they
are never dropped: ``report.json`` keeps them in ``findings`` and counts them per check
(``suspected``), and every rendering lists them for a reviewer. This module is self-contained so that
each renderer adds it with one call: :func:`review_markdown` (report.md), :func:`review_html`
(report.html) and :func:`review_junit_note` (junit.xml). Every value printed is escaped for its
format.

>>> from auditor.report import Report
>>> f = {"check": "c", "eval_dataset": "e", "eval_id": "1", "eval_ordinal": 0, "eval_source": "e#0",
...      "train_dataset": "t", "train_id": "x|y", "train_ordinal": 3, "train_source": "t:4",
...      "method": "embedding", "score": 1.6, "conclusive": False,
...      "evidence": {"tier": "suspected", "cosine": 0.8, "align_f1": 0.7}}
>>> r = Report("pass", {}, [], [f], texts={"e#0": "a <b>", "t#3": "c|d"})
>>> [x["train_id"] for x in review_items(r)]
['x|y']
>>> "c\\\\|d" in review_markdown(r)[-2], "a &lt;b&gt;" in review_html(r)
(True, True)
"""

from __future__ import annotations

from html import escape

from ._items import shown_ref
from ._md import md as _md
from .model import Report
from .proof import evidence_summary, snippet_html, snippet_markdown, where
from .results import FindingRow

REVIEW_SHOWN = 50
SNIPPET = 400


def review_items(report: Report, check: str | None = None) -> list[FindingRow]:
    """The suspected findings of ``report`` (of one check when given), best score first."""
    fs = [
        f
        for f in report.findings
        if not f.get("conclusive", True)
        and (f.get("evidence") or {}).get("tier") == "suspected"
        and (check is None or f.get("check") == check)
    ]
    return sorted(fs, key=lambda f: (-float(f["score"]), f["check"], f["eval_dataset"], f.get("eval_ordinal", 0)))


def _kinds(items: list[FindingRow]) -> str:
    """What the listed findings are, by method (:func:`auditor.report.kinds.suspected_kinds`)."""
    from .kinds import suspected_kinds

    return suspected_kinds(str(f.get("method")) for f in items)


def _evidence(f: FindingRow) -> str:
    return evidence_summary(f)


def _decision(f: FindingRow) -> str:
    """``unreviewed (3f2a9c01be)``: the finding's decision (auditor.audit.decisions) and its review id."""
    rid = f.get("review_id")
    return f"{f.get('decision') or 'unreviewed'}" + (f" ({rid})" if rid else "")


def review_markdown(report: Report) -> list[str]:
    """Lines of the report.md section ``Suspected findings (review list)``; [] when there are none."""
    items = review_items(report)
    if not items:
        return []
    lines = [
        f"## Suspected findings (review list): {len(items)}",
        "",
        f"Findings below the conclusive bar ({_kinds(items)}). Unreviewed ones do not decide the verdict unless "
        '`fail_on = "suspected"` or `"unreviewed"`; confirmed ones count as contamination, dismissed ones '
        "never. Decide them with `auditor review report.json` (the decisions file is read by every later "
        "run). Best first; both texts side by side.",
        "",
        "| # | check | score | decision (review id) | eval item | training record | evidence |",
        "|---:|---|---:|---|---|---|---|",
    ]
    for n, f in enumerate(items[:REVIEW_SHOWN], 1):
        ev, tr = snippet_markdown(report.texts, f, SNIPPET)
        spot = f" ({_md(where(f))})" if where(f) else ""
        lines.append(
            f"| {n} | {_md(f['check'])} | {float(f['score']):.3f} | {_md(_decision(f))} | "
            f"{_md(shown_ref(f, 'eval'))}: {ev} | "
            f"{_md(shown_ref(f, 'train'))}{spot}: {tr} | {_md(_evidence(f))} |"
        )
    if len(items) > REVIEW_SHOWN:
        lines.append(f"\n{len(items) - REVIEW_SHOWN} more in report.json (`findings[].conclusive = false`).")
    lines.append("")
    return lines


def review_html(report: Report) -> str:
    """The report.html section body (a table with both texts side by side); "" when there are none."""
    items = review_items(report)
    if not items:
        return ""
    rows = []
    for n, f in enumerate(items[:REVIEW_SHOWN], 1):
        ev, tr = snippet_html(report.texts, f, SNIPPET)
        spot = f" <code>{escape(where(f))}</code>" if where(f) else ""
        rows.append(
            f"<tr><td class='n'>{n}</td><td>{escape(str(f['check']))}</td>"
            f"<td class='n'>{float(f['score']):.3f}</td>"
            f"<td class='decision d-{escape(str(f.get('decision') or 'unreviewed'))}'>{escape(_decision(f))}</td>"
            f"<td><b>{escape(shown_ref(f, 'eval'))}</b><br>{ev}</td>"
            f"<td><b>{escape(shown_ref(f, 'train'))}</b>{spot}<br>{tr}</td>"
            f"<td class='ev'>{escape(_evidence(f))}</td></tr>"
        )
    more = f"<p class='muted'>{len(items) - REVIEW_SHOWN} more in report.json.</p>" if len(items) > REVIEW_SHOWN else ""
    return (
        f"<p class='muted'>{len(items)} findings below the conclusive bar ({escape(_kinds(items))}), best first. "
        "Unreviewed "
        'ones do not decide the verdict unless <code>fail_on = "suspected"</code> or <code>"unreviewed"</code>; '
        "confirmed ones count as contamination, dismissed ones never. Decide them with "
        "<code>auditor review report.json</code>.</p>"
        "<table class='sortable' id='review'><thead><tr><th>#</th><th>check</th><th>score</th>"
        "<th>decision (review id)</th><th>eval item</th>"
        f"<th>training record</th><th>evidence</th></tr></thead><tbody>{''.join(rows)}</tbody></table>{more}"
    )


def review_junit_note(report: Report, check: str) -> str:
    """A one-paragraph note for the check's JUnit ``<system-out>``; "" when it has no suspected finding."""
    items = review_items(report, check)
    if not items:
        return ""
    top = "; ".join(
        f"{f['eval_dataset']}#{f['eval_id']} ~ {f['train_dataset']}#{f['train_id']} ({float(f['score']):.2f}, "
        f"{_decision(f)})"
        for f in items[:5]
    )
    by: dict[str, int] = {}
    for f in items:
        by[f.get("decision") or "unreviewed"] = by.get(f.get("decision") or "unreviewed", 0) + 1
    state = ", ".join(f"{by[k]} {k}" for k in ("unreviewed", "confirmed", "dismissed") if k in by)
    return (
        f"{len(items)} suspected findings ({state}; {_kinds(items)}; review list in report.md/html; "
        f"decide them with auditor review): {top}"
    )

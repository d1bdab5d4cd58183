"""Markdown rendering of a :class:`~auditor.report.Report` for a reviewer.

Every value taken from the data (names, ids, paths, texts, notes) goes through
:func:`~auditor.report._md.md`, so none can become markup in a Markdown viewer. Sections: the
verdict, checks, datasets, any further report section (``error_types``, ``clean``, ``provenance``,
or one a later stage adds: see :data:`SECTIONS`), and the top findings, one row per eval item with
the methods as columns, then the texts of the first items side by side.

>>> from auditor.report import Report
>>> r = Report("fail", {}, [], [{"check": "c", "eval_dataset": "e", "eval_id": "1\\n# PASS", "eval_source": "e#0",
...     "train_dataset": "t", "train_id": "<b>9</b>", "train_source": "t:1", "method": "exact", "score": 1.0,
...     "conclusive": True, "evidence": {}, "eval_ordinal": 0, "train_ordinal": 0}])
>>> text = render_markdown(r)
>>> "\\n# PASS" in text, "<b>" in text, "| c | e 1\\\\u000a\\\\# PASS | conclusive | t &lt;b&gt;9&lt;/b&gt; | 1.000 |" in text
(False, False, True)
"""

from __future__ import annotations

from typing import Any

from . import counts as tally
from ._errortypes import DOCS, INTRO, MEANINGS
from ._items import ItemRow, counts_line, item_rows, methods_in
from ._md import md
from .model import Report, register_format
from .proof import evidence_summary, pair_markdown
from .provenance_text import render_provenance
from .results import CleanSummary
from .review_list import review_markdown

TOP_ITEMS = 30
TEXT_ITEMS = 10  # evidence-only items shown with their texts (conclusive, suspected: all)
PROOF_ITEMS = 1000  # conclusive and suspected items listed, each with its texts, at most
SNIPPET = 600


def _checks(report: Report) -> list[str]:
    lines = [
        "## Checks",
        "",
        "| check | train | eval | methods | eval items | conclusive | suspected | counted | allowance | verdict |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for c in report.checks:
        lines.append(
            f"| {md(c.name)} | {md(', '.join(c.train))} | {md(', '.join(c.eval))} | "
            f"{md(', '.join(c.methods))} | {md(c.eval_items)} | {md(tally.conclusive(c))} "
            f"({100 * tally.conclusive_share(c):.1f}%) | {md(tally.suspected_cell(c))} | "
            f"{md(tally.counted(c))} (fail\\_on {md(c.fail_on)}) | {md(c.allowance)} | **{md(c.verdict)}** |"
        )
    lines.append("")
    if tally.decisions_line(report.decisions):
        lines += [md(tally.decisions_line(report.decisions)), ""]
    for c in report.checks:
        lines += [f"### Check {md(c.name)}", "", f"{md(tally.counts_phrase(c))}: **{md(c.verdict)}**.", ""]
        by_m = c.items_by_method
        if by_m:
            lines.append(
                "Eval items with findings, by method: "
                + ", ".join(f"{md(m)} {md(tally.method_counts(c, m))}" for m in by_m)
                + " (only conclusive ones count unless `fail_on` says otherwise; `id` and `entities` findings "
                "are evidence only and never count)."
            )
            lines.append("")
        open_items = tally.open_items(report.findings, c)
        if open_items:
            lines.append(
                f"Suspected eval items nobody has reviewed ({len(open_items)}; `auditor review` decides them):"
            )
            lines += [f"- {md(ref)}" for ref in open_items[: tally.OPEN_SHOWN]]
            if len(open_items) > tally.OPEN_SHOWN:
                lines.append(f"- … {len(open_items) - tally.OPEN_SHOWN} more (report.json: `findings[].decision`)")
            lines.append("")
        for ms in c.method_stats:  # an index's stats(): method-specific keys
            if ms.get("eval_not_indexed"):
                reasons = "; ".join(f"{md(r)}: {md(n)}" for r, n in (ms.get("not_indexed_reasons") or {}).items())
                total = ms.get("eval_items", c.eval_items)
                lines.append(
                    f"- {md(ms.get('method', ''))} indexed {md(total - ms['eval_not_indexed'])} of {md(total)} eval "
                    f"items; not indexed {md(ms['eval_not_indexed'])} ({reasons})."
                )
        lines += [f"- {md(line)}" for line in tally.not_checked_lines(c)]
        for note in c.notes:
            lines.append(f"- {md(note)}")
        lines.append("")
    return lines


def _datasets(report: Report) -> list[str]:
    lines = [
        "## Datasets",
        "",
        "| dataset | role | records | skipped | split | records sha256 |",
        "|---|---|---:|---:|---|---|",
    ]
    for name, d in report.datasets.items():
        lines.append(
            f"| {md(name)} | {md(d.role)} | {md(d.records)} | {md(d.skipped)} | "
            f"{md(d.split or '')} | {md(str(d.sha256 or '')[:16])} |"
        )
        for reason, n in d.skip_reasons.items():
            lines.append(f"|  | skipped: {md(reason)} | | {md(n)} | | |")
        for sf in d.skipped_files:
            lines.append(f"|  | file not read: {md(sf['file'])}: {md(sf['reason'])} | | | | |")
        if d.duplicate_ids:
            lines.append(f"|  | duplicate ids in a file (reported, all checked) | {md(d.duplicate_ids)} | | | |")
        if d.ids_in_several_files:
            lines.append(
                f"|  | ids used in several files (named with their file) | {md(d.ids_in_several_files)} | | | |"
            )
    return [*lines, ""]


def _error_types(value: Any) -> list[str]:
    """``error_types``: one table, datasets × labels."""
    if not isinstance(value, dict) or not value:
        return []
    labels = sorted({lb for counts in value.values() if isinstance(counts, dict) for lb in counts})
    if not labels:
        return ["## Error types", "", "No tool-use errors labelled.", ""]
    lines = [
        "## Error types",
        "",
        f"{INTRO} Rules: `auditor/audit/errortypes.py`; every label: {DOCS} in the auditor repository.",
        "",
        "| dataset | " + " | ".join(md(lb) for lb in labels) + " |",
        "|---|" + "---:|" * len(labels),
    ]
    for name, counts in value.items():
        counts = counts if isinstance(counts, dict) else {}
        lines.append(f"| {md(name)} | " + " | ".join(md(counts.get(lb, 0)) for lb in labels) + " |")
    lines.append("")
    lines += [f"- `{lb}`: {md(MEANINGS[lb])}" for lb in labels if lb in MEANINGS]
    return [*lines, ""]


def _clean(value: CleanSummary) -> list[str]:
    """``clean``: where the cleaned training data went, and a row per file written."""
    lines = ["## Cleaned training data", ""]
    lines.append(f"Folder {md(value.dir)}; removed records listed in {md(value.removed_file)}.")
    if value.manifest:
        lines.append(f"Re-audit with: auditor verify {md(value.manifest)}")
    lines += [
        "",
        "| dataset | kept | removed | not written (skipped) | file | written as | format | records |",
        "|---|---:|---:|---:|---|---|---|---:|",
    ]
    for name, d in value.datasets.items():
        files = d.get("files") or [{}]
        for i, f in enumerate(files):
            head = (
                f"| {md(name)} | {md(d.get('kept', ''))} | {md(d.get('removed', ''))} | "
                f"{md(d.get('not_written_skipped', 0))} |"
                if i == 0
                else "| | | | |"
            )
            lines.append(
                f"{head} {md(f.get('source', ''))} | {md(f.get('written', ''))} | {md(f.get('format', ''))} | "
                f"{md(f.get('records', ''))} |"
            )
        for unread in d.get("not_written_files") or []:
            lines.append(f"| | | | | {md(unread)} | not written (unreadable) | | |")
    return [*lines, ""]


def _findings(report: Report) -> list[str]:
    findings = report.findings
    rows = item_rows(findings)
    proven = sum(1 for r in rows if r.proves)  # every conclusive and suspected item, with its texts
    shown = rows[: max(TOP_ITEMS, min(proven, PROOF_ITEMS))]
    lines = ["## Top findings", ""]
    if not rows:
        return [*lines, "No findings.", ""]
    methods = methods_in(rows, findings)
    conclusive = {f["method"]: bool(f.get("conclusive", True)) for f in findings}
    head = [f"{md(m)}{'' if conclusive.get(m, True) else ' (evidence)'}" for m in methods]
    lines += [
        counts_line(rows, findings, len(shown)) + " Method columns: the best score (blank: not found).",
        "",
        "| check | eval item | status | training records | " + " | ".join(head) + " |",
        "|---|---|---|---|" + "---:|" * len(methods),
    ]
    for r in shown:
        train = ", ".join(md(t) for t in r.train_refs[:3]) + (
            f" (+{len(r.train_refs) - 3})" if len(r.train_refs) > 3 else ""
        )
        scores = " | ".join(f"{r.scores[m]:.3f}" if m in r.scores else "" for m in methods)
        lines.append(f"| {md(r.check)} | {md(r.eval_ref)} | {md(r.status)} | {train} | {scores} |")
    lines.append("")
    # conclusive and suspected items first (item_rows), all of them; then the first evidence-only ones
    texts = [r for i, r in enumerate(shown) if r.proves or i < TEXT_ITEMS]
    if texts:
        lines += [f"### Texts of {len(texts)} items (every conclusive and suspected one, first)", ""]
    for r in texts:
        lines += _finding_texts(report, r)
    return lines


def _finding_texts(report: Report, r: ItemRow) -> list[str]:
    """One item's proof: its line, both texts side by side (:func:`auditor.report.proof.pair_markdown`:
    the training side is the string that matched, shared runs in bold), sources, evidence."""
    f = r.best
    lines = [
        f"#### {md(r.eval_ref)} in {md(r.train_refs[0])} ({md(f['method'])}"
        f"{'' if f.get('conclusive', True) else ', evidence only'}, score {float(f['score']):.3f})",
        "",
        *pair_markdown(report.texts, f, SNIPPET),
        f"| {md(f.get('eval_source', ''))} | {md(f.get('train_source', ''))} |",
        "",
    ]
    detail = evidence_summary(f)
    if detail:
        lines += [f"Evidence: {md(detail[:SNIPPET])}", ""]
    return lines


def _sections(report: Report) -> list[str]:
    """The report's typed sections after the datasets, as Markdown lines (a section of another
    version, in :attr:`~auditor.report.model.Report.extra`, is left to report.json and report.html)."""
    lines = _error_types(report.error_types) if report.error_types is not None else []
    if report.clean is not None:
        lines += _clean(report.clean)
    if report.provenance:
        lines += render_provenance(report.provenance)
    return lines


def render_markdown(report: Report) -> str:
    lines = [f"# Contamination audit: **{md(report.verdict.upper())}**", ""]
    run = report.run
    if run.to_dict():  # a report written by hand may have no run section
        version, engine, started, seconds = run.header()
        lines += [f"auditor {md(version)}, engine {md(engine)}, started {md(started)}, {md(seconds)} s.", ""]
    lines += _checks(report) + _datasets(report)
    lines += _sections(report)
    lines += _findings(report)
    lines += review_markdown(report)
    return "\n".join(lines) + "\n"


register_format("md", render_markdown)

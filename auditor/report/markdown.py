"""Markdown rendering of a :class:`~auditor.report.Report` for a reviewer."""

from __future__ import annotations

from typing import Any

from .provenance import render_provenance

TOP_FINDINGS = 20
SNIPPET = 600


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SNIPPET else text[:SNIPPET] + " …"


def render_markdown(report) -> str:
    lines = [f"# Contamination audit: **{report.verdict.upper()}**", ""]
    run = report.run
    if run:
        lines += [
            f"auditor {run.get('version', '?')}, engine `{run.get('engine', '?')}`, "
            f"started {run.get('started', '?')}, {run.get('seconds', '?')} s.",
            "",
        ]
    lines += [
        "## Checks",
        "",
        "| check | train | eval | methods | eval items | contaminated | allowance | verdict |",
        "|---|---|---|---|---:|---:|---:|---|",
    ]
    for c in report.checks:
        lines.append(
            f"| {_cell(c['name'])} | {_cell(', '.join(c['train']))} | {_cell(', '.join(c['eval']))} | "
            f"{_cell(', '.join(c['methods']))} | {c['eval_items']} | {c['contaminated_items']} "
            f"({100 * c.get('contaminated_share', 0):.1f}%) | {c.get('allowance', 0)} | **{c['verdict']}** |"
        )
    lines.append("")
    for c in report.checks:
        lines += [f"### {c['name']}", ""]
        by_m = c.get("items_by_method") or {}
        if by_m:
            lines.append(
                "Eval items with findings, by method: "
                + ", ".join(f"`{m}` {n}" for m, n in by_m.items())
                + " (`id` findings are evidence only and never count as contamination)."
            )
        for ms in c.get("method_stats", []):
            if ms.get("eval_not_indexed"):
                reasons = "; ".join(f"{r}: {n}" for r, n in ms["not_indexed_reasons"].items())
                lines.append(f"- `{ms['method']}` did not index {ms['eval_not_indexed']} eval items ({reasons}).")
        for note in c.get("notes", []):
            lines.append(f"- {note}")
        lines.append("")
    lines += [
        "## Datasets",
        "",
        "| dataset | role | records | skipped | split | sha256 |",
        "|---|---|---:|---:|---|---|",
    ]
    for name, d in report.datasets.items():
        lines.append(
            f"| {_cell(name)} | {d.get('role', '')} | {d.get('records', '')} | {d.get('skipped', 0)} | "
            f"{_cell(d.get('split') or '')} | `{str(d.get('sha256', ''))[:16]}` |"
        )
        for reason, n in (d.get("skip_reasons") or {}).items():
            lines.append(f"|  | skipped: {_cell(reason)} | | {n} | | |")
        for sf in d.get("skipped_files") or []:
            lines.append(f"|  | file not read: `{_cell(sf['file'])}`: {_cell(sf['reason'])} | | | | |")
        if d.get("duplicate_ids"):
            lines.append(f"|  | duplicate ids (reported, all checked) | {d['duplicate_ids']} | | | |")
    lines.append("")
    findings = report.findings
    lines += [f"## Top findings ({min(len(findings), TOP_FINDINGS)} of {len(findings)})", ""]
    if not findings:
        lines.append("No findings.")
    for f in findings[:TOP_FINDINGS]:
        tag = "" if f.get("conclusive", True) else " (evidence only)"
        lines += [
            f"### `{f['method']}`{tag} score {f['score']:.3f} — eval `{f['eval_dataset']}` #{f['eval_id']} "
            f"in train `{f['train_dataset']}` #{f['train_id']}",
            "",
            "| eval item | training record |",
            "|---|---|",
        ]
        ev = report.texts.get(f"{f['eval_dataset']}#{f.get('eval_ordinal', '')}", "(text not kept)")
        tr = report.texts.get(f"{f['train_dataset']}#{f.get('train_ordinal', '')}", "(text not kept)")
        lines.append(f"| {_cell(_snippet(ev))} | {_cell(_snippet(tr))} |")
        lines.append(f"| `{_cell(f['eval_source'])}` | `{_cell(f['train_source'])}` |")
        ev_detail = ", ".join(f"{k}={v}" for k, v in (f.get("evidence") or {}).items())
        if ev_detail:
            lines.append(f"\nEvidence: {_cell(ev_detail)}")
        lines.append("")
    lines += render_provenance(report.extra.get("provenance") or [])
    return "\n".join(lines) + "\n"

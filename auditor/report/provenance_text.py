"""Provenance in words: the Markdown section and the split statement for a paper.

Both read only a report's ``provenance`` entries (see :mod:`auditor.audit.attribution`), so a statement can
be printed again from a saved ``report.json``.

>>> entry = {"name": "v", "derived": ["toolbench_v"], "sources": ["stb"], "records_total": 3,
...          "by_split": {"test": 1}, "source_items_by_split": {"test": 1}, "held_out_splits": ["test"],
...          "unattributed": 2, "conflicts": 0, "held_out_records": 1, "allowance": 0, "verdict": "fail",
...          "records": [{"how": "both", "source_split": "test", "source_dataset": "stb", "source_id": "7",
...                       "held_out": True}]}
>>> print(statement(entry))
Of the 3 records of toolbench_v, 0 trace to a training or other non-held-out split and 1 (33.3%) to the held-out split 'test' (1 source item: stb 7); 2 (66.7%) could not be attributed to any source item of stb. Verdict: FAIL (allowed held-out records: 0).
"""

from __future__ import annotations

from typing import Any

from ._md import md
from .results import ProvenanceResult

BAR = 30
LISTED = 30


def _pct(n: int, total: int) -> str:
    return f"{100 * n / total:.1f}%" if total else "0.0%"


def _held_ids(entry: ProvenanceResult, split: str, limit: int = 10) -> list[str]:
    seen: dict[str, None] = {}
    for r in entry.records:
        if r.get("source_split") == split:
            seen.setdefault(r.get("source_ref") or f"{r['source_dataset']} {r['source_id']}", None)
    ids = list(seen)
    return ids[:limit] + ([f"… {len(ids) - limit} more"] if len(ids) > limit else [])


def statement(entry: ProvenanceResult | dict[str, Any]) -> str:
    """One paragraph for a paper: how many derived records trace to which split, with the numbers
    (``entry`` as the report holds it, or its JSON object from ``report.json``)."""
    if isinstance(entry, dict):
        entry = ProvenanceResult.from_dict(entry)
    total = entry.records_total
    held = set(entry.held_out_splits)
    by_split = entry.by_split
    items = entry.source_items_by_split
    clean = {s: n for s, n in by_split.items() if s not in held}
    clean_n = sum(clean.values())
    clean_txt = ", ".join(f"{n} to split '{s}'" for s, n in clean.items())
    parts = [
        f"Of the {total} records of {', '.join(entry.derived)}, {clean_n} trace to a training or other "
        f"non-held-out split" + (f" ({clean_txt})" if clean_txt else "")
    ]
    hit = [s for s in sorted(held) if by_split.get(s)]
    for split in hit:
        n, k = by_split[split], items.get(split, 0)
        parts.append(
            f"{n} ({_pct(n, total)}) to the held-out split '{split}' ({k} source item"
            f"{'s' if k != 1 else ''}: {', '.join(_held_ids(entry, split))})"
        )
    if not hit:
        names = ", ".join(f"'{s}'" for s in sorted(held))
        parts.append(f"none to the held-out split{'s' if len(held) != 1 else ''} {names}")
    text = " and ".join(parts) + ";"
    unattributed = entry.unattributed
    text += (
        f" {unattributed} ({_pct(unattributed, total)}) could not be attributed to any source item of "
        f"{', '.join(entry.sources)}."
    )
    if entry.ambiguous:
        text += (
            f" {entry.ambiguous} attributed record{'s' if entry.ambiguous != 1 else ''} match an item of "
            "another split equally well (counted under the held-out split when one is)."
        )
    if entry.conflicts:
        text += (
            f" {entry.conflicts} record{'s' if entry.conflicts != 1 else ''} carry an id naming one "
            "source item while the content matches another."
        )
    if entry.methods:  # what attributed them: a check run with other methods may count other items
        text += f" Attributed by: {', '.join(entry.methods)}."
    text += f" Verdict: {entry.verdict.upper()} (allowed held-out records: {entry.allowance})."
    return text


def _derived(r: dict[str, Any]) -> str:
    return r.get("derived_ref") or f"{r['derived_dataset']} {r['derived_id']}"


def _source(r: dict[str, Any]) -> str:
    return r.get("source_ref") or f"{r['source_dataset']} {r['source_id']}"


def _cell(text: Any) -> str:
    return md(text)


def _bar(n: int, total: int) -> str:
    filled = round(BAR * n / total) if total else 0
    return "█" * filled + "░" * (BAR - filled)


def render_provenance(entries: list[ProvenanceResult]) -> list[str]:
    """Markdown lines of the provenance section (empty when there is none)."""
    if not entries:
        return []
    lines = ["## Provenance", ""]
    for e in entries:
        total = e.records_total
        lines += [
            f"### {_cell(e.name)}: **{_cell(e.verdict)}**",
            "",
            f"Derived: {_cell(', '.join(e.derived))}; sources: {_cell(', '.join(e.sources))}; "
            f"held-out splits: {_cell(', '.join(e.held_out_splits))}; methods: "
            f"{_cell(', '.join(e.methods))}.",
            "",
            _cell(statement(e)),
            "",
            "| source split | records | share | |",
            "|---|---:|---:|---|",
        ]
        rows = list(e.by_split.items()) + [("(unattributed)", e.unattributed)]
        held = set(e.held_out_splits)
        for split, n in rows:
            tag = " (held out)" if split in held else ""
            lines.append(f"| {_cell(split)}{tag} | {_cell(n)} | {_pct(n, total)} | `{_bar(n, total)}` |")
        lines.append("")
        if len(e.per_dataset) > 1:
            lines += ["| derived dataset | records | by split | unattributed | conflicts |", "|---|---:|---|---:|---:|"]
            for name, d in e.per_dataset.items():
                split_txt = ", ".join(f"{s} {n}" for s, n in d["by_split"].items()) or "—"
                lines.append(
                    f"| {_cell(name)} | {_cell(d['records'])} | {_cell(split_txt)} | {_cell(d['unattributed'])} | "
                    f"{_cell(d['conflicts'])} |"
                )
            lines.append("")
        for title, keep in (
            ("Records traced to a held-out split", lambda r: r.get("held_out")),
            ("Conflicts (id names one item, content matches another)", lambda r: r.get("how") == "conflicting"),
        ):
            chosen = [r for r in e.records if keep(r)]
            if not chosen:
                continue
            lines += [
                f"#### {title} ({len(chosen)})",
                "",
                "| derived record | source | split | how | score | confidence | id names |",
                "|---|---|---|---|---:|---:|---|",
            ]
            for r in chosen[:LISTED]:
                id_names = (
                    f"{r.get('id_source_dataset')} {r.get('id_source_id')} ({r.get('id_source_split')})"
                    if r.get("how") == "conflicting"
                    else ""
                )
                lines.append(
                    f"| {_cell(_derived(r))} | {_cell(_source(r))} | {_cell(r['source_split'])} | "
                    f"{_cell(r['how'])} | {r['score']:.3f} | {r['confidence']:.2f} | {_cell(id_names)} |"
                )
            if len(chosen) > LISTED:
                lines.append(f"\n… {len(chosen) - LISTED} more in report.json.")
            lines.append("")
        unattributed = [r for r in e.records if r.get("how") == "unattributed"]
        if unattributed:
            shown = ", ".join(_derived(r) for r in unattributed[:LISTED])
            more = f" … and {len(unattributed) - LISTED} more (report.json)" if len(unattributed) > LISTED else ""
            lines += [f"Unattributed ({len(unattributed)}): {_cell(shown)}{more}.", ""]
        for note in e.notes:
            lines.append(f"- {_cell(note)}")
        if e.notes:
            lines.append("")
    return lines

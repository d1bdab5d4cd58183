"""``report.html``: one self-contained page for a reviewer (inline CSS, inline SVG, a few lines of inline
JavaScript for sortable tables; nothing is fetched at view time).

Sections: the verdict and one-line summary; the checks table and one table per check (methods,
coverage, notes); plots — the score distribution per method with its threshold marked, the training
× eval contamination matrix (when a report has several datasets on a side), and the contaminated
share per eval subset (the eval record's split or group, e.g. StableToolBench ``G1_instruction`` …);
the datasets; any further report section (``provenance``, ``clean`` …) rendered generically; and the
top findings with eval and training text side by side, the shared word spans highlighted.

>>> from auditor.report import Report
>>> r = Report("fail", {}, [], [{"check": "c", "eval_dataset": "e", "eval_id": "1", "eval_source": "e#0",
...     "train_dataset": "t", "train_id": "9", "train_source": "t:1", "method": "exact", "score": 1.0,
...     "conclusive": True, "evidence": {}, "eval_ordinal": 0, "train_ordinal": 0}],
...     texts={"e#0": "book a flight to Rome", "t#0": "User: Book a flight to Rome please"})
>>> page = render_html(r)
>>> "<mark>Book a flight to Rome</mark>" in page and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
True
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from . import _svg
from . import counts as tally
from ._errortypes import DOCS, INTRO, MEANINGS
from ._html import CSS, JS, _e, _path, _table, status_html
from ._items import ItemRow, counts_line, item_rows, methods_in
from .model import Report, register_format
from .proof import evidence_summary, pair_html
from .provenance_text import statement
from .results import CheckResult, CleanSummary, ProvenanceResult
from .review_list import review_html

TOP_ITEMS = 50  # rows of the findings table (one per eval item and check)
TEXT_ITEMS = 12  # evidence-only items shown with their texts side by side (conclusive, suspected: all)
PROOF_ITEMS = 1000  # conclusive and suspected items listed, each with its proof, at most
SHOWN_CHARS = 3000


def _thresholds(checks: list[CheckResult]) -> dict[str, float]:
    """Each method's threshold as the report states it: its ``threshold`` parameter, else its
    ``fixed_threshold`` (:attr:`~auditor.methods.base.Index.fixed_threshold`, which the audit writes
    into the method's stats); the first check naming one wins. Read from the report alone: rendering
    needs no detection method."""
    out: dict[str, float] = {}
    for c in checks:
        for ms in c.method_stats:
            thr = (ms.get("params") or {}).get("threshold", ms.get("fixed_threshold"))
            if isinstance(thr, (int, float)) and not isinstance(thr, bool) and ms.get("method") not in out:
                out[ms["method"]] = float(thr)
    return out


def plots_html(report: Report) -> str:
    """The plots (score histograms, contamination matrix, subset bars) as an HTML fragment, e.g. for a notebook."""
    parts = []
    scores: dict[str, list[float]] = defaultdict(list)
    for f in report.findings:
        scores[f["method"]].append(float(f["score"]))
    thr = _thresholds(report.checks)
    methods = sorted(scores)  # only methods with findings: an empty histogram says nothing
    figs = [_svg.histogram(scores[m], thr.get(m), m) for m in methods]
    if figs:
        quiet = sorted({m for c in report.checks for m in c.methods} - set(scores))
        parts.append(
            "<h3>Score distribution per method</h3><p class='muted'>Scores of the findings in report.json "
            "(the best matches per eval item and method); the dashed line is the method's threshold."
            + (f" No findings, so no plot: {_e(', '.join(quiet))}." if quiet else "")
            + "</p>"
        )
        parts.append('<div class="plots">' + "".join(f"<figure>{s}</figure>" for s in figs) + "</div>")
    cells: dict[tuple[str, str], tuple[int, int]] = {}
    for c in report.checks:
        for m in c.matrix:
            summary = report.datasets.get(m.eval)
            n = summary.records if summary is not None else c.eval_items
            k0, _ = cells.get((m.train, m.eval), (0, n))
            cells[(m.train, m.eval)] = (max(k0, m.contaminated_items), n)
    rows = sorted({t for t, _ in cells})
    cols = sorted({e for _, e in cells})
    if cells and (len(rows) > 1 or len(cols) > 1):
        parts.append(
            "<h3>Training × eval contamination matrix</h3>"
            "<p class='muted'>Cell: eval items with a conclusive finding in that training set / eval items.</p>"
        )
        parts.append(f'<div class="plots"><figure>{_svg.matrix(rows, cols, cells)}</figure></div>')
    per_check = [
        (
            c.name,
            [
                (f"{s.eval}:{s.subset}" if len(c.eval) > 1 else str(s.subset), s.contaminated_items, s.eval_items)
                for s in c.eval_subsets
            ],
        )
        for c in report.checks
    ]
    figs = [
        _svg.bars(items, f"{name}: contaminated share per eval subset") for name, items in per_check if len(items) > 1
    ]
    if figs:
        parts.append("<h3>Contaminated share per eval subset</h3>")
        parts.append('<div class="plots">' + "".join(f"<figure>{s}</figure>" for s in figs) + "</div>")
    return "".join(parts)


def _checks(report: Report) -> str:
    # eight columns, the verdict beside the name: at 800 px the table fits without scrolling
    rows = [
        [
            f"<a class='path' href='#check-{_e(c.name)}'>{_e(c.name)}</a>",
            f"<span class='verdict v-{_e(c.verdict)}'>{_e(c.verdict)}</span>",
            f"{_path(', '.join(c.train))} <span class='muted'>→</span> {_path(', '.join(c.eval))}",
            _e(", ".join(c.methods)),
            _e(c.eval_items),
            f"{_e(tally.conclusive(c))} <span class='muted'>({100 * tally.conclusive_share(c):.1f}%)</span>",
            _e(tally.suspected_cell(c)),
            f"{_e(tally.counted(c))} / {_e(c.allowance)} <span class='muted'>(fail_on {_e(c.fail_on)})</span>",
        ]
        for c in report.checks
    ]
    line = tally.decisions_line(report.decisions)
    headers = [
        "check",
        "verdict",
        "train → eval",
        "methods",
        "eval items",
        "conclusive",
        "suspected",
        "counted / allowance",
    ]
    out = [f"<p class='muted'>{_e(line)}</p>" if line else "", _table(headers, rows, {4, 5, 7})]
    for c in report.checks:
        out.append(
            f"<h3 id='check-{_e(c.name)}'>{_e(c.name)} — <span class='verdict v-{_e(c.verdict)}'>"
            f"{_e(c.verdict)}</span></h3><p class='counts'>{_e(tally.counts_phrase(c))}</p>"
        )
        open_items = tally.open_items(report.findings, c)
        if open_items:
            shown = ", ".join(_e(ref) for ref in open_items[: tally.OPEN_SHOWN])
            more = f" … {len(open_items) - tally.OPEN_SHOWN} more" if len(open_items) > tally.OPEN_SHOWN else ""
            out.append(
                f"<p class='unreviewed'>Suspected eval items nobody has reviewed ({len(open_items)}; "
                f"<code>auditor review</code> decides them): {shown}{more}</p>"
            )
        by_m = c.items_by_method
        mrows = []
        for ms in c.method_stats:  # an index's stats(): method-specific keys
            params = ", ".join(
                f"{k}={v}" for k, v in (ms.get("params") or {}).items() if k in ("n", "threshold", "min_n", "eval_view")
            )
            total = ms.get("eval_items", c.eval_items)
            missing = ms.get("eval_not_indexed", 0)
            reasons = "; ".join(f"{r}: {n}" for r, n in (ms.get("not_indexed_reasons") or {}).items())
            mrows.append(
                [
                    f"<code>{_e(ms['method'])}</code>",
                    "yes" if ms.get("conclusive", True) else "evidence only",
                    _e(tally.method_counts(c, ms["method"]) if ms["method"] in by_m else 0),
                    _e(total - missing),
                    _e(missing) + (f" <span class='muted'>({_e(reasons)})</span>" if reasons else ""),
                    _e(params),
                ]
            )
        if mrows:
            out.append(
                _table(
                    [
                        "method",
                        "counts as contamination",
                        "eval items with findings",
                        f"eval items indexed (of {c.eval_items})",
                        "not indexed (why)",
                        "parameters",
                    ],
                    mrows,
                    {2, 3, 4},
                )
            )
        asked = set(tally.not_checked_lines(c, incomplete_only=True))
        out.extend(
            f"<p class='{'not-checked gap' if line in asked else 'not-checked muted'}'>{_e(line)}</p>"
            for line in tally.not_checked_lines(c)
        )
        notes = c.notes
        if c.skipped.eval or c.skipped.train:
            notes = [*notes, f"skipped records: {c.skipped.eval} eval, {c.skipped.train} training"]
        out.extend(f"<p class='muted'>{_e(n)}</p>" for n in notes)
    return "".join(out)


def _datasets(report: Report) -> str:
    rows: list[list[Any]] = []
    for name, d in report.datasets.items():
        reasons = "; ".join(
            [
                *(f"{r}: {n}" for r, n in d.skip_reasons.items()),
                *(f"file not read: {f['file']}: {f['reason']}" for f in d.skipped_files),
            ]
        )
        rows.append(
            [
                _path(name),
                _e(d.role),
                _e(d.records),
                _e(d.skipped),
                _e(reasons),
                _e(d.split or ""),
                _e(d.bundled)
                if d.bundled
                else f"<span class='path' title='{_e(chr(10).join(d.files))}'>"
                + _e(", ".join(_short(f) for f in d.files[:20]))
                + (" …" if len(d.files) > 20 else "")
                + "</span>",
                f"<code title='{_e(d.sha256 or '')}'>{_e(str(d.sha256 or '')[:16])}</code>",
            ]
        )
    headers = ["dataset", "role", "records", "skipped", "skip reasons", "split", "source", "records sha256"]
    return _table(headers, rows, {2, 3})


def _generic(value: Any, depth: int = 0) -> str:
    """Any JSON value as HTML: dicts as key/value tables, lists of dicts as tables, the rest as text."""
    if isinstance(value, dict) and depth < 2:
        return _table(["key", "value"], [[f"<code>{_e(k)}</code>", _generic(v, depth + 1)] for k, v in value.items()])
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value) and depth < 2:
        keys = list(dict.fromkeys(k for v in value[:200] for k in v))
        return _table(keys, [[_generic(v.get(k, ""), 2) for k in keys] for v in value[:200]])
    if isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False, default=str)
        return f"<code>{_e(text[:2000])}{' …' if len(text) > 2000 else ''}</code>"
    return _e(value)


def _findings(report: Report) -> str:
    fs = report.findings
    rows = item_rows(fs)
    if not rows:
        return "<p>No findings.</p>"
    # every conclusive and suspected item is listed with its proof (up to PROOF_ITEMS), the rest up to TOP_ITEMS
    proven = sum(1 for r in rows if r.proves)
    shown = rows[: max(TOP_ITEMS, min(proven, PROOF_ITEMS))]
    boxed = {i for i, r in enumerate(shown) if r.proves or i < TEXT_ITEMS}
    methods = methods_in(rows, fs)
    conclusive = {f["method"]: bool(f.get("conclusive", True)) for f in fs}
    out = [
        f"<p class='muted'>{_e(counts_line(rows, fs, len(shown)))} Method columns: the best score "
        "(blank: not found); texts of every conclusive and suspected item below (of the first others too), the word runs they share highlighted and in view.</p>"
    ]
    table_rows = []
    for i, r in enumerate(shown):
        more = f" <span class='muted'>(+{len(r.train_refs) - 3})</span>" if len(r.train_refs) > 3 else ""
        anchor = f"<a href='#item-{i}'>{_e(r.eval_ref)}</a>" if i in boxed else _e(r.eval_ref)
        table_rows.append(
            [_path(r.check), anchor, status_html(r.status), _path(", ".join(r.train_refs[:3])) + more]
            + [f"{r.scores[m]:.3f}" if m in r.scores else "" for m in methods]
        )
    heads = [m if conclusive.get(m, True) else f"{m} (evidence)" for m in methods]
    numeric = set(range(4, 4 + len(methods)))
    out.append(_table(["check", "eval item", "status", "training records", *heads], table_rows, numeric))
    for i, r in enumerate(shown):
        if i in boxed:
            out.append(_finding_box(report, r, i))
    return "".join(out)


def _finding_box(report: Report, r: ItemRow, i: int) -> str:
    """One finding's proof: its line, both texts side by side (:func:`auditor.report.proof.pair_html`)
    and its evidence."""
    f = r.best
    tag = "" if f.get("conclusive", True) else " <span class='muted'>(evidence only)</span>"
    evidence = evidence_summary(f)
    return (
        f"<div class='finding' id='item-{i}'><div>check <b>{_e(f['check'])}</b>: eval item "
        f"<b>{_e(r.eval_ref)}</b> in training record <b>{_e(r.train_refs[0])}</b> — "
        f"<code>{_e(f['method'])}</code>{tag} score <b>{float(f['score']):.3f}</b></div>"
        f"{pair_html(report.texts, f, SHOWN_CHARS)}"
        f"<div class='src'>{_e(f.get('eval_source', ''))} ↔ {_e(f.get('train_source', ''))}</div>"
        + (f"<div class='ev'>evidence: {_e(evidence[:2000])}</div>" if evidence else "")
        + "</div>"
    )


def _error_types(value: Any) -> str:
    """``error_types``: one table, datasets × labels (records carrying each label)."""
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        return _generic(value)
    labels = sorted({lb for counts in value.values() for lb in counts})
    if not labels:
        return "<p class='muted'>No tool-use errors labelled.</p>"
    rows = [[_e(name), *(_e(counts.get(lb, 0)) for lb in labels)] for name, counts in value.items()]
    meanings = "".join(f"<li><code>{_e(lb)}</code>: {_e(MEANINGS[lb])}</li>" for lb in labels if lb in MEANINGS)
    intro = _e(INTRO).replace("`novel_error_types`", "<code>novel_error_types</code>")
    return (
        f"<p class='muted'>{intro} Every label: <code>{_e(DOCS)}</code> in the auditor repository.</p>"
        + _table(["dataset", *labels], rows, set(range(1, len(labels) + 1)))
        + (f"<ul class='muted'>{meanings}</ul>" if meanings else "")
    )


def _short(path: str) -> str:
    """A file's name (the full path is the cell's tooltip)."""
    return path.rsplit("/", 1)[-1]


def _relative(path: str, folder: str) -> str:
    prefix = folder.rstrip("/") + "/"
    return path[len(prefix) :] if folder and path.startswith(prefix) else path


def _clean(value: CleanSummary) -> str:
    """``clean``: the folder, the re-audit command, and one row per file written."""
    head = f"<p>Folder <code>{_e(value.dir)}</code>; removed records: <code>{_e(value.removed_file)}</code>."
    if value.manifest:
        head += f" Re-audit: <code>auditor verify {_e(value.manifest)}</code>"
    rows = []
    for name, d in value.datasets.items():
        for i, f in enumerate(d.get("files") or [{}]):
            lead = [_e(name), *(_e(d.get(k, "")) for k in ("kept", "removed")), _e(d.get("not_written_skipped", 0))]
            rows.append(
                (lead if i == 0 else ["", "", "", ""])
                + [
                    f"<span title='from {_e(f.get('source', ''))}'>"
                    f"{_e(_relative(f.get('written', ''), value.dir))}</span>",
                    _e(f.get("format", "")),
                    _e(f.get("records", "")),
                ]
            )
        for unread in d.get("not_written_files") or []:
            rows.append(["", "", "", "", f"{_e(_short(unread))}: not written (unreadable)", "", ""])
    headers = ["dataset", "kept", "removed", "skipped (not written)", "file (same name)", "format", "records"]
    return head + "</p>" + _table(headers, rows, {1, 2, 3, 6})


def _provenance(entries: list[ProvenanceResult]) -> str:
    """Per provenance entry: the split statement, a bar of derived records per source split, and
    the held-out / conflicting records (the report typed them: :class:`ProvenanceResult`)."""

    out = []
    for e in entries:
        total = e.records_total
        held = set(e.held_out_splits)
        items = [(f"{s}{' (held out)' if s in held else ''}", int(n), total) for s, n in sorted(e.by_split.items())]
        items.append(("unattributed", e.unattributed, total))
        out.append(
            f"<h3>{_e(e.name)} <span class='verdict v-{_e(e.verdict)}'>"
            f"{_e(e.verdict.upper())}</span></h3><p>{_e(statement(e))}</p>"
            f"<div class='plots'>{_svg.bars(items, 'derived records per source split')}</div>"
        )
        flagged = [r for r in e.records if r.get("held_out") or r.get("how") == "conflicting"][:200]
        if flagged:
            rows = [
                [
                    _e(r.get("derived_ref") or f"{r['derived_dataset']} {r['derived_id']}"),
                    _e(r.get("source_ref") or f"{r.get('source_dataset')} {r.get('source_id')}"),
                    *(_e(r.get(k, "")) for k in ("source_split", "how", "score", "confidence")),
                ]
                for r in flagged
            ]
            headers = ["derived record", "source item", "source split", "how", "score", "confidence"]
            out.append(_table(headers, rows, {4, 5}))
    return "".join(out)


def _sections(report: Report) -> list[tuple[str, str]]:
    """The report's sections after the datasets, titled, in report.json's order: the typed ones
    (:meth:`~auditor.report.model.Report.sections`; ``decisions`` is a line above the checks table),
    then any section of another version (:attr:`~auditor.report.model.Report.extra`), generically."""
    out = []
    if report.error_types is not None:
        out.append(("Error types", _error_types(report.error_types)))
    if report.provenance:
        out.append(("Provenance", _provenance(report.provenance)))
    if report.clean is not None:
        out.append(("Cleaned training data", _clean(report.clean)))
    out += [(k.replace("_", " ").capitalize(), _generic(v)) for k, v in report.extra.items()]
    return out


def render_html(report: Report) -> str:
    """The whole page as a string (see module doc)."""
    run = report.run
    sections = [("Checks", _checks(report)), ("Plots", plots_html(report)), ("Datasets", _datasets(report))]
    sections += _sections(report)
    sections.append(("Findings", _findings(report)))
    sections.append(("Suspected findings (review list)", review_html(report)))
    body = "".join(f"<h2 id='{_e(t.lower().replace(' ', '-'))}'>{_e(t)}</h2>{html}" for t, html in sections if html)
    run_line = ""
    if run.to_dict():  # a report written by hand may have no run section
        version, engine, started, seconds = run.header()
        run_line = f"auditor {_e(version)}, engine <code>{_e(engine)}</code>, started {_e(started)}, {_e(seconds)} s"
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:\">"
        f"<title>Contamination audit: {_e(report.verdict)}</title><style>{CSS}</style></head><body><main>"
        f"<h1>Contamination audit <span class='verdict v-{_e(report.verdict)}' id='verdict'>"
        f"{_e(report.verdict.upper())}</span></h1><p>{_e(report.summary_line())}</p><p class='muted'>{run_line}</p>"
        f"{body}</main><script>{JS}</script></body></html>\n"
    )


register_format("html", render_html)

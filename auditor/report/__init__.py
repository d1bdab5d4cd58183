"""The audit report: one :class:`Report`, written as ``report.json`` (for machines), ``report.md`` and
``report.html`` (for reviewers) and ``junit.xml`` (for CI), atomically, into a report folder.

``report.json`` keys (CI tools parse these names): ``verdict`` (``pass`` / ``fail`` /
``incomplete``); ``datasets`` → name → ``records``, ``skipped``, ``sha256`` ...; ``checks`` → list of
``{name, train, eval, methods, eval_items, contaminated_items, verdict, ...}``; ``findings`` → list of
``{check, eval_dataset, eval_id, eval_source, train_dataset, train_id, train_source, method, score,
conclusive, evidence}``; ``run``; ``texts`` (record texts behind the top findings).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._io import atomic_write_text, load_json
from ..errors import ConfigError, InputError

SCHEMA_VERSION = 1


@dataclass
class Report:
    verdict: str
    datasets: dict[str, Any]
    checks: list[dict[str, Any]]
    findings: list[dict[str, Any]]
    run: dict[str, Any] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # sections added by later stages (provenance ...)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "verdict": self.verdict,
            "checks": self.checks,
            "datasets": self.datasets,
            "findings": self.findings,
            **self.extra,
            "run": self.run,
            "texts": self.texts,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, sort_keys=False) + "\n"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Report:
        known = {"schema_version", "verdict", "checks", "datasets", "findings", "run", "texts"}
        missing = [k for k in ("verdict", "checks", "datasets", "findings") if k not in d]
        if missing:
            raise ValueError(f"not an auditor report (missing {', '.join(missing)})")
        return cls(
            verdict=d["verdict"],
            datasets=d["datasets"],
            checks=d["checks"],
            findings=d["findings"],
            run=d.get("run", {}),
            texts=d.get("texts", {}),
            extra={k: v for k, v in d.items() if k not in known},
        )

    @classmethod
    def load(cls, path: str | Path) -> Report:
        doc = load_json(path)
        try:
            return cls.from_dict(doc)
        except (ValueError, TypeError, AttributeError) as e:
            raise InputError(str(path), None, str(e)) from None

    def summary_line(self) -> str:
        parts = [
            f"{c['name']}: {c['verdict']} ({c['contaminated_items']}/{c['eval_items']} eval items contaminated)"
            for c in self.checks
        ]
        parts += [
            f"provenance {p['name']}: {p['verdict']} ({p['held_out_records']}/{p['records_total']} derived "
            f"records trace to a held-out split)"
            for p in self.extra.get("provenance") or []
        ]
        return f"auditor: {self.verdict.upper()} — " + "; ".join(parts)

    def render(self, fmt: str) -> str:
        """The report as ``json``, ``md``, ``html`` or ``junit`` text. Raises ConfigError for another format."""
        from .html import render_html
        from .junit import render_junit
        from .markdown import render_markdown

        renderers = {"json": Report.to_json, "md": render_markdown, "html": render_html, "junit": render_junit}
        if fmt not in renderers:
            raise ConfigError(f"unknown report format '{fmt}' (formats: {', '.join(renderers)})")
        return renderers[fmt](self)

    def write(self, report_dir: str | Path) -> dict[str, Path]:
        """Write report.json, report.md, report.html and junit.xml (atomically). Returns the paths written."""
        out = Path(report_dir)
        paths = {fmt: out / name for fmt, name in FILE_NAMES.items()}
        for fmt, path in paths.items():
            atomic_write_text(path, self.render(fmt))
        return paths


#: report format → file name in a report folder
FILE_NAMES = {"json": "report.json", "md": "report.md", "html": "report.html", "junit": "junit.xml"}


def rerender(report_path: str | Path, fmt: str, out: str | Path | None = None) -> Path:
    """Render a written ``report.json`` again as ``fmt`` without re-running the audit; returns the path.

    The default output is the format's file beside ``report_path`` (``report.html``, ``report.md``,
    ``junit.xml``). Raises InputError for a file that is not an auditor report, ConfigError for a bad format.
    """
    report = Report.load(report_path)
    text = report.render(fmt)
    target = Path(out) if out else Path(report_path).with_name(FILE_NAMES.get(fmt, f"report.{fmt}"))
    atomic_write_text(target, text)
    return target

"""The audit report: one :class:`Report`, written as ``report.json`` (for machines) and
``report.md`` (for reviewers), atomically, into a report folder.

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
from ..errors import InputError

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
        return {"schema_version": SCHEMA_VERSION, "verdict": self.verdict, "checks": self.checks,
                "datasets": self.datasets, "findings": self.findings, **self.extra,
                "run": self.run, "texts": self.texts}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, sort_keys=False) + "\n"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Report":
        known = {"schema_version", "verdict", "checks", "datasets", "findings", "run", "texts"}
        missing = [k for k in ("verdict", "checks", "datasets", "findings") if k not in d]
        if missing:
            raise ValueError(f"not an auditor report (missing {', '.join(missing)})")
        return cls(verdict=d["verdict"], datasets=d["datasets"], checks=d["checks"], findings=d["findings"],
                   run=d.get("run", {}), texts=d.get("texts", {}),
                   extra={k: v for k, v in d.items() if k not in known})

    @classmethod
    def load(cls, path: str | Path) -> "Report":
        doc = load_json(path)
        try:
            return cls.from_dict(doc)
        except (ValueError, TypeError, AttributeError) as e:
            raise InputError(str(path), None, str(e)) from None

    def summary_line(self) -> str:
        parts = [f"{c['name']}: {c['verdict']} ({c['contaminated_items']}/{c['eval_items']} eval items contaminated)"
                 for c in self.checks]
        parts += [f"provenance {p['name']}: {p['verdict']} ({p['held_out_records']}/{p['records_total']} derived "
                  f"records trace to a held-out split)" for p in self.extra.get("provenance") or []]
        return f"auditor: {self.verdict.upper()} — " + "; ".join(parts)

    def write(self, report_dir: str | Path) -> dict[str, Path]:
        """Write report.json and report.md (atomically). Returns the paths written."""
        from .markdown import render_markdown

        out = Path(report_dir)
        paths = {"json": out / "report.json", "md": out / "report.md"}
        atomic_write_text(paths["json"], self.to_json())
        atomic_write_text(paths["md"], render_markdown(self))
        return paths

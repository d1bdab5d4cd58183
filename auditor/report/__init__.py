"""The audit report: one :class:`Report`, written as ``report.json`` (for machines), ``report.md`` and
``report.html`` (for reviewers) and ``junit.xml`` (for CI), atomically, into a report folder.

``report.json`` keys (CI tools parse these names): ``verdict`` (``pass`` / ``fail`` /
``incomplete``); ``datasets`` → name → ``records``, ``skipped``, ``sha256`` ...; ``checks`` → list of
``{name, train, eval, methods, eval_items, contaminated_items, verdict, ...}``; ``findings`` → list of
``{check, eval_dataset, eval_id, eval_source, train_dataset, train_id, train_source, method, score,
conclusive, evidence, ...}``, :class:`~auditor.report.results.FindingRow`); ``run``; ``texts`` (behind the top findings: each eval item's text and the
training string each finding matched, :mod:`auditor.text.proof`).

In memory the checks, datasets and run are typed (:class:`~auditor.report.results.CheckResult`,
:class:`~auditor.datasets.summary.DatasetSummary`, :class:`~auditor.report.results.RunStats`); their
``to_dict()`` is what ``report.json`` holds, and a report written by an earlier version loads into them
(:meth:`Report.from_dict`). Plain dicts given to :class:`Report` are converted the same way. Findings
stay the plain dicts ``report.json`` holds, typed for mypy as :class:`~auditor.report.results.FindingRow`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ..datasets.summary import DatasetSummary
from ..errors import AuditorError, ConfigError, InputError, InternalError, OutputError
from ..io.atomic import atomic_write_bytes, locked_folder
from ..io.jsonable import plain
from ..io.jsonread import load_json
from ..io.ledger import LEDGER, Ledger, sha256_bytes
from .conda import render_conda, render_conda_pr
from .counts import counts_phrase
from .html import render_html
from .junit import render_junit
from .markdown import render_markdown
from .publish import publish
from .results import CheckResult, FindingRow, ProvenanceResult, RunStats
from .validate import check_report

SCHEMA_VERSION = 1

T = TypeVar("T", CheckResult, DatasetSummary, RunStats)


def escape_line(text: str) -> str:
    """``text`` with every non-printable character (newline, carriage return, escape, bidi control ...)
    written as a Python escape, so a value can never add a line or rewrite one on a terminal.

    >>> escape_line("ok\\nauditor: PASS")
    'ok\\\\nauditor: PASS'
    """
    if str(text).isprintable():
        return str(text)
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in str(text))


@dataclass
class Report:
    """An audit's report. ``checks``, ``datasets`` and ``run`` may also be given as the dicts
    ``report.json`` holds (converted on construction; ValueError when one lacks a required key)."""

    verdict: str
    datasets: dict[str, DatasetSummary]
    checks: list[CheckResult]
    findings: list[FindingRow]
    run: RunStats = field(default_factory=RunStats)
    texts: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # sections added by later stages (provenance ...)

    def __post_init__(self) -> None:
        self.checks = [_typed(CheckResult, c, f"checks[{i}]") for i, c in enumerate(self.checks)]
        self.datasets = {name: _typed(DatasetSummary, d, f"datasets.{name}") for name, d in self.datasets.items()}
        self.run = _typed(RunStats, self.run, "run")
        if isinstance(self.extra.get("provenance"), list):
            self.extra["provenance"] = [
                _typed(ProvenanceResult, p, f"provenance[{i}]") for i, p in enumerate(self.extra["provenance"])
            ]

    @property
    def provenance(self) -> list[ProvenanceResult]:
        """The ``[[provenance]]`` entries' results (empty when the run had none)."""
        return list(self.extra.get("provenance") or [])

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "verdict": self.verdict,
            "checks": [c.to_dict() for c in self.checks],
            "datasets": {name: d.to_dict() for name, d in self.datasets.items()},
            "findings": self.findings,
            **{k: plain(v) for k, v in self.extra.items()},
            "run": self.run.to_dict(),
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
        shapes = {"verdict": str, "checks": list, "datasets": dict, "findings": list, "run": dict, "texts": dict}
        for key, kind in shapes.items():
            if key in d and not isinstance(d[key], kind):
                raise ValueError(f"not an auditor report ('{key}' is {type(d[key]).__name__}, not {kind.__name__})")
        for key in ("checks", "findings"):
            if not all(isinstance(x, dict) for x in d[key]):
                raise ValueError(f"not an auditor report ('{key}' must hold objects)")
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
        """The report a ``report.json`` holds, every value checked for its type first
        (:func:`auditor.report.validate.check_report`). Raises InputError naming the first bad value."""
        doc = load_json(path)
        try:
            check_report(doc)
        except ValueError as e:
            raise InputError(str(path), None, f"not a valid auditor report ({e})") from None
        try:
            return cls.from_dict(doc)
        except (ValueError, TypeError, AttributeError) as e:
            raise InputError(str(path), None, str(e)) from None

    def summary_line(self) -> str:
        """One line for stdout: per check its verdict and :func:`~auditor.report.counts.counts_phrase`
        (conclusive and suspected apart, so a PASS with unreviewed suspected items says so); names are
        escaped (:func:`escape_line`), so none can start a forged line."""
        parts = [f"{escape_line(c.name)}: {c.verdict}, {counts_phrase(c)}" for c in self.checks]
        parts += [
            f"provenance {escape_line(p.name)}: {p.verdict} ({p.held_out_records}/{p.records_total} derived "
            f"records trace to a held-out split)"
            for p in self.provenance
        ]
        return f"auditor: {self.verdict.upper()} — " + "; ".join(parts)

    def render(self, fmt: str) -> str:
        """The report as ``json``, ``md``, ``html``, ``junit``, ``conda`` or ``conda-pr`` (rows for the CONDA
        Data Contamination Database and its pull request's text: :mod:`auditor.report.conda`) text.
        Raises ConfigError for another format."""
        renderers = {
            "json": Report.to_json,
            "md": render_markdown,
            "html": render_html,
            "junit": render_junit,
            "conda": render_conda,
            "conda-pr": render_conda_pr,
        }
        if fmt not in renderers:
            raise ConfigError(f"unknown report format '{fmt}' (formats: {', '.join(renderers)})")
        return renderers[fmt](self)

    def write(self, report_dir: str | Path, kind: str = "report") -> dict[str, Path]:
        """Write the report's set into ``report_dir`` as one set (:mod:`auditor.report.publish`).

        ``kind`` ``"report"`` (audit, verify): report.json, report.md, report.html and junit.xml;
        ``"provenance"``: provenance.json and provenance.md. Other sets in the folder stay.
        Returns format → path, exactly the files written. Raises OutputError when the folder cannot
        take them.
        """
        names = WRITTEN[kind]
        paths = publish(report_dir, {names[fmt]: self.render(fmt) for fmt in names})
        return dict(zip(names, paths))


def _typed(kind: type[T], value: T | dict[str, Any], where: str) -> T:
    """``value`` as ``kind`` (a dict as ``report.json`` holds it is converted); raises ValueError."""
    if isinstance(value, kind):
        return value
    try:
        return kind.from_dict(value)
    except ValueError as e:
        raise ValueError(f"not a valid auditor report ({where}: {e})") from None


#: report format → file name in a report folder
FILE_NAMES = {"json": "report.json", "md": "report.md", "html": "report.html", "junit": "junit.xml"}
#: what each kind of run writes: format → file name
WRITTEN = {"report": FILE_NAMES, "provenance": {"json": "provenance.json", "md": "provenance.md"}}


def rerender(report_path: str | Path, fmt: str, out: str | Path | None = None) -> Path:
    """Render a written ``report.json`` again as ``fmt`` without re-running the audit; returns the path.

    The default output is the format's file beside ``report_path``: ``report.html``, ``report.md``,
    ``junit.xml`` for a ``report.json``; ``provenance.html`` ... for a ``provenance.json`` (never a
    file of another set). Raises InputError for a file that is not an auditor report or holds a value
    of the wrong type (:func:`auditor.report.validate.check_report`), ConfigError for a bad format,
    OutputError for a target that exists and is not auditor's unchanged output (a user's file is never
    overwritten). A renderer that fails on a report that passed those checks is a bug: InternalError
    (not an AuditorError: the CLI shows it with its traceback), the renderer's exception as its cause.
    """
    report = Report.load(report_path)  # every value checked: what fails here is bad input (InputError)
    try:
        text = report.render(fmt)
    except AuditorError:
        raise
    except Exception as e:  # the report passed validation, so this is a bug in a renderer, not bad input
        raise InternalError(
            f"rendering {report_path} as {fmt} failed on a report that passed validation "
            f"({type(e).__name__}: {e}): a bug in auditor's renderer; please report it with this traceback"
        ) from e
    target = Path(out) if out else Path(report_path).with_name(_rerender_name(Path(report_path), fmt))
    data = text.encode("utf-8")
    folder = target.parent
    folder.mkdir(parents=True, exist_ok=True)
    with locked_folder(folder):
        ledger = Ledger.load(folder, "report")
        if (target.exists() or target.is_symlink()) and not ledger.owns(target.name):
            raise OutputError(
                str(target),
                "exists and auditor did not write it, or it was changed since (its folder's "
                f"{LEDGER}); give --out a new file",
            )
        atomic_write_bytes(target, data)
        if ledger.files:  # a report folder: its ledger names the new file, so the next run may replace it
            ledger.add(target.name, sha256_bytes(data))
            ledger.save()
    return target


def _rerender_name(source: Path, fmt: str) -> str:
    if source.name == "report.json":
        return FILE_NAMES.get(fmt, f"report.{fmt}")
    stem = source.name.removesuffix(".json")
    return f"{stem}.junit.xml" if fmt == "junit" else f"{stem}.{fmt}"

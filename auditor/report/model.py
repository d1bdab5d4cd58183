"""The report model: one :class:`Report`, every section typed and filled when it is made.

``report.json`` keys (CI tools parse these names): ``verdict`` (``pass`` / ``fail`` /
``incomplete``); ``datasets`` → name → ``records``, ``skipped``, ``sha256`` ...; ``checks`` → list of
``{name, train, eval, methods, eval_items, contaminated_items, verdict, ...}``; ``findings`` → list of
``{check, eval_dataset, eval_id, eval_source, train_dataset, train_id, train_source, method, score,
conclusive, evidence, ...}`` (:class:`~auditor.report.results.FindingRow`); then the sections a run
adds — ``decisions`` (:class:`~auditor.report.results.DecisionsRead`), ``error_types`` (dataset → label → records),
``provenance`` (:class:`~auditor.report.results.ProvenanceResult` each), ``clean``
(:class:`~auditor.report.results.CleanSummary`) —; ``run``; ``texts`` (behind the top findings: each eval item's text and the
training string each finding matched, :mod:`auditor.text.proof`).

In memory every section is typed (:class:`~auditor.report.results.CheckResult`,
:class:`~auditor.datasets.summary.DatasetSummary`, :class:`~auditor.report.results.RunStats` ...);
their ``to_dict()`` is what ``report.json`` holds, and a report written by an earlier version loads
into them (:meth:`Report.from_dict`). Plain dicts given to :class:`Report` are converted the same way.
Findings stay the plain dicts ``report.json`` holds, typed for mypy as
:class:`~auditor.report.results.FindingRow`. A section this version does not know (a later
version's) is kept in :attr:`Report.extra` and written back as it was.

The renderings register themselves by format (:func:`register_format`: Markdown, HTML, JUnit,
CONDA rows), so the model imports none of them and a renderer imports the model; a built-in one is
declared by format and module (:data:`BUILTIN_FORMATS`) and imported on its first render.

>>> r = Report("pass", {}, [], [], decisions={"file": "auditor-decisions.json", "read": 2, "applied": 1})
>>> r.decisions.applied, list(r.to_dict())
(1, ['schema_version', 'verdict', 'checks', 'datasets', 'findings', 'decisions', 'run', 'texts'])
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ..datasets.summary import DatasetSummary
from ..errors import ConfigError, InputError
from ..io.jsonable import plain
from ..io.jsonread import load_json
from .counts import counts_phrase
from .publish import publish
from .results import CheckResult, CleanSummary, DecisionsRead, FindingRow, ProvenanceResult, RunStats
from .validate import check_report

SCHEMA_VERSION = 1


def escape_line(text: str) -> str:
    """``text`` with every non-printable character (newline, carriage return, escape, bidi control ...)
    written as a Python escape, so a value can never add a line or rewrite one on a terminal.

    >>> escape_line("ok\\nauditor: PASS")
    'ok\\\\nauditor: PASS'
    """
    if str(text).isprintable():
        return str(text)
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in str(text))


T = TypeVar("T", CheckResult, DatasetSummary, RunStats, ProvenanceResult, DecisionsRead, CleanSummary)
#: the sections after ``findings``, in the order report.json holds them
SECTIONS = ("decisions", "error_types", "provenance", "clean")


@dataclass
class Report:
    """An audit's report. ``checks``, ``datasets``, ``run`` and the sections may also be given as the
    dicts ``report.json`` holds (converted on construction; ValueError when one lacks a required key).
    A section in ``extra`` under one of the names in :data:`SECTIONS` is taken into its field."""

    verdict: str
    datasets: dict[str, DatasetSummary]
    checks: list[CheckResult]
    findings: list[FindingRow]
    run: RunStats = field(default_factory=RunStats)
    texts: dict[str, str] = field(default_factory=dict)
    decisions: DecisionsRead | None = None  # None: the run read no decisions file
    error_types: dict[str, dict[str, int]] | None = None  # dataset → label → records (None: no checks)
    provenance: list[ProvenanceResult] = field(default_factory=list)  # the [[provenance]] entries' results
    clean: CleanSummary | None = None  # None: no --write-clean
    extra: dict[str, Any] = field(default_factory=dict)  # sections of another version, kept as they were

    def __post_init__(self) -> None:
        for key in SECTIONS:
            if key in self.extra:
                setattr(self, key, self.extra.pop(key))
        self.checks = [_typed(CheckResult, c, f"checks[{i}]") for i, c in enumerate(self.checks)]
        self.datasets = {name: _typed(DatasetSummary, d, f"datasets.{name}") for name, d in self.datasets.items()}
        self.run = _typed(RunStats, self.run, "run")
        for key, kind in (("decisions", DecisionsRead), ("clean", CleanSummary)):
            value = getattr(self, key)
            if value is not None and not isinstance(value, (dict, kind)):  # hand-written: a generic section
                self.extra[key] = value
                value = None
            setattr(self, key, None if value is None else _typed(kind, value, key))
        if not isinstance(self.provenance, list):  # a hand-written report: left to the generic section
            self.extra["provenance"], self.provenance = self.provenance, []
        self.provenance = [_typed(ProvenanceResult, p, f"provenance[{i}]") for i, p in enumerate(self.provenance)]

    def sections(self) -> dict[str, Any]:
        """The sections after ``findings`` that this report has, by key, in report.json's order."""
        out: dict[str, Any] = {}
        if self.decisions is not None:
            out["decisions"] = self.decisions
        if self.error_types is not None:
            out["error_types"] = self.error_types
        if self.provenance:
            out["provenance"] = self.provenance
        if self.clean is not None:
            out["clean"] = self.clean
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "verdict": self.verdict,
            "checks": [c.to_dict() for c in self.checks],
            "datasets": {name: d.to_dict() for name, d in self.datasets.items()},
            "findings": self.findings,
            **{k: plain(v) for k, v in self.sections().items()},
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
            extra={k: v for k, v in d.items() if k not in known},  # the sections: taken into their fields
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
        if fmt == "json":
            return self.to_json()
        if fmt not in FORMATS and fmt in BUILTIN_FORMATS:
            importlib.import_module(BUILTIN_FORMATS[fmt])  # the rendering registers its formats
        if fmt not in FORMATS:
            known = ", ".join(["json", *sorted({*FORMATS, *BUILTIN_FORMATS})])
            raise ConfigError(f"unknown report format '{fmt}' (formats: {known})")
        return FORMATS[fmt](self)

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


#: format → its renderer (``json`` is :meth:`Report.to_json`); each rendering module registers its own
FORMATS: dict[str, Callable[[Report], str]] = {}
#: the built-in formats → the rendering module that registers each, imported on its first render
BUILTIN_FORMATS = {
    "conda": "auditor.report.conda",
    "conda-pr": "auditor.report.conda",
    "html": "auditor.report.html",
    "junit": "auditor.report.junit",
    "md": "auditor.report.markdown",
}


def register_format(name: str, render: Callable[[Report], str]) -> None:
    """Make ``render`` the renderer of format ``name`` (:meth:`Report.render`, ``auditor report --format``)."""
    FORMATS[name] = render


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

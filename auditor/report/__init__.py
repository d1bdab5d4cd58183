"""The audit report: one :class:`~auditor.report.model.Report` (the model: :mod:`auditor.report.model`),
written as ``report.json`` (for machines), ``report.md`` and ``report.html`` (for reviewers) and
``junit.xml`` (for CI), atomically, into a report folder; :func:`rerender` renders a written
``report.json`` again. Importing this package loads nothing else: each name below is imported on first
use (PEP 562), and each rendering (Markdown, HTML, JUnit, CONDA rows) when its format is first rendered
(:data:`~auditor.report.model.BUILTIN_FORMATS`), so an audit loads none of them before it writes its
report; none of them needs the detection methods, so re-rendering imports none.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .._lazy import lazy_names
from ..errors import AuditorError, InternalError, OutputError

if TYPE_CHECKING:
    from .model import FILE_NAMES, SCHEMA_VERSION, WRITTEN, CleanSummary, DecisionsRead, Report, escape_line

#: public name -> the module defining it, imported on first use (PEP 562)
_LAZY = {
    name: "auditor.report.model"
    for name in ("FILE_NAMES", "SCHEMA_VERSION", "WRITTEN", "CleanSummary", "DecisionsRead", "Report", "escape_line")
}

__all__ = [
    "FILE_NAMES",
    "SCHEMA_VERSION",
    "WRITTEN",
    "CleanSummary",
    "DecisionsRead",
    "Report",
    "escape_line",
    "rerender",
]


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())


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
    from ..io.atomic import atomic_write_bytes, locked_folder
    from ..io.ledger import LEDGER, Ledger, sha256_bytes
    from .model import Report

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
    from .model import FILE_NAMES

    if source.name == "report.json":
        return FILE_NAMES.get(fmt, f"report.{fmt}")
    stem = source.name.removesuffix(".json")
    return f"{stem}.junit.xml" if fmt == "junit" else f"{stem}.{fmt}"

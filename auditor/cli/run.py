"""``auditor audit`` (one check from flags) and ``auditor verify`` (a manifest)."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

import click

from ..audit.config import AuditConfig, CheckSpec, ReviewOptions
from ..audit.decisions import DECISIONS_FILE
from ..audit.manifest import load_manifest
from ..audit.run import run_audit
from ..audit.verdict import unreviewed_kinds
from ..datasets.dataset import DatasetSpec
from ..datasets.registry import is_registry_ref
from ..engines.memory import tune_allocator
from ..errors import AuditorError, OutputError
from ..io.files import describe_os_error
from ..io.jsonread import DEFAULT_MAX_RECORD_CHARS
from ..report import counts as tally
from ..report.publish import check_report_dir
from . import main
from ._common import (
    EXIT_INTERRUPTED,
    _forget_interrupt,
    default_report_dir,
    exit_for,
    fresh_report_dir,
    library_errors,
)
from ._run_options import apply_overrides, field_options, output_options, override_options, side_fields


def escape_line(text: str) -> str:
    """:func:`auditor.report.model.escape_line`; the report model is imported on first use, once the run
    is over, not at start-up."""
    from ..report.model import escape_line as escape

    return escape(text)


def _dataset_name(ref: str, taken: set[str]) -> str:
    if (is_registry_ref(ref) and not os.path.exists(ref)) or any(c in ref for c in "*?["):
        base = ref  # a bundled set, or a glob: named by what was given (a pattern's name part is "*")
    else:
        base = Path(ref).name.split(".")[0] or "data"
    name, i = base, 2
    while name in taken:
        name, i = f"{base}-{i}", i + 1
    taken.add(name)
    return name


def ran_phrase(report) -> str:
    """The methods each check ran, for the summary line (``methods: exact, ngram``; per check when
    they differ: ``methods: a (exact), b (exact, ngram)``)."""
    runs = [(c.name, ", ".join(c.methods)) for c in report.checks]
    if not runs:
        return ""
    if len({m for _, m in runs}) == 1:
        return f" [methods: {runs[0][1]}]"
    return " [methods: " + "; ".join(f"{escape_line(n)} ({m})" for n, m in runs) + "]"


def _run_and_write(config, report_dir: str, output_format: str = "text", quiet: bool = False) -> None:
    """Run the audit and write its report (before the cleaned data, so a fault there keeps it)."""
    check_report_dir(report_dir)  # before any long work
    tune_allocator()  # this process scans where the run takes one worker: keep its freed memory for the next batch
    config.output.report_dir = report_dir  # run_audit refuses a clean folder overlapping it, before the audit
    written: list = []

    def write(report) -> None:
        written[:] = report.write(report_dir).values()

    try:
        report = run_audit(config, before_clean=write)
    except KeyboardInterrupt:
        if not written:
            raise
        click.echo(
            "auditor: interrupted while writing the cleaned data; the report (without the clean section) "
            "was written: " + ", ".join(escape_line(str(p)) for p in written),
            err=True,
        )
        _forget_interrupt()
        raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
    except (AuditorError, OSError) as e:
        if not written:
            raise
        reason = describe_os_error(e) if isinstance(e, OSError) else str(e)
        raise OutputError(
            str((e.filename if isinstance(e, OSError) else None) or config.output.write_clean),
            f"writing the cleaned data failed: {reason}; the report (without the clean section) was written: "
            + ", ".join(str(p) for p in written),
        ) from None
    written[:] = report.write(report_dir).values()
    # the report is written: a Ctrl-C from here to the exit must neither say "no report written"
    # nor change the exit status the verdict gives
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main_thread else None
    to_json = output_format == "json"
    try:
        if to_json:
            sys.stdout.write(report.to_json())
            sys.stdout.flush()

        def say(line: str) -> None:
            if not quiet:
                click.echo(line, err=to_json)

        summary = report.summary_line() + ran_phrase(report)
        if to_json:
            say(summary)
        else:
            click.echo(summary)
        for c in report.checks:  # what did not run, or searched nothing: a reader sees what a verdict covers
            for line in tally.not_checked_lines(c, name=len(report.checks) > 1):
                say(escape_line(line))
            for line in _gate_notes(c.notes):  # what the embedding tier left unread
                say(escape_line(line))
        say(f"report: {', '.join(escape_line(str(p)) for p in written)}")
        waiting = sum(tally.unreviewed(c) for c in report.checks)
        if waiting:  # never a quiet pass over suspected findings nobody looked at
            json_path = next((p for p in written if str(p).endswith(".json")), "REPORT.json")
            say(
                f"unreviewed: {waiting} suspected eval item{'s' if waiting != 1 else ''} ({unreviewed_kinds(report)}) "
                f"nobody has decided; review: auditor review {escape_line(str(json_path))}"
                + (f" (decisions: {escape_line(str(config.review.decisions))})" if config.review.decisions else "")
            )
        if report.clean is not None:
            say(
                f"cleaned training data: {escape_line(str(report.clean.dir))} "
                f"(re-audit: auditor verify {escape_line(str(report.clean.manifest))})"
            )
        sys.exit(exit_for(report.verdict))
    finally:
        if main_thread:
            signal.signal(signal.SIGINT, previous)


@main.command()
@click.option(
    "--train",
    "train",
    multiple=True,
    required=True,
    metavar="PATH|NAME[:split]",
    help="Training data: file, glob, or bundled name (repeatable).",
)
@click.option(
    "--eval",
    "eval_",
    multiple=True,
    required=True,
    metavar="PATH|NAME[:split]",
    help="Evaluation data: file, glob, or bundled name such as stabletoolbench, tau2-airline:test, webshop:0:500 (repeatable).",
)
@click.option("--train-format", default=None, help="Format of the training files (default: detected).")
@click.option("--eval-format", default=None, help="Format of the eval files (default: detected).")
@field_options
@click.option(
    "--method",
    "methods",
    multiple=True,
    help="Detection method (repeatable; default: every available method except those run only when named, e.g. embedding).",
)
@click.option(
    "--max-contaminated",
    type=click.FloatRange(min=0),
    default=0,
    show_default=True,
    help="Allowed contaminated eval items (a count, or a share when below 1).",
)
@click.option(
    "--on-error",
    type=click.Choice(["fail", "skip"]),
    default="fail",
    show_default=True,
    help="Stop at the first bad record, or skip and count it (training and eval data; a skipped eval item is "
    "unchecked: the verdict is at best incomplete and the report lists it).",
)
@click.option(
    "--max-record-chars",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_RECORD_CHARS,
    show_default=True,
    help="A record with more text than this is a bad record (an error, or skipped and counted with --on-error skip).",
)
@click.option(
    "--report-dir",
    default=None,
    help="Report folder (default: a new one per run, $AUDITOR_REPORT_DIR or reports/ + audit-<UTC time>-<config hash>).",
)
@override_options(
    "Where eval indexes (and the embedding cache) are kept and reused (default: $AUDITOR_INDEX_DIR or indexes/).",
    "Write each training set without the records behind conclusive findings and reviewer-confirmed suspected "
    "ones (unreviewed, dismissed and id-only ones remove nothing) to DIR, plus DIR/removed.jsonl and DIR/split.toml.",
    f"{DECISIONS_FILE} in the current folder",
)
@output_options
def audit(
    train,
    eval_,
    train_format,
    eval_format,
    methods,
    max_contaminated,
    on_error,
    max_record_chars,
    report_dir,
    overrides,
    output_format,
    quiet,
    **fields,
):
    """Audit training data against eval data in one check and write a report.

    Exit code 0 when no eval item leaks (beyond --max-contaminated), 1 when some do, 2 on bad input.
    """
    with library_errors():
        taken: set[str] = set()
        datasets: dict[str, DatasetSpec] = {}
        sides: dict[str, list[str]] = {"train": [], "eval": []}
        for role, refs, fmt in (("eval", eval_, eval_format), ("train", train, train_format)):
            for ref in refs:
                name = _dataset_name(ref, taken)
                bundled = is_registry_ref(ref) and not os.path.exists(ref)
                datasets[name] = DatasetSpec(
                    name=name,
                    paths=[ref],
                    role=role,
                    format=fmt,
                    **side_fields(fields, role, bundled),
                    on_error=on_error,
                    max_record_chars=max_record_chars,
                )
                sides[role].append(name)
        config = AuditConfig(
            datasets=datasets,
            checks=[
                CheckSpec(
                    name="audit",
                    train=sides["train"],
                    eval=sides["eval"],
                    methods=list(methods) or None,
                    max_contaminated=max_contaminated,
                )
            ],
            review=ReviewOptions(decisions=DECISIONS_FILE),  # read when present; auditor review writes it
        )
        apply_overrides(config, **overrides)
        _run_and_write(config, report_dir or fresh_report_dir(config, "audit"), output_format, quiet)


@main.command()
@click.argument("manifest", type=click.Path(dir_okay=False))
@click.option(
    "--report-dir",
    default=None,
    help="Report folder (default: the manifest's report_dir, else reports/<manifest name>).",
)
@override_options(
    "Where eval indexes (and the embedding cache) are kept (default: the manifest's index_dir, else $AUDITOR_INDEX_DIR or indexes/).",
    "Write each training set without the records behind conclusive findings and confirmed suspected ones to DIR "
    "(overrides the manifest's write_clean).",
    f"{DECISIONS_FILE} beside the manifest, or the manifest's decisions key",
)
@output_options
def verify(manifest, report_dir, overrides, output_format, quiet):
    """Verify every check of a split manifest (TOML) and write a report.

    Exit code 0 when every check passes, 1 when any fails, 2 on a bad manifest or input.
    """
    with library_errors():
        config = load_manifest(manifest)
        apply_overrides(config, **overrides)
        _run_and_write(
            config,
            report_dir or config.output.report_dir or default_report_dir(Path(manifest).stem),
            output_format,
            quiet,
        )


def _gate_notes(notes: list[str]) -> list[str]:
    """The check's notes on what the embedding tier's lexical gate stopped (none unless that tier ran)."""
    if not any(n.startswith("embedding:") for n in notes):
        return []  # the embedding package is not imported for a run without it
    from ..methods.embedding.gate import NOTE

    return [n for n in notes if n.startswith(NOTE)]

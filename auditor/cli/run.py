"""``auditor audit`` (one check from flags) and ``auditor verify`` (a manifest)."""

from __future__ import annotations

import functools
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import click

from .. import engines
from ..audit.config import AuditConfig, CheckSpec
from ..audit.decisions import DECISIONS_FILE
from ..audit.manifest import load_manifest
from ..audit.run import run_audit
from ..audit.verdict import FAIL_ON, unreviewed_kinds
from ..datasets.dataset import DatasetSpec
from ..datasets.registry import is_registry_ref
from ..errors import AuditorError, OutputError
from ..io.files import describe_os_error
from ..io.jsonread import DEFAULT_MAX_RECORD_CHARS
from ..report import counts as tally
from ..report import escape_line
from ..report.publish import check_report_dir
from . import main
from ._common import (
    EXIT_INTERRUPTED,
    _forget_interrupt,
    apply_embed_cache,
    apply_index_dir,
    default_report_dir,
    embed_cache_option,
    exit_for,
    fresh_report_dir,
    index_dir_option,
    library_errors,
)


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


#: ``--fail-on`` (audit and verify): which findings count against a check's allowance
fail_on_option = click.option(
    "--fail-on",
    type=click.Choice(list(FAIL_ON)),
    default=None,
    help="What counts against the allowance: conclusive findings and confirmed suspected ones (default); "
    "'suspected': unreviewed suspected ones (possible paraphrases) too; 'unreviewed': any unreviewed "
    "suspected finding fails the check (decide them with auditor review).",
)


def _engine_flags() -> list[tuple[str, str, Any]]:
    """(engine, option, field) of every registered engine's option that has a flag (its ``Config``)."""
    return [
        (name, f.name, f)
        for name in engines.names()
        for f in engines.engine_class(name).Config.options().values()
        if f.metadata.get("flag")
    ]


class _RegisteredEngine(click.Choice):
    """``--engine``'s choice: the engines registered when the command line is parsed (an engine
    module imported after this one, e.g. a plugin's, is a choice too)."""

    def __init__(self) -> None:
        super().__init__(engines.names())

    @property
    def choices(self) -> tuple[Any, ...]:
        return tuple(engines.names())

    @choices.setter
    def choices(self, value: object) -> None:
        pass  # click sets the choices once; they are the registry's


class _Workers(click.ParamType):
    """``--workers``: a positive integer, or ``auto`` (the cores free when the scan starts)."""

    name = "workers"

    def convert(self, value, param, ctx):
        if str(value).strip().lower() == "auto":
            return "auto"
        try:
            n = int(value)
        except (TypeError, ValueError):
            n = 0
        if n < 1:
            self.fail(f"{value!r} is not a positive integer or 'auto'", param, ctx)
        return n


WORKERS = _Workers()


def decisions_option(default_text: str):
    """``--decisions PATH``: the review decisions file read by the run (:mod:`auditor.audit.decisions`)."""
    return click.option(
        "--decisions",
        default=None,
        metavar="PATH",
        help=f"Review decisions file (auditor review writes it) read by the run (default: {default_text}, when present).",
    )


def engine_options(f):
    """``--engine``, ``--workers`` and the flags of every registered engine's own options (``ray``:
    ``--ray-address``, ``--embed-actors``): how the scan runs (flags override the manifest). The
    command receives them as one ``engine_flags`` argument (:func:`_apply_overrides`)."""
    flags = _engine_flags()

    @functools.wraps(f)
    def command(*args, **kw):
        given = {"engine": kw.pop("engine"), "workers": kw.pop("workers"), "options": {}}
        for engine, option, fld in flags:
            value = kw.pop(fld.metadata["flag"].lstrip("-").replace("-", "_"))
            if value is not None:
                given["options"].setdefault(engine, {})[option] = value
        return f(*args, engine_flags=given, **kw)

    for _, _, fld in reversed(flags):
        span = fld.metadata.get("range")
        command = click.option(
            fld.metadata["flag"],
            type=click.IntRange(min=span[0], max=span[1]) if span else None,
            default=None,
            help=fld.metadata.get("help"),
        )(command)
    command = click.option(
        "--workers",
        type=WORKERS,
        default=None,
        metavar="N|auto",
        help="Scan workers (default: auto, the cores free when the scan starts; for ray every cluster CPU).",
    )(command)
    summaries = ", ".join(f"{n}: {engines.engine_class(n).summary}" for n in engines.names())
    return click.option(
        "--engine",
        type=_RegisteredEngine(),
        default=None,
        help=f"Scan engine ({summaries}).",
    )(command)


_FIELDS = (
    ("text-field", "Dotted path of the text field, for generic formats"),
    ("id-field", "Dotted path of the id field, for generic formats"),
    ("messages", "Message selector for chat-shaped fields: first-user, last-user, all-user (default), WHICH-ROLE"),
    ("calls-field", "Dotted path of a field holding tool calls (JSON or Python-style call strings)"),
    (
        "encoding",
        "Text encoding of the files (latin-1, cp1252, utf-16 ...; default UTF-8, or as a byte-order mark says)",
    ),
)


def field_options(f):
    """``--text-field`` / ``--id-field`` / ``--messages`` / ``--calls-field`` / ``--encoding`` for both sides, and each
    with a ``--train-`` / ``--eval-`` form for one side (the one-side form wins)."""
    for flag, text in reversed(_FIELDS):
        f = click.option(f"--eval-{flag}", default=None, help=f"{text}: eval side only.")(f)
        f = click.option(f"--train-{flag}", default=None, help=f"{text}: training side only.")(f)
        f = click.option(f"--{flag}", default=None, help=f"{text}: both sides.")(f)
    return f


def side_fields(fields: dict, role: str, bundled: bool) -> dict:
    """The DatasetSpec field options of one side from the parsed ``field_options`` flags (bundled
    sets know their own text and id fields: only the message selector applies to them)."""
    out = {}
    for flag, _ in _FIELDS:
        key = flag.replace("-", "_")
        value = fields.get(f"{role}_{key}") or fields.get(key)
        if bundled and key != "messages":
            value = None
        out[key] = value
    return out


def _apply_overrides(
    config, index_dir, embed_cache, model_cache, write_clean, engine_flags, fail_on=None, decisions=None
) -> None:
    """Flags given on the command line win over the manifest's (or the defaults'); defaults from the
    environment fill in what the manifest leaves open."""
    if fail_on:
        config.fail_on = fail_on
    if decisions:
        config.decisions = decisions
    apply_index_dir(config, index_dir)
    apply_embed_cache(config, embed_cache, model_cache)
    if write_clean:
        config.write_clean = write_clean
    if engine_flags["engine"]:
        config.engine = engine_flags["engine"]
    if engine_flags["workers"]:
        config.workers = None if engine_flags["workers"] == "auto" else engine_flags["workers"]
    for engine, options in engine_flags["options"].items():
        config.engine_options.setdefault(engine, {}).update(options)


def output_options(f):
    """``--format`` (``text``, or ``json``: the report on stdout and nothing else, the other lines on
    stderr) and ``--quiet`` (only the summary line; with ``json``, only the report)."""
    f = click.option(
        "--quiet", "-q", is_flag=True, help="Print only the summary line (with --format json: only the report)."
    )(f)
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(["text", "json"]),
        default="text",
        show_default=True,
        help="What stdout gets: text lines, or json: report.json's document and nothing else (other lines go to stderr).",
    )(f)


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
    config.report_dir = report_dir  # run_audit refuses a clean folder overlapping it, before the audit
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
            str((e.filename if isinstance(e, OSError) else None) or config.write_clean),
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
        say(f"report: {', '.join(escape_line(str(p)) for p in written)}")
        waiting = sum(tally.unreviewed(c) for c in report.checks)
        if waiting:  # never a quiet pass over suspected findings nobody looked at
            json_path = next((p for p in written if str(p).endswith(".json")), "REPORT.json")
            say(
                f"unreviewed: {waiting} suspected eval item{'s' if waiting != 1 else ''} ({unreviewed_kinds(report)}) "
                f"nobody has decided; review: auditor review {escape_line(str(json_path))}"
                + (f" (decisions: {escape_line(str(config.decisions))})" if config.decisions else "")
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
@index_dir_option(
    "Where eval indexes (and the embedding cache) are kept and reused (default: $AUDITOR_INDEX_DIR or indexes/)."
)
@embed_cache_option()
@click.option(
    "--write-clean",
    default=None,
    metavar="DIR",
    help="Write each training set without the records behind conclusive findings and reviewer-confirmed suspected "
    "ones (unreviewed, dismissed and id-only ones remove nothing) to DIR, plus DIR/removed.jsonl and DIR/split.toml.",
)
@fail_on_option
@decisions_option(f"{DECISIONS_FILE} in the current folder")
@engine_options
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
    index_dir,
    embed_cache,
    model_cache,
    write_clean,
    fail_on,
    decisions,
    engine_flags,
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
            decisions=DECISIONS_FILE,  # read when present; auditor review writes it
        )
        _apply_overrides(
            config,
            index_dir,
            embed_cache,
            model_cache,
            write_clean,
            engine_flags,
            fail_on,
            decisions,
        )
        _run_and_write(config, report_dir or fresh_report_dir(config, "audit"), output_format, quiet)


@main.command()
@click.argument("manifest", type=click.Path(dir_okay=False))
@click.option(
    "--report-dir",
    default=None,
    help="Report folder (default: the manifest's report_dir, else reports/<manifest name>).",
)
@index_dir_option(
    "Where eval indexes (and the embedding cache) are kept (default: the manifest's index_dir, else $AUDITOR_INDEX_DIR or indexes/)."
)
@embed_cache_option()
@click.option(
    "--write-clean",
    default=None,
    metavar="DIR",
    help="Write each training set without the records behind conclusive findings and confirmed suspected ones to DIR "
    "(overrides the manifest's write_clean).",
)
@fail_on_option
@decisions_option(f"{DECISIONS_FILE} beside the manifest, or the manifest's decisions key")
@engine_options
@output_options
def verify(
    manifest,
    report_dir,
    index_dir,
    embed_cache,
    model_cache,
    write_clean,
    fail_on,
    decisions,
    engine_flags,
    output_format,
    quiet,
):
    """Verify every check of a split manifest (TOML) and write a report.

    Exit code 0 when every check passes, 1 when any fails, 2 on a bad manifest or input.
    """
    with library_errors():
        config = load_manifest(manifest)
        _apply_overrides(
            config,
            index_dir,
            embed_cache,
            model_cache,
            write_clean,
            engine_flags,
            fail_on,
            decisions,
        )
        _run_and_write(
            config, report_dir or config.report_dir or default_report_dir(Path(manifest).stem), output_format, quiet
        )

"""The options ``auditor audit`` and ``auditor verify`` share: how the scan runs (``--engine``,
``--workers`` and each registered engine's own flags), which fields are read on each side, what
counts against a check (``--fail-on``, ``--decisions``), what stdout gets (``--format``, ``--quiet``),
and the flags applied over a manifest's settings (:func:`apply_overrides`).
"""

from __future__ import annotations

import functools
from typing import Any

import click

from .. import engines
from ..audit.verdict import FAIL_ON
from ._common import FIELD_OPTIONS, apply_embed_cache, apply_index_dir, embed_cache_option, index_dir_option

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
    command receives them as one ``engine_flags`` argument (:func:`apply_overrides`)."""
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
        span, choices = fld.metadata.get("range"), fld.metadata.get("choices")
        command = click.option(
            fld.metadata["flag"],
            type=click.IntRange(min=span[0], max=span[1]) if span else click.Choice(choices) if choices else None,
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


def field_options(f):
    """``--text-field`` / ``--id-field`` / ``--messages`` / ``--calls-field`` / ``--encoding`` for both sides, and each
    with a ``--train-`` / ``--eval-`` form for one side (the one-side form wins)."""
    for flag, text in reversed(FIELD_OPTIONS):
        f = click.option(f"--eval-{flag}", default=None, help=f"{text}: eval side only.")(f)
        f = click.option(f"--train-{flag}", default=None, help=f"{text}: training side only.")(f)
        f = click.option(f"--{flag}", default=None, help=f"{text}: both sides.")(f)
    return f


def side_fields(fields: dict, role: str, bundled: bool) -> dict:
    """The DatasetSpec field options of one side from the parsed ``field_options`` flags (bundled
    sets know their own text and id fields: only the message selector applies to them)."""
    out = {}
    for flag, _ in FIELD_OPTIONS:
        key = flag.replace("-", "_")
        value = fields.get(f"{role}_{key}") or fields.get(key)
        if bundled and key != "messages":
            value = None
        out[key] = value
    return out


def override_options(index_help: str, write_clean_help: str, decisions_default: str):
    """``--index-dir``, ``--embed-cache`` (and its siblings), ``--write-clean``, ``--fail-on``,
    ``--decisions`` and :func:`engine_options`: the flags applied over a manifest's settings. The
    command receives them as one ``overrides`` argument, for :func:`apply_overrides`."""
    options = (
        index_dir_option(index_help),
        embed_cache_option(),
        click.option("--write-clean", default=None, metavar="DIR", help=write_clean_help),
        fail_on_option,
        decisions_option(decisions_default),
        engine_options,
    )

    def decorate(f):
        @functools.wraps(f)
        def command(*args, **kw):
            return f(*args, overrides={k: kw.pop(k) for k in _OVERRIDES}, **kw)

        for option in reversed(options):
            command = option(command)
        return command

    return decorate


_OVERRIDES = ("index_dir", "embed_cache", "model_cache", "write_clean", "engine_flags", "fail_on", "decisions")


def apply_overrides(
    config, index_dir, embed_cache, model_cache, write_clean, engine_flags, fail_on=None, decisions=None
) -> None:
    """Flags given on the command line win over the manifest's (or the defaults'); defaults from the
    environment fill in what the manifest leaves open."""
    if fail_on:
        config.review.fail_on = fail_on
    if decisions:
        config.review.decisions = decisions
    apply_index_dir(config, index_dir)
    apply_embed_cache(config, embed_cache, model_cache)
    if write_clean:
        config.output.write_clean = write_clean
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

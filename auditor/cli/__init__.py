"""The ``auditor`` command line: a thin layer over the library.

Each module in this package adds commands to :data:`main` (``@main.command()``); a command parses
its options, calls one library function, and turns an :class:`~auditor.errors.AuditorError` into a
one-line message with exit code 2 (see :func:`auditor.cli._common.library_errors`). :data:`COMMANDS`
names each command's module and first line, so that ``auditor --help`` and ``auditor --version`` import
no command and a command imports only its own module (``tests/test_startup.py``).

Exit codes: 0 pass, 1 contamination above the allowance (or an incomplete check), 2 bad usage or
unreadable input, 130 interrupted (Ctrl-C), 141 the reader of standard output closed it early (``| head``:
128 + SIGPIPE, as a shell tool killed by the signal reports it; no message). A usage error is one line on stderr too, like every other
error (:class:`OneLineUsageError`).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Iterator
from typing import IO, Any

import click

from .._version import __version__
from ..io.blas import limit_blas_threads


class OneLineUsageError(click.UsageError):
    """A usage error shown as one line, ``Error: PROBLEM (see 'COMMAND --help')``, instead of click's
    usage, hint, blank line and message.

    >>> from click.testing import CliRunner
    >>> CliRunner().invoke(main, ["audit", "--bogus"], prog_name="auditor").output
    "Error: No such option '--bogus' (see 'auditor audit --help')\\n"
    """

    def show(self, file: IO[Any] | None = None) -> None:
        see = f" (see '{self.ctx.command_path} --help')" if self.ctx is not None else ""
        problem = " ".join(self.format_message().split()).rstrip(".")
        click.echo(f"Error: {problem}{see}", file=file, err=file is None)


@contextlib.contextmanager
def _one_line() -> Iterator[None]:
    try:
        yield
    except click.exceptions.NoArgsIsHelpError:  # `auditor` alone: its help, as click shows it
        raise
    except click.UsageError as e:
        if isinstance(e, OneLineUsageError):
            raise
        raise OneLineUsageError(e.format_message(), e.ctx) from None


#: command -> (the module defining it, the first paragraph of its help, as ``auditor --help`` lists it);
#: ``tests/test_startup.py`` checks both against the commands themselves
COMMANDS: dict[str, tuple[str, str]] = {
    "audit": ("auditor.cli.run", "Audit training data against eval data in one check and write a report."),
    "calibrate": (
        "auditor.cli.calibrate",
        "Print precision and recall per threshold of the embedding method, to choose a threshold.",
    ),
    "data": ("auditor.cli.data", "The public releases the tests and notebooks read (docs/data.md)."),
    "formats": (
        "auditor.cli.info",
        "List the dataset formats (adapters): the JSON layouts they read (chosen by content) or their suffixes.",
    ),
    "inspect": (
        "auditor.cli.info",
        "Show how a dataset is read: per file the format chosen and why, counts, and the first records "
        "(views first, truncated; meta after).",
    ),
    "methods": ("auditor.cli.info", "List the detection methods and whether their dependencies are installed."),
    "provenance": ("auditor.cli.provenance_cmd", "Trace every derived training record to its source item and split."),
    "registry": (
        "auditor.cli.info",
        "List the bundled evaluation sets (names usable wherever a path is) with counts, splits and licence.",
    ),
    "report": (
        "auditor.cli.report",
        "Re-render a report.json as HTML, Markdown, JUnit XML or CONDA database rows.",
    ),
    "review": (
        "auditor.cli.review_cmd",
        "Review the suspected findings of a report: confirm (contamination) or dismiss (not).",
    ),
    "verify": ("auditor.cli.run", "Verify every check of a split manifest (TOML) and write a report."),
}


class AuditorGroup(click.Group):
    """The ``auditor`` group: its own and every command's usage errors are :class:`OneLineUsageError`."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        with _one_line():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        with _one_line():
            return super().invoke(ctx)


class LazyGroup(AuditorGroup):
    """The top-level group: a command of :data:`COMMANDS` is imported when it is run (or its help
    shown); the list of ``--help`` comes from the table (click's ``LazyGroup`` pattern)."""

    def list_commands(self, ctx: click.Context | None) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context | None, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(COMMANDS[cmd_name][0])  # its @main.command() adds it to self.commands
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            if name in COMMANDS and name not in self.commands:
                rows.append((name, click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit)))
            else:
                rows.append((name, self.commands[name].get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        limit_blas_threads()  # before any command imports numpy (auditor.io.blas)
        return super().main(*args, **kwargs)

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        with _closed_stdout_ends_quietly():  # `auditor --help | head`
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        with _closed_stdout_ends_quietly():
            result = super().invoke(ctx)
            sys.stdout.flush()  # what is still buffered fails here, not in the interpreter's exit
            return result


@contextlib.contextmanager
def _closed_stdout_ends_quietly() -> Iterator[None]:
    """A write to a stdout whose reader has gone (``auditor review R --list | head``) ends the command
    with :data:`EXIT_BROKEN_PIPE` and no message, whichever command was writing."""
    try:
        yield
    except BrokenPipeError:
        _discard_stdout()
        raise click.exceptions.Exit(EXIT_BROKEN_PIPE) from None


#: the exit status when the reader of stdout went away: 128 + SIGPIPE, as a killed shell tool's
EXIT_BROKEN_PIPE = 141


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of what is buffered does not fail
    again (Python's documented way: docs.python.org/3/library/signal.html#note-on-sigpipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a file descriptor (a test runner's buffer)
        pass


def commands() -> dict[str, click.Command]:
    """Every command by name, each imported (for what inspects them all: the docs' tests)."""
    found = {name: main.get_command(None, name) for name in main.list_commands(None)}
    return {name: cmd for name, cmd in found.items() if cmd is not None}


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="auditor")
def main() -> None:
    """Tell whether a training set leaks an evaluation set, and prove it item by item."""

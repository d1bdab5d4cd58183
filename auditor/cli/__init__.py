"""The ``auditor`` command line: a thin layer over the library.

Each module in this package adds commands to :data:`main` (``@main.command()``); a command parses
its options, calls one library function, and turns an :class:`~auditor.errors.AuditorError` into a
one-line message with exit code 2 (see :func:`auditor.cli._common.library_errors`).

Exit codes: 0 pass, 1 contamination above the allowance (or an incomplete check), 2 bad usage or
unreadable input, 130 interrupted (Ctrl-C). A usage error is one line on stderr too, like every other
error (:class:`OneLineUsageError`).
"""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
from collections.abc import Iterator
from typing import IO, Any

import click

from .._version import __version__


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


class AuditorGroup(click.Group):
    """The ``auditor`` group: its own and every command's usage errors are :class:`OneLineUsageError`."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        with _one_line():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        with _one_line():
            return super().invoke(ctx)


@click.group(cls=AuditorGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="auditor")
def main() -> None:
    """Tell whether a training set leaks an evaluation set, and prove it item by item."""


for _m in pkgutil.iter_modules(__path__):
    if not _m.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_m.name}")

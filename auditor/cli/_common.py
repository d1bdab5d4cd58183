"""Helpers shared by CLI commands."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click

from ..errors import AuditorError
from ..io.files import describe_os_error

EXIT_PASS, EXIT_FAIL, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT: an interrupted run is neither a pass nor a finding


class AuditorClickError(click.ClickException):
    exit_code = EXIT_ERROR


@contextlib.contextmanager
def library_errors() -> Iterator[None]:
    """Turn library errors into one clean line on stderr and exit code 2; Ctrl-C into one line and
    exit code 130 (outputs are written atomically, so nothing half-written is left)."""
    try:
        yield
    except AuditorError as e:
        raise AuditorClickError(str(e)) from None
    except OSError as e:  # a file system fault no check caught first: still one line, exit 2
        where = f"{e.filename}: " if e.filename else ""
        raise AuditorClickError(f"{where}{describe_os_error(e)}") from None
    except RecursionError:
        raise AuditorClickError("input nested too deeply to process (Python's recursion limit)") from None
    except MemoryError:
        raise AuditorClickError("out of memory; give the run more memory or smaller inputs") from None
    except KeyboardInterrupt:
        click.echo("auditor: interrupted; no report written", err=True)
        _forget_interrupt()
        raise click.exceptions.Exit(EXIT_INTERRUPTED) from None


def _forget_interrupt() -> None:
    """Make the exit status 130, as promised, even when Ctrl-C landed inside a string ``exec``.

    CPython (3.11, 3.12) records a KeyboardInterrupt that ends a string ``exec``/``eval`` (libraries
    run some at import, e.g. scipy's ``exec(f"from numpy import *", ...)``) in a process-wide flag;
    under ``python -m`` the interpreter then ends by killing itself with SIGINT (status -2) whatever
    exit code was asked for, even though the interrupt was caught. The flag is reset at the start of
    every string evaluation, so one empty evaluation clears it.
    """
    exec("None", {})


def exit_for(verdict: str) -> int:
    return EXIT_PASS if verdict == "pass" else EXIT_FAIL

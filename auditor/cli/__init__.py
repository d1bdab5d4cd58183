"""The ``auditor`` command line: a thin layer over the library.

Each module in this package adds commands to :data:`main` (``@main.command()``); a command parses
its options, calls one library function, and turns an :class:`~auditor.errors.AuditorError` into a
one-line message with exit code 2 (see :func:`auditor.cli._common.library_errors`).

Exit codes: 0 pass, 1 contamination above the allowance (or an incomplete check), 2 bad usage or
unreadable input, 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import importlib
import pkgutil

import click

from .._version import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="auditor")
def main() -> None:
    """Tell whether a training set leaks an evaluation set, and prove it item by item."""


for _m in pkgutil.iter_modules(__path__):
    if not _m.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_m.name}")

"""``auditor report REPORT.json --format html|md|junit``: render a written report again, without re-running the audit."""

from __future__ import annotations

import click

from ..report import rerender
from . import main
from ._common import library_errors


@main.command("report")
@click.argument("report_json", metavar="REPORT.json", type=click.Path(dir_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["html", "md", "junit"]),
    default="html",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--out",
    default=None,
    metavar="PATH",
    help="Output file (default: report.html / report.md / junit.xml beside REPORT.json).",
)
def report_cmd(report_json, fmt, out):
    """Re-render a report.json as HTML, Markdown or JUnit XML."""
    with library_errors():
        path = rerender(report_json, fmt, out)
    click.echo(str(path))

"""``auditor report REPORT.json --format html|md|junit|conda``: render a written report again, without
re-running the audit (``conda``: its rows for the CONDA Data Contamination Database)."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import InputError
from ..report import Report, escape_line, rerender
from ..report.conda import DATABASE, conda_todo
from . import main
from ._common import library_errors

#: ``--format conda`` without ``--out``: the rows' file beside REPORT.json (and the pull request's
#: text beside it: :func:`_pr_path`)
CONDA_FILE = "conda.csv"


def _pr_path(rows: Path) -> Path:
    """Where ``--format conda`` writes the pull request's text: ``conda.csv`` → ``conda-pr.md``."""
    return rows.with_name(f"{rows.stem}-pr.md")


def _not_a_report(path: str, error: InputError) -> InputError:
    """The load error of a file that is not a report.json, saying which file is wanted."""
    given = Path(path)
    if given.suffix.lower() == ".json":
        return error
    wanted = given.with_name("report.json")
    hint = f": give {wanted}" if wanted.is_file() else ""
    return InputError(
        path,
        None,
        f"not a report.json ({error.problem}); `auditor report` re-renders the report.json an audit wrote{hint}",
    )


@main.command("report")
@click.argument("report_json", metavar="REPORT.json", type=click.Path(dir_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["html", "md", "junit", "conda"]),
    default="html",
    show_default=True,
    help="Output format (conda: the rows of the CONDA Data Contamination Database's contamination_report.csv; "
    "the fields a report cannot fill are named on stderr).",
)
@click.option(
    "--out",
    default=None,
    metavar="PATH",
    help=f"Output file (default: report.html / report.md / junit.xml / {CONDA_FILE} beside REPORT.json; "
    "conda also writes the pull request's text to NAME-pr.md beside it).",
)
def report_cmd(report_json, fmt, out):
    """Re-render a report.json as HTML, Markdown, JUnit XML or CONDA database rows."""
    with library_errors():
        if fmt == "conda" and out is None:
            out = str(Path(report_json).with_name(CONDA_FILE))
        try:
            path = rerender(report_json, fmt, out)
        except InputError as e:
            raise _not_a_report(report_json, e) from None
        paths, todo = [path], []
        if fmt == "conda":
            paths.append(rerender(report_json, "conda-pr", _pr_path(path)))
            todo = conda_todo(Report.load(report_json))
    for p in paths:
        click.echo(str(p))
    if fmt == "conda":
        click.echo(
            f"auditor: {escape_line(str(path))} holds rows for {DATABASE} (its contamination_report.csv), "
            f"{escape_line(str(paths[1]))} the pull request's text; before you open it, fill in:",
            err=True,
        )
        for line in todo:
            click.echo(f"  {escape_line(line)}", err=True)

"""``auditor review REPORT.json``: decide a report's suspected findings, into the decisions file."""

from __future__ import annotations

import click

from ..audit.decisions import CONFIRMED, DECISIONS_FILE, DISMISSED, Decisions
from ..audit.review_session import decide_findings, describe, list_snippet, suspected, walk
from ..report import Report, escape_line
from . import main
from ._common import library_errors


def _default_decisions(report: Report) -> str:
    """The file the audit behind ``report`` read (its ``decisions`` section), else the default name."""
    section = report.decisions
    if section is not None and isinstance(section.file, str) and section.file:
        return section.file
    return DECISIONS_FILE


def _ask(prompt: str) -> str:
    try:
        return click.prompt(prompt, default="", show_default=False, prompt_suffix=": ")
    except click.Abort:  # input ended (EOF) or Ctrl-C: stop, keeping what was decided
        click.echo("")
        return "q"


@main.command("review")
@click.argument("report_json", metavar="REPORT.json", type=click.Path(dir_okay=False))
@click.option(
    "--confirm", "confirm", multiple=True, metavar="ID", help="Confirm a suspected finding (review id; repeatable)."
)
@click.option(
    "--dismiss", "dismiss", multiple=True, metavar="ID", help="Dismiss a suspected finding (review id; repeatable)."
)
@click.option("--confirm-unreviewed", is_flag=True, help="Confirm every suspected finding still unreviewed.")
@click.option("--dismiss-unreviewed", is_flag=True, help="Dismiss every suspected finding still unreviewed.")
@click.option("--note", default="", help="A note stored with the decisions given on the command line.")
@click.option(
    "--list",
    "list_only",
    is_flag=True,
    help="List the suspected findings, their review ids and decisions; change nothing.",
)
@click.option(
    "--all", "revisit", is_flag=True, help="Interactive: walk decided findings too, not only unreviewed ones."
)
@click.option(
    "--decisions",
    default=None,
    metavar="PATH",
    help=f"Decisions file to read and write (default: the one the audit read, else {DECISIONS_FILE}).",
)
def review_cmd(
    report_json, confirm, dismiss, confirm_unreviewed, dismiss_unreviewed, note, list_only, revisit, decisions
):
    """Review the suspected findings of a report: confirm (contamination) or dismiss (not).

    Without --confirm / --dismiss / --*-unreviewed / --list it walks the unreviewed suspected
    findings one by one (both texts, the evidence), reading answers from stdin. Decisions go to the
    decisions file, which every later audit / verify reads: commit it beside the manifest.
    """
    with library_errors():
        report = Report.load(report_json)
        path = decisions or _default_decisions(report)
        if confirm_unreviewed and dismiss_unreviewed:
            raise click.UsageError("give --confirm-unreviewed or --dismiss-unreviewed, not both")
        if list_only:
            known = Decisions.load(path)
            items = suspected(report, known, revisit=True)
            for n, f in enumerate(items, 1):
                lines = describe(report, f, known, n, len(items))
                click.echo(escape_line(lines[1]))
                click.echo(escape_line(f"    eval: {list_snippet(lines[3])}"))
            click.echo(f"{len(items)} suspected findings; decisions file: {escape_line(path)}")
            return
        scripted = confirm or dismiss or confirm_unreviewed or dismiss_unreviewed
        if scripted:
            bulk = CONFIRMED if confirm_unreviewed else DISMISSED if dismiss_unreviewed else None
            result = decide_findings(report, path, confirm, dismiss, bulk, note)
        else:
            result = walk(report, path, ask=_ask, say=lambda line: click.echo(escape_line(line)), revisit=revisit)
    done = ", ".join(f"{n} {k}" for k, n in sorted(result.counts.items())) or "no decisions"
    where = (
        f"written to {escape_line(str(result.path))}"
        if result.written
        else f"{escape_line(str(result.path))} unchanged"
    )
    click.echo(
        f"review: {done}"
        + (f", {result.skipped} skipped" if result.skipped else "")
        + f"; {where}"
        + ("; re-run the audit (auditor audit / verify) to apply them" if result.written else "")
    )

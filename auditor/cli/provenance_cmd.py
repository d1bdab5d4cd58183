"""``auditor provenance``: run a manifest's ``[[provenance]]`` entries, or re-read a saved report.

Exit code 0 when no derived record traces to a held-out split (beyond ``max_held_out``), 1 when
some do (or attribution was incomplete), 2 on a bad manifest or input.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..audit.manifest import load_manifest
from ..audit.run import audit_provenance
from ..errors import InputError
from ..report import Report, escape_line
from ..report.provenance_text import statement
from ..report.publish import check_report_dir
from . import main
from ._common import (
    apply_embed_cache,
    apply_index_dir,
    default_report_dir,
    embed_cache_option,
    exit_for,
    index_dir_option,
    library_errors,
)


@main.command()
@click.argument("source", metavar="MANIFEST.toml|REPORT.json", type=click.Path(dir_okay=False))
@click.option(
    "--statement",
    "as_statement",
    is_flag=True,
    help="Print the split statement for a paper (one paragraph per provenance entry).",
)
@click.option(
    "--report-dir",
    default=None,
    help="Report folder (default: the manifest's report_dir, else reports/<manifest name>).",
)
@index_dir_option(
    "Where source indexes are kept and reused (default: the manifest's index_dir, else $AUDITOR_INDEX_DIR or indexes/)."
)
@embed_cache_option()
def provenance(source, as_statement, report_dir, index_dir, embed_cache, model_cache):
    """Trace every derived training record to its source item and split.

    Given a manifest, runs its [[provenance]] entries (not its checks) and writes provenance.json and
    provenance.md (beside, never over, verify's report); given a JSON report, reads the provenance
    already in it (nothing is rerun).
    """
    with library_errors():
        if source.endswith(".json"):
            report = Report.load(source)
            if not report.provenance:
                raise InputError(source, None, "the report has no 'provenance' section")
            written = None
        else:
            config = load_manifest(source)
            apply_index_dir(config, index_dir)
            apply_embed_cache(config, embed_cache, model_cache)
            out = report_dir or config.output.report_dir or default_report_dir(Path(source).stem)
            check_report_dir(out)  # before any long work
            report = audit_provenance(config)
            written = report.write(out, kind="provenance")
        if as_statement:
            for entry in report.provenance:
                click.echo(statement(entry))
        else:
            click.echo(report.summary_line())
        if written:
            click.echo(f"report: {', '.join(escape_line(str(p)) for p in written.values())}", err=as_statement)
        verdicts = [e.verdict for e in report.provenance]
        sys.exit(exit_for("fail" if "fail" in verdicts else "incomplete" if "incomplete" in verdicts else "pass"))

"""``auditor calibrate``: precision/recall per threshold of the ``embedding`` method on your data."""

from __future__ import annotations

import json
import os

import click

from ..audit.calibrate import calibrate as run
from ..datasets.dataset import Dataset, DatasetSpec
from ..errors import ConfigError
from . import main
from ._common import DEFAULT_INDEX_DIR, embed_cache_option, index_dir_option, library_errors


def _param(value: str) -> tuple[str, object]:
    key, sep, raw = value.partition("=")
    if not sep or not key:
        raise ConfigError(f"--param expects KEY=VALUE, got '{value}'")
    try:
        return key, json.loads(raw)
    except ValueError:
        return key, raw


@main.command()
@click.option(
    "--eval",
    "eval_",
    required=True,
    metavar="PATH|NAME[:split]",
    help="Eval set: file, glob or bundled name (its items are indexed, rewritten and held out).",
)
@click.option("--eval-format", default=None, help="Format of the eval files (default: detected).")
@click.option("--text-field", default=None, help="Dotted path of the text field, for generic formats.")
@click.option(
    "--pairs",
    default=None,
    type=click.Path(dir_okay=False),
    help='Labelled pairs (JSON Lines: {"eval": ..., "train": ..., "label": 0|1}) instead of automatic rewrites.',
)
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="KEY=VALUE",
    help="embedding method parameter, e.g. model=/path/to/model or w_margin=1.5 (repeatable).",
)
@click.option(
    "--encoding", default=None, help="Text encoding of the eval files (latin-1, cp1252, utf-16 ...; default UTF-8)."
)
@click.option("--seed", default=0, show_default=True, help="Seed of the automatic split and rewrites.")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
@index_dir_option("Index folder; embeddings are cached in its embeddings/ (default: $AUDITOR_INDEX_DIR or indexes/).")
@embed_cache_option()
def calibrate(
    eval_, eval_format, text_field, pairs, params, encoding, seed, as_json, index_dir, embed_cache, model_cache
):
    """Print precision and recall per threshold of the embedding method, to choose a threshold.

    Positives are rewrites of eval items (automatic) or label-1 pairs (--pairs); hard negatives are
    held-out items of the same set (automatic) or every other pairing. Exit code 2 on bad input.
    """
    with library_errors():
        records = []
        if not pairs:
            ds = Dataset(
                DatasetSpec(
                    name="calibrate",
                    paths=[eval_],
                    role="eval",
                    format=eval_format,
                    text_field=text_field,
                    encoding=encoding,
                )
            )
            records = list(ds.records())
        method_params = dict(_param(p) for p in params)
        method_params.setdefault("cache_dir", embed_cache or os.path.join(index_dir or DEFAULT_INDEX_DIR, "embeddings"))
        if model_cache:
            method_params.setdefault("model_cache", model_cache)
        gate = click.get_current_context().meta.get("auditor.embed_gate")
        if gate:
            method_params["gate"] = gate
        result = run(records, pairs_file=pairs, params=method_params, seed=seed)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "mode": result.mode,
                    "positives": result.positives,
                    "negatives": result.negatives,
                    "rows": [r.__dict__ for r in result.rows],
                    "decision": result.decision,
                    "at_decision": result.at_decision.__dict__ if result.at_decision else None,
                },
                indent=2,
            )
        )
        return
    click.echo(
        f"{result.mode}; {result.positives} positives, {result.negatives} negatives, "
        f"{result.candidates} scored candidates"
    )
    click.echo(f"{'threshold':>9} {'precision':>9} {'recall':>7} {'f1':>6} {'tp':>5} {'fp':>5} {'fn':>5}")
    for r in result.rows:
        click.echo(
            f"{r.threshold:>9.2f} {r.precision:>9.3f} {r.recall:>7.3f} {r.f1:>6.3f} {r.tp:>5} {r.fp:>5} {r.fn:>5}"
        )
    b = result.best()
    if result.at_decision is not None and result.decision is not None:
        a = result.at_decision
        click.echo(
            f"conclusive rule ({result.decision['rule']}): precision {a.precision:.3f} recall {a.recall:.3f} "
            f"f1 {a.f1:.3f} (tp {a.tp}, fp {a.fp})"
        )
    click.echo(
        f"best F1 {b.f1:.3f} at threshold {b.threshold:.2f}; to make it the conclusive threshold, put in the manifest "
        "(the conclusive rule also wants every eval number present, as measured above):"
    )
    for line in result.manifest_lines(dict(_param(p) for p in params)):
        click.echo(line)

"""``auditor registry``, ``auditor methods``, ``auditor formats`` and ``auditor inspect``."""

from __future__ import annotations

import json

import click

from .. import adapters, methods, registry
from ..datasets import Dataset, DatasetSpec
from . import main
from ._common import library_errors


@main.command("registry")
def registry_cmd():
    """List the bundled evaluation sets (names usable wherever a path is) with counts, splits and licence."""
    for e in registry.describe():
        click.echo(
            f"{e['name']:<18} {e.get('records', '?'):>6} records  {e['format']:<16} {e['licence']:<11} {e['description']}"
        )
        counts = e.get("split_counts") or {}
        if counts:
            click.echo(f"{'':<18} splits: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        else:
            click.echo(f"{'':<18} splits: {e['splits']}")
        extra = [f"default {e['default_split']}"] if e.get("default_split") else []
        extra += [f"{k} = {v}" for k, v in (e.get("split_aliases") or {}).items()]
        if extra:
            click.echo(f"{'':<18} " + "; ".join(extra))


@main.command("methods")
def methods_cmd():
    """List the detection methods and whether their dependencies are installed."""
    for name in methods.names():
        cls = methods.get(name)
        missing = cls.missing_requirements()
        state = "available" if not missing else f"needs: pip install 'auditor[{missing[0][1]}]'"
        click.echo(f"{name:<10} {state:<12} {cls.summary}")


@main.command("formats")
def formats_cmd():
    """List the dataset formats (adapters) and the file suffixes they read."""
    for name, cls in sorted(adapters.registry().items()):
        click.echo(
            f"{name:<18} {' '.join(cls.suffixes):<14} {(cls.__doc__ or '').strip().splitlines()[0] if cls.__doc__ else ''}"
        )


@main.command()
@click.argument("dataset", metavar="PATH|NAME[:split]")
@click.option("--format", "fmt", default=None, help="Format (default: detected).")
@click.option("--text-field", default=None, help="Dotted path of the text field, for generic formats.")
@click.option("--id-field", default=None, help="Dotted path of the id field, for generic formats.")
@click.option("-n", "limit", default=3, show_default=True, help="Records to show.")
def inspect(dataset, fmt, text_field, id_field, limit):
    """Show how a dataset is read: format per file, counts, and the first records' views."""
    with library_errors():
        ds = Dataset(
            DatasetSpec(
                name="inspect", paths=[dataset], format=fmt, text_field=text_field, id_field=id_field, on_error="skip"
            )
        )
        shown = []
        for r in ds.records():
            if len(shown) < limit:
                shown.append(
                    {
                        "id": r.id,
                        "source": r.source,
                        "split": r.split,
                        "meta": r.meta,
                        "views": {k: v[:300] for k, v in r.views.items()},
                    }
                )
        click.echo(
            json.dumps(
                {"formats": ds.formats(), **ds.stats.as_dict(), "first": shown},
                indent=2,
                ensure_ascii=False,
                default=str,
            )
        )

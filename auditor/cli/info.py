"""``auditor registry``, ``auditor methods``, ``auditor formats`` and ``auditor inspect``."""

from __future__ import annotations

import json

import click

from .. import adapters, methods
from ..datasets import registry
from ..datasets.dataset import Dataset, DatasetSpec
from ..datasets.searched import Searched
from ..records.record import Record
from . import main
from ._common import dataset_field_options, library_errors


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
    """List the dataset formats (adapters): the JSON layouts they read (chosen by content) or their suffixes."""
    for name, cls in sorted(adapters.registry().items()):
        reads = "JSON " + "/".join(cls.layouts) if cls.layouts else " ".join(cls.suffixes)
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        click.echo(f"{name:<18} {reads:<26} {doc}")


@main.command()
@click.argument("dataset", metavar="PATH|NAME[:split]")
@click.option("--format", "fmt", default=None, help="Format (default: detected).")
@dataset_field_options
@click.option("-n", "limit", default=3, show_default=True, help="Records to show.")
@click.option("--json", "as_json", is_flag=True, help="Print the raw form (JSON) instead of the summary.")
def inspect(dataset, fmt, limit, as_json, **fields):
    """Show how a dataset is read: per file the format chosen and why, counts, and the first records
    (views first, truncated; meta after)."""
    with library_errors():
        ds = Dataset(
            DatasetSpec(
                name="inspect",
                paths=[dataset],
                format=fmt,
                on_error="skip",
                **fields,
            )
        )
        reasons = ds.format_reasons()
        shown: list[Record] = []
        searched = Searched()
        for r in ds.records():
            searched.add(r)
            if len(shown) < limit:
                shown.append(r)
        if as_json:
            first = [
                {"id": r.id, "source": r.source, "split": r.split, "meta": r.meta, "views": dict(r.views)}
                for r in shown
            ]
            doc = {
                "formats": {f: n for f, (n, _) in reasons.items()},
                **ds.stats.as_dict(),
                "searched": searched.as_dict(),
                "first": first,
            }
            click.echo(json.dumps(doc, indent=2, ensure_ascii=False, default=str))
            return
        click.echo(render_inspect(ds, reasons, shown, searched))


#: characters of a view / meta value shown by ``auditor inspect`` (``--json`` shows everything)
VIEW_CHARS, META_CHARS = 240, 120


def _one_line(text: str, limit: int) -> str:
    flat = " ⏎ ".join(line.strip() for line in str(text).splitlines() if line.strip())
    return flat if len(flat) <= limit else flat[: limit - 1] + f"… ({len(flat):,} chars)"


def render_inspect(
    ds: Dataset, reasons: dict[str, tuple[str, str]], records: list, searched: Searched | None = None
) -> str:
    """The human summary of ``auditor inspect``: formats and why, what the text tiers search in each
    file (views, then the ``fields`` of the records read whole), counts, records (views, then meta)."""
    st = ds.stats
    lines = []
    if ds.registry_entry:
        e = ds.registry_entry
        lines.append(f"bundled set {e.name} ({e.licence}); split: {ds.split or 'all'}")
    if ds.registry_entry:
        lines.append(f"{len(reasons)} bundled files, format {ds.registry_entry.format}")
    else:
        for f, (name, why) in reasons.items():
            lines.append(f"file {f}")
            lines.append(f"  format {name}: {why}")
    lines.append(
        f"records: {st.read:,} read, {st.yielded:,} kept, {st.skipped:,} skipped, {st.filtered:,} left out by the split"
    )
    for reason, n in st.skip_reasons.items():
        lines.append(f"  skipped {n:,}: {_one_line(reason, 300)}")
    for bad in st.skipped_files:
        lines.append(f"  file not read: {bad['file']}: {bad['reason']}")
    if st.duplicate_ids:
        lines.append(f"  duplicate ids: {st.duplicate_ids:,}")
    if searched is not None:
        for f in reasons:
            lines += searched.render(f, name=len(reasons) > 1)
    for k, r in enumerate(records, 1):
        head = f"record {k}: id {r.id}" + (f", split {r.split}" if r.split else "") + f"  ({r.source})"
        lines += ["", head]
        width = max((len(v) for v in r.views), default=0)
        for view, text in r.views.items():
            lines.append(f"  {view:<{width}}  {_one_line(text, VIEW_CHARS)}")
        meta = []
        for key, value in r.meta.items():
            if key == "trace" and isinstance(value, list):
                meta.append(f"trace: {len(value)} steps")
            elif key == "turn_starts":
                continue
            else:
                meta.append(f"{key}: {_one_line(json.dumps(value, ensure_ascii=False, default=str), META_CHARS)}")
        if meta:
            lines.append("  meta  " + "; ".join(meta))
    return "\n".join(lines)

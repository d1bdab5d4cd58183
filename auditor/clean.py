"""Cleaned training sets: each training dataset written again without the records behind findings.

This is the falsifier's "retrain with the overlapping items removed". For every training dataset of
an audit, :func:`write_clean` writes ``DIR/<dataset>/<file>`` (the dataset name made safe as a folder name) holding the dataset's selected records
(after its split selection) minus every record with a *conclusive* finding (``id`` evidence never
removes a record), and ``DIR/removed.jsonl`` listing each removed record with the finding that
removed it (its best-scoring one).

Format: the original one when the file's adapter is ``writable`` and kept the parsed object
(``Record.raw``): a JSON array for ``.json`` files, JSON Lines for ``.jsonl``, CSV/TSV with the
original header and delimiter, Parquet. Anything else is written as JSON Lines of
``{id, source, views, meta}`` (file name + ``.jsonl``). Compressed inputs are written uncompressed.
A tau2-bench ``split_tasks.json`` next to a tasks file is copied so the splits still resolve.
Training records the dataset skipped (``on_error = "skip"``) have no parsed form and are not
written; their count is reported, and so are files it could not read at all (``not_written_files``).

>>> import json, tempfile, os
>>> from auditor.datasets import Dataset, DatasetSpec
>>> from auditor.methods.base import Finding
>>> d = tempfile.mkdtemp(); p = os.path.join(d, "t.jsonl")
>>> _ = open(p, "w").write('{"id": 1, "text": "a"}\\n{"id": 2, "text": "b"}\\n')
>>> ds = Dataset(DatasetSpec("t", [p]))
>>> hit = Finding("ev", "9", "ev#9", "t", "2", p + ":2", "exact", 1.0, train_ordinal=1)
>>> summary = write_clean(os.path.join(d, "clean"), [ds], {("t", 1): hit})
>>> summary["datasets"]["t"]["kept"], summary["datasets"]["t"]["removed"]
(1, 1)
>>> open(os.path.join(d, "clean", "t", "t.jsonl")).read()
'{"id": 1, "text": "a"}\\n'

Raises :class:`~auditor.errors.InputError` when a dataset cannot be re-read and
:class:`~auditor.errors.ConfigError` when ``out_dir`` is an existing file.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

from ._io import atomic_write_bytes, atomic_write_text, base_suffix, open_text
from .datasets import Dataset
from .errors import ConfigError
from .methods.base import Finding
from .records import Record, split_source


def _folder(name: str) -> str:
    """A dataset name as a folder name (``webshop:500:`` → ``webshop_500_``)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) or "dataset"


def _file_of(record: Record) -> str:
    from .registry import source_file

    return source_file(split_source(record.source)[0])


def _out_name(path: Path, taken: set[str]) -> str:
    name = path.name
    for comp in (".gz", ".zst"):
        if name.lower().endswith(comp):
            name = name[: -len(comp)]
    base, i = name, 2
    while name in taken:
        name, i = f"{i}-{base}", i + 1
    taken.add(name)
    return name


def _delimiter(path: Path) -> str:
    with open_text(path) as f:
        head = f.read(65536)
    return "\t" if head.count("\t") > head.count(",") else ","


def _encode(path: Path, out: Path, adapter_name: str, writable: bool, records: list[Record]) -> tuple[Path, str]:
    """Bytes of ``records`` in the original format of ``path`` where possible; returns (path, format)."""
    suffix = base_suffix(path)
    if writable and all(r.raw is not None for r in records):
        raws = [r.raw for r in records]
        if suffix == ".jsonl":
            atomic_write_text(out, "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in raws))
            return out, adapter_name
        if suffix == ".json":
            atomic_write_text(out, json.dumps(raws, ensure_ascii=False, indent=1) + "\n")
            return out, adapter_name
        if suffix in (".csv", ".tsv") and all(isinstance(x, dict) for x in raws):
            with open_text(path) as f:
                header = next(csv.reader(f, delimiter=_delimiter(path)), [])
            buf = io.StringIO()
            writer = csv.DictWriter(buf, fieldnames=header, delimiter=_delimiter(path), lineterminator="\n")
            writer.writeheader()
            writer.writerows(raws)
            atomic_write_text(out, buf.getvalue())
            return out, adapter_name
        if suffix == ".parquet" and all(isinstance(x, dict) for x in raws):
            import pyarrow as pa
            import pyarrow.parquet as pq

            schema = pq.read_schema(path)
            sink = pa.BufferOutputStream()
            pq.write_table(pa.Table.from_pylist(raws, schema=schema), sink)
            atomic_write_bytes(out, sink.getvalue().to_pybytes())
            return out, adapter_name
    out = out.with_name(out.name + ".jsonl")
    atomic_write_text(
        out,
        "".join(
            json.dumps(
                {"id": r.id, "source": r.source, "views": r.views, "meta": r.meta}, ensure_ascii=False, default=str
            )
            + "\n"
            for r in records
        ),
    )
    return out, "jsonl"


def write_clean(out_dir: str | Path, datasets: list[Dataset], hits: dict[tuple[str, int], Finding]) -> dict[str, Any]:
    """Write each training dataset without the records in ``hits``; return a summary for the report."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"write_clean: {out} exists and is not a folder")
    summary: dict[str, Any] = {"dir": str(out), "removed_file": str(out / "removed.jsonl"), "datasets": {}}
    removed_lines: list[str] = []
    for ds in datasets:
        by_file: dict[str, list[Record]] = {str(f): [] for f in ds.files}
        removed = 0
        for r in ds.records():
            hit = hits.get((ds.name, r.ordinal))
            if hit is not None:
                removed += 1
                removed_lines.append(
                    json.dumps(
                        {
                            "dataset": ds.name,
                            "id": r.id,
                            "source": r.source,
                            "check": hit.check,
                            "method": hit.method,
                            "score": round(float(hit.score), 6),
                            "eval_dataset": hit.eval_dataset,
                            "eval_id": hit.eval_id,
                            "eval_source": hit.eval_source,
                            "evidence": hit.evidence,
                        },
                        ensure_ascii=False,
                        default=str,
                    )
                    + "\n"
                )
                continue
            by_file.setdefault(_file_of(r), []).append(r)
        taken: set[str] = set()
        files = []
        kept = 0
        unread = {f["file"] for f in ds.stats.skipped_files}
        for path in ds.files:
            if str(path) in unread:  # a file the dataset could not read (on_error = "skip"): not written
                continue
            records = by_file.get(str(path), [])
            adapter = ds._adapter_for(path)
            target = out / _folder(ds.name) / _out_name(Path(path), taken)
            written, fmt = _encode(Path(path), target, adapter.name, adapter.writable, records)
            sibling = Path(path).with_name("split_tasks.json")
            if adapter.name == "tau2-tasks" and sibling.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(sibling, written.with_name("split_tasks.json"))
            kept += len(records)
            files.append({"source": str(path), "written": str(written), "format": fmt, "records": len(records)})
        summary["datasets"][ds.name] = {
            "kept": kept,
            "removed": removed,
            "not_written_skipped": ds.stats.skipped,
            "not_written_files": sorted(unread),
            "files": files,
        }
    atomic_write_text(out / "removed.jsonl", "".join(removed_lines))
    return summary

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

Safety: the cleaned files never replace an input. :func:`plan_clean` (run before the audit starts)
refuses a folder that holds any input file of the run (``--write-clean .`` next to the data, a
manifest's ``write_clean = "."``) and any target that would resolve outside the folder (a dataset
named ``..``, a symlinked subfolder). Files are streamed: memory holds one record, not the dataset.

Raises :class:`~auditor.errors.InputError` when a dataset cannot be re-read and
:class:`~auditor.errors.ConfigError` when ``out_dir`` is an existing file or unsafe (above).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ._io import base_suffix
from .adapters._write import (
    AtomicFile,
    CsvWriter,
    JsonArrayWriter,
    JsonLinesWriter,
    ParquetWriter,
    RecordWriter,
    ViewsWriter,
    copy_companion,
)
from .datasets import Dataset
from .errors import ConfigError
from .methods.base import Finding
from .records import Record, split_source


def _folder(name: str) -> str:
    """A dataset name as a folder name (``webshop:500:`` → ``webshop_500_``; ``..`` → ``__``)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name) or "dataset"
    return safe.replace(".", "_") if set(safe) == {"."} else safe


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


def _inside(root: str, path: str) -> bool:
    return os.path.commonpath([root, path]) == root


def plan_clean(
    out_dir: str | Path, train: Iterable[Dataset], inputs: Iterable[Dataset]
) -> dict[str, list[tuple[Path, Path]]]:
    """Where each file of each training dataset will be written: dataset name → [(input, target)].

    Checked before anything is read or written: ``out_dir`` must not be a file, must not hold any
    file of ``inputs`` (every dataset of the run), and every target must resolve inside it.
    Raises :class:`ConfigError` naming the folder and the problem.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"write_clean: {out} exists and is not a folder")
    root = os.path.realpath(out)
    for ds in inputs:
        for f in ds.files:
            real = os.path.realpath(f)
            if _inside(root, real):
                raise ConfigError(
                    f"write_clean: the folder {out} holds the input file {f} of dataset '{ds.name}'; "
                    "give a folder of its own (cleaned files must never replace their inputs)"
                )
    plan: dict[str, list[tuple[Path, Path]]] = {}
    folders: set[str] = set()
    for ds in train:
        taken: set[str] = set()
        folder = out / _out_name(Path(_folder(ds.name)), folders)  # one folder per dataset
        pairs = [(Path(f), folder / _out_name(Path(f), taken)) for f in ds.files]
        for _, target in pairs:
            if not _inside(root, os.path.realpath(target)) or os.path.realpath(target.parent) == root:
                raise ConfigError(
                    f"write_clean: dataset '{ds.name}' would be written to {target}, outside the folder {out}"
                )
        plan[ds.name] = pairs
    for name in ("removed.jsonl",):
        if not _inside(root, os.path.realpath(out / name)):
            raise ConfigError(f"write_clean: {out / name} leads outside the folder {out}")
    return plan


def _open_writer(adapter, source: Path, target: Path) -> tuple[RecordWriter, str]:
    """The writer for one file: its adapter's format where it can be written back, else views."""
    suffix = base_suffix(source)
    if adapter.writable:
        kind = {".jsonl": JsonLinesWriter, ".json": JsonArrayWriter, ".csv": CsvWriter, ".tsv": CsvWriter}.get(
            suffix, ParquetWriter if suffix == ".parquet" else None
        )
        if kind is not None:
            return kind(source, target), adapter.name
    return ViewsWriter(source, target.with_name(target.name + ".jsonl")), "jsonl"


def _removal(ds: Dataset, r: Record, hit: Finding) -> str:
    return (
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


def write_clean(
    out_dir: str | Path,
    datasets: list[Dataset],
    hits: dict[tuple[str, int], Finding],
    inputs: Iterable[Dataset] | None = None,
) -> dict[str, Any]:
    """Write each training dataset without the records in ``hits``; return a summary for the report.

    ``inputs`` are every dataset of the run (default: ``datasets``); see :func:`plan_clean`.
    """
    out = Path(out_dir)
    plan = plan_clean(out, datasets, datasets if inputs is None else inputs)
    summary: dict[str, Any] = {"dir": str(out), "removed_file": str(out / "removed.jsonl"), "datasets": {}}
    removed_out = AtomicFile(out / "removed.jsonl")
    removed_text = removed_out.stream
    try:
        for ds in datasets:
            summary["datasets"][ds.name] = _write_dataset(ds, plan[ds.name], hits, removed_text)
    except BaseException:
        removed_out.abort()
        raise
    removed_out.commit()
    return summary


def _write_dataset(ds: Dataset, pairs: list[tuple[Path, Path]], hits, removed_stream) -> dict[str, Any]:
    """Stream one dataset's kept records to their files (one open file at a time)."""
    files: list[dict[str, Any]] = []
    counts = {str(src): 0 for src, _ in pairs}
    pending = list(pairs)  # files not yet opened, in dataset order
    current: tuple[str, RecordWriter, str, Path] | None = None
    removed = 0

    def finish() -> None:
        nonlocal current
        if current is not None:
            src, writer, fmt, source = current
            current = None
            written = writer.close()
            if ds.adapter_class(source).name == "tau2-tasks":
                written += copy_companion(source, written[0], "split_tasks.json")
            files.append({"source": src, "written": str(written[0]), "format": fmt, "records": writer.count})

    def open_until(src: str | None) -> None:
        nonlocal current
        while pending:
            source, target = pending.pop(0)
            writer, fmt = _open_writer(ds.adapter_class(source), source, target)
            current = (str(source), writer, fmt, source)
            if str(source) == src:
                return
            finish()

    try:
        for r in ds.records():
            hit = hits.get((ds.name, r.ordinal))
            if hit is not None:
                removed += 1
                removed_stream.write(_removal(ds, r, hit).encode("utf-8"))
                continue
            f = _file_of(r)
            if current is None or current[0] != f:
                finish()
                open_until(f)
            if current is None or current[0] != f:  # a record of no listed file: never expected
                raise ConfigError(f"write_clean: record {r.source} belongs to no file of dataset '{ds.name}'")
            current[1].write(r)
            counts[f] += 1
        finish()
        open_until(None)
        finish()
    except BaseException:
        if current is not None:
            current[1].abort()
        raise
    unread = {f["file"] for f in ds.stats.skipped_files}
    for entry in list(files):
        if entry["source"] in unread:  # a file the dataset could not read whole (on_error = "skip")
            os.unlink(entry["written"])
            files.remove(entry)
    return {
        "kept": sum(e["records"] for e in files),
        "removed": removed,
        "not_written_skipped": ds.stats.skipped,
        "not_written_files": sorted(unread),
        "files": files,
    }

"""The cleaned manifest: ``DIR/split.toml`` beside the cleaned training sets (:mod:`auditor.audit.clean`),
the run's manifest with each cleaned dataset reading its cleaned files, for ``auditor verify
DIR/split.toml``; written atomically, after which the clean folder's ledger names every file of the
complete write (:func:`write_clean_manifest`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..adapters import AtomicFile
from ..datasets.dataset import Dataset
from ..io import toml_writer as _toml
from ..io.jsonread import DEFAULT_MAX_RECORD_CHARS
from ..io.ledger import Ledger
from .clean import VIEWS_FORMAT


def _spec_table(ds: Dataset, paths: list[str] | None = None, fmt: str | None = None) -> dict[str, Any]:
    """A ``[datasets.NAME]`` table for ``ds``: its own files (absolute) unless ``paths`` is given."""
    spec = ds.spec
    table: dict[str, Any] = {"role": spec.role}
    if paths is not None:
        table["path"] = paths
        table["format"] = fmt
    elif ds.registry_entry is not None:
        table["path"] = spec.paths[0]
        table["split"] = spec.split
        return {**table, "split_label": spec.split_label}
    else:
        table["path"] = [os.path.abspath(f) for f in ds.files]
        table["format"] = spec.format
        table["split"] = spec.split
    for key in ("text_field", "id_field", "messages", "calls_field", "on_error", "split_label"):
        table[key] = getattr(spec, key)
    if paths is None:  # the original files, in their encoding (cleaned files are written in UTF-8)
        table["encoding"] = spec.encoding
    if spec.max_record_chars != DEFAULT_MAX_RECORD_CHARS:
        table["max_record_chars"] = spec.max_record_chars
    return table


def write_clean_manifest(config: Any, datasets: dict[str, Dataset], summary: dict[str, Any]) -> Path:
    """Write ``DIR/split.toml``: ``config``'s datasets, checks, provenance entries and method
    parameters, each cleaned training dataset reading its cleaned files (relative to DIR, in the
    format written, without the split selection, which the cleaned files already applied). Other
    datasets keep their sources (bundled names, absolute paths). Reports of ``auditor verify`` on
    it go to ``DIR/report``. Returns the manifest's path.
    """
    out = Path(summary["dir"])
    parts = [
        "# written by auditor --write-clean: the cleaned training sets in place of the originals\n",
        _toml.table(None, {"report_dir": "report", "engine": config.engine, "batch_size": config.batch_size}),
    ]
    for name, ds in datasets.items():
        cleaned = summary["datasets"].get(name)
        if cleaned and cleaned["files"]:
            files = cleaned["files"]
            formats = {f["format"] for f in files}
            paths = [os.path.relpath(f["written"], out) for f in files]
            views = formats == {VIEWS_FORMAT}
            fmt = "jsonl" if views else (ds.spec.format or (formats.pop() if len(formats) == 1 else None))
            table = _spec_table(ds, paths, fmt)
            if views:
                table.update(text_field="views.text", id_field="id")
            if any(f["records"] == 0 for f in files):
                table["allow_empty"] = True
        else:
            table = _spec_table(ds)
        parts.append(_toml.table(f"datasets.{_toml.key(name)}", table))
    if config.method_params:
        parts += [_toml.table(f"methods.{_toml.key(m)}", p) for m, p in config.method_params.items()]
    for c in config.checks:
        body = {"name": c.name, "train": c.train, "eval": c.eval, "methods": c.methods}
        parts.append(_toml.array_table("checks", {**body, "max_contaminated": c.max_contaminated}))
    for p in config.provenance:
        body = {"name": p.name, "derived": p.derived, "sources": p.sources, "id_pattern": p.id_pattern}
        body.update(methods=p.methods, held_out=p.held_out, max_held_out=p.max_held_out)
        parts.append(_toml.array_table("provenance", body))
    target = out / "split.toml"
    f = AtomicFile(target)
    try:
        f.stream.write("\n".join(parts).encode("utf-8"))
    except BaseException:
        f.abort()
        raise
    f.commit()
    _settle(out, set(summary.get("files_written", ())) | {"split.toml"})
    return target


def _settle(out: Path, written: set[str]) -> None:
    """The clean folder's ledger after a complete write: ``written``, each with its SHA-256; files of
    an earlier run that this one did not write again are auditor's (checked before the run) and removed."""
    ledger = Ledger.load(out, "clean")
    for rel in sorted(set(ledger.files) - written):
        if ledger.owns(rel):
            (out / rel).unlink()
        del ledger.files[rel]
    for rel in sorted(written):
        if rel == "split.toml" or rel not in ledger.files:  # the others were hashed as they were written
            ledger.add(rel)
    ledger.save()

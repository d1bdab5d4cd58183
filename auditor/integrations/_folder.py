"""The detector folder (:meth:`auditor.integrations.detector.Detector.save` / ``load``): ``detector.json``
(the detector's settings, checksummed), the eval items as ``eval.jsonl`` (with their SHA-256) and each
method's index in the no-pickle index format of :mod:`auditor.store.indexes`, memory-mapped on load.
A bad folder is an :class:`~auditor.errors.IndexFileError`; a folder that is not a detector's is not
replaced (:class:`~auditor.errors.OutputError`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import methods as _methods
from .._version import __version__
from ..errors import IndexFileError, OutputError
from ..io.atomic import replace_folder
from ..methods.base import Index
from ..records.record import Record
from ..store.indexes import (
    doc_checksum,
    fingerprint_records,
    read_description,
    read_index_folder,
    restore_verified,
    save_index,
)

FORMAT = "auditor-detector"
VERSION = 1


def save_folder(
    folder: str | Path, settings: dict[str, Any], eval_records: Sequence[Record], indexes: Sequence[Index]
) -> Path:
    """Write a detector folder at ``folder`` (``settings``: the detector's, as ``detector.json`` keeps
    them), written beside it and renamed into place; returns its path."""
    final = Path(folder)
    if final.exists() and (not final.is_dir() or (any(final.iterdir()) and not (final / "detector.json").exists())):
        raise OutputError(str(final), "is not empty and not a detector folder; give a new or empty folder")
    return replace_folder(final, lambda root: _write(root, settings, eval_records, indexes))


def _write(root: Path, settings: dict[str, Any], eval_records: Sequence[Record], indexes: Sequence[Index]) -> None:
    lines = [json.dumps(_record_dict(r), ensure_ascii=False, sort_keys=True) for r in eval_records]
    data = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
    (root / "eval.jsonl").write_bytes(data)
    saved = []
    for ix in indexes:
        state = ix.state()
        if state is None:
            continue
        fp = fingerprint_records(eval_records, ix.config.eval_view)
        path = save_index(root / "indexes", ix.name, ix.params(), fp, state[0], state[1])
        saved.append({"method": ix.name, "folder": str(path.relative_to(root))})
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "auditor": __version__,
        **settings,
        "eval_sha256": hashlib.sha256(data).hexdigest(),
        "indexes": saved,
    }
    doc["checksum"] = doc_checksum(doc)
    (root / "detector.json").write_text(json.dumps(doc, indent=1, sort_keys=True))


def load_folder(folder: str | Path, verify: bool = True) -> tuple[dict[str, Any], list[Record], list[Index]]:
    """A detector folder's description, eval records and indexes (persisted ones memory-mapped, the
    others rebuilt); ``verify``: every file checked against its checksum, each index against a sample
    of its own eval items."""
    root = Path(folder)
    where = str(root / "detector.json")
    doc = read_description(root / "detector.json", FORMAT, VERSION, "detector")
    data = (root / "eval.jsonl").read_bytes()
    if verify and hashlib.sha256(data).hexdigest() != doc.get("eval_sha256"):
        raise IndexFileError(f"{root / 'eval.jsonl'}: checksum mismatch (truncated or modified)")
    eval_records = [_dict_record(json.loads(line)) for line in data.decode("utf-8", "surrogatepass").splitlines()]
    params = doc.get("method_params") or {}
    folders = {e["method"]: root / e["folder"] for e in doc.get("indexes", [])}
    indexes: list[Index] = []
    for m in doc["methods"]:
        ix = _methods.create(m, params.get(m))
        if m not in folders:
            indexes.append(ix.build(eval_records))
            continue
        sub = folders[m]
        if sub.parent != root / "indexes":
            raise IndexFileError(f"{where}: index folder outside the detector folder")
        fp = fingerprint_records(eval_records, ix.config.eval_view)
        if verify:
            read_index_folder(sub, m, ix.params(), fp)  # checksums of the description and every array
        arrays, meta = _mapped(sub)
        if verify:
            restore_verified(ix, eval_records, arrays, meta, str(sub))
        else:
            ix.restore(eval_records, arrays, meta)
        indexes.append(ix)
    return doc, eval_records, indexes


def _record_dict(r: Record) -> dict[str, Any]:
    return {
        "dataset": r.dataset,
        "id": r.id,
        "source": r.source,
        "views": r.views,
        "meta": r.meta,
        "raw": r.raw,
        "split": r.split,
        "ordinal": r.ordinal,
    }


def _dict_record(d: dict[str, Any]) -> Record:
    return Record(
        d["dataset"], d["id"], d["source"], d["views"], d.get("meta") or {}, d.get("raw"), d.get("split"), d["ordinal"]
    )


def _mapped(folder: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """An index folder's arrays memory-mapped read-only (checked already by :func:`read_index_folder`)."""
    doc = json.loads((folder / "index.json").read_text())
    arrays = {}
    for name, entry in (doc.get("arrays") or {}).items():
        path = folder / str(entry["file"])
        if path.parent != folder:
            raise IndexFileError(f"{folder}: array file outside the index folder")
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
        arrays[name] = np.asarray(arr) if arr.size == 0 else arr
    return arrays, doc.get("meta") or {}

"""Persisted eval-side indexes: a documented, versioned, checksummed folder format (no pickle).

An index folder (under ``indexes/`` by default) holds:

``index.json``
    ``{"format": "auditor-index", "version": 1, "method": ..., "params": {...},
    "eval_fingerprint": ..., "arrays": {NAME: {"file": "NAME.npy", "sha256": ..., "dtype": ...,
    "shape": [...]}}, "meta": {...}, "checksum": ...}`` — ``checksum`` is the SHA-256 of the
    document itself (sorted-key JSON without ``checksum``), so an edited description is refused too.
``NAME.npy``
    one NumPy array per entry, saved and loaded with ``allow_pickle=False``.

The folder name is ``<method>-<eval fingerprint[:16]>-<params hash[:12]>``, so a run reuses an index
only when the eval data and the parameters are unchanged. Folders are written to a temporary
sibling and renamed into place, so an interrupted run never leaves a half-written index. Loading
checks the format, version, method, parameters, fingerprint and every array's SHA-256, and raises
:class:`~auditor.errors.IndexFileError` on any mismatch.

>>> import numpy as np, tempfile
>>> root = tempfile.mkdtemp()
>>> p = save_index(root, "demo", {"n": 3}, "abc", {"h": np.arange(4, dtype=np.uint64)}, {"items": 4})
>>> arrays, meta = load_index(root, "demo", {"n": 3}, "abc")
>>> arrays["h"].tolist(), meta["items"]
([0, 1, 2, 3], 4)
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ._io import locked_folder
from .errors import IndexFileError
from .normalize import normalize
from .records import Record

FORMAT = "auditor-index"
VERSION = 1


def params_hash(params: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()


def fingerprint_records(records: Iterable[Record], view: str) -> str:
    """SHA-256 over each record's dataset, id and normalized ``view`` text, in order."""
    h = hashlib.sha256()
    for r in records:
        h.update(f"{r.dataset}\x00{r.id}\x00{normalize(r.view(view))}\x01".encode())
    return h.hexdigest()


def index_path(root: str | Path, method: str, params: dict[str, Any], fingerprint: str) -> Path:
    return Path(root) / f"{method}-{fingerprint[:16]}-{params_hash(params)[:12]}"


def save_index(
    root: str | Path,
    method: str,
    params: dict[str, Any],
    fingerprint: str,
    arrays: dict[str, np.ndarray],
    meta: dict[str, Any] | None = None,
) -> Path:
    """Write an index folder atomically; returns its path."""
    final = index_path(root, method, params, fingerprint)
    final.parent.mkdir(parents=True, exist_ok=True)
    with locked_folder(final.parent):
        _remove_leftovers(final.parent)
        return _save_locked(final, method, params, fingerprint, arrays, meta)


_TEMP_NAME = re.compile(r"\.[a-z0-9_]+-[0-9a-f]{16}-[0-9a-f]{12}\.(old\.)?[A-Za-z0-9_]+")


def _remove_leftovers(root: Path) -> None:
    """Temp folders (``.<index folder>.XXXX``, ``.<index folder>.old.XXXX``) of saves that were killed:
    no live save holds them (we hold the lock). Nothing else in ``root`` is touched."""
    for entry in root.iterdir():
        if _TEMP_NAME.fullmatch(entry.name) and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)


def _save_locked(final: Path, method, params, fingerprint, arrays, meta) -> Path:
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        entries = {}
        for name, arr in arrays.items():
            if not name.replace("_", "").isalnum():
                raise ValueError(f"bad array name {name!r}")
            buf = io.BytesIO()
            np.save(buf, np.ascontiguousarray(arr), allow_pickle=False)
            data = buf.getvalue()
            (tmp / f"{name}.npy").write_bytes(data)
            entries[name] = {
                "file": f"{name}.npy",
                "sha256": hashlib.sha256(data).hexdigest(),
                "dtype": str(arr.dtype),
                "shape": list(arr.shape),
            }
        doc = {
            "format": FORMAT,
            "version": VERSION,
            "method": method,
            "params": params,
            "eval_fingerprint": fingerprint,
            "arrays": entries,
            "meta": meta or {},
        }
        doc = json.loads(json.dumps(doc, default=str))  # the checksum covers what is read back
        doc["checksum"] = _doc_checksum(doc)
        (tmp / "index.json").write_text(json.dumps(doc, indent=1, sort_keys=True, default=str))
        old = None
        if final.exists():  # move the old folder aside atomically: a kill never leaves half of it
            old = Path(tempfile.mkdtemp(prefix=f".{final.name}.old.", dir=final.parent))
            os.replace(final, old / "index")
        os.replace(tmp, final)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def _doc_checksum(doc: dict[str, Any]) -> str:
    body = {k: v for k, v in doc.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def load_index(
    root: str | Path, method: str, params: dict[str, Any], fingerprint: str
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Load and verify an index folder. Raises FileNotFoundError when absent, IndexFileError when bad."""
    folder = index_path(root, method, params, fingerprint)
    if not (folder / "index.json").exists():
        raise FileNotFoundError(str(folder))
    return read_index_folder(folder, method, params, fingerprint)


def read_index_folder(
    folder: str | Path, method: str | None = None, params: dict[str, Any] | None = None, fingerprint: str | None = None
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    folder = Path(folder)
    where = str(folder / "index.json")
    try:
        doc = json.loads((folder / "index.json").read_text())
    except (OSError, ValueError) as e:
        raise IndexFileError(f"{where}: unreadable index description: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise IndexFileError(f"{where}: not an auditor index")
    if doc.get("version") != VERSION:
        raise IndexFileError(
            f"{where}: index format version {doc.get('version')}, this auditor reads {VERSION}; rebuild it"
        )
    if doc.get("checksum") != _doc_checksum(doc):
        raise IndexFileError(f"{where}: checksum mismatch (index description modified); delete the folder to rebuild")
    for key, want in (("method", method), ("eval_fingerprint", fingerprint)):
        if want is not None and doc.get(key) != want:
            raise IndexFileError(f"{where}: {key} is {doc.get(key)!r}, expected {want!r}")
    if params is not None and params_hash(doc.get("params", {})) != params_hash(params):
        raise IndexFileError(f"{where}: built with other parameters")
    arrays: dict[str, np.ndarray] = {}
    for name, entry in (doc.get("arrays") or {}).items():
        path = folder / str(entry.get("file", ""))
        if path.parent != folder:
            raise IndexFileError(f"{where}: array file outside the index folder")
        try:
            data = path.read_bytes()
        except OSError:
            raise IndexFileError(f"{where}: array file {path.name} is missing") from None
        if hashlib.sha256(data).hexdigest() != entry.get("sha256"):
            raise IndexFileError(f"{path}: checksum mismatch (truncated or modified); delete the folder to rebuild")
        _check_array_size(data, path)
        try:
            arr = np.load(io.BytesIO(data), allow_pickle=False)
        except ValueError as e:
            raise IndexFileError(f"{path}: unreadable array: {e}") from None
        arrays[name] = arr
    return arrays, doc.get("meta") or {}


def _check_array_size(data: bytes, path: Path) -> None:
    """Refuse an ``.npy`` whose header promises more (or less) data than the file holds, before numpy
    allocates it (a re-signed file with a huge shape would otherwise exhaust memory)."""
    f = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(f)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read_header(f)
    except (ValueError, TypeError, SyntaxError) as e:
        raise IndexFileError(f"{path}: unreadable array header: {e}") from None
    if dtype.hasobject:
        raise IndexFileError(f"{path}: unreadable array: object arrays (pickles) are never loaded")
    count = 1
    for dim in shape:
        count *= int(dim)
    if count * dtype.itemsize != len(data) - f.tell():
        raise IndexFileError(
            f"{path}: array header (shape {tuple(shape)}, {dtype}) does not match the file's "
            f"{len(data) - f.tell()} data bytes; delete the folder to rebuild"
        )

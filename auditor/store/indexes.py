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
only when the eval data, the parameters and the text normalization
(:data:`~auditor.text.normalize.NORMALIZATION_VERSION`, part of the fingerprint) are unchanged. Folders are written to a temporary
sibling and renamed into place, so an interrupted run never leaves a half-written index. Loading
checks the format, version, method, parameters, fingerprint and every array's SHA-256, and raises
:class:`~auditor.errors.IndexFileError` on any mismatch.

**What the checksums do and do not protect against.** They are unkeyed SHA-256 digests: they catch
accidents (a truncated or partly written file, a flipped bit, an index of other data or parameters
copied into place) but not a deliberate edit, since whoever can write the folder can recompute them.
So a restored index is also **bound to its eval set** by what it answers: :func:`verify_index` takes
a random sample of the eval items (up to ``sample``, drawn afresh each run from the OS's randomness,
so it cannot be predicted) and searches the index for each item's own text, which every correct index
finds. An index with zeroed, truncated or swapped arrays fails and is refused (exit 2, "delete the
folder to rebuild"). An edit that breaks a share ``t`` of the items escapes with probability about
``(1 - t) ** sample`` (2e-12 for ``t`` = 0.1 and 256 items). Nothing here protects against someone
who can also change the eval files, the manifest or the code.

>>> import numpy as np, tempfile
>>> root = tempfile.mkdtemp()
>>> p = save_index(root, "demo", {"n": 3}, "abc", {"h": np.arange(4, dtype=np.uint64)}, {"items": 4})
>>> arrays, meta = load_index(root, "demo", {"n": 3}, "abc")
>>> arrays["h"].tolist(), meta["items"]
([0, 1, 2, 3], 4)
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import random
import re
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import IndexFileError
from ..io.atomic import locked_folder, replace_folder
from ..records.record import Record
from ..text.batch import token_batch
from ..text.normalize import NORMALIZATION_VERSION

#: eval items searched for in a restored index (:func:`verify_index`)
VERIFY_SAMPLE = 256

FORMAT = "auditor-index"
VERSION = 1


def params_hash(params: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()


def fingerprint_records(records: Iterable[Record], view: str) -> str:
    """SHA-256 over the normalization's version and each record's dataset, id and normalized ``view``
    text, in order: an index built under another normalization (whose hashes may differ even where a
    normalized text does not) has another folder name, so it is rebuilt, never reused."""
    h = hashlib.sha256(f"normalization {NORMALIZATION_VERSION}\x01".encode())
    recs = list(records)
    batch, at = token_batch([r.view(view) for r in recs])  # normalized at once, for the index too
    for i, r in zip(at, recs):
        h.update(f"{r.dataset}\x00{r.id}\x00".encode() + batch.normalized(i) + b"\x01")
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
        return replace_folder(final, lambda tmp: _write_index(tmp, method, params, fingerprint, arrays, meta))


_TEMP_NAME = re.compile(r"\.[a-z0-9_]+-[0-9a-f]{16}-[0-9a-f]{12}\.(old\.)?[A-Za-z0-9_]+")


def _remove_leftovers(root: Path) -> None:
    """Temp folders (``.<index folder>.XXXX``, ``.<index folder>.old.XXXX``) of saves that were killed:
    no live save holds them (we hold the lock). Nothing else in ``root`` is touched."""
    for entry in root.iterdir():
        if _TEMP_NAME.fullmatch(entry.name) and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)


def _write_index(tmp: Path, method, params, fingerprint, arrays, meta) -> None:
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
    doc["checksum"] = doc_checksum(doc)
    (tmp / "index.json").write_text(json.dumps(doc, indent=1, sort_keys=True, default=str))


def read_description(path: Path, fmt: str, version: int, what: str, fix: str = "") -> dict[str, Any]:
    """The JSON description of a folder (an index's ``index.json``, a detector's ``detector.json``),
    its format, version and checksum checked: an :class:`IndexFileError` naming ``path`` (and saying
    ``fix``) otherwise."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise IndexFileError(f"{path}: unreadable {what} description: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != fmt:
        raise IndexFileError(f"{path}: not an auditor {what}")
    if doc.get("version") != version:
        raise IndexFileError(f"{path}: {what} format version {doc.get('version')}, this auditor reads {version}{fix}")
    if doc.get("checksum") != doc_checksum(doc):
        raise IndexFileError(f"{path}: checksum mismatch ({what} description modified){fix}")
    return doc


def doc_checksum(doc: dict[str, Any]) -> str:
    """The SHA-256 of a JSON description (an index's ``index.json``, a detector's ``detector.json``)
    without its ``checksum`` key."""
    body = {k: v for k, v in doc.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()


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
    doc = read_description(folder / "index.json", FORMAT, VERSION, "index", "; delete the folder to rebuild")
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


def restore_verified(
    index: Any, eval_records: list[Record], arrays: dict[str, np.ndarray], meta: dict[str, Any], where: str
) -> Any:
    """``index.restore(...)`` then :func:`verify_index`; any failure of a malformed index (missing or
    misshapen arrays) is an :class:`IndexFileError` naming ``where``, never a traceback."""
    try:
        index.restore(eval_records, arrays, meta)
        verify_index(index, eval_records, where)
    except IndexFileError:
        raise
    except (KeyError, IndexError, ValueError, TypeError) as e:
        raise IndexFileError(
            f"{where}: unusable index ({type(e).__name__}: {e}); delete the folder to rebuild"
        ) from None
    return index


def _put_back(index: Any, saved: dict[str, tuple[Any, Any]]) -> None:
    """Each attribute of ``index`` as ``saved`` holds it (``name: (object, copy of its contents)``); a
    dict or list the search kept is refilled in place, so what was derived from it stays its own (the
    n-gram tier's kernel, built from its tables during the probes, is not built again)."""
    state = vars(index)
    for name, (obj, before) in saved.items():
        if state.get(name) is obj and isinstance(obj, dict):
            obj.clear()
            obj.update(before)
        elif state.get(name) is obj and isinstance(obj, list):
            obj[:] = before
        else:
            state[name] = before


def verify_index(index: Any, eval_records: list[Record], where: str, sample: int = VERIFY_SAMPLE) -> None:
    """Raise :class:`IndexFileError` unless the restored ``index`` finds a random sample of its own eval
    items, each given as a training record whose training views hold the item's eval-view text.

    Items the method does not cover (``index.covered``: too short ...) are not sampled. ``where`` names
    the index folder in the message.
    """
    cfg = index.config
    covered = [ev for ev, ok in zip(eval_records, index.covered(eval_records)) if ok]
    if not covered:
        return
    chosen = random.SystemRandom().sample(covered, min(sample, len(covered)))
    probes = [
        Record("\x00verify", ev.id, ev.source, {v: ev.view(cfg.eval_view) for v in cfg.train_views}, ordinal=j)
        for j, ev in enumerate(chosen)
    ]
    # the probes must leave no trace in the index's statistics (candidates, rejected ... in the report)
    saved = {k: (v, copy.copy(v)) for k, v in vars(index).items() if isinstance(v, (dict, list, int, float))}
    try:
        found = {(f.train_ordinal, f.eval_ordinal) for f in index.search(probes)}
    finally:
        _put_back(index, saved)
    missing = [ev for j, ev in enumerate(chosen) if (j, ev.ordinal) not in found]
    if missing:
        raise IndexFileError(
            f"{where}: the index does not answer for its eval set ({len(missing)} of {len(chosen)} sampled eval "
            f"items, e.g. {missing[0].dataset}#{missing[0].id}, are not found in their own text): it was modified "
            "or is corrupt; delete the folder to rebuild"
        )

"""Hugging Face ``datasets`` folders on disk: what ``Dataset.save_to_disk`` writes and the cache's
prepared splits, read as the Arrow files that hold their data.

- ``save_to_disk`` of a ``Dataset``: ``dataset_info.json``, ``state.json`` (its ``_data_files`` list
  the data, in order) and ``data-00000-of-0000N.arrow`` (Arrow IPC *stream* files);
- ``save_to_disk`` of a ``DatasetDict``: ``dataset_dict.json`` (``splits``) and one such folder per split;
- a cache folder (``~/.cache/huggingface/datasets/NAME/CONFIG/VERSION/HASH``): ``dataset_info.json`` and
  ``NAME-SPLIT.arrow`` / ``NAME-SPLIT-00000-of-0000N.arrow`` per split (``cache-*.arrow`` are ``map`` caches).

The JSON files are metadata, never data: reading them instead of the Arrow files would audit nothing.

>>> import json, os, tempfile
>>> d = tempfile.mkdtemp()
>>> _ = open(os.path.join(d, "state.json"), "w").write(json.dumps({"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}))
>>> _ = open(os.path.join(d, "dataset_info.json"), "w").write("{}")
>>> _ = open(os.path.join(d, "data-00000-of-00001.arrow"), "wb").write(b"")
>>> hf = hf_folder(d)
>>> [p.name for p in hf.data_files], hf.splits
(['data-00000-of-00001.arrow'], [])
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError

#: the metadata files of a datasets folder
METADATA = ("dataset_info.json", "state.json", "dataset_dict.json")
_CACHE_FILE = re.compile(r"^(?P<name>.+?)-(?P<split>[^-]+?)(?:-\d{5}-of-\d{5})?\.arrow$")
_MAX_METADATA = 64 * 1024 * 1024


@dataclass
class HfFolder:
    """A datasets folder: its data files (one split), or the splits it holds (several: one must be chosen)."""

    folder: Path
    kind: str  # "save_to_disk", "dataset_dict" or "cache"
    data_files: list[Path] = field(default_factory=list)
    splits: list[str] = field(default_factory=list)
    metadata: list[Path] = field(default_factory=list)


def _load(path: Path) -> Any:
    try:
        if path.stat().st_size > _MAX_METADATA:
            raise InputError(str(path), None, "a datasets metadata file larger than 64 MiB")
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(str(path), None, f"unreadable datasets metadata: {e}") from None


def hf_folder(folder: str | Path) -> HfFolder | None:
    """The datasets folder at ``folder``, or None when it is not one. Raises :class:`InputError` for a
    ``state.json`` that names no data or a data file that is missing."""
    d = Path(folder)
    if not d.is_dir():
        return None
    meta = [d / m for m in METADATA if (d / m).is_file()]
    if (d / "dataset_dict.json").is_file():
        doc = _load(d / "dataset_dict.json")
        splits = doc.get("splits") if isinstance(doc, dict) else None
        if not isinstance(splits, list):
            splits = sorted(p.name for p in d.iterdir() if (p / "state.json").is_file())
        return HfFolder(d, "dataset_dict", splits=[str(s) for s in splits], metadata=meta)
    state = _state(d)
    if state is not None:
        files = []
        for entry in state:
            name = entry.get("filename") if isinstance(entry, dict) else None
            if not isinstance(name, str) or "/" in name or name in ("", ".", ".."):
                raise InputError(str(d / "state.json"), None, f"a _data_files entry that names no file: {entry!r}")
            if not (d / name).is_file():
                raise InputError(str(d / name), None, "listed in state.json (_data_files) but missing")
            files.append(d / name)
        return HfFolder(d, "save_to_disk", data_files=files, metadata=meta)
    if (d / "dataset_info.json").is_file():
        by_split: dict[str, list[Path]] = {}
        for p in sorted(d.glob("*.arrow")):
            m = _CACHE_FILE.match(p.name)
            if p.name.startswith("cache-") or m is None:
                continue
            by_split.setdefault(m.group("split"), []).append(p)
        if not by_split:
            return None
        if len(by_split) > 1:
            return HfFolder(d, "cache", splits=sorted(by_split), metadata=meta)
        return HfFolder(d, "cache", data_files=next(iter(by_split.values())), metadata=meta)
    return None


def _state(d: Path) -> list | None:
    """The ``_data_files`` of ``d/state.json`` when it is a datasets state file (another program's
    ``state.json`` is not: None); an unreadable one beside ``.arrow`` files is an :class:`InputError`."""
    if not (d / "state.json").is_file():
        return None
    try:
        doc = _load(d / "state.json")
    except InputError:
        if any(d.glob("*.arrow")):
            raise
        return None
    if not isinstance(doc, dict) or "_data_files" not in doc:
        return None
    listed = doc["_data_files"]
    if not isinstance(listed, list) or not listed:
        raise InputError(str(d / "state.json"), None, "a datasets state.json whose _data_files list no data")
    return listed


def describe_choice(hf: HfFolder) -> str:
    """What to give instead of a folder holding several splits."""
    d = hf.folder
    if hf.kind == "dataset_dict":
        first = hf.splits[0] if hf.splits else "train"
        return (
            f"a Hugging Face DatasetDict folder (splits: {', '.join(hf.splits) or 'none'}): "
            f"give one split's folder, e.g. {d / first}"
        )
    first = hf.splits[0]
    return (
        f"a Hugging Face datasets cache folder of several splits ({', '.join(hf.splits)}): give one split's files, "
        f"e.g. {d}/*-{first}*.arrow"
    )


def metadata_folder(path: str | Path) -> HfFolder | None:
    """The datasets folder that ``path`` is a metadata file of (``ds/state.json``), else None."""
    p = Path(path)
    if p.name not in METADATA:
        return None
    try:
        return hf_folder(p.parent)
    except InputError:
        return None

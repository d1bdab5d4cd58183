"""Which files a dataset names: globs (bounded), URLs, bundled registry names, paths confined to
a manifest's folder; a file listed twice is read once.

>>> files, entry, split = resolve_files(DatasetSpec("goals", ["webshop:0:3"]))
>>> [f.name for f in files], entry.name, split
(['human_goals.json'], 'webshop', '0:3')
"""

from __future__ import annotations

import glob
import os
import posixpath
import stat
from pathlib import Path
from typing import Any

from ..errors import ConfigError, InputError, did_you_mean
from ..io.hfdisk import describe_choice, hf_folder, metadata_folder
from ..io.remote import glob_urls, is_url
from . import registry
from .spec import DatasetSpec


def resolve_files(spec: DatasetSpec) -> tuple[list[Any], registry.RegistryEntry | None, str | None]:
    """``spec``'s files (a Path, or a URL as a string: :mod:`auditor.io.remote`), the registry entry
    when it names a bundled set, and the split to select (a bundled name may carry one).

    Raises :class:`InputError` for a path that does not exist, a folder, a glob that matches nothing
    or walks the file system, a relative path leading outside ``confine_to``; :class:`ConfigError` for
    a split given twice."""
    if (
        len(spec.paths) == 1
        and registry.is_registry_ref(spec.paths[0])
        and not _looks_like_path(spec.paths[0], spec.base_dir)
    ):
        entry = registry.resolve(spec.paths[0])
        given = registry.expand_split(entry.name, spec.split)
        if entry.split and given and entry.split != given:
            raise ConfigError(f"dataset '{spec.name}': split given twice ('{entry.split}' and '{spec.split}')")
        return [Path(p) for p in entry.paths], entry, entry.split or given or entry.default_split
    files: list[Any] = []  # Path, or a URL as a string
    for pattern in dict.fromkeys(spec.paths):  # a path listed many times is read once
        if is_url(pattern):  # read through fsspec by whoever reads it (auditor.io.remote)
            found_urls = glob_urls(pattern) if glob.has_magic(pattern) else [pattern]
            if not found_urls:
                raise InputError(pattern, None, "glob matches no file")
            files.extend(found_urls)
            continue
        full = pattern if os.path.isabs(pattern) else os.path.join(spec.base_dir, pattern)
        if glob.has_magic(full):
            _check_glob_bounded(pattern, full, spec.confine_to)
            # folders are not data; anything else a glob matches (FIFO, broken link) is checked
            matches = sorted(p for p in glob.glob(full, recursive=True) if not os.path.isdir(p))
            if not matches:
                raise InputError(pattern, None, "glob matches no file")
            found = _without_hf_metadata(pattern, [Path(m) for m in matches])
        elif os.path.isdir(full):
            hf = hf_folder(full)
            if hf is None:
                raise InputError(full, None, "is a folder; give files or a glob such as DIR/*.json")
            if not hf.data_files:
                raise InputError(full, None, describe_choice(hf))
            found = list(hf.data_files)
        elif not os.path.lexists(full):
            hint = ""
            if "/" not in pattern and os.sep not in pattern:
                name = registry.split_name(pattern)[0]
                close = did_you_mean(name, registry.names())
                hint = (
                    f" (and no bundled dataset is called '{name}'"
                    + (f": {close[2:-1]}" if close else "")
                    + f"; bundled: {', '.join(registry.names())})"
                )
            raise InputError(full, None, "no such file" + hint)
        else:
            found = _without_hf_metadata(pattern, [Path(full)])
        if spec.confine_to is not None and not os.path.isabs(pattern):
            for f in found:
                _check_confined(f, spec.confine_to, pattern)
        files.extend(found)
    unique = {_identity(f): f for f in reversed(files)}  # a file two patterns match: once
    return [f for f in files if unique.get(_identity(f)) is f], None, spec.split


def _without_hf_metadata(pattern: str, found: list[Path]) -> list[Path]:
    """``found`` less the metadata files of Hugging Face datasets folders (``state.json``,
    ``dataset_info.json``: :mod:`auditor.io.hfdisk`), whose data ``found`` holds too; a path or glob
    that names such metadata without its data is an error naming the data files (reading the
    metadata alone would check nothing)."""
    kept: list[Path] = []
    names = {os.path.realpath(f) for f in found}
    for f in found:
        hf = metadata_folder(f)
        if hf is None:
            kept.append(f)
            continue
        if hf.data_files and all(os.path.realpath(d) in names for d in hf.data_files):
            continue  # the folder's data is read: its metadata is not data
        data = (
            ", ".join(str(d) for d in hf.data_files[:3])
            + (f" … ({len(hf.data_files)} files)" if len(hf.data_files) > 3 else "")
            if hf.data_files
            else describe_choice(hf)
        )
        raise InputError(
            pattern,
            None,
            f"names {f.name}, the metadata of a Hugging Face datasets folder, not its data ({data}); "
            f"give the folder {hf.folder} (its .arrow files are read)",
        )
    return kept


def _check_glob_bounded(pattern: str, full: str, confine_to: str | None) -> None:
    """Refuse a recursive glob (``**``) that would walk the file system: rooted at ``/``, or (in a
    manifest) outside the manifest's folder. ``path = "/**"`` would otherwise run for hours, silently."""
    if "**" not in full:
        return
    parts = Path(full).parts
    base = Path(*parts[: next(i for i, part in enumerate(parts) if glob.has_magic(part))] or ["."])
    real = os.path.realpath(base)
    if real == os.path.realpath(os.sep):
        raise InputError(pattern, None, "a recursive glob (**) over the whole file system; give a narrower folder")
    if confine_to is not None:
        root = os.path.realpath(confine_to)
        if os.path.commonpath([root, real]) != root:
            raise InputError(
                pattern,
                None,
                f"a recursive glob (**) outside the manifest's folder {root}; "
                "list the files, or a glob without ** (e.g. DIR/*.jsonl)",
            )


def stat_is_regular(st: os.stat_result) -> bool:
    return stat.S_ISREG(st.st_mode)


def url_relative(url: str, files: list[Any]) -> str:
    """``url`` shown from the folder its dataset's files share (the whole of it when they share none)."""
    if not all(is_url(f) for f in files) or len({f.split("://", 1)[0] for f in files}) > 1:
        return url
    rests = [f.split("://", 1)[1] for f in files]
    common = (
        posixpath.commonpath(rests)
        if all(r.startswith("/") for r in rests) or not any(r.startswith("/") for r in rests)
        else ""
    )
    rest = url.split("://", 1)[-1]
    return posixpath.relpath(rest, common) if common and rest.startswith(common) else url


def _identity(f: Any) -> str:
    """What makes two listed files one: a URL as written, a local file's real path."""
    return f if is_url(f) else os.path.realpath(f)


def _check_confined(path: Path, root: str, pattern: str) -> None:
    """Refuse a relative path that resolves (symlinks followed) outside ``root``."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if os.path.commonpath([real_root, real]) != real_root:
        raise InputError(
            str(path),
            None,
            f"path '{pattern}' leads outside the manifest's folder "
            f"{real_root}; give an absolute path to read data elsewhere",
        )


def _looks_like_path(ref: str, base_dir: str) -> bool:
    return os.path.exists(os.path.join(base_dir, ref)) or "/" in ref or os.sep in ref

"""Datasets: a named set of files (or a bundled registry name) read through adapters into Records.

:class:`DatasetSpec` is the configuration (one ``[datasets.NAME]`` table of a manifest, or one
``--train`` / ``--eval`` flag); :class:`Dataset` reads it, assigns each record its ``ordinal``,
applies the split selection and keeps the accounting: every record read is either yielded or
skipped (with a reason) or left out by the split selection — ``read == yielded + skipped + filtered``.

Bad input follows ``on_error``: ``fail`` (default) raises :class:`InputError` naming file, line and
problem; ``skip`` (training sets only) counts the record — or a whole file that cannot be read — with
its reason. A record whose text exceeds ``max_record_chars`` is such a bad record (line-based readers
never hold it in memory). Relative paths must stay inside ``confine_to`` when it is set (manifests
set it to their own folder); absolute paths are the explicit way out. Eval datasets also count
duplicate ids (within a file): reported, not skipped.

Split selection: ``"START:END"`` selects by position (0-based, END exclusive, either may be empty);
any other value selects records whose adapter-given ``split`` equals it (comma-separated values allowed).

>>> ds = Dataset(DatasetSpec(name="goals", paths=["webshop:0:3"], role="eval"))
>>> [r.id for r in ds.records()], ds.stats.read, ds.stats.yielded, ds.stats.filtered
(['0', '1', '2'], 12087, 3, 12084)
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from . import registry
from ._io import (
    DEFAULT_MAX_RECORD_CHARS,
    FileState,
    check_regular_file,
    check_unchanged,
    file_state,
    is_blank,
    sha256_file,
    too_long,
)
from .adapters import Adapter, AdapterOptions, detect, explain, get_adapter
from .errors import ChangedFileError, ConfigError, InputError, did_you_mean
from .messages import MessageSelector
from .records import Record, Skip, split_source

ROLES = ("train", "eval")
ON_ERROR = ("fail", "skip")
_RANGE = re.compile(r"^(-?\d*):(-?\d*)$")
_DASHED_RANGE = re.compile(r"^\d+-\d*$")  # "0-500": a range written with a dash
_COLUMN = re.compile(r"\s*\(column \d+\)")
MAX_SKIP_REASONS = 100


@dataclass
class DatasetSpec:
    """What a dataset is. ``paths`` entries are files, globs, or one registry reference."""

    name: str
    paths: list[str]
    role: str = "train"
    format: str | None = None
    split: str | None = None
    text_field: str | None = None
    id_field: str | None = None
    #: message selector for chat-shaped text fields (``first-user``, ``all-user`` ...; :mod:`auditor.messages`)
    messages: str | None = None
    #: dotted path of a field holding tool calls (JSON calls or Python-style call strings), generic formats
    calls_field: str | None = None
    on_error: str | None = None  # default: fail
    base_dir: str = "."
    #: a record with a text view longer than this (characters) is a bad record (see ``on_error``)
    max_record_chars: int = DEFAULT_MAX_RECORD_CHARS
    #: when set, relative paths must resolve inside this folder (manifests: their own folder)
    confine_to: str | None = None
    split_label: str | None = None  # provenance: the split every record of this dataset belongs to
    #: a file without any content reads as 0 records instead of an error (cleaned files emptied
    #: by ``--write-clean``; a well-formed empty document is always 0 records)
    allow_empty: bool = False

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ConfigError(f"dataset '{self.name}': role must be one of {ROLES}, not '{self.role}'")
        if self.on_error is not None and self.on_error not in ON_ERROR:
            raise ConfigError(f"dataset '{self.name}': on_error must be one of {ON_ERROR}, not '{self.on_error}'")
        if self.on_error == "skip" and self.role == "eval":
            raise ConfigError(
                f"dataset '{self.name}': on_error = 'skip' is not allowed for an eval set "
                "(an unchecked eval item would be reported as clean)"
            )
        if not self.paths:
            raise ConfigError(f"dataset '{self.name}': no path given")
        if self.messages is not None:
            MessageSelector.parse(self.messages)  # ConfigError now, not at the first record
        if (
            isinstance(self.max_record_chars, bool)
            or not isinstance(self.max_record_chars, int)
            or self.max_record_chars < 1
        ):
            raise ConfigError(f"dataset '{self.name}': max_record_chars must be a positive integer")


@dataclass
class DatasetStats:
    read: int = 0
    yielded: int = 0
    skipped: int = 0
    filtered: int = 0
    skip_reasons: Counter = field(default_factory=Counter)
    skip_examples: list[str] = field(default_factory=list)
    #: files not read at all (on_error = skip): {"file", "reason"}
    skipped_files: list[dict] = field(default_factory=list)
    duplicate_ids: int = 0
    duplicate_id_examples: list[str] = field(default_factory=list)
    #: eval records whose id an earlier file of the dataset also uses (reports name their file)
    ids_in_several_files: int = 0

    @property
    def incomplete(self) -> bool:
        """True when something of this dataset was not checked (skipped records or files)."""
        return bool(self.skipped or self.skipped_files)

    def as_dict(self) -> dict:
        return {
            "read": self.read,
            "records": self.yielded,
            "skipped": self.skipped,
            "filtered_by_split": self.filtered,
            "skip_reasons": dict(sorted(self.skip_reasons.items())),
            "skip_examples": self.skip_examples[:10],
            "skipped_files": self.skipped_files,
            "duplicate_ids": self.duplicate_ids,
            "duplicate_id_examples": self.duplicate_id_examples[:10],
            "ids_in_several_files": self.ids_in_several_files,
        }


class Dataset:
    """A readable dataset. :meth:`records` may be called more than once (stats reset each time)."""

    def __init__(self, spec: DatasetSpec):
        self.spec = spec
        self.registry_entry: registry.RegistryEntry | None = None
        self.split = spec.split
        self.files = self._resolve_files()
        self.stats = DatasetStats()
        self._sha256: str | None = None
        #: each file's state when this dataset first read it: every later read must find it so
        self._states: dict[str, FileState] = {}
        self._records_sha256: str | None = None
        self._common: str | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def role(self) -> str:
        return self.spec.role

    def _resolve_files(self) -> list[Path]:
        spec = self.spec
        if (
            len(spec.paths) == 1
            and registry.is_registry_ref(spec.paths[0])
            and not _looks_like_path(spec.paths[0], spec.base_dir)
        ):
            entry = registry.resolve(spec.paths[0])
            self.registry_entry = entry
            given = registry.expand_split(entry.name, spec.split)
            if entry.split and given and entry.split != given:
                raise ConfigError(f"dataset '{spec.name}': split given twice ('{entry.split}' and '{spec.split}')")
            self.split = entry.split or given or entry.default_split
            return [Path(p) for p in entry.paths]
        files: list[Path] = []
        for pattern in dict.fromkeys(spec.paths):  # a path listed many times is read once
            full = pattern if os.path.isabs(pattern) else os.path.join(spec.base_dir, pattern)
            if glob.has_magic(full):
                _check_glob_bounded(pattern, full, spec.confine_to)
                # folders are not data; anything else a glob matches (FIFO, broken link) is checked
                matches = sorted(p for p in glob.glob(full, recursive=True) if not os.path.isdir(p))
                if not matches:
                    raise InputError(pattern, None, "glob matches no file")
                found = [Path(m) for m in matches]
            elif os.path.isdir(full):
                raise InputError(full, None, "is a folder; give files or a glob such as DIR/*.json")
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
                found = [Path(full)]
            if spec.confine_to is not None and not os.path.isabs(pattern):
                for f in found:
                    _check_confined(f, spec.confine_to, pattern)
            files.extend(found)
        unique = {os.path.realpath(f): f for f in reversed(files)}  # a file two patterns match: once
        return [f for f in files if unique.get(os.path.realpath(f)) is f]

    @property
    def format(self) -> str | None:
        if self.spec.format:
            return self.spec.format
        return self.registry_entry.format if self.registry_entry else None

    def sha256(self) -> str:
        """Fingerprint of the input files (sha256 of each file's name and sha256), whatever the
        selection; :meth:`records_sha256` is the selected records'."""
        if self._sha256 is None:
            if self.registry_entry:
                self._sha256 = self.registry_entry.sha256
            else:
                h = hashlib.sha256()
                for f in self.files:
                    try:  # a file that cannot be read (skipped) still counts, as unreadable
                        check_regular_file(f)
                        self._check_unchanged(f)
                        digest = sha256_file(f)
                        self._check_unchanged(f)  # the fingerprint is of the data the scan read
                    except ChangedFileError:
                        raise
                    except (InputError, OSError):
                        digest = "unreadable"
                    h.update(f"{f.name}:{digest}\n".encode())
                self._sha256 = h.hexdigest()
        return self._sha256

    def records_sha256(self) -> str | None:
        """Fingerprint of the selected records (ids and views, in order) of the last complete
        :meth:`records` pass: two selections of one file differ; None before a complete pass."""
        return self._records_sha256

    def ref(self, record_id: str, source: str) -> str:
        """How a report names a record: ``dataset id``, with its file when the dataset has several
        (ids repeat across files: RefineToolBench's I1, I2 and I3 each number theirs from 0).

        >>> ds = Dataset(DatasetSpec("goals", ["webshop:0:3"]))
        >>> ds.ref("2", "bundled:webshop/human_goals.json#2")
        'goals 2'
        """
        if len(self.files) < 2:
            return f"{self.name} {record_id}"
        path = split_source(source)[0]
        if self._common is None:
            self._common = os.path.commonpath([os.path.abspath(f) for f in self.files])
        real = path if not path.startswith("bundled:") else str(registry.DATA_DIR / path[len("bundled:") :])
        try:
            shown = os.path.relpath(os.path.abspath(real), self._common)
        except ValueError:
            shown = os.path.basename(path)
        return f"{self.name} {record_id} ({shown})"

    def formats(self) -> dict[str, str]:
        """File → adapter name actually used."""
        return {str(f): self.adapter_class(f).name for f in self.files}

    def format_reasons(self) -> dict[str, tuple[str, str]]:
        """File → (adapter name, why it was chosen), for ``auditor inspect``."""
        out = {}
        for f in self.files:
            if self.spec.format:
                out[str(f)] = (self.spec.format, "given as the format")
            elif self.registry_entry:
                out[str(f)] = (self.registry_entry.format, f"bundled set '{self.registry_entry.name}'")
            else:
                adapter, why = explain(f)
                out[str(f)] = (adapter.name, why)
        return out

    def adapter_class(self, path: Path) -> type[Adapter]:
        """The adapter that reads ``path``: the dataset's format, else detected from content."""
        return get_adapter(self.format) if self.format else detect(path)

    def adapter(self, path: Path) -> Adapter:
        """The adapter reading ``path`` for this dataset, with the dataset's options."""
        spec = self.spec
        options = AdapterOptions(
            text_field=spec.text_field,
            id_field=spec.id_field,
            max_record_chars=spec.max_record_chars,
            messages=spec.messages,
            calls_field=spec.calls_field,
        )
        return self.adapter_class(path)(spec.name, options)

    def records(self) -> Iterator[Record]:
        """Yield the dataset's selected records; raise InputError on bad input unless on_error = skip."""
        self.stats = stats = DatasetStats()
        limit = self.spec.max_record_chars
        selector = _selector(self.split)
        seen_splits: Counter = Counter()
        ids: set[tuple[str, str]] | None = set() if self.role == "eval" else None
        id_files: dict[tuple[str, str], str] | None = {} if self.role == "eval" else None
        fingerprint = hashlib.sha256()
        ordinal = 0
        # bundled files are named by their place in the package, not this machine's install path
        bundled_prefix = str(registry.DATA_DIR) + os.sep if self.registry_entry else None
        for path in self.files:
            before = stats.read
            try:
                check_regular_file(path)
                state = self._first_state(path)
                adapter = self.adapter(path)
                for item in adapter.read(path):
                    stats.read += 1
                    if isinstance(item, Record) and max(map(len, item.views.values()), default=0) > limit:
                        item = Skip(item.source, too_long(limit))
                    if isinstance(item, Skip):
                        self._skip(item)
                        continue
                    item.ordinal = ordinal
                    ordinal += 1
                    if bundled_prefix and item.source.startswith(bundled_prefix):
                        item.source = "bundled:" + item.source[len(bundled_prefix) :]
                    seen_splits[item.split] += 1
                    if selector(item):
                        stats.yielded += 1
                        if ids is not None:
                            self._count_duplicate(ids, str(path), item)
                        if id_files is not None:
                            self._count_across_files(id_files, str(path), item)
                        fingerprint.update(_record_bytes(item))
                        yield item
                    else:
                        stats.filtered += 1
                check_unchanged(state)  # read to its end: a file that changed meanwhile was read in part
                if stats.read == before and not self.spec.allow_empty and is_blank(path):
                    # a well-formed empty document ([], {}, a CSV header, Parquet without rows)
                    # is a dataset of 0 records; a file with no content at all is a mistake
                    raise InputError(str(path), None, "no records in the file (empty)")
            except InputError as e:
                if self.spec.on_error != "skip" or isinstance(e, ChangedFileError):
                    raise
                stats.skipped_files.append(
                    {
                        "file": str(path),
                        "reason": e.problem if e.path == str(path) else str(e),
                        "records_read_before": stats.read - before,
                    }
                )
        self._records_sha256 = fingerprint.hexdigest()  # only a complete pass gets here
        if self.split and stats.yielded == 0 and not _RANGE.match(self.split):
            labels = sorted(str(s) for s in seen_splits if s)
            hint = did_you_mean(self.split, labels)
            if not hint and _DASHED_RANGE.match(self.split):
                hint = f" (did you mean '{self.split.replace('-', ':', 1)}'?)"
            raise ConfigError(
                f"dataset '{self.spec.name}': split '{self.split}' matches no record{hint} (splits in the data: "
                f"{', '.join(labels) or 'none'}; a split is NAME:SPLIT, a split label of the data, or "
                "NAME:START:END, record positions with END exclusive and either left empty, e.g. webshop:0:500)"
            )

    def _first_state(self, path: Path) -> FileState:
        """``path``'s state when this dataset first read it; :class:`ChangedFileError` when it differs now
        (a file rewritten between two passes of one run: the boilerplate sample, the scan, the report)."""
        state = self._states.setdefault(str(path), file_state(path))
        check_unchanged(state)
        return state

    def _check_unchanged(self, path: Path) -> None:
        if str(path) in self._states:
            check_unchanged(self._states[str(path)])

    def _count_duplicate(self, ids: set, path: str, item: Record) -> None:
        key = (path, item.meta.get("group") or "", item.id)
        if key in ids:
            self.stats.duplicate_ids += 1
            if len(self.stats.duplicate_id_examples) < 10:
                self.stats.duplicate_id_examples.append(f"{item.source}: id {item.id!r}")
        else:
            ids.add(key)

    def _count_across_files(self, seen: dict[tuple[str, str], str], path: str, item: Record) -> None:
        key = (item.meta.get("group") or "", item.id)
        first = seen.setdefault(key, path)
        if first != path:
            self.stats.ids_in_several_files += 1

    def _skip(self, item: Skip) -> None:
        if self.spec.on_error != "skip":
            raise InputError(*split_source(item.source), item.reason)
        self.stats.skipped += 1
        # the tally is by kind of problem: positions go to the examples, and distinct reasons are
        # capped so a file of a million different bad lines cannot blow the report up
        reason = _COLUMN.sub("", item.reason)
        if reason not in self.stats.skip_reasons and len(self.stats.skip_reasons) >= MAX_SKIP_REASONS:
            reason = "other reasons (beyond the first 100 kinds)"
        self.stats.skip_reasons[reason] += 1
        if len(self.stats.skip_examples) < 10:
            self.stats.skip_examples.append(f"{item.source}: {item.reason}")

    def describe(self) -> dict:
        return {
            "role": self.role,
            "files": [str(f) for f in self.files],
            "format": self.format or "auto",
            "split": self.split,
            "split_label": self.spec.split_label,
            "sha256": self.records_sha256(),
            "files_sha256": self.sha256(),
            "bundled": self.registry_entry.name if self.registry_entry else None,
            "licence": self.registry_entry.licence if self.registry_entry else None,
            **self.stats.as_dict(),
        }


def _record_bytes(r: Record) -> bytes:
    """A record's id and views, unambiguously (NUL never occurs in them: NUL bytes are refused)."""
    parts = [r.id, *(f"{k}\x01{v}" for k, v in sorted(r.views.items()))]
    return ("\x00".join(parts) + "\x02").encode("utf-8", "surrogatepass")


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


def _selector(split: str | None):
    if not split:
        return lambda r: True
    m = _RANGE.match(split)
    if m:
        start = int(m.group(1)) if m.group(1) else 0
        end = int(m.group(2)) if m.group(2) else None
        if start < 0 or (end is not None and end < 0):
            raise ConfigError(f"split range '{split}': negative positions are not supported")
        return lambda r: r.ordinal >= start and (end is None or r.ordinal < end)
    wanted = {s.strip() for s in split.split(",")}
    return lambda r: r.split in wanted

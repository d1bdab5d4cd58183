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

Reading is by **work units** (:meth:`Dataset.plan`: a file, a byte range of a large JSON Lines
file, Parquet row groups), each read alone by a :class:`UnitReader` — in this process for
:meth:`Dataset.records`, in the engines' workers for a scan — and added up in reading order by a
:class:`DatasetAccount`, which renumbers what a unit could not know (ordinals; line numbers and
positions in a later byte range), so every way of reading gives the same records and counts.

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
from typing import Any

import xxhash

from ..adapters import Adapter, AdapterOptions, detect, explain, get_adapter
from ..errors import ChangedFileError, ConfigError, InputError, did_you_mean
from ..io.compressed import is_blank
from ..io.files import FileState, check_regular_file, check_unchanged, file_state
from ..io.jsonread import DEFAULT_MAX_RECORD_CHARS, LineSpan, too_long
from ..io.remote import glob_urls, is_url
from ..records.messages import MessageSelector
from ..records.record import Record, Skip, split_source
from . import registry
from .summary import DatasetSummary

ROLES = ("train", "eval")
ON_ERROR = ("fail", "skip")
_RANGE = re.compile(r"^(-?\d*):(-?\d*)$")
_MOD = 1 << 128
_DASHED_RANGE = re.compile(r"^\d+-\d*$")  # "0-500": a range written with a dash
_COLUMN = re.compile(r"\s*\(column \d+\)")
MAX_SKIP_REASONS = 100
#: a file is fingerprinted by blocks of this size, each hashed by the worker reading that part of it
HASH_BLOCK = 8 * 1024 * 1024
OTHER_REASONS = "other reasons (beyond the first 100 kinds)"


@dataclass
class DatasetSpec:
    """What a dataset is. ``paths`` entries are files, globs, or one registry reference."""

    name: str = field(metadata={"manifest": None})  # the manifest's table name [datasets.NAME]
    paths: list[str] = field(metadata={"manifest": "path"})
    role: str = "train"
    format: str | None = None
    split: str | None = None
    text_field: str | None = None
    id_field: str | None = None
    #: message selector for chat-shaped text fields (``first-user``, ``all-user`` ...; :mod:`auditor.records.messages`)
    messages: str | None = None
    #: dotted path of a field holding tool calls (JSON calls or Python-style call strings), generic formats
    calls_field: str | None = None
    on_error: str | None = None  # default: fail
    base_dir: str = field(default=".", metadata={"manifest": None})  # the manifest's folder
    #: a record with a text view longer than this (characters) is a bad record (see ``on_error``)
    max_record_chars: int = DEFAULT_MAX_RECORD_CHARS
    #: when set, relative paths must resolve inside this folder (manifests: their own folder)
    confine_to: str | None = field(default=None, metadata={"manifest": None})
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
        #: file → SHA-256 fingerprint (:func:`file_digest`) from the workers of the last complete pass
        self._file_digests: dict[str, str] = {}

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def role(self) -> str:
        return self.spec.role

    def _resolve_files(self) -> list[Any]:  # Path, or a URL as a string (auditor.io.remote)
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
        unique = {_identity(f): f for f in reversed(files)}  # a file two patterns match: once
        return [f for f in files if unique.get(_identity(f)) is f]

    @property
    def split_by_position(self) -> bool:
        """Is the split a position range (``"0:500"``)? Selecting it needs every record's ordinal."""
        return bool(self.split and _RANGE.match(self.split))

    @property
    def format(self) -> str | None:
        if self.spec.format:
            return self.spec.format
        return self.registry_entry.format if self.registry_entry else None

    def sha256(self) -> str:
        """Fingerprint of the input files (sha256 of each file's name and digest), whatever the
        selection; :meth:`records_sha256` is the selected records'. A file's digest is its SHA-256
        up to :data:`HASH_BLOCK` bytes, else the SHA-256 of its blocks' SHA-256s
        (:func:`file_digest`), which the workers of a scan compute for their own units: after a
        complete pass the calling process reads none of the corpus to fingerprint it."""
        if self._sha256 is None:
            if self.registry_entry:
                self._sha256 = self.registry_entry.sha256
            else:
                h = hashlib.sha256()
                for f in self.files:
                    if str(f) in self._file_digests:
                        digest = self._file_digests[str(f)]
                        name = f.rsplit("/", 1)[-1] if is_url(f) else f.name
                        h.update(f"{name}:{digest}\n".encode())
                        continue
                    try:  # a file that cannot be read (skipped) still counts, as unreadable
                        check_regular_file(f)
                        self._check_unchanged(f)
                        digest = file_digest(f)
                        self._check_unchanged(f)  # the fingerprint is of the data the scan read
                    except ChangedFileError:
                        raise
                    except (InputError, OSError):
                        digest = "unreadable"
                    name = f.rsplit("/", 1)[-1] if is_url(f) else f.name
                    h.update(f"{name}:{digest}\n".encode())
                self._sha256 = h.hexdigest()
        return self._sha256

    def records_sha256(self) -> str | None:
        """Fingerprint of the selected records (ids and views) of the last complete pass — :meth:`records`
        or an engine's scan of its units: the SHA-256 of the record count and the sum of the records'
        xxh3-128 (a multiset hash, so the same whatever the work units); two selections of one file
        differ; None before a complete pass."""
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
        if any(is_url(f) for f in self.files):
            return f"{self.name} {record_id} ({_url_relative(path, self.files)})"
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

    def reader(self) -> UnitReader:
        """What a worker needs to read units of this dataset (picklable; no open files)."""
        prefix = str(registry.DATA_DIR) + os.sep if self.registry_entry else None
        return UnitReader(self.spec, self.split, self.format, prefix)

    def plan(self, split_bytes: int | None = None) -> list[Unit]:
        """The dataset's work units in reading order: each file whole, or cut into parts of about
        ``split_bytes`` where its format allows (uncompressed JSON Lines: byte ranges at line
        boundaries; Parquet: row groups). Reads no data: a file's size and, for Parquet, its footer.
        A file that cannot be planned (missing, unreadable, undetectable) is one unit whose reader
        reports the problem, in order."""
        units: list[Unit] = []
        for file_no, path in enumerate(self.files):
            try:
                regular = is_url(path) or stat_is_regular(os.stat(path))
                state = self._states.get(str(path)) or file_state(path)
            except (OSError, InputError):
                units.append(Unit(file_no, str(path)))
                continue
            if regular:  # its state when this dataset first read it (passes of one run)
                state = self._states.setdefault(str(path), state)
            parts: list = []
            if split_bytes is not None and regular and state.size > split_bytes:
                try:
                    parts = self.adapter_class(path).parts(path, split_bytes)
                except (InputError, ConfigError):
                    parts = []
            if not parts:
                units.append(Unit(file_no, str(path), state=state))
                continue
            units.extend(
                Unit(file_no, str(path), part_no=i, parts=len(parts), part=part, state=state)
                for i, part in enumerate(parts)
            )
        return units

    def records(self) -> Iterator[Record]:
        """Yield the dataset's selected records; raise InputError on bad input unless on_error = skip."""
        account = DatasetAccount(self)
        reader = self.reader()
        ids: set[tuple[str, str]] | None = set() if self.role == "eval" else None
        id_files: dict[tuple[str, str], str] | None = {} if self.role == "eval" else None
        for unit in self.plan():
            ustats = UnitStats()
            yield from reader.read(unit, ustats, ordinal_start=account.ordinal, ids=ids, id_files=id_files)
            account.absorb(unit, ustats)
        account.finish()

    def _check_unchanged(self, path: Path) -> None:
        if str(path) in self._states:
            check_unchanged(self._states[str(path)])

    def describe(self) -> DatasetSummary:
        """The dataset's accounting for the report (after it has been read)."""
        return DatasetSummary(
            role=self.role,
            files=[str(f) for f in self.files],
            format=self.format or "auto",
            split=self.split,
            split_label=self.spec.split_label,
            sha256=self.records_sha256(),
            files_sha256=self.sha256(),
            bundled=self.registry_entry.name if self.registry_entry else None,
            licence=self.registry_entry.licence if self.registry_entry else None,
            **self.stats.as_dict(),
        )


def _record_bytes(r: Record, with_id: bool = True) -> bytes:
    """A record's id and views, unambiguously (NUL never occurs in them: NUL bytes are refused)."""
    parts = [r.id if with_id else "", *(f"{k}\x01{v}" for k, v in sorted(r.views.items()))]
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


def stat_is_regular(st: os.stat_result) -> bool:
    import stat as _stat

    return _stat.S_ISREG(st.st_mode)


@dataclass(frozen=True)
class Unit:
    """One work unit of a dataset: file number ``file_no`` whole (``part`` None) or its part
    ``part_no`` of ``parts`` (an adapter's part: a :class:`~auditor.io.jsonread.LineSpan` or Parquet
    ``RowGroups``). ``state`` is the file's state when the dataset first read it: a file that differs
    when the unit is opened, or changes while it is read, is an error (the scan would mix two versions
    of it or be partial)."""

    file_no: int
    path: str
    part_no: int = 0
    parts: int = 1
    part: Any = None
    state: FileState | None = None

    @property
    def last_of_file(self) -> bool:
        return self.part_no == self.parts - 1

    @property
    def relative_lines(self) -> bool:
        """True when line numbers and positions read from this unit count from its own start."""
        return isinstance(self.part, LineSpan) and self.part_no > 0


@dataclass
class UnitStats:
    """What reading one unit counted (a worker sends it back with the unit's findings).

    ``records``: records numbered (ordinals used: yielded + filtered); ``error``: the problem that
    ended the unit, as ``(kind, path-or-source, where, problem)`` with kind ``"file"`` (the file is
    unreadable: skipped under ``on_error = "skip"``), ``"record"`` (a bad record under
    ``on_error = "fail"``) or ``"changed"`` (the file changed while it was read: always an error).
    """

    read: int = 0
    yielded: int = 0
    skipped: int = 0
    filtered: int = 0
    records: int = 0
    lines: int = 0
    skip_reasons: Counter = field(default_factory=Counter)
    skip_examples: list[tuple[str, str]] = field(default_factory=list)
    seen_splits: Counter = field(default_factory=Counter)
    duplicate_ids: int = 0
    duplicate_id_examples: list[str] = field(default_factory=list)
    ids_in_several_files: int = 0
    #: sum (mod 2**128) of the yielded records' xxh3-128 (:func:`_record_bytes`): a multiset hash,
    #: so units' sums add up to the dataset's whatever the cut
    fingerprint: int = 0
    #: SHA-256 (hex) of the :data:`HASH_BLOCK` blocks of the file this unit hashes (:func:`unit_blocks`)
    digests: list[str] = field(default_factory=list)
    error: tuple[str, str, str | None, str] | None = None


@dataclass(frozen=True)
class UnitReader:
    """Reads units of one dataset: the per-record rules (ordinals, the ``max_record_chars`` bound,
    skips, split selection, bundled names) in one place for the serial reader and every worker."""

    spec: DatasetSpec
    split: str | None
    format: str | None
    bundled_prefix: str | None
    #: hash the unit's share of its file's blocks (off for a counting pass)
    hash_blocks: bool = True

    def read(
        self,
        unit: Unit,
        ustats: UnitStats,
        ordinal_start: int | None = 0,
        ids: set | None = None,
        id_files: dict | None = None,
    ) -> Iterator[Record]:
        """Yield the unit's selected records, numbered from ``ordinal_start`` (None: from 0, for a
        caller that renumbers; not allowed with a position-range split). Problems end the unit and
        go to ``ustats.error``; skips are counted in ``ustats``; nothing is raised for bad input."""
        spec = self.spec
        limit = spec.max_record_chars
        options = AdapterOptions(
            text_field=spec.text_field,
            id_field=spec.id_field,
            max_record_chars=limit,
            messages=spec.messages,
            calls_field=spec.calls_field,
        )
        if ordinal_start is None and self.split and _RANGE.match(self.split):
            raise ValueError("a position-range split needs the unit's first ordinal")
        selector = _selector(self.split)
        ordinal = ordinal_start or 0
        path: Any = unit.path if is_url(unit.path) else Path(unit.path)
        try:
            check_regular_file(path)
            if unit.state is not None:
                check_unchanged(unit.state)
            adapter = (get_adapter(self.format) if self.format else detect(path))(spec.name, options)
            items = adapter.read(path) if unit.part is None else adapter.read_part(path, unit.part)
            for item in items:
                ustats.read += 1
                if isinstance(item, Record) and max(map(len, item.views.values()), default=0) > limit:
                    item = Skip(item.source, too_long(limit))
                if isinstance(item, Skip):
                    if spec.on_error != "skip":
                        ustats.error = ("record", item.source, None, item.reason)
                        return
                    _count_skip(ustats, item)
                    continue
                item.ordinal = ordinal
                ordinal += 1
                ustats.records += 1
                if self.bundled_prefix and item.source.startswith(self.bundled_prefix):
                    item.source = "bundled:" + item.source[len(self.bundled_prefix) :]
                ustats.seen_splits[item.split] += 1
                if selector(item):
                    ustats.yielded += 1
                    if ids is not None:
                        _count_duplicate(ids, ustats, unit.path, item)
                    if id_files is not None:
                        key = (item.meta.get("group") or "", item.id)
                        if id_files.setdefault(key, unit.path) != unit.path:
                            ustats.ids_in_several_files += 1
                    # a position given as id is left out: a later byte range knows only its local one
                    data = _record_bytes(item, with_id=not item.meta.get("positional_id"))
                    ustats.fingerprint = (ustats.fingerprint + xxhash.xxh3_128_intdigest(data)) % _MOD
                    yield item
                else:
                    ustats.filtered += 1
            if isinstance(unit.part, LineSpan):
                ustats.lines = unit.part.lines
            if unit.state is not None and self.hash_blocks and not self.bundled_prefix:
                ustats.digests = _hash_blocks(unit.path, unit_blocks(unit))
            if unit.state is not None:
                check_unchanged(unit.state)  # read to its end: a file that changed meanwhile was read in part
        except ChangedFileError as e:
            ustats.error = ("changed", e.path, None, e.reason)
        except InputError as e:
            ustats.error = ("file", e.path, e.where, e.problem)


def _count_skip(ustats: UnitStats, item: Skip) -> None:
    ustats.skipped += 1
    reason = _COLUMN.sub("", item.reason)
    if reason not in ustats.skip_reasons and len(ustats.skip_reasons) >= MAX_SKIP_REASONS:
        reason = OTHER_REASONS
    ustats.skip_reasons[reason] += 1
    if len(ustats.skip_examples) < 10:
        ustats.skip_examples.append((item.source, item.reason))


def _count_duplicate(ids: set, ustats: UnitStats, path: str, item: Record) -> None:
    key = (path, item.meta.get("group") or "", item.id)
    if key in ids:
        ustats.duplicate_ids += 1
        if len(ustats.duplicate_id_examples) < 10:
            ustats.duplicate_id_examples.append(f"{item.source}: id {item.id!r}")
    else:
        ids.add(key)


@dataclass(frozen=True)
class Shift:
    """How to turn one unit's local numbers into the dataset's: add ``ordinal`` to ordinals, and,
    for a unit whose lines count from its own start (:attr:`Unit.relative_lines`), ``lines`` to the
    line numbers of its sources and ``positions`` to its positional ids."""

    ordinal: int = 0
    lines: int = 0
    positions: int = 0

    def source(self, source: str) -> str:
        """``path:N`` → ``path:N+lines`` (other sources unchanged)."""
        if not self.lines:
            return source
        head, sep, line = source.rpartition(":")
        return f"{head}:{int(line) + self.lines}" if sep and line.isdigit() else source


class DatasetAccount:
    """Adds units' counts to a dataset's :class:`DatasetStats` in reading order, so a dataset read
    in parallel units is accounted exactly as one read serially: ordinals, line numbers and
    positions run on across units; skip reasons, examples and files keep their serial order; a
    bad record (``on_error = "fail"``) or an unreadable file raises :class:`InputError` at its place,
    an unreadable file under ``on_error = "skip"`` is a skipped file whose later units are dropped.
    """

    def __init__(self, dataset: Dataset):
        self.dataset = dataset
        self.stats = dataset.stats = DatasetStats()
        self.seen_splits: Counter = Counter()
        self.ordinal = 0
        self._file_reads = 0
        self._file_lines = 0
        self._failed_file: int | None = None
        self._fingerprint = 0
        self._digests: dict[int, list[str]] = {}

    def shift(self, unit: Unit, numbered_from: int | None = None) -> Shift:
        """The :class:`Shift` of ``unit`` (call before :meth:`absorb`); ``numbered_from``: the first
        ordinal its reader was given (None: it numbered from 0)."""
        reads, lines = (0, 0) if unit.part_no == 0 else (self._file_reads, self._file_lines)
        ordinal = self.ordinal if numbered_from is None else 0
        if unit.relative_lines:
            return Shift(ordinal, lines, reads)
        return Shift(ordinal)

    def absorb(self, unit: Unit, u: UnitStats) -> bool:
        """Add ``unit``'s counts; False (nothing added) when its file was given up at an earlier unit."""
        if unit.file_no == self._failed_file:
            return False
        shift = self.shift(unit)
        if unit.part_no == 0:
            self._file_reads = self._file_lines = 0
        st = self.stats
        st.read += u.read
        st.yielded += u.yielded
        st.skipped += u.skipped
        st.filtered += u.filtered
        for reason, n in u.skip_reasons.items():
            if reason not in st.skip_reasons and len(st.skip_reasons) >= MAX_SKIP_REASONS:
                reason = OTHER_REASONS
            st.skip_reasons[reason] += n
        for source, reason in u.skip_examples:
            if len(st.skip_examples) < 10:
                st.skip_examples.append(f"{shift.source(source)}: {reason}")
        st.duplicate_ids += u.duplicate_ids
        st.ids_in_several_files += u.ids_in_several_files
        self._fingerprint = (self._fingerprint + u.fingerprint) % _MOD
        self._digests.setdefault(unit.file_no, []).extend(u.digests)
        st.duplicate_id_examples.extend(u.duplicate_id_examples[: 10 - len(st.duplicate_id_examples)])
        self.seen_splits.update(u.seen_splits)
        self.ordinal += u.records
        self._file_reads += u.read
        self._file_lines += u.lines
        error = u.error
        if (
            error is None
            and unit.last_of_file
            and self._file_reads == 0
            and not self.dataset.spec.allow_empty
            and is_blank(unit.path)
        ):
            # a well-formed empty document ([], {}, a CSV header, Parquet without rows) is a dataset
            # of 0 records; a file with no content at all is a mistake
            error = ("file", unit.path, None, "no records in the file (empty)")
        if error is not None:
            kind, where_path, where, problem = error
            if kind == "record":
                raise InputError(*split_source(shift.source(where_path)), problem)
            if kind == "changed":
                raise ChangedFileError(where_path, problem)
            e = InputError(where_path, where, problem)
            if self.dataset.spec.on_error != "skip":
                raise e
            st.skipped_files.append(
                {
                    "file": unit.path,
                    "reason": problem if where_path == unit.path else str(e),
                    "records_read_before": self._file_reads,
                }
            )
            self._failed_file = unit.file_no
        return True

    def finish(self) -> None:
        """After the last unit: the dataset's record fingerprint (a complete pass); a split label that
        matched no record is a :class:`ConfigError`."""
        st = self.stats
        digest = f"{st.yielded}:{self._fingerprint:032x}".encode()
        self.dataset._records_sha256 = hashlib.sha256(digest).hexdigest()
        files = self.dataset.files
        for file_no, digests in self._digests.items():
            state = self.dataset._states.get(str(files[file_no]))
            if file_no != self._failed_file and state is not None and len(digests) == block_count(state.size):
                self.dataset._file_digests[str(files[file_no])] = combine_blocks(digests)
        split = self.dataset.split
        if split and st.yielded == 0 and not _RANGE.match(split):
            labels = sorted(str(s) for s in self.seen_splits if s)
            hint = did_you_mean(split, labels)
            if not hint and _DASHED_RANGE.match(split):
                hint = f" (did you mean '{split.replace('-', ':', 1)}'?)"
            raise ConfigError(
                f"dataset '{self.dataset.spec.name}': split '{split}' matches no record{hint} (splits in the data: "
                f"{', '.join(labels) or 'none'}; a split is NAME:SPLIT, a split label of the data, or "
                "NAME:START:END, record positions with END exclusive and either left empty, e.g. webshop:0:500)"
            )


def _url_relative(url: str, files: list[Any]) -> str:
    """``url`` shown from the folder its dataset's files share (the whole of it when they share none)."""
    import posixpath

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


def block_count(size: int) -> int:
    """Blocks of :data:`HASH_BLOCK` bytes in a file of ``size`` bytes (an empty file is one empty block)."""
    return max(1, -(-size // HASH_BLOCK))


def unit_blocks(unit: Unit) -> range:
    """The blocks of its file that ``unit`` hashes: the file's blocks shared out evenly among its
    parts (which worker hashes a block changes with the cut; the file's digest does not)."""
    n = block_count(unit.state.size if unit.state is not None else 0)
    return range(unit.part_no * n // unit.parts, (unit.part_no + 1) * n // unit.parts)


def _hash_blocks(path: str, blocks: range) -> list[str]:
    """SHA-256 of each block in ``blocks`` of the file's bytes as stored (compressed files too)."""
    from ..io.remote import open_url

    out = []
    try:
        with open_url(path) if is_url(path) else open(path, "rb") as f:
            f.seek(blocks.start * HASH_BLOCK)
            for _ in blocks:
                h, left = hashlib.sha256(), HASH_BLOCK
                while left and (chunk := f.read(min(left, 1 << 20))):
                    h.update(chunk)
                    left -= len(chunk)
                out.append(h.hexdigest())
    except OSError as e:
        raise InputError(path, None, f"cannot read: {e.strerror or e}") from None
    return out


def combine_blocks(digests: list[str]) -> str:
    """A file's digest from its blocks' SHA-256s: the one block's (= the file's SHA-256) when it is
    one block, else the SHA-256 of the blocks' digests."""
    if len(digests) == 1:
        return digests[0]
    return hashlib.sha256(b"".join(bytes.fromhex(d) for d in digests)).hexdigest()


def file_digest(path: Any) -> str:
    """A file's digest (:func:`combine_blocks`) computed here, in one read."""
    from ..io.files import file_size

    return combine_blocks(_hash_blocks(str(path), range(block_count(file_size(path)))))


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

"""Datasets: a named set of files (or a bundled registry name) read through adapters into Records.

:class:`DatasetSpec` is the configuration (one ``[datasets.NAME]`` table of a manifest, or one
``--train`` / ``--eval`` flag); :class:`Dataset` reads it, assigns each record its ``ordinal``,
applies the split selection and keeps the accounting: every record read is either yielded or
skipped (with a reason) or left out by the split selection — ``read == yielded + skipped + filtered``.

Bad input follows ``on_error``: ``fail`` (default) raises :class:`InputError` naming file, line and
problem; ``skip`` counts the record — or a whole file that cannot be read — with its reason (an eval
set's skipped records are also listed whole, :attr:`DatasetStats.skipped_items`: each is an unchecked
eval item). A record whose text exceeds ``max_record_chars`` is such a bad record (line-based readers
never hold it in memory). Relative paths must stay inside ``confine_to`` when it is set (manifests
set it to their own folder); absolute paths are the explicit way out. Eval datasets also count
duplicate ids (within a file): reported, not skipped.

Reading is by **work units** (:meth:`Dataset.plan`: a file, a byte range of a large JSON Lines
file, Parquet row groups), each read alone by a :class:`~auditor.datasets.units.UnitReader` and added
up in reading order by a :class:`~auditor.datasets.account.DatasetAccount`, so every way of reading
gives the same records and counts. The parts live beside this module: the spec and split selection
(``spec.py``), which files a spec names (``files.py``), work units (``units.py``), accounting
(``account.py``), block fingerprints (``fingerprint.py``).

>>> ds = Dataset(DatasetSpec(name="goals", paths=["webshop:0:3"], role="eval"))
>>> [r.id for r in ds.records()], ds.stats.read, ds.stats.yielded, ds.stats.filtered
(['0', '1', '2'], 12087, 3, 12084)
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from ..adapters import Adapter, AdapterOptions, adapter_for, explain
from ..errors import ChangedFileError, ConfigError, InputError
from ..io.compressed import declare_encoding
from ..io.files import FileState, check_regular_file, check_unchanged, file_state
from ..io.remote import is_url
from ..records.record import Record, split_source
from . import registry
from .account import DatasetAccount, DatasetStats
from .files import resolve_files, stat_is_regular, url_relative
from .fingerprint import file_digest
from .spec import DatasetSpec, is_position_range
from .summary import DatasetSummary
from .units import Unit, UnitReader, UnitStats

__all__ = ["Dataset", "DatasetSpec"]


class Dataset:
    """A readable dataset. :meth:`records` may be called more than once (stats reset each time)."""

    def __init__(self, spec: DatasetSpec):
        self.spec = spec
        self.files, self.registry_entry, self.split = resolve_files(spec)
        for f in self.files:  # read in the dataset's encoding (UTF-8, or a BOM's, unless it names one)
            declare_encoding(f, spec.encoding)
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

    @property
    def split_by_position(self) -> bool:
        """Is the split a position range (``"0:500"``)? Selecting it needs every record's ordinal."""
        return is_position_range(self.split)

    @property
    def format(self) -> str | None:
        if self.spec.format:
            return self.spec.format
        return self.registry_entry.format if self.registry_entry else None

    def sha256(self) -> str:
        """Fingerprint of the input files (sha256 of each file's name and digest), whatever the
        selection; :meth:`records_sha256` is the selected records'. A file's digest is its SHA-256
        up to :data:`~auditor.datasets.fingerprint.HASH_BLOCK` bytes, else the SHA-256 of its blocks' SHA-256s
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
            return f"{self.name} {record_id} ({url_relative(path, self.files)})"
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
                describe = getattr(adapter, "describe", None)
                if describe is not None:  # an archive: the members read and left out
                    why = f"{why}; {describe(f)}"
                out[str(f)] = (adapter.name, why)
        return out

    def adapter_class(self, path: Path) -> type[Adapter]:
        """The adapter that reads ``path``: the dataset's format, else detected from content (an archive:
        the ``archive`` adapter, whose members are read in the dataset's format)."""
        return adapter_for(path, self.format)

    def adapter(self, path: Path) -> Adapter:
        """The adapter reading ``path`` for this dataset, with the dataset's options."""
        spec = self.spec
        options = AdapterOptions(
            text_field=spec.text_field,
            id_field=spec.id_field,
            max_record_chars=spec.max_record_chars,
            messages=spec.messages,
            calls_field=spec.calls_field,
            member_format=self.format,
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

"""Accounting of a dataset read by units: :class:`DatasetStats` (what the report's
:class:`~auditor.datasets.summary.DatasetSummary` shows) and :class:`DatasetAccount`, which adds
the units' :class:`~auditor.datasets.units.UnitStats` up in reading order and renumbers what a unit
could not know (ordinals; line numbers and positions in a later byte range), so every way of reading
gives the same records and counts: ``read == yielded + skipped + filtered``.

>>> Shift(lines=100).source("train.jsonl:7")
'train.jsonl:107'
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import ChangedFileError, ConfigError, InputError, did_you_mean
from ..io.compressed import is_blank
from ..io.filestate import FileState
from ..records.record import split_source
from .fingerprint import block_count, combine_blocks
from .spec import DASHED_RANGE, DatasetSpec, is_position_range
from .units import EVAL_SKIPS_LISTED, FINGERPRINT_MOD, MAX_SKIP_REASONS, OTHER_REASONS, Unit, UnitStats


@dataclass
class DatasetStats:
    read: int = 0
    yielded: int = 0
    skipped: int = 0
    filtered: int = 0
    skip_reasons: Counter = field(default_factory=Counter)
    skip_examples: list[str] = field(default_factory=list)
    #: eval sets: every skipped record (on_error = skip), ``(source, reason)``, up to
    #: :data:`~auditor.datasets.units.EVAL_SKIPS_LISTED` (each is an eval item left unchecked)
    skipped_items: list[tuple[str, str]] = field(default_factory=list)
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


class Accounted(Protocol):
    """What an account reads of a dataset and fills in after a complete pass (a
    :class:`~auditor.datasets.dataset.Dataset` is one): its spec, files and split, the stats it
    counts into, the files' states when first read, and the fingerprints of the records and files."""

    spec: DatasetSpec
    files: list[Any]
    split: str | None
    stats: DatasetStats
    _states: dict[str, FileState]
    _records_sha256: str | None
    _file_digests: dict[str, str]

    @property
    def role(self) -> str: ...


class DatasetAccount:
    """Adds units' counts to a dataset's :class:`DatasetStats` in reading order, so a dataset read
    in parallel units is accounted exactly as one read serially: ordinals, line numbers and
    positions run on across units; skip reasons, examples and files keep their serial order; a
    bad record (``on_error = "fail"``) or an unreadable file raises :class:`InputError` at its place,
    an unreadable file under ``on_error = "skip"`` is a skipped file whose later units are dropped.
    """

    def __init__(self, dataset: Accounted):
        self.dataset = dataset
        self.stats = dataset.stats = DatasetStats()
        self.seen_splits: Counter = Counter()
        self.ordinal = 0
        self._file_reads = 0
        self._file_lines = 0
        self._failed_file: int | None = None
        self._fingerprint = 0
        self._digests: dict[int, list[str]] = {}
        self._with_calls = 0
        self._no_calls_example: str | None = None

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
        listed = self.dataset.role == "eval"
        for source, reason in u.skip_examples:
            if len(st.skip_examples) < 10:
                st.skip_examples.append(f"{shift.source(source)}: {reason}")
            if listed and len(st.skipped_items) < EVAL_SKIPS_LISTED:
                st.skipped_items.append((shift.source(source), reason))
        st.duplicate_ids += u.duplicate_ids
        st.ids_in_several_files += u.ids_in_several_files
        self._fingerprint = (self._fingerprint + u.fingerprint) % FINGERPRINT_MOD
        self._digests.setdefault(unit.file_no, []).extend(u.digests)
        st.duplicate_id_examples.extend(u.duplicate_id_examples[: 10 - len(st.duplicate_id_examples)])
        self.seen_splits.update(u.seen_splits)
        self._with_calls += u.with_calls
        self._no_calls_example = self._no_calls_example or u.no_calls_example
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
        matched no record, or a ``calls_field`` that gave no call in any record, is a :class:`ConfigError`."""
        st = self.stats
        digest = f"{st.yielded}:{self._fingerprint:032x}".encode()
        self.dataset._records_sha256 = hashlib.sha256(digest).hexdigest()
        files = self.dataset.files
        for file_no, digests in self._digests.items():
            state = self.dataset._states.get(str(files[file_no]))
            if file_no != self._failed_file and state is not None and len(digests) == block_count(state.size):
                self.dataset._file_digests[str(files[file_no])] = combine_blocks(digests)
        calls_field = self.dataset.spec.calls_field
        if calls_field and st.yielded and not self._with_calls:
            raise ConfigError(
                f"dataset '{self.dataset.spec.name}': calls field '{calls_field}' gave no tool call in any of its "
                f"{st.yielded} records ({self._no_calls_example}); name the field that holds the calls "
                "(`auditor inspect --calls-field FIELD` shows what is read)"
            )
        split = self.dataset.split
        if split and st.yielded == 0 and not is_position_range(split):
            labels = sorted(str(s) for s in self.seen_splits if s)
            hint = did_you_mean(split, labels)
            if not hint and DASHED_RANGE.match(split):
                hint = f" (did you mean '{split.replace('-', ':', 1)}'?)"
            raise ConfigError(
                f"dataset '{self.dataset.spec.name}': split '{split}' matches no record{hint} (splits in the data: "
                f"{', '.join(labels) or 'none'}; a split is NAME:SPLIT, a split label of the data, or "
                "NAME:START:END, record positions with END exclusive and either left empty, e.g. webshop:0:500)"
            )

"""Work units: a dataset is read by units (:meth:`~auditor.datasets.dataset.Dataset.plan`: a file,
a byte range of a large JSON Lines file, Parquet row groups), each read alone by a
:class:`UnitReader` — in this process for :meth:`~auditor.datasets.dataset.Dataset.records`, in the
engines' workers for a scan — which counts what it read in a :class:`UnitStats`; the dataset's
:class:`~auditor.datasets.account.DatasetAccount` adds the units up in reading order.

>>> from auditor.datasets.dataset import Dataset, DatasetSpec
>>> ds = Dataset(DatasetSpec(name="goals", paths=["webshop:0:3"], role="eval"))
>>> [unit] = ds.plan()
>>> ustats = UnitStats()
>>> [r.id for r in ds.reader().read(unit, ustats)], ustats.read, ustats.yielded
(['0', '1', '2'], 12087, 3)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import xxhash

from ..adapters import AdapterOptions, adapter_for
from ..adapters._fields import id_candidate
from ..errors import ChangedFileError, InputError
from ..io.compressed import declare_encoding
from ..io.files import FileState, check_regular_file, check_unchanged
from ..io.jsonread import LineSpan, dotted_get, too_long
from ..io.remote import is_url
from ..records.callparse import describe_value
from ..records.fields import fields_view, id_known, with_text_key
from ..records.record import FIELDS, TEXT, Record, Skip
from .fingerprint import block_count, hash_blocks
from .spec import DatasetSpec, is_position_range, selector

#: the record fingerprints (:attr:`UnitStats.fingerprint`) add up modulo this
FINGERPRINT_MOD = 1 << 128
_COLUMN = re.compile(r"\s*\(column \d+\)")
MAX_SKIP_REASONS = 100
#: skipped records a unit names (source, reason): 10 on the training side; on the eval side each is an
#: unchecked item the report lists, so up to this many
EVAL_SKIPS_LISTED = 100_000
OTHER_REASONS = "other reasons (beyond the first 100 kinds)"


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
    #: with a ``calls_field``: yielded records with a non-empty ``calls`` view, and where the first
    #: one without stands and what its field holds (:func:`~auditor.records.callparse.describe_value`)
    with_calls: int = 0
    no_calls_example: str | None = None


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
            member_format=self.format,
        )
        if ordinal_start is None and is_position_range(self.split):
            raise ValueError("a position-range split needs the unit's first ordinal")
        selected = selector(self.split)
        ordinal = ordinal_start or 0
        path: Any = unit.path if is_url(unit.path) else Path(unit.path)
        try:
            check_regular_file(path)
            if unit.state is not None:
                check_unchanged(unit.state)
            declare_encoding(unit.path, spec.encoding)  # this process reads the file in the dataset's encoding
            adapter = adapter_for(path, self.format)(spec.name, options)
            items = adapter.read(path) if unit.part is None else adapter.read_part(path, unit.part)
            whole = spec.role == "train"
            for item in items:
                ustats.read += 1
                if whole:
                    item = read_whole(spec.name, item, ustats.read - 1)
                if isinstance(item, Record) and max(map(len, item.views.values()), default=0) > limit:
                    item = Skip(item.source, too_long(limit))
                if isinstance(item, Skip):
                    if spec.on_error != "skip":
                        ustats.error = ("record", item.source, None, item.reason)
                        return
                    _count_skip(ustats, item, EVAL_SKIPS_LISTED if spec.role == "eval" else 10)
                    continue
                item.ordinal = ordinal
                ordinal += 1
                ustats.records += 1
                if self.bundled_prefix and item.source.startswith(self.bundled_prefix):
                    item.source = "bundled:" + item.source[len(self.bundled_prefix) :]
                ustats.seen_splits[item.split] += 1
                if selected(item):
                    ustats.yielded += 1
                    if ids is not None:
                        _count_duplicate(ids, ustats, unit.path, item)
                    if id_files is not None:
                        key = (item.meta.get("group") or "", item.id)
                        if id_files.setdefault(key, unit.path) != unit.path:
                            ustats.ids_in_several_files += 1
                    # a position given as id is left out: a later byte range knows only its local one
                    data = _record_bytes(item, with_id=not item.meta.get("positional_id"))
                    ustats.fingerprint = (ustats.fingerprint + xxhash.xxh3_128_intdigest(data)) % FINGERPRINT_MOD
                    if spec.calls_field:
                        _count_calls(ustats, item, spec.calls_field)
                    yield item
                else:
                    ustats.filtered += 1
            if isinstance(unit.part, LineSpan):
                ustats.lines = unit.part.lines
            if unit.state is not None and self.hash_blocks and not self.bundled_prefix:
                ustats.digests = hash_blocks(unit.path, unit_blocks(unit))
            if unit.state is not None:
                check_unchanged(unit.state)  # read to its end: a file that changed meanwhile was read in part
        except ChangedFileError as e:
            ustats.error = ("changed", e.path, None, e.reason)
        except InputError as e:
            ustats.error = ("file", e.path, e.where, e.problem)


def read_whole(dataset: str, item: Record | Skip, position: int) -> Record | Skip:
    """A training record as the text tiers search it: ``item`` with its ``fields`` view
    (:mod:`auditor.records.fields`, every string of its raw object not in another view); a
    :class:`~auditor.records.record.Skip` that kept the well-formed object it could not read
    (no text field, another schema) becomes a record of that object read whole (``fields`` only,
    ``meta["read_whole"]`` the adapter's reason; its id the first id-like field, else ``position``,
    the item's position in its unit as the adapter counts it). A Skip with nothing to read (no
    object, or not one string in it) stays one.

    >>> r = read_whole("t", Skip("t.jsonl:4", "no text field found", raw={"input": "Find flights", "id": 7}), 3)
    >>> r.id, r.views, r.meta
    ('7', {'fields': 'Find flights'}, {'read_whole': 'no text field found'})
    >>> read_whole("t", Record("t", "r1", "t.jsonl:6", {"query": "Hi"}, raw={"id": "r1", "query": "Hi"}), 5).views
    {'query': 'Hi'}
    >>> read_whole("t", Skip("t.jsonl:5", "invalid JSON"), 4)
    Skip(source='t.jsonl:5', reason='invalid JSON', raw=None, key=None)
    """
    skip = item
    if isinstance(item, Skip):
        if item.raw is None:
            return item
        meta: dict[str, Any] = {"read_whole": item.reason}
        if item.key is not None:
            meta["json_key"] = item.key
        rid = id_candidate(item.raw) if isinstance(item.raw, dict) else None
        if rid is None:
            rid, meta["positional_id"] = position, True
        item = Record(dataset, str(rid), item.source, {}, meta=meta, raw=item.raw)
    # a member of a JSON object keyed by its prompt holds that prompt in its key (meta["json_key"])
    text = fields_view(item.views, with_text_key(item.raw, item.meta.get("json_key")), id_known(item.id))
    if not item.views and not text:
        return skip  # not one string in it: nothing to search (the adapter's reason stands)
    if text:
        if TEXT not in item.views and item.views:
            item.views[TEXT] = item.view(TEXT)  # the tiers that join text and fields see every view once
        item.views[FIELDS] = text
    return item


def _count_skip(ustats: UnitStats, item: Skip, listed: int = 10) -> None:
    ustats.skipped += 1
    reason = _COLUMN.sub("", item.reason)
    if reason not in ustats.skip_reasons and len(ustats.skip_reasons) >= MAX_SKIP_REASONS:
        reason = OTHER_REASONS
    ustats.skip_reasons[reason] += 1
    if len(ustats.skip_examples) < listed:
        ustats.skip_examples.append((item.source, item.reason))


def _count_calls(ustats: UnitStats, item: Record, calls_field: str) -> None:
    if item.views.get("calls"):
        ustats.with_calls += 1
    elif ustats.no_calls_example is None:
        try:
            held = describe_value(dotted_get(item.raw, calls_field))
        except (KeyError, TypeError):
            held = "nothing (no such field)"
        ustats.no_calls_example = f"{item.source} holds {held}"


def _count_duplicate(ids: set, ustats: UnitStats, path: str, item: Record) -> None:
    key = (path, item.meta.get("group") or "", item.id)
    if key in ids:
        ustats.duplicate_ids += 1
        if len(ustats.duplicate_id_examples) < 10:
            ustats.duplicate_id_examples.append(f"{item.source}: id {item.id!r}")
    else:
        ids.add(key)


def _record_bytes(r: Record, with_id: bool = True) -> bytes:
    """A record's id and views, unambiguously (NUL never occurs in them: NUL bytes are refused)."""
    parts = [r.id if with_id else ""]
    for k, v in sorted(r.views.items()):
        parts += ("\x00", k, "\x01", v)  # one join below: the views' texts are copied once
    parts.append("\x02")
    return "".join(parts).encode("utf-8", "surrogatepass")


def unit_blocks(unit: Unit) -> range:
    """The blocks of its file that ``unit`` hashes: the file's blocks shared out evenly among its
    parts (which worker hashes a block changes with the cut; the file's digest does not)."""
    n = block_count(unit.state.size if unit.state is not None else 0)
    return range(unit.part_no * n // unit.parts, (unit.part_no + 1) * n // unit.parts)

"""The base of the named readers whose items are objects: one per JSON array element, object member,
JSON Lines line, CSV / TSV row or Parquet row (Alpaca, Dolly, TRL, Glaive, xLAM, ToolACE, LLaMA-Factory ...).

A subclass says what one object is (:meth:`RowAdapter.convert`); reading, cutting a JSON Lines file
into parts for the workers and writing cleaned output back in the file's own layout are done here
once. An item that is not an object is a :class:`~auditor.records.record.Skip` naming its place. Tables
(:data:`TABLE_SUFFIXES`) are detected from their first row (:func:`first_row`), as JSON is from its first
record; a malformed CSV or an unreadable Parquet file is an :class:`~auditor.errors.InputError`.

>>> import json, os, tempfile
>>> from auditor.records.record import QUERY, TEXT
>>> class Upper(RowAdapter):
...     def convert(self, obj, position, source):
...         return self.record(position, source, {QUERY: obj["q"].upper(), TEXT: obj["q"]}, raw=obj)
>>> p = os.path.join(tempfile.mkdtemp(), "d.json")
>>> _ = open(p, "w").write(json.dumps([{"q": "a"}, 3]))
>>> [getattr(r, "views", None) or r.reason for r in Upper("d").read(p)]
[{'query': 'A', 'text': 'a'}, 'item is int, not an object']
"""

from __future__ import annotations

import csv
import dataclasses
import json
from abc import abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io.arrowread import arrow_rows, table_source
from ..io.compressed import NOT_UTF8, open_text
from ..io.files import base_suffix
from ..io.jsonread import LineSpan, iter_json_items, iter_jsonl, json_container, load_json, locate_bad_utf8
from ..io.sniff import sniff
from ..io.yamlread import iter_yaml_items
from ..records.record import Record, Skip
from ._csvlayout import csv_layout
from ._fields import extract
from ._write import (
    ArrowWriter,
    CsvWriter,
    JsonArrayWriter,
    JsonLinesWriter,
    JsonObjectWriter,
    ParquetWriter,
    RecordWriter,
    YamlWriter,
)
from .base import Adapter, line_spans

#: Arrow IPC files (file or stream format: Hugging Face ``datasets``' ``.arrow``, Feather v2)
ARROW_SUFFIXES = (".arrow", ".feather")
#: binary tables read by pyarrow, row by row
COLUMNAR_SUFFIXES = (".parquet", *ARROW_SUFFIXES)
YAML_SUFFIXES = (".yaml", ".yml")
#: files the named readers read row by row, not as JSON (chosen by suffix, then by the first row's fields)
TABLE_SUFFIXES = (".csv", ".tsv", *COLUMNAR_SUFFIXES, *YAML_SUFFIXES)


class RowAdapter(Adapter):
    """A format whose items are JSON objects (array elements, object members or lines)."""

    suffixes = (".json", ".jsonl", *TABLE_SUFFIXES)
    layouts = ("array", "object", "lines")

    @abstractmethod
    def convert(self, obj: dict, position: int, source: str) -> Record | Skip:
        """The Record (or Skip) of one object at ``position`` (0-based) of its file."""

    def one(self, obj: Any, position: int, source: str) -> Record | Skip:
        """:meth:`convert` of an object; with ``text_field`` given, the field the user named is the item,
        read as the generic formats read it (:func:`auditor.adapters._fields.extract`)."""
        if self.options.text_field:
            return extract(self, obj, position, source)
        if not isinstance(obj, dict):
            return Skip(source, f"item is {type(obj).__name__}, not an object", raw=obj)
        rec = self.convert(obj, position, source)
        if isinstance(rec, Skip) and rec.raw is None:  # a well-formed object of another schema: the
            rec = Skip(rec.source, rec.reason, raw=obj)  # training side reads it whole (Skip.raw)
        return rec

    @classmethod
    def parts(cls, path: Path, split_bytes: int) -> list[LineSpan]:
        if base_suffix(path) in TABLE_SUFFIXES:
            return []
        return line_spans(path, split_bytes) if sniff(path).kind == "lines" else []

    def prepare(self, path: Path) -> None:
        """Called before ``path`` (or a part of it) is read: what a format learns from the file as a
        whole (:meth:`sample`) is set here. The default learns nothing."""

    def sample(self, path: Path, limit: int) -> list[dict]:
        """The first ``limit`` objects of ``path`` (items that are not objects or do not parse left out),
        the same whichever part is being read."""
        out: list[dict] = []
        if base_suffix(path) in TABLE_SUFFIXES:
            items: Iterator[Any] = (row for _, _, row in table_rows(path, self.options.max_record_chars))
        elif sniff(path).kind == "lines":
            items = (obj for _, obj, err in iter_jsonl(path, self.options.max_record_chars) if not err)
        elif json_container(path) is not None:
            items = (obj for _, _, obj in iter_json_items(path))
        else:
            return out
        for obj in items:
            if isinstance(obj, dict):
                out.append(obj)
            if len(out) >= limit:
                break
        return out

    def read_part(self, path: Path, part: LineSpan | None) -> Iterator[Record | Skip]:
        self.prepare(path)
        return self._read_lines(path, part)

    def _read_lines(self, path: Path, part: LineSpan | None) -> Iterator[Record | Skip]:
        position = 0
        for lineno, obj, err in iter_jsonl(path, self.options.max_record_chars, part):
            source = f"{path}:{lineno}"
            yield Skip(source, err) if err else self.one(obj, position, source)
            position += 1

    def read(self, path: Path) -> Iterator[Record | Skip]:
        self.prepare(path)
        return self._read(path)

    def _read(self, path: Path) -> Iterator[Record | Skip]:
        suffix = base_suffix(path)
        if suffix in YAML_SUFFIXES:  # items (and a mapping's keys) as a JSON document's
            yield from self._items(path, iter_yaml_items(path))
            return
        if suffix in TABLE_SUFFIXES:
            for position, source, row in table_rows(path, self.options.max_record_chars):
                yield row if isinstance(row, Skip) else self.one(row, position, source)
            return
        if sniff(path).kind == "lines":
            yield from self._read_lines(path, None)
            return
        kind = json_container(path)
        if kind is None:
            load_json(path)  # invalid JSON: InputError naming the line
            yield Skip(str(path), f"expected a JSON array, object or JSON Lines of '{self.name}' records")
            return
        yield from self._items(path, iter_json_items(path))  # streamed, one item in memory

    def _items(self, path: Path, items: Iterator[tuple[int, str | None, Any]]) -> Iterator[Record | Skip]:
        for i, key, obj in items:
            rec = self.one(obj, i, f"{path}#{i}")
            if key is not None and isinstance(rec, Record):
                rec.meta["json_key"] = key  # written back under its key
                if rec.meta.pop("positional_id", False):
                    rec.id = str(key)
            elif key is not None and isinstance(rec, Skip) and rec.raw is not None:
                rec = dataclasses.replace(rec, key=key)  # read whole: with its key (a prompt-keyed map: the prompt)
            yield rec

    def writer(self, source: Path, target: Path) -> RecordWriter:
        table = table_writer(source, target)
        if table is not None:
            return table
        if sniff(source).kind == "lines":  # as read(): JSON Lines whatever the name
            return JsonLinesWriter(source, target)
        if json_container(source) == "object":
            return JsonObjectWriter(source, target)
        return JsonArrayWriter(source, target)


def table_writer(source: Path, target: Path) -> RecordWriter | None:
    """The writer of a table file (:data:`TABLE_SUFFIXES`) in its own format; None for JSON."""
    suffix = base_suffix(source)
    if suffix == ".parquet":
        return ParquetWriter(source, target)
    if suffix in ARROW_SUFFIXES:
        return ArrowWriter(source, target)
    if suffix in YAML_SUFFIXES:
        return YamlWriter(source, target)
    if suffix in TABLE_SUFFIXES:
        return CsvWriter(source, target)
    return None


def table_rows(path: Path, max_chars: int) -> Iterator[tuple[int, str, dict | Skip]]:
    """``(position, source, row)`` of each row of a CSV / TSV (layout as :func:`~auditor.adapters._csvlayout.csv_layout`
    tells it), Parquet, Arrow IPC or YAML file; a CSV row with more cells than the header, a NUL byte,
    or a YAML item that is not a mapping, is a Skip."""
    suffix = base_suffix(path)
    if suffix == ".parquet":
        yield from _parquet_rows(path)
    elif suffix in ARROW_SUFFIXES:
        for position, row in arrow_rows(path):
            yield position, f"{path}#{position}", row
    elif suffix in YAML_SUFFIXES:
        for position, _, item in iter_yaml_items(path):
            source = f"{path}#{position}"
            ok = isinstance(item, dict)
            yield (
                position,
                source,
                item if ok else Skip(source, f"item is {type(item).__name__}, not an object", raw=item),
            )
    else:
        yield from csv_rows(path, max_chars)


def csv_rows(path: Path, max_chars: int) -> Iterator[tuple[int, str, dict | Skip]]:
    """``(position, source, row)`` of each row of a CSV / TSV file (layout: :func:`~auditor.adapters._csvlayout.csv_layout`),
    parsed strictly; a row with more cells than the header, or a NUL byte, is a Skip. Raises
    :class:`InputError` naming the line for invalid UTF-8, malformed CSV or a field over ``max_chars``."""
    csv.field_size_limit(max_chars)
    reader = None
    layout = csv_layout(path)
    try:
        with open_text(path) as f:
            reader = csv.DictReader(
                f, fieldnames=None if layout.header else layout.columns, delimiter=layout.delimiter, strict=True
            )
            start, position = (2, 0) if layout.header else (1, 0)
            for row in reader:
                source = f"{path}:{start}"
                start = reader.line_num + 1
                if None in row:
                    more = "the header" if layout.header else f"the first rows ({len(layout.columns)}; no header)"
                    yield position, source, Skip(source, f"row has more cells than {more}")
                elif any("\x00" in v for v in row.values() if isinstance(v, str)):
                    yield position, source, Skip(source, "NUL byte in row")
                else:
                    yield position, source, row
                position += 1
    except UnicodeDecodeError:
        line = locate_bad_utf8(path)
        raise InputError(str(path), f"line {line}" if line else None, NOT_UTF8) from None
    except csv.Error as e:
        where = f"line {reader.reader.line_num}" if reader is not None and reader.reader.line_num else None
        problem = str(e)
        if "field larger than field limit" in problem:
            problem = f"a field is longer than max_record_chars={max_chars}"
        raise InputError(str(path), where, f"malformed CSV: {problem}") from None


def _parquet_rows(path: Path) -> Iterator[tuple[int, str, dict | Skip]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        with table_source(path) as src:
            position = 0
            for batch in pq.ParquetFile(src).iter_batches(batch_size=4096):
                for row in batch.to_pylist():
                    yield position, f"{path}#{position}", row
                    position += 1
    except (pa.ArrowException, OSError) as e:
        raise InputError(str(path), None, f"unreadable Parquet: {e}") from None


def first_row(path: Path) -> dict | None:
    """The first row of a table file as a dict (what detection shows adapters), None when there is none
    or the file does not read (its reader then reports why)."""
    try:
        for _, _, row in table_rows(path, 1 << 24):
            return row if isinstance(row, dict) else None
    except InputError:
        return None
    return None


def text_of(value: Any) -> str:
    """A field value as text: a string stripped, None '', a number or structure as compact JSON (an
    ``input`` holding an object is part of the item, not dropped).

    >>> text_of("  hi "), text_of(None), text_of(3), text_of({"city": "Oslo"})
    ('hi', '', '3', '{"city": "Oslo"}')
    """
    if isinstance(value, str):
        return value.strip()
    if value is None:
        return ""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def joined(*parts: str) -> str:
    """The non-empty parts, one per line.

    >>> joined("Translate to French:", "", "Good morning")
    'Translate to French:\\nGood morning'
    """
    return "\n".join(p for p in parts if p)


def record_id(obj: dict, keys: tuple[str, ...] = ("id",)) -> Any:
    """The first of ``keys`` holding a string or an integer (not a bool), else None."""
    for k in keys:
        value = obj.get(k)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return value
    return None

"""The base of the named readers whose items are JSON objects: one per array element, object member
or JSON Lines line (Alpaca, Dolly, TRL, Glaive, xLAM, ToolACE, LLaMA-Factory ...).

A subclass says what one object is (:meth:`RowAdapter.convert`); reading, cutting a JSON Lines file
into parts for the workers and writing cleaned output back in the file's own layout are done here
once. An item that is not an object is a :class:`~auditor.records.record.Skip` naming its place.

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

from abc import abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..io.jsonread import LineSpan, iter_json_items, iter_jsonl, json_container, load_json
from ..io.sniff import sniff
from ..records.record import Record, Skip
from ._write import JsonArrayWriter, JsonLinesWriter, JsonObjectWriter, RecordWriter
from .base import Adapter, line_spans


class RowAdapter(Adapter):
    """A format whose items are JSON objects (array elements, object members or lines)."""

    suffixes = (".json", ".jsonl")
    layouts = ("array", "object", "lines")

    @abstractmethod
    def convert(self, obj: dict, position: int, source: str) -> Record | Skip:
        """The Record (or Skip) of one object at ``position`` (0-based) of its file."""

    def one(self, obj: Any, position: int, source: str) -> Record | Skip:
        if not isinstance(obj, dict):
            return Skip(source, f"item is {type(obj).__name__}, not an object")
        return self.convert(obj, position, source)

    @classmethod
    def parts(cls, path: Path, split_bytes: int) -> list[LineSpan]:
        return line_spans(path, split_bytes) if sniff(path).kind == "lines" else []

    def read_part(self, path: Path, part: LineSpan | None) -> Iterator[Record | Skip]:
        position = 0
        for lineno, obj, err in iter_jsonl(path, self.options.max_record_chars, part):
            source = f"{path}:{lineno}"
            yield Skip(source, err) if err else self.one(obj, position, source)
            position += 1

    def read(self, path: Path) -> Iterator[Record | Skip]:
        if sniff(path).kind == "lines":
            yield from self.read_part(path, None)
            return
        kind = json_container(path)
        if kind is None:
            load_json(path)  # invalid JSON: InputError naming the line
            yield Skip(str(path), f"expected a JSON array, object or JSON Lines of '{self.name}' records")
            return
        for i, key, obj in iter_json_items(path):  # streamed, one item in memory
            rec = self.one(obj, i, f"{path}#{i}")
            if key is not None and isinstance(rec, Record):
                rec.meta["json_key"] = key  # written back under its key
                if rec.meta.pop("positional_id", False):
                    rec.id = str(key)
            yield rec

    def writer(self, source: Path, target: Path) -> RecordWriter:
        if sniff(source).kind == "lines":  # as read(): JSON Lines whatever the name
            return JsonLinesWriter(source, target)
        if json_container(source) == "object":
            return JsonObjectWriter(source, target)
        return JsonArrayWriter(source, target)


def text_of(value: Any) -> str:
    """A field value as text: a string stripped, anything else ''.

    >>> text_of("  hi "), text_of(None), text_of(3)
    ('hi', '', '')
    """
    return value.strip() if isinstance(value, str) else ""


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

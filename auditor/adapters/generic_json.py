"""Generic JSON / JSON Lines adapters: one record per array element, object value or line.

Options: ``text_field`` and ``id_field`` (dotted paths). Without ``text_field`` the first string
field among ``text, query, question, prompt, instruction, input, content, goal`` is used; without
``id_field`` the first of ``id, query_id, task_id, uid, idx``, else the 0-based position.

>>> import json, tempfile, os
>>> p = os.path.join(tempfile.mkdtemp(), "d.jsonl")
>>> _ = open(p, "w").write(json.dumps({"id": 9, "question": "What is 2+2?"}) + "\\n")
>>> [(r.id, r.view("query"), r.source.endswith(":1")) for r in JsonLinesAdapter("d").read(p)]
[('9', 'What is 2+2?', True)]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

from ..io.files import file_size
from ..io.jsonread import LineSpan, iter_json_items, iter_jsonl, json_container, load_json, object_of_records, too_long
from ..io.sniff import sniff
from ..records.record import Record, Skip
from ._fields import extract
from ._write import JsonArrayWriter, JsonDocumentWriter, JsonLinesWriter, JsonObjectWriter, RecordWriter
from .base import GenericAdapter, line_spans


class JsonAdapter(GenericAdapter):
    name = "json"
    suffixes = (".json",)
    layouts = ("array", "object", "scalar")

    def read(self, path: Path) -> Iterator[Record | Skip]:
        if sniff(path).kind == "lines":  # JSON Lines under a .json name (BFCL, APIBench): every line
            yield from JsonLinesAdapter(self.dataset, self.options).read(path)
            return
        # streamed: one item in memory at a time, whatever the file's size
        container = json_container(path)
        if container == "object" and not object_of_records(path):  # the file is one record
            if file_size(path) > self.options.max_record_chars:
                yield Skip(f"{path}#0", too_long(self.options.max_record_chars))
                return
            yield extract(self, load_json(path), 0, f"{path}#0")
            return
        for i, key, item in iter_json_items(path):
            source = f"{path}#{i}"
            if container is None:
                yield Skip(str(path), f"top-level JSON is {type(item).__name__}, not an array or object")
                return
            if key is not None:
                value = item
                if isinstance(value, dict) and not self.options.id_field:
                    rec = extract(self, value, i, source)
                    if isinstance(rec, Record) and not any(k in value for k in ("id", "query_id", "task_id")):
                        rec.id = str(key)
                else:
                    rec = extract(self, item, i, source)
                if isinstance(rec, Record):
                    rec.meta["json_key"] = key  # written back under its key
                elif rec.raw is not None:
                    rec = dataclasses.replace(rec, key=key)  # read whole: with its key (a prompt-keyed map: the prompt)
                yield rec
                continue
            yield extract(self, item, i, source)

    def writer(self, source: Path, target: Path) -> RecordWriter:
        if sniff(source).kind == "lines":  # as read()
            return JsonLinesWriter(source, target)
        if json_container(source) == "object":
            return JsonObjectWriter(source, target) if object_of_records(source) else JsonDocumentWriter(source, target)
        return JsonArrayWriter(source, target)


class JsonLinesAdapter(GenericAdapter):
    name = "jsonl"
    suffixes = (".jsonl", ".json")
    layouts = ("lines",)

    @classmethod
    def parts(cls, path: Path, split_bytes: int) -> list[LineSpan]:
        return line_spans(path, split_bytes)

    def read(self, path: Path) -> Iterator[Record | Skip]:
        return self.read_part(path, None)

    def read_part(self, path: Path, part: LineSpan | None) -> Iterator[Record | Skip]:
        position = 0
        for lineno, obj, err in iter_jsonl(path, self.options.max_record_chars, part):
            source = f"{path}:{lineno}"
            if err:
                yield Skip(source, err)
            else:
                yield extract(self, obj, position, source)
            position += 1

    def writer(self, source: Path, target: Path) -> RecordWriter:
        return JsonLinesWriter(source, target)

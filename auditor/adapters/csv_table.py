"""CSV / TSV adapter; ``text_field``/``id_field`` name columns. The delimiter (``,`` tab ``;`` ``|``) and
whether the first row is a header are told from the file's first 64 KiB (:mod:`auditor.adapters._csvlayout`:
StepTool ships TSV under ``.csv``); a headerless file's columns are ``col0``, ``col1`` …, and its text,
unless a text field is named, the column with the longest cells.

Quoted fields may hold newlines (a record's source is the line it starts on). Parsing is strict: an
unterminated quote or stray text after a closing quote is an error naming the line, never a silent
merge of the rest of the file into one field; a field over ``max_record_chars`` is an error too; a
row holding NUL bytes is skipped with that reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

from ..records.record import Record, Skip
from ._csvlayout import csv_layout
from ._fields import extract
from ._rows import csv_rows
from ._write import CsvWriter, RecordWriter
from .base import GenericAdapter


class CsvAdapter(GenericAdapter):
    name = "csv"
    suffixes = (".csv", ".tsv")
    layouts = ()

    def read(self, path: Path) -> Iterator[Record | Skip]:
        reader = self
        layout = csv_layout(path)
        if not layout.header and not self.options.text_field and layout.text_column:
            reader = CsvAdapter(self.dataset, dataclasses.replace(self.options, text_field=layout.text_column))
        for position, source, row in csv_rows(path, self.options.max_record_chars):
            yield row if isinstance(row, Skip) else extract(reader, row, position, source)

    def writer(self, source: Path, target: Path) -> RecordWriter:
        return CsvWriter(source, target)

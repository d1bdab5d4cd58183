"""CSV / TSV adapter (delimiter sniffed: StepTool ships TSV under ``.csv``); ``text_field``/``id_field`` name columns.

Quoted fields may hold newlines (a record's source is the line it starts on). Parsing is strict: an
unterminated quote or stray text after a closing quote is an error naming the line, never a silent
merge of the rest of the file into one field; a field over ``max_record_chars`` is an error too; a
row holding NUL bytes is skipped with that reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..records.record import Record, Skip
from ._fields import extract
from ._rows import csv_rows
from ._write import CsvWriter, RecordWriter
from .base import GenericAdapter


class CsvAdapter(GenericAdapter):
    name = "csv"
    suffixes = (".csv", ".tsv")
    layouts = ()

    def read(self, path: Path) -> Iterator[Record | Skip]:
        for position, source, row in csv_rows(path, self.options.max_record_chars):
            yield row if isinstance(row, Skip) else extract(self, row, position, source)

    def writer(self, source: Path, target: Path) -> RecordWriter:
        return CsvWriter(source, target)

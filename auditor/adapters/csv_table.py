"""CSV / TSV adapter (delimiter sniffed: StepTool ships TSV under ``.csv``); ``text_field``/``id_field`` name columns.

Quoted fields may hold newlines (a record's source is the line it starts on). Parsing is strict: an
unterminated quote or stray text after a closing quote is an error naming the line, never a silent
merge of the rest of the file into one field; a field over ``max_record_chars`` is an error too; a
row holding NUL bytes is skipped with that reason.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError
from ..io.compressed import open_text
from ..io.files import base_suffix
from ..io.jsonread import locate_bad_utf8
from ..records.record import Record, Skip
from ._fields import extract
from ._write import CsvWriter, RecordWriter
from .base import GenericAdapter


class CsvAdapter(GenericAdapter):
    name = "csv"
    suffixes = (".csv", ".tsv")
    layouts = ()

    def read(self, path: Path) -> Iterator[Record | Skip]:
        csv.field_size_limit(self.options.max_record_chars)
        reader = None
        try:
            with open_text(path) as f:
                header = f.readline()
                f.seek(0)
                delimiter = "\t" if (base_suffix(path) == ".tsv" or header.count("\t") > header.count(",")) else ","
                reader = csv.DictReader(f, delimiter=delimiter, strict=True)
                position = 0
                start = 2
                for row in reader:
                    source = f"{path}:{start}"
                    start = reader.line_num + 1
                    if None in row:
                        yield Skip(source, "row has more cells than the header")
                    elif any("\x00" in v for v in row.values() if isinstance(v, str)):
                        yield Skip(source, "NUL byte in row")
                    else:
                        yield extract(self, row, position, source)
                    position += 1
        except UnicodeDecodeError:
            line = locate_bad_utf8(path)
            raise InputError(str(path), f"line {line}" if line else None, "not valid UTF-8") from None
        except csv.Error as e:
            where = f"line {reader.reader.line_num}" if reader is not None and reader.reader.line_num else None
            problem = str(e)
            if "field larger than field limit" in problem:
                problem = f"a field is longer than max_record_chars={self.options.max_record_chars}"
            raise InputError(str(path), where, f"malformed CSV: {problem}") from None

    def writer(self, source: Path, target: Path) -> RecordWriter:
        return CsvWriter(source, target)

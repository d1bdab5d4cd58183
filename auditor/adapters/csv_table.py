"""CSV / TSV adapter (delimiter sniffed: StepTool ships TSV under ``.csv``); ``text_field``/``id_field`` name columns."""

from __future__ import annotations

import csv
import sys
from pathlib import Path
from typing import Iterator

from .._io import base_suffix, open_text
from ..errors import InputError
from ..records import Record, Skip
from ._fields import extract
from .base import Adapter


class CsvAdapter(Adapter):
    name = "csv"
    suffixes = (".csv", ".tsv")
    priority = 1000
    writable = True

    @classmethod
    def sniff(cls, path: Path, sample: object) -> bool:
        return True

    def read(self, path: Path) -> Iterator[Record | Skip]:
        csv.field_size_limit(sys.maxsize)
        try:
            with open_text(path) as f:
                header = f.readline()
                f.seek(0)
                delimiter = "\t" if (base_suffix(path) == ".tsv" or header.count("\t") > header.count(",")) else ","
                reader = csv.DictReader(f, delimiter=delimiter)
                position = 0
                start = 2
                for row in reader:
                    source = f"{path}:{start}"
                    start = reader.line_num + 1
                    if None in row:
                        yield Skip(source, "row has more cells than the header")
                    else:
                        yield extract(self, row, position, source)
                    position += 1
        except UnicodeDecodeError as e:
            raise InputError(str(path), None, f"not valid UTF-8 (byte {e.start})") from None
        except csv.Error as e:
            raise InputError(str(path), None, f"malformed CSV: {e}") from None

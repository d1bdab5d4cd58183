"""How a CSV-like file is laid out, from a bounded prefix: its delimiter and whether its first row is a header.

**Delimiter**: of ``,`` tab ``;`` ``|``, the one that splits the prefix's rows (quotes respected) into
the same number of cells, more than one, on every row; the most cells wins a tie, then that order
(a ``.tsv`` file is tab-separated whatever its content). When no candidate is consistent, the first
line decides between tab and comma (the rows then show their problem, named by line).

**Header**: the first row is a header unless it reads as data: one of its cells is a sentence (at
least :data:`SENTENCE_WORDS` words, or over :data:`SENTENCE_CHARS` characters) in a column whose
other cells are text of some length too (a question heading a column of short answers stays a
header), or it is a number in a column of numbers. A headerless file's columns are called
``col0``, ``col1`` …; its text, when no text field is named, is the column with the longest cells.

>>> import os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), "q.csv")
>>> _ = open(p, "w").write("1;What is the capital of France today?\\n2;Who wrote the novel War and Peace?\\n")
>>> layout = csv_layout(p)
>>> layout.delimiter, layout.header, layout.columns, layout.text_column
(';', False, ['col0', 'col1'], 'col1')
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from ..io.compressed import open_text
from ..io.files import base_suffix

#: bytes of the file read to tell its layout
PREFIX_CHARS = 64 * 1024
ROWS = 100
CANDIDATES = (",", "\t", ";", "|")
SENTENCE_WORDS = 5
SENTENCE_CHARS = 60
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class CsvLayout:
    delimiter: str
    #: does the first row name the columns?
    header: bool
    #: the column names of a headerless file (``col0`` …); empty when the file has a header
    columns: list[str]
    #: a headerless file's text column (the longest cells), else None
    text_column: str | None = None


def _prefix(path: str | Path) -> tuple[str, bool]:
    """The first :data:`PREFIX_CHARS` characters, cut after the last whole line, and whether the file is longer."""
    try:
        with open_text(path) as f:
            text = f.read(PREFIX_CHARS + 1)
    except UnicodeDecodeError:
        return "", False  # the reader names the line
    more = len(text) > PREFIX_CHARS
    if more:
        text = text[:PREFIX_CHARS]
        cut = max(text.rfind("\n"), 0)
        text = text[:cut]
    return text, more


def _rows(text: str, delimiter: str) -> list[list[str]]:
    try:
        rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    except csv.Error:
        return []
    return [r for r in rows if r][:ROWS]


def _delimiter(text: str, path: str | Path) -> str:
    if base_suffix(path) == ".tsv":
        return "\t"
    best, best_score = None, (0, 0)
    for rank, d in enumerate(CANDIDATES):
        rows = _rows(text, d)
        if not rows or len(rows[0]) < 2 or any(len(r) != len(rows[0]) for r in rows):
            continue
        score = (len(rows[0]), -rank)
        if score > best_score:
            best, best_score = d, score
    if best is not None:
        return best
    first = text.split("\n", 1)[0]
    return "\t" if first.count("\t") > first.count(",") else ","


def _wordy(cell: str) -> bool:
    return len(cell.split()) >= SENTENCE_WORDS or len(cell.strip()) > SENTENCE_CHARS


def _reads_as_data(rows: list[list[str]]) -> bool:
    first, body = rows[0], rows[1:]
    for j, cell in enumerate(first):
        column = [r[j] for r in body if len(r) > j and r[j].strip()]
        if _wordy(cell):
            if not column:
                return True
            words = sorted(len(c.split()) for c in column)
            if words[len(words) // 2] >= 3:
                return True
        if _NUMBER.match(cell.strip()) and len(column) >= 2 and all(_NUMBER.match(c.strip()) for c in column):
            return True
    return False


def csv_layout(path: str | Path) -> CsvLayout:
    """The delimiter and header of a CSV / TSV file (see the module doc), from its first 64 KiB."""
    text, _ = _prefix(path)
    delimiter = _delimiter(text, path)
    rows = _rows(text, delimiter)
    if not rows or not _reads_as_data(rows):
        return CsvLayout(delimiter, True, [])
    width = max(len(r) for r in rows)
    columns = [f"col{i}" for i in range(width)]
    lengths = [sum(len(r[i]) for r in rows if len(r) > i) for i in range(width)]
    return CsvLayout(delimiter, False, columns, columns[lengths.index(max(lengths))])

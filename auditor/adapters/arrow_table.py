"""Arrow IPC adapter (``.arrow``, ``.feather``: the file and the stream format, as Hugging Face
``datasets`` writes its ``data-*.arrow`` files), read record batch by record batch; ``text_field`` /
``id_field`` are dotted paths into rows, as for Parquet. A ``save_to_disk`` folder given as a path is
read as its Arrow files (:mod:`auditor.io.hfdisk`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..io.arrowread import arrow_rows
from ..records.record import Record, Skip
from ._fields import extract
from ._rows import ARROW_SUFFIXES
from ._write import ArrowWriter, RecordWriter
from .base import GenericAdapter


class ArrowAdapter(GenericAdapter):
    name = "arrow"
    suffixes = ARROW_SUFFIXES
    layouts = ()

    def read(self, path: Path) -> Iterator[Record | Skip]:
        for position, row in arrow_rows(path):
            yield extract(self, row, position, f"{path}#{position}")

    def writer(self, source: Path, target: Path) -> RecordWriter:
        return ArrowWriter(source, target)

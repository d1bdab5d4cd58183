"""Parquet adapter, read in record batches; ``text_field``/``id_field`` are dotted paths into rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError
from ..records import Record, Skip
from ._fields import extract
from ._write import ParquetWriter, RecordWriter
from .base import GenericAdapter


class ParquetAdapter(GenericAdapter):
    name = "parquet"
    suffixes = (".parquet",)
    layouts = ()

    def read(self, path: Path) -> Iterator[Record | Skip]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            pf = pq.ParquetFile(path)
            position = 0
            for batch in pf.iter_batches(batch_size=4096):
                for row in batch.to_pylist():
                    yield extract(self, row, position, f"{path}#{position}")
                    position += 1
        except (pa.ArrowException, OSError) as e:
            raise InputError(str(path), None, f"unreadable Parquet: {e}") from None

    def writer(self, source: Path, target: Path) -> RecordWriter:
        return ParquetWriter(source, target)

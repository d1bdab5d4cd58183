"""Parquet adapter, read in record batches; ``text_field``/``id_field`` are dotted paths into rows.

A file of several row groups is cut into parts of consecutive row groups (:class:`RowGroups`) that
workers read independently; a record's position (its source ``path#position`` and positional id)
is its row number in the whole file either way.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..io.arrowread import table_source
from ..records.record import Record, Skip
from ._fields import extract
from ._write import ParquetWriter, RecordWriter
from .base import GenericAdapter


@dataclass(frozen=True)
class RowGroups:
    """Row groups ``first`` .. ``last - 1`` of a Parquet file, whose first row is row ``position``."""

    first: int
    last: int
    position: int


class ParquetAdapter(GenericAdapter):
    name = "parquet"
    suffixes = (".parquet",)
    layouts = ()

    @classmethod
    def parts(cls, path: Path, split_bytes: int) -> list[RowGroups]:
        """Consecutive row groups of about ``split_bytes`` (uncompressed) each; [] for one part."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            with _source(path) as src:
                meta = pq.ParquetFile(src).metadata
        except (pa.ArrowException, OSError, InputError):
            return []  # the reader reports it, in order
        out, first, position, size, rows = [], 0, 0, 0, 0
        for g in range(meta.num_row_groups):
            rg = meta.row_group(g)
            size += rg.total_byte_size
            rows += rg.num_rows
            if size >= split_bytes or g == meta.num_row_groups - 1:
                out.append(RowGroups(first, g + 1, position))
                first, position, size, rows = g + 1, position + rows, 0, 0
        return out if len(out) > 1 else []

    def read(self, path: Path) -> Iterator[Record | Skip]:
        return self.read_part(path, None)

    def read_part(self, path: Path, part: RowGroups | None) -> Iterator[Record | Skip]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            with _source(path) as src:
                pf = pq.ParquetFile(src)
                groups = None if part is None else list(range(part.first, part.last))
                position = 0 if part is None else part.position
                for batch in pf.iter_batches(batch_size=4096, row_groups=groups):
                    for row in batch.to_pylist():
                        yield extract(self, row, position, f"{path}#{position}")
                        position += 1
        except (pa.ArrowException, OSError) as e:
            raise InputError(str(path), None, f"unreadable Parquet: {e}") from None

    def writer(self, source: Path, target: Path) -> RecordWriter:
        return ParquetWriter(source, target)


def _source(path: Path | str):
    """What pyarrow opens: a local path as it is, a URL through its filesystem (:mod:`auditor.io.remote`),
    an archive member's bytes (:mod:`auditor.io.members`)."""
    return table_source(path)

"""Arrow IPC files read with pyarrow, record batch by record batch: the *file* format (``.arrow``,
Feather v2 ``.feather``; starts with ``ARROW1``) and the *stream* format (what Hugging Face
``datasets`` writes, ``data-00000-of-00001.arrow``). Local files are memory-mapped; memory holds one
slice of :data:`ROWS_PER_SLICE` rows as Python objects, whatever the file's size.

:func:`table_source` is what pyarrow opens for a file (Parquet too): a local path, a URL's file, or
an archive member's bytes.

>>> import os, tempfile, pyarrow as pa
>>> p = os.path.join(tempfile.mkdtemp(), "d.arrow")
>>> t = pa.table({"text": ["a", "b"]})
>>> with pa.ipc.new_stream(p, t.schema) as w:
...     w.write_table(t)
>>> list(arrow_rows(p))
[(0, {'text': 'a'}), (1, {'text': 'b'})]
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import InputError
from . import members
from .files import check_regular_file
from .remote import is_url, open_url

ROWS_PER_SLICE = 1024
FILE_MAGIC = b"ARROW1"
FEATHER_V1_MAGIC = b"FEA1"


@contextmanager
def table_source(path: str | Path, memory_map: bool = False) -> Iterator[Any]:
    """What pyarrow opens for ``path``: an archive member's reader, a URL's file, or the local path
    (memory-mapped with ``memory_map``)."""
    p = str(path)
    member = members.lookup(p)
    if member is not None:
        with member.open() as f:
            yield f
        return
    if is_url(p):
        with open_url(p) as f:
            yield f
        return
    check_regular_file(p)
    if memory_map:
        import pyarrow as pa

        with pa.memory_map(p, "r") as f:
            yield f
        return
    yield p


def arrow_format(head: bytes) -> str:
    """``file``, ``feather-v1`` or ``stream`` by the first bytes of an Arrow IPC file."""
    if head.startswith(FILE_MAGIC):
        return "file"
    if head.startswith(FEATHER_V1_MAGIC):
        return "feather-v1"
    return "stream"


def _ipc_reader(p: str, src: Any) -> tuple[Any, str]:
    """The IPC reader of an open Arrow source and its format (``file`` / ``stream``); Feather v1 refused."""
    import pyarrow as pa

    head = src.read(8)
    src.seek(0)
    kind = arrow_format(head)
    if kind == "feather-v1":
        raise InputError(p, None, "a Feather v1 file: re-save it as Feather v2 (pyarrow.feather.write_feather)")
    return (pa.ipc.open_file(src) if kind == "file" else pa.ipc.open_stream(src)), kind


def arrow_schema_format(path: str | Path) -> tuple[Any, str]:
    """The schema and IPC format (``file`` / ``stream``) of an Arrow file, without reading its batches."""
    import pyarrow as pa

    p = str(path)
    try:
        with table_source(p, memory_map=True) as src:
            reader, kind = _ipc_reader(p, src)
            return reader.schema, kind
    except (pa.ArrowException, OSError) as e:
        raise InputError(p, None, f"unreadable Arrow IPC data: {e}") from None


def arrow_rows(path: str | Path) -> Iterator[tuple[int, dict]]:
    """``(position, row)`` of every row of an Arrow IPC file or stream, in order."""
    import pyarrow as pa

    p = str(path)
    position = 0
    try:
        with table_source(p, memory_map=True) as src:
            reader, kind = _ipc_reader(p, src)
            batches = (reader.get_batch(i) for i in range(reader.num_record_batches)) if kind == "file" else reader
            for batch in batches:
                for start in range(0, batch.num_rows, ROWS_PER_SLICE):
                    for row in batch.slice(start, ROWS_PER_SLICE).to_pylist():
                        yield position, row
                        position += 1
    except (pa.ArrowException, OSError) as e:
        raise InputError(p, None, f"unreadable Arrow IPC data: {e}") from None

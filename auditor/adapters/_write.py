"""Writers: records streamed back to a file in a format, committed atomically.

A :class:`RecordWriter` receives the records of one source file, in file order, one at a time
(memory holds one record, or one group of a nested layout), writes them to a temp file in the
target's folder and renames it into place on :meth:`RecordWriter.close`; :meth:`RecordWriter.abort`
removes the temp file. New files get the ordinary mode (``0666`` less the umask), never the temp
file's ``0600``. A target ending in ``.gz`` / ``.zst`` / ``.bz2`` / ``.xz`` is compressed the same way.

Writing no record gives a valid empty file of the format (``[]``, ``{}``, a CSV header, a Parquet
file with the schema and no rows; an empty JSON Lines file), which reads back as zero records.

>>> import json, os, tempfile
>>> from auditor.records.record import Record
>>> d = tempfile.mkdtemp()
>>> w = JsonArrayWriter(os.path.join(d, "src.json"), os.path.join(d, "out", "a.json"))
>>> w.write(Record("t", "0", "src.json#0", {"query": "q"}, raw={"q": 1}))
>>> [os.path.basename(p) for p in w.close()], json.load(open(os.path.join(d, "out", "a.json")))
(['a.json'], [{'q': 1}])

Raises :class:`~auditor.errors.InputError` when a record has nothing to write (no parsed form).
"""

from __future__ import annotations

import bz2
import contextlib
import csv
import gzip
import io
import json
import lzma
import os
import shutil
import tempfile
from abc import ABC, abstractmethod
from pathlib import Path
from typing import IO, Any

from ..errors import InputError
from ..io.compressed import open_text
from ..records.record import Record, split_source
from ._csvlayout import csv_layout

_UMASK: int | None = None


def _file_mode() -> int:
    global _UMASK
    if _UMASK is None:
        _UMASK = os.umask(0)
        os.umask(_UMASK)
    return 0o666 & ~_UMASK


class AtomicFile:
    """A binary output file written to a temp file beside ``target`` and renamed on :meth:`commit`."""

    def __init__(self, target: str | Path):
        self.target = Path(target)
        self.target.parent.mkdir(parents=True, exist_ok=True)
        fd, self._tmp = tempfile.mkstemp(prefix=f".{self.target.name}.", suffix=".tmp", dir=self.target.parent)
        try:
            os.fchmod(fd, _file_mode())
            self._raw = os.fdopen(fd, "wb")
        except BaseException:
            os.close(fd)
            os.unlink(self._tmp)
            raise
        name = self.target.name.lower()
        self._zip: Any = None
        if name.endswith(".gz"):
            self._zip = gzip.GzipFile(filename="", mode="wb", fileobj=self._raw, mtime=0)
        elif name.endswith(".zst"):
            import zstandard

            self._zip = zstandard.ZstdCompressor().stream_writer(self._raw, closefd=False)
        elif name.endswith(".bz2"):
            self._zip = bz2.BZ2File(self._raw, "wb")
        elif name.endswith(".xz"):
            self._zip = lzma.LZMAFile(self._raw, "wb")
        self.stream: IO[bytes] = self._zip or self._raw

    def commit(self) -> Path:
        """Finish the file and rename it into place; on any failure (a full disk while flushing) the
        temp file is removed and the target is left as it was."""
        try:
            if self._zip is not None:
                self._zip.close()
            self._raw.flush()
            os.fsync(self._raw.fileno())
            self._raw.close()
            os.replace(self._tmp, self.target)
        except BaseException:
            self.abort()
            raise
        return self.target

    def abort(self) -> None:
        try:
            with contextlib.suppress(OSError):  # closing flushes: on a full disk that fails again
                self._raw.close()
        finally:
            try:
                os.unlink(self._tmp)
            except OSError:
                pass


class RecordWriter(ABC):
    """Writes the records of ``source`` (one input file) to ``target`` in one format, streamed.

    Subclasses implement :meth:`write` (and :meth:`begin` / :meth:`end` for what comes before the
    first and after the last record); :meth:`close` returns every path written (a writer may copy
    companion files, e.g. tau2's ``split_tasks.json``).
    """

    def __init__(self, source: str | Path, target: str | Path):
        self.source = Path(source)
        self.out = AtomicFile(target)
        self.count = 0
        self._text = io.TextIOWrapper(self.out.stream, encoding="utf-8", newline="", write_through=True)
        self.begin()

    def begin(self) -> None:
        """Write what precedes the first record."""
        return None

    def end(self) -> None:
        """Write what follows the last record."""
        return None

    @abstractmethod
    def write_one(self, record: Record) -> None:
        """Write one record."""

    def write(self, record: Record) -> None:
        self.write_one(record)
        self.count += 1

    def emit(self, text: str) -> None:
        self._text.write(text)

    def close(self) -> list[Path]:
        try:
            self.end()
            self._text.flush()
            self._text.detach()
        except BaseException:
            self.abort()
            raise
        return [self.out.commit()]

    def abort(self) -> None:
        try:
            self._text.detach()  # flushes: on a full disk that fails again
        except (ValueError, OSError):  # already detached, or the write that failed
            pass
        finally:
            self.out.abort()


def raw_of(record: Record) -> Any:
    """The parsed source object of ``record``; an error when the adapter kept none."""
    if record.raw is None:
        raise InputError(*_where(record), "the record kept no parsed form to write back")
    return record.raw


def _where(record: Record) -> tuple[str, str | None]:
    return split_source(record.source)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


class JsonLinesWriter(RecordWriter):
    """One parsed object per line."""

    def write_one(self, record: Record) -> None:
        self.emit(dumps(raw_of(record)) + "\n")


class JsonArrayWriter(RecordWriter):
    """A JSON array, one element per line (``[]`` when empty)."""

    def begin(self) -> None:
        self.emit("[")

    def write_one(self, record: Record) -> None:
        self.emit(("\n" if self.count == 0 else ",\n") + dumps(raw_of(record)))

    def end(self) -> None:
        self.emit("\n]\n" if self.count else "]\n")


class JsonObjectWriter(RecordWriter):
    """A JSON object, one member per record: key ``meta['json_key']`` (else the record's id)."""

    def begin(self) -> None:
        self.emit("{")

    def write_one(self, record: Record) -> None:
        key = str(record.meta.get("json_key", record.id))
        self.emit(("\n" if self.count == 0 else ",\n") + dumps(key) + ": " + dumps(raw_of(record)))

    def end(self) -> None:
        self.emit("\n}\n" if self.count else "}\n")


class JsonDocumentWriter(RecordWriter):
    """A file holding one JSON object (one record); ``{}`` when the record was removed."""

    def write_one(self, record: Record) -> None:
        if self.count:
            raise InputError(str(self.source), None, "a single-document file cannot hold two records")
        self.emit(dumps(raw_of(record)) + "\n")

    def end(self) -> None:
        if not self.count:
            self.emit("{}\n")


class CsvWriter(RecordWriter):
    """CSV/TSV with the source's header (none for a headerless source) and delimiter."""

    def begin(self) -> None:
        layout = csv_layout(self.source)
        if layout.header:
            with open_text(self.source) as f:
                header = next(csv.reader(f, delimiter=layout.delimiter), [])
        else:
            header = layout.columns
        self._csv = csv.DictWriter(
            self._text, fieldnames=header, delimiter=layout.delimiter, lineterminator="\n", extrasaction="ignore"
        )
        if layout.header:
            self._csv.writeheader()

    def write_one(self, record: Record) -> None:
        raw = raw_of(record)
        if not isinstance(raw, dict):
            raise InputError(*_where(record), "a CSV row must be a mapping to be written back")
        self._csv.writerow(raw)


class ParquetWriter(RecordWriter):
    """Parquet with the source's schema, written in row groups of ``batch`` rows."""

    batch = 4096

    def begin(self) -> None:
        import pyarrow.parquet as pq

        self._schema = pq.read_schema(self.source)
        self._rows: list[dict] = []
        self._pq = pq.ParquetWriter(self.out.stream, self._schema)

    def _flush(self) -> None:
        import pyarrow as pa

        if self._rows:
            self._pq.write_table(pa.Table.from_pylist(self._rows, schema=self._schema))
            self._rows = []

    def write_one(self, record: Record) -> None:
        raw = raw_of(record)
        if not isinstance(raw, dict):
            raise InputError(*_where(record), "a Parquet row must be a mapping to be written back")
        self._rows.append(raw)
        if len(self._rows) >= self.batch:
            self._flush()

    def end(self) -> None:
        self._flush()
        self._pq.close()


class ArrowWriter(RecordWriter):
    """Arrow IPC with the source's schema and IPC format (file or stream), in batches of ``batch`` rows."""

    batch = 4096

    def begin(self) -> None:
        import pyarrow as pa

        from ..io.arrowread import arrow_schema_format

        self._schema, kind = arrow_schema_format(self.source)
        self._rows: list[dict] = []
        sink = self.out.stream
        self._ipc = pa.ipc.new_file(sink, self._schema) if kind == "file" else pa.ipc.new_stream(sink, self._schema)

    def _flush(self) -> None:
        import pyarrow as pa

        if self._rows:
            self._ipc.write_batch(pa.RecordBatch.from_pylist(self._rows, schema=self._schema))
            self._rows = []

    def write_one(self, record: Record) -> None:
        raw = raw_of(record)
        if not isinstance(raw, dict):
            raise InputError(*_where(record), "an Arrow row must be a mapping to be written back")
        self._rows.append(raw)
        if len(self._rows) >= self.batch:
            self._flush()

    def end(self) -> None:
        self._flush()
        self._ipc.close()


class YamlWriter(RecordWriter):
    """YAML: a list of the records (``[]`` when empty), or a mapping under their keys when the source
    was a mapping of records (``meta['json_key']``)."""

    def write_one(self, record: Record) -> None:
        from ..io.yamlread import yaml_module

        yaml = yaml_module()
        raw = raw_of(record)
        value = {record.meta["json_key"]: raw} if "json_key" in record.meta else [raw]
        self.emit(yaml.safe_dump(value, allow_unicode=True, sort_keys=False, width=1 << 30))

    def end(self) -> None:
        if not self.count:
            self.emit("[]\n")


class ViewsWriter(JsonLinesWriter):
    """The fallback for a format no writer exists for: JSON Lines of ``{id, source, views, meta}``."""

    def write_one(self, record: Record) -> None:
        self.emit(dumps({"id": record.id, "source": record.source, "views": record.views, "meta": record.meta}) + "\n")


def copy_companion(source: Path, written: Path, name: str) -> list[Path]:
    """Copy the file ``name`` beside ``source`` to beside ``written`` (when it exists)."""
    sibling = source.with_name(name)
    if not sibling.exists():
        return []
    target = written.with_name(name)
    out = AtomicFile(target)
    try:
        with open(sibling, "rb") as f:
            shutil.copyfileobj(f, out.stream)
    except BaseException:
        out.abort()
        raise
    return [out.commit()]

"""File helpers: compressed text input, JSON peeking, atomic output."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tempfile
from pathlib import Path
from typing import IO, Any, Iterator

from .errors import InputError


def open_binary(path: str | Path) -> IO[bytes]:
    """Open a file for reading, transparently decompressing ``.gz`` and ``.zst``."""
    p = str(path)
    try:
        if p.endswith(".gz"):
            return gzip.open(p, "rb")
        if p.endswith(".zst"):
            import zstandard

            # buffered: the raw zstd reader cannot iterate lines
            return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(open(p, "rb"), closefd=True),
                                     buffer_size=1 << 20)
        return open(p, "rb")
    except OSError as e:
        raise InputError(p, None, f"cannot open: {e.strerror or e}") from None


def open_text(path: str | Path) -> IO[str]:
    """Text reader (UTF-8, BOM tolerated, invalid bytes raise) over :func:`open_binary`."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8-sig", errors="strict", newline="")


def base_suffix(path: str | Path) -> str:
    """Suffix without compression: ``a.jsonl.gz`` → ``.jsonl``."""
    name = Path(path).name.lower()
    for comp in (".gz", ".zst"):
        if name.endswith(comp):
            name = name[: -len(comp)]
    return Path(name).suffix


def load_json(path: str | Path) -> Any:
    """Parse a whole JSON document, turning decode errors into :class:`InputError` with a line."""
    try:
        with open_text(path) as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise InputError(str(path), f"line {e.lineno}", f"invalid JSON: {e.msg} (column {e.colno})") from None
    except UnicodeDecodeError as e:
        raise InputError(str(path), f"byte {e.start}", "not valid UTF-8") from None
    except OSError as e:
        raise InputError(str(path), None, f"cannot read: {e.strerror or e}") from None


class _CountingReader:
    """Binary reader that drops a UTF-8 BOM and counts the newlines it has handed out."""

    def __init__(self, f: IO[bytes]):
        self.f = f
        self.lines = 1
        self._first = True

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        if self._first:
            self._first = False
            if data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]
        self.lines += data.count(b"\n")
        return data


#: on a parse error in a streamed JSON document, files up to this size are re-read whole to name
#: the exact line; larger ones report the line the streaming parser had reached
EXACT_ERROR_LINE_MAX_BYTES = 256 * 1024 * 1024


def json_container(path: str | Path) -> str | None:
    """``"array"`` or ``"object"`` by the first significant byte of a JSON file, else None."""
    with open_binary(path) as raw:
        reader = _CountingReader(raw)
        head = reader.read(1)
        while head and head.isspace():
            head = reader.read(1)
    return {b"[": "array", b"{": "object"}.get(head)


def iter_json_items(path: str | Path) -> Iterator[tuple[int, str | None, Any]]:
    """Stream a JSON document's top-level items without loading it: ``(position, key, value)``.

    Array elements come with ``key`` None, object members with their key. Memory holds one item.
    A top-level value that is neither an array nor an object yields one ``(0, None, value)``.
    Raises :class:`InputError` naming the file and line of invalid JSON, as :func:`load_json` does.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "a.json")
    >>> _ = open(p, "w").write('[{"q": 1}, {"q": 2}]')
    >>> list(iter_json_items(p))
    [(0, None, {'q': 1}), (1, None, {'q': 2})]
    """
    import ijson

    reader = None
    try:
        kind = json_container(path)
        if kind is None:
            yield 0, None, load_json(path)
            return
        with open_binary(path) as raw:
            reader = _CountingReader(raw)
            if kind == "array":
                for i, value in enumerate(ijson.items(reader, "item", use_float=True)):
                    yield i, None, value
            else:
                for i, (key, value) in enumerate(ijson.kvitems(reader, "", use_float=True)):
                    yield i, key, value
    except (ijson.JSONError, UnicodeDecodeError, ValueError) as e:
        size = os.path.getsize(path) if os.path.exists(path) else 0
        if size <= EXACT_ERROR_LINE_MAX_BYTES:
            load_json(path)  # raises InputError with the exact line and message
        line = reader.lines if reader else None
        raise InputError(str(path), f"line {line}" if line else None, f"invalid JSON: {e}") from None
    except OSError as e:
        raise InputError(str(path), None, f"cannot read: {e.strerror or e}") from None


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any, str | None]]:
    """Yield ``(line_number, object, error)`` for each non-blank line; ``object`` is None on error."""
    try:
        with open_binary(path) as f:
            for lineno, raw in enumerate(f, start=1):
                if not raw.strip():
                    continue
                try:
                    line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
                except UnicodeDecodeError:
                    yield lineno, None, "not valid UTF-8"
                    continue
                try:
                    yield lineno, json.loads(line), None
                except json.JSONDecodeError as e:
                    yield lineno, None, f"invalid JSON: {e.msg} (column {e.colno})"
    except OSError as e:
        raise InputError(str(path), None, f"cannot read: {e.strerror or e}") from None


def peek_json(path: str | Path) -> Any:
    """A small sample of a JSON/JSONL file for format detection, without reading it all.

    For a JSON array: a list holding its first element; for an object: a dict holding its first
    key/value pair; for JSONL: a list holding the first record. ``None`` when nothing parses.
    """
    import ijson

    suffix = base_suffix(path)
    if suffix == ".jsonl":
        for _, obj, err in iter_jsonl(path):
            return None if err else [obj]
        return None
    try:
        with open_binary(path) as f:
            head = f.read(1)
            while head and head.isspace() or head == b"\xef":
                if head == b"\xef":
                    f.read(2)
                head = f.read(1)
        with open_binary(path) as f:
            if head == b"[":
                for item in ijson.items(f, "item", use_float=True):
                    return [item]
                return []
            if head == b"{":
                for key, value in ijson.kvitems(f, "", use_float=True):
                    return {key: value}
                return {}
    except (ijson.JSONError, UnicodeDecodeError, ValueError):
        return None
    except OSError as e:
        raise InputError(str(path), None, f"cannot read: {e.strerror or e}") from None
    # not a JSON document: maybe JSON lines under a .json name
    for _, obj, err in iter_jsonl(path):
        return None if err else [obj]
    return None


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same folder and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def dotted_get(obj: Any, path: str) -> Any:
    """``dotted_get({'a': {'b': [1, 2]}}, 'a.b.1') == 2``; raises KeyError when absent."""
    cur = obj
    for part in path.split("."):
        if isinstance(cur, dict):
            if part not in cur:
                raise KeyError(path)
            cur = cur[part]
        elif isinstance(cur, list) and part.lstrip("-").isdigit():
            try:
                cur = cur[int(part)]
            except IndexError:
                raise KeyError(path) from None
        else:
            raise KeyError(path)
    return cur

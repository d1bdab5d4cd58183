"""JSON and JSON Lines reading: bounded peeking, item iteration with line numbers, byte-range line reads."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ..errors import InputError
from .compressed import NOT_UTF8, open_binary, open_text
from .files import file_size

try:  # msgspec's JSON decoder (C): JSON Lines in about half the CPU of the standard library's
    from msgspec import DecodeError as _FastRefused
    from msgspec.json import Decoder as _FastDecoder
except ImportError:  # no wheel for this platform: every line is read by the standard library
    _fast_loads = None
else:
    _fast_loads = _FastDecoder().decode

#: JSON nested deeper than this is refused (Python's json recursion would fail around 1000)
MAX_JSON_DEPTH = 900


#: default bound on one record's text, in characters (``max_record_chars``)
DEFAULT_MAX_RECORD_CHARS = 10_000_000


def load_json(path: str | Path) -> Any:
    """Parse a whole JSON document, turning every decode problem into :class:`InputError` naming
    the line: invalid JSON, invalid UTF-8, an empty file, nesting deeper than :data:`MAX_JSON_DEPTH`."""
    try:
        with open_text(path) as f:
            text = f.read()
        if not text.strip():
            raise InputError(str(path), None, "empty file (no JSON document)")
        if "\x00" in text:
            line = text.count("\n", 0, text.index("\x00")) + 1
            raise InputError(str(path), f"line {line}", "NUL byte in a JSON document")
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(str(path), f"line {e.lineno}", f"invalid JSON: {e.msg} (column {e.colno})") from None
    except RecursionError:
        deep = locate_depth(path, MAX_JSON_DEPTH)
        raise InputError(
            str(path), f"line {deep}" if deep else None, f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
        ) from None
    except UnicodeDecodeError:
        bad = locate_bad_utf8(path)
        raise InputError(str(path), f"line {bad}" if bad else None, NOT_UTF8) from None
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
        if self._first and data:  # ijson probes with read(0) first
            self._first = False
            if data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]
            elif data.startswith(b"\xef") and len(data) < 3:
                data = (data + self.f.read(3 - len(data))).removeprefix(b"\xef\xbb\xbf")
        self.lines += data.count(b"\n")
        return data


#: on a parse error in a streamed JSON document, files up to this size are re-read whole to name
#: the exact line; larger ones report the line the streaming parser had reached
EXACT_ERROR_LINE_MAX_BYTES = 256 * 1024 * 1024


def json_container(path: str | Path) -> str | None:
    """``"array"`` or ``"object"`` by the first significant byte of a JSON file (after a BOM), else None."""
    with open_binary(path) as raw:
        head = raw.read(4096)
        if head.startswith(b"\xef\xbb\xbf"):
            head = head[3:]
        while head:
            stripped = head.lstrip()
            if stripped:
                return {b"[": "array", b"{": "object"}.get(stripped[:1])
            head = raw.read(4096)
    return None


def _too_deep(value: Any, limit: int) -> bool:
    """True when ``value`` nests containers more than ``limit`` levels (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        obj, depth = stack.pop()
        if depth > limit:
            return True
        children = obj.values() if isinstance(obj, dict) else obj
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


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
            pairs = (
                ((None, v) for v in ijson.items(reader, "item", use_float=True))
                if kind == "array"
                else ijson.kvitems(reader, "", use_float=True)
            )
            for i, (key, value) in enumerate(pairs):
                if isinstance(value, (dict, list)) and _too_deep(value, MAX_JSON_DEPTH - 1):
                    line = locate_depth(path, MAX_JSON_DEPTH)
                    raise InputError(
                        str(path), f"line {line}" if line else None, f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
                    )
                yield i, key, value
    except (ijson.JSONError, UnicodeDecodeError, ValueError) as e:
        try:
            size = file_size(path)
        except (OSError, InputError):
            size = 0
        if size <= EXACT_ERROR_LINE_MAX_BYTES:
            load_json(path)  # raises InputError with the exact line and message
        line = reader.lines if reader else None
        raise InputError(str(path), f"line {line}" if line else None, f"invalid JSON: {e}") from None
    except OSError as e:
        raise InputError(str(path), None, f"cannot read: {e.strerror or e}") from None


def object_of_records(path: str | Path) -> bool:
    """True when the top-level JSON object of ``path`` maps keys to objects only (``{id: record}``:
    StepTool's queries, LLaMA-Factory's ``dataset_info.json``) or to strings only (``{id: text}``), so
    each member is a record; False when its members hold anything else or a mix
    (``{"tools": [...], "messages": [...]}``, ToolTalk's ``{"name": "...", "conversation": [...]}``):
    the object is one record. Streamed: stops at the
    first member that is not an object; a whole pass only when every member is one. Invalid JSON
    answers True (the streamed reader then names the line).

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> _ = open(os.path.join(d, "a.json"), "w").write('{"q1": {"text": "hi"}, "q2": {"text": "yo"}}')
    >>> _ = open(os.path.join(d, "b.json"), "w").write('{"q1": {"text": "hi"}, "messages": []}')
    >>> _ = open(os.path.join(d, "c.json"), "w").write('{"q1": "Find flights", "q2": "Book a hotel"}')
    >>> [object_of_records(os.path.join(d, f)) for f in ("a.json", "b.json", "c.json")]
    [True, False, True]
    """
    import ijson

    try:
        with open_binary(path) as raw:
            member, kind = False, None
            for prefix, event, _ in ijson.parse(_CountingReader(raw)):
                if member:
                    if event not in ("start_map", "string") or kind not in (None, event):
                        return False
                    member, kind = False, event
                elif prefix == "" and event == "map_key":
                    member = True
    except (ijson.JSONError, UnicodeDecodeError, ValueError, OSError):
        return True
    return True


def locate_bad_utf8(path: str | Path) -> int | None:
    """1-based number of the first line that is not valid UTF-8 (error path only)."""
    with open_binary(path) as f:
        for lineno, raw in enumerate(f, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return lineno
    return None


def locate_depth(path: str | Path, limit: int) -> int | None:
    """1-based line where JSON nesting first exceeds ``limit`` (strings skipped; error path only)."""
    depth, line, in_str, esc = 0, 1, False, False
    with open_binary(path) as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            for b in chunk:
                if in_str:
                    if esc:
                        esc = False
                    elif b == 0x5C:
                        esc = True
                    elif b == 0x22:
                        in_str = False
                elif b == 0x22:
                    in_str = True
                elif b in (0x5B, 0x7B):
                    depth += 1
                    if depth > limit:
                        return line
                elif b in (0x5D, 0x7D):
                    depth -= 1
                if b == 0x0A:
                    line += 1
    return None


def too_long(limit: int) -> str:
    """The skip reason for a record over ``max_record_chars``."""
    return f"record longer than max_record_chars={limit}"


class LineSpan:
    """A byte range ``[start, end)`` of an uncompressed JSON Lines file, read by :func:`iter_jsonl`.

    A line belongs to the range its first byte lies in: a reader of a range that does not start at
    0 skips the partial line before its first line start, and reads on past ``end`` to finish the
    line it is in; so ranges cut anywhere read every line exactly once (a line starting exactly at
    ``end`` belongs to the next range). Line numbers count from 1 at ``start``'s first line; after
    the read, :attr:`lines` says how many lines the range held, so a caller can number lines of
    later ranges.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "a.jsonl")
    >>> _ = open(p, "w").write('{"a": 1}\\n{"a": 2}\\n{"a": 3}\\n')
    >>> first, second = LineSpan(0, 9), LineSpan(9, None)   # byte 9 starts line 2
    >>> [o for _, o, _ in iter_jsonl(p, span=first)], [o for _, o, _ in iter_jsonl(p, span=second)]
    ([{'a': 1}], [{'a': 2}, {'a': 3}])
    >>> first.lines, second.lines
    (1, 2)
    """

    __slots__ = ("start", "end", "lines")

    def __init__(self, start: int = 0, end: int | None = None):
        self.start = start
        self.end = end
        self.lines = 0


def _drain_line(f: IO[bytes]) -> int:
    """Read to the end of the current line (in 1 MiB pieces); the bytes consumed."""
    n = 0
    while chunk := f.readline(1 << 20):
        n += len(chunk)
        if chunk.endswith(b"\n"):
            break
    return n


def iter_jsonl(
    path: str | Path, max_chars: int | None = None, span: LineSpan | None = None
) -> Iterator[tuple[int, Any, str | None]]:
    """Yield ``(line_number, object, error)`` for each non-blank line; ``object`` is None on error.

    With ``max_chars``, a line longer than that many characters is not kept in memory: it is
    drained in 1 MiB pieces and reported as an error (:func:`too_long`). With ``span`` (an
    uncompressed file only), only the lines starting inside its byte range, numbered from 1 (see
    :class:`LineSpan`).
    """
    limit = 4 * max_chars + 2 if max_chars else -1  # a UTF-8 character is at most 4 bytes
    start = span.start if span else 0
    end = span.end if span else None
    try:
        with open_binary(path) as f:
            pos = 0
            if start > 0:
                f.seek(start - 1)
                pos = start - 1 + _drain_line(f)  # the partial line before our first line start
            lineno = 0
            while (end is None or pos < end) and (raw := f.readline(limit)):
                lineno += 1
                pos += len(raw)
                if max_chars and len(raw) >= limit and not raw.endswith(b"\n"):
                    pos += _drain_line(f)
                    yield lineno, None, too_long(max_chars)
                    continue
                if raw.isspace():  # a blank line (raw is never empty here)
                    continue
                if _fast_loads is not None and (not max_chars or len(raw) <= max_chars):
                    if (obj := _loads_fast(raw[3:] if _bom(raw, lineno, start) else raw)) is not _REFUSED:
                        yield lineno, obj, None
                        continue
                try:
                    line = raw.decode("utf-8-sig" if lineno == 1 and start == 0 else "utf-8")
                except UnicodeDecodeError:
                    yield lineno, None, NOT_UTF8
                    continue
                if max_chars and len(line.rstrip("\r\n")) > max_chars:
                    yield lineno, None, too_long(max_chars)
                    continue
                try:
                    yield lineno, json.loads(line), None
                except json.JSONDecodeError as e:
                    yield lineno, None, f"invalid JSON: {e.msg} (column {e.colno})"
                except RecursionError:
                    yield lineno, None, f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
            if span is not None:
                span.lines = lineno
    except OSError as e:
        raise InputError(str(path), None, f"cannot read: {e.strerror or e}") from None


#: what :func:`_loads_fast` returns for a line it leaves to the standard library
_REFUSED = object()


def _loads_fast(raw: bytes) -> Any:
    """A JSON line (UTF-8 bytes) parsed by msgspec, or :data:`_REFUSED` where msgspec refuses it: invalid
    JSON or UTF-8, a lone surrogate escape, ``NaN``, a number past a double, nesting past the recursion
    limit. :func:`iter_jsonl` reads such a line with the standard library, which reads some of them
    (lone surrogates, ``NaN``, ``1e400``: infinity) and names the problem of the others; what both read,
    they read alike (integers of any size, floats correctly rounded, the last of repeated keys).

    >>> _loads_fast(b'{"id": 123456789012345678901234567890, "x": [1.5, "\\\\u00e9"]}'), _loads_fast(b"NaN") is _REFUSED
    ({'id': 123456789012345678901234567890, 'x': [1.5, 'é']}, True)
    """
    try:
        return _fast_loads(raw)  # type: ignore[misc]
    except (_FastRefused, RecursionError):
        return _REFUSED


def _bom(raw: bytes, lineno: int, start: int) -> bool:
    """Whether ``raw`` is the file's first line, starting with a UTF-8 byte order mark."""
    return lineno == 1 and start == 0 and raw.startswith(b"\xef\xbb\xbf")


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

"""Content sniffing: is a file one JSON document (array, object) or JSON Lines, whatever its suffix?

Detection reads a bounded prefix (:data:`SNIFF_MAX_BYTES` of decompressed bytes), never a whole
line or document: a 5 GB single line costs the same as a 5 MB one. The prefix's first line decides:

- it is one JSON value and another JSON value follows on the next line → ``lines`` (JSON Lines, even when named ``.json``);
- it ends and nothing follows → one document: ``array``, ``object`` or ``scalar`` (a lone value in
  a file named ``.jsonl`` stays ``lines``: one record);
- the first line is no complete value → a document spread over lines (``array`` / ``object``,
  its first item read with ijson, so a large document costs one element), unless the first line is
  broken JSON Lines (the next line parses on its own);
- the first line does not end inside the prefix → ``array`` when it opens with ``[``; an object that
  long is ``lines`` when the file is named ``.jsonl`` and ``object`` otherwise (``reason`` says so).

Only the first line is ever parsed whole (JSON Lines holds one value per line).

``sample`` is what adapters' ``sniff`` sees: ``[first element]`` for an array, ``{first key: value}``
for an object, ``[first record]`` for JSON Lines; ``None`` when the first item does not fit the prefix.

>>> import os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), "bfcl.json")
>>> _ = open(p, "w").write('{"id": "a", "q": 1}\\n{"id": "b", "q": 2}\\n')
>>> s = sniff(p)
>>> s.kind, s.sample
('lines', [{'id': 'a', 'q': 1}])

Errors: :class:`~auditor.errors.InputError` when the file cannot be opened. Invalid content is not an
error here (``kind`` is ``"unknown"``): the reader then reports the exact line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..errors import InputError
from .compressed import open_binary
from .files import base_suffix
from .jsonread import MAX_JSON_DEPTH

#: the most decompressed bytes format detection reads from a file
SNIFF_MAX_BYTES = 8 * 1024 * 1024
#: the first read; more is read (up to SNIFF_MAX_BYTES) only while the first line has not ended
FIRST_READ = 64 * 1024
_VALUE_START = tuple('{["-0123456789tfn')


@dataclass(frozen=True)
class Sniffed:
    """What the prefix of a file showed: ``kind`` is array, object, scalar, lines, empty or unknown."""

    kind: str
    sample: Any
    reason: str
    prefix_bytes: int


class _Capped:
    """A binary reader over ``head`` and then ``f`` that gives at most ``budget`` bytes in all, so
    ijson's first item of a document is bounded."""

    def __init__(self, head: bytes, f: IO[bytes], budget: int):
        self.head, self.f, self.budget = head, f, budget - len(head)

    def read(self, n: int = -1) -> bytes:
        if n == 0:  # ijson probes the type with read(0)
            return b""
        if self.head:
            out, self.head = self.head, b""
            return out
        if self.budget <= 0:
            return b""
        data = self.f.read(min(n if n > 0 else 1 << 16, self.budget))
        self.budget -= len(data)
        return data


def sniff(path: str | Path, max_bytes: int = SNIFF_MAX_BYTES) -> Sniffed:
    """Sniff ``path``'s layout from at most ``max_bytes`` decompressed bytes (see module doc)."""
    try:
        with open_binary(path) as f:
            return _sniff(f, max_bytes, base_suffix(path) == ".jsonl")
    except OSError as e:
        raise InputError(str(path), None, f"cannot read: {e.strerror or e}") from None


def _sniff(f: IO[bytes], max_bytes: int, jsonl_name: bool) -> Sniffed:
    head = f.read(min(FIRST_READ, max_bytes)).removeprefix(b"\xef\xbb\xbf")
    eof = len(head) < min(FIRST_READ, max_bytes)
    # read on (growing) while the first line is open and the prefix allows: a JSON Lines record
    # longer than FIRST_READ. A first line opening with "[" is an array document (JSON Lines of
    # arrays with lines that long: give the format): its first element comes through a capped stream.
    while not eof and b"\n" not in head.lstrip() and len(head) < max_bytes:
        if head.lstrip()[:1] == b"[":
            return Sniffed("array", _first_item(_Capped(head, f, max_bytes), True), "a JSON array", len(head))
        want = min(2 * len(head), max_bytes - len(head))
        more = f.read(want)
        eof = len(more) < want
        head += more
    stripped = head.lstrip()
    nl = stripped.find(b"\n")
    if nl != -1 and not eof and not stripped[nl:].strip():  # the next line starts beyond this read
        more = f.read(FIRST_READ)
        eof = len(more) < FIRST_READ
        head += more
        stripped += more
    n = len(head)
    truncated = not eof
    if not stripped:
        return Sniffed("unknown" if truncated else "empty", None, "only whitespace in the prefix", n)
    if nl == -1 and truncated:
        return _unfinished(stripped, f, max_bytes, jsonl_name, n)
    try:
        first_line = (stripped if nl == -1 else stripped[:nl]).decode("utf-8")
    except UnicodeDecodeError:
        return Sniffed("unknown", None, "not valid UTF-8", n)
    try:
        first, end = json.JSONDecoder().raw_decode(first_line)
    except json.JSONDecodeError:
        return _multi_line(stripped, f, max_bytes, n)
    except RecursionError:
        return Sniffed("unknown", None, "JSON nested too deeply", n)
    if first_line[end:].strip():
        return Sniffed(_document_kind(first), _sample(first), "text after the first JSON value", n)
    rest = stripped[nl + 1 :].lstrip()[:1].decode("latin-1") if nl != -1 else ""
    if rest:
        if rest.startswith(_VALUE_START):
            return Sniffed("lines", [first], "a second JSON value follows the first: JSON Lines", n)
        return Sniffed(_document_kind(first), _sample(first), "text after the first JSON value", n)
    if truncated:  # only whitespace after one value, up to the end of the prefix
        return Sniffed("lines", [first], "one JSON value fills the prefix; more follow", n)
    if jsonl_name:  # one value alone is ambiguous: the .jsonl name decides (one record, not a document)
        return Sniffed("lines", [first], "one JSON value in a .jsonl file: one record", n)
    return Sniffed(_document_kind(first), _sample(first), "one JSON document", n)


def _document_kind(value: Any) -> str:
    return "array" if isinstance(value, list) else "object" if isinstance(value, dict) else "scalar"


def _sample(value: Any) -> Any:
    if isinstance(value, list):
        return value[:1]
    if isinstance(value, dict):
        return dict(list(value.items())[:1])
    return value


def _multi_line(stripped: bytes, f: IO[bytes], max_bytes: int, n: int) -> Sniffed:
    """The first line is no complete JSON value: a document spread over lines (pretty-printed), or
    JSON Lines whose first line is invalid (the next line then parses on its own)."""
    lines = [ln.strip() for ln in stripped[: 1 << 20].splitlines()[:3] if ln.strip()]
    if len(lines) > 1 and len(lines[0]) > 1 and lines[0][:1] == b"{" and lines[1][:1] == b"{":
        try:
            if isinstance(json.loads(lines[1]), dict):
                return Sniffed("lines", None, "first line invalid, the next parses: JSON Lines", n)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            pass
    if stripped[:1] in (b"[", b"{"):
        array = stripped[:1] == b"["
        kind = "array" if array else "object"
        return Sniffed(
            kind, _first_item(_Capped(stripped, f, max_bytes), array), f"a JSON {kind} over several lines", n
        )
    return Sniffed("unknown", None, "invalid JSON at the start", n)


def _unfinished(stripped: bytes, f: IO[bytes], max_bytes: int, jsonl_name: bool, n: int) -> Sniffed:
    """The first line does not end inside the prefix: decided by its first character (and, for an
    object, by the ``.jsonl`` suffix)."""
    if stripped[:1] == b"{":
        if jsonl_name:
            return Sniffed("lines", None, f"first line longer than the {n}-byte sniff prefix", n)
        sample = _first_item(_Capped(stripped, f, max_bytes), False)
        return Sniffed("object", sample, f"object longer than the {n}-byte sniff prefix", n)
    return Sniffed("unknown", None, "first value longer than the sniff prefix", n)


def _first_item(reader: _Capped, array: bool) -> Any:
    """First element / key-value of a document from a capped reader (None when it does not fit)."""
    import ijson

    try:
        return _first_of(ijson.basic_parse(reader, use_float=True), array)
    except (ijson.JSONError, UnicodeDecodeError, ValueError, _TooDeep):  # cut off inside the first item
        return None


class _TooDeep(Exception):
    pass


def _first_of(events: Iterator[tuple[str, Any]], array: bool) -> Any:
    """The first element (``[x]``) or key/value (``{k: v}``) of a JSON document from ijson
    ``basic_parse`` events, refusing nesting deeper than :data:`MAX_JSON_DEPTH` (ijson would
    otherwise build it at great cost)."""
    from ijson.common import ObjectBuilder

    next(events, None)  # start_array / start_map
    depth, key, builder = 0, None, ObjectBuilder()
    for event, value in events:
        if depth == 0:
            if event in ("end_array", "end_map"):
                return [] if array else {}
            if event == "map_key":
                key = value
                continue
        if event in ("start_map", "start_array"):
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise _TooDeep
        elif event in ("end_map", "end_array"):
            depth -= 1
        builder.event(event, value)
        if depth == 0:
            return [builder.value] if array else {key: builder.value}
    return None

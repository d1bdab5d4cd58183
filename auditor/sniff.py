"""Content sniffing: is a file one JSON document (array, object) or JSON Lines, whatever its suffix?

Detection reads a bounded prefix (:data:`SNIFF_MAX_BYTES` of decompressed bytes), never a whole
line or document: a 5 GB single line costs the same as a 5 MB one. The first JSON value of the
prefix decides:

- it ends and another JSON value follows → ``lines`` (JSON Lines, even when named ``.json``);
- it ends and nothing follows → one document: ``array``, ``object`` or ``scalar`` (a lone object in
  a file named ``.jsonl`` stays ``lines``: one record);
- it does not end inside the prefix → ``array`` when it opens with ``[``; an object that long is
  ``lines`` when the file is named ``.jsonl`` and ``object`` otherwise (``reason`` says so).

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

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._io import base_suffix, open_binary
from .errors import InputError

#: the most decompressed bytes format detection reads from a file
SNIFF_MAX_BYTES = 8 * 1024 * 1024
_VALUE_START = tuple('{["-0123456789tfn')


@dataclass(frozen=True)
class Sniffed:
    """What the prefix of a file showed: ``kind`` is array, object, scalar, lines, empty or unknown."""

    kind: str
    sample: Any
    reason: str
    prefix_bytes: int


def sniff(path: str | Path, max_bytes: int = SNIFF_MAX_BYTES) -> Sniffed:
    """Sniff ``path``'s layout from at most ``max_bytes`` decompressed bytes (see module doc)."""
    try:
        with open_binary(path) as f:
            head = f.read(max_bytes + 1)
    except OSError as e:
        raise InputError(str(path), None, f"cannot read: {e.strerror or e}") from None
    truncated = len(head) > max_bytes
    head = head[:max_bytes].removeprefix(b"\xef\xbb\xbf")
    n = len(head)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        if not (truncated and e.start >= len(head) - 3):
            return Sniffed("unknown", None, "not valid UTF-8", n)
        text = head[: e.start].decode("utf-8")
    s = text.lstrip()
    if not s:
        return Sniffed("unknown" if truncated else "empty", None, "only whitespace in the prefix", n)
    jsonl_name = base_suffix(path) == ".jsonl"
    try:
        first, end = json.JSONDecoder().raw_decode(s)
    except json.JSONDecodeError:
        return _unfinished(s, head, truncated, jsonl_name, n)
    except RecursionError:
        return Sniffed("unknown", None, "JSON nested too deeply", n)
    rest = s[end:].lstrip()
    if rest:
        if rest.startswith(_VALUE_START):
            return Sniffed("lines", [first], "a second JSON value follows the first: JSON Lines", n)
        return Sniffed(_document_kind(first), _sample(first), "text after the first JSON value", n)
    if truncated:  # the prefix ends in whitespace after one value: more values may follow
        return Sniffed("lines", [first], "one JSON value fills the prefix; more follow", n)
    if jsonl_name and isinstance(first, dict):
        return Sniffed("lines", [first], "one JSON object in a .jsonl file: one record", n)
    return Sniffed(_document_kind(first), _sample(first), "one JSON document", n)


def _document_kind(value: Any) -> str:
    return "array" if isinstance(value, list) else "object" if isinstance(value, dict) else "scalar"


def _sample(value: Any) -> Any:
    if isinstance(value, list):
        return value[:1]
    if isinstance(value, dict):
        return dict(list(value.items())[:1])
    return value


def _unfinished(s: str, head: bytes, truncated: bool, jsonl_name: bool, n: int) -> Sniffed:
    """The first value does not parse within the prefix: too long for it, or invalid."""
    if not truncated:
        # invalid somewhere; a JSON Lines file with one bad line still shows lines after it
        lines = [ln for ln in s.splitlines()[:3] if ln.strip()]
        if len(lines) > 1 and lines[0].lstrip().startswith(("{", "[")):
            try:
                json.loads(lines[1])
                return Sniffed("lines", None, "first line invalid, the next parses: JSON Lines", n)
            except (json.JSONDecodeError, RecursionError):
                pass
        return Sniffed("unknown", None, "invalid JSON at the start", n)
    if s.startswith("["):
        return Sniffed("array", _first_item(head, True), f"array longer than the {n}-byte sniff prefix", n)
    if s.startswith("{"):
        if jsonl_name:
            return Sniffed("lines", None, f"first line longer than the {n}-byte sniff prefix", n)
        return Sniffed("object", _first_item(head, False), f"object longer than the {n}-byte sniff prefix", n)
    return Sniffed("unknown", None, "first value longer than the sniff prefix", n)


def _first_item(head: bytes, array: bool) -> Any:
    """First element / key-value of a document from the prefix alone (None when it does not fit)."""
    import ijson

    from ._io import _first_item as first_of
    from ._io import _TooDeep

    try:
        return first_of(ijson.basic_parse(io.BytesIO(head), use_float=True), array)
    except (ijson.JSONError, UnicodeDecodeError, ValueError, _TooDeep):  # cut off inside the first item
        return None

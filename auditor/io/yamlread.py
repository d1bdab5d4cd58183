"""YAML reading (PyYAML's safe loader only: no tags that build objects, no code), item by item.

A file holding one document is read as JSON is: a list → one item per element; a mapping whose
values are all mappings (``{id: record}``) or all strings (``{id: text}``) → one item per member
(its key kept); any other mapping → one item. A stream of several documents (``---``) → one item
per document (a document that is a list: one per element); empty documents are nothing.

Values come back as JSON would give them: keys as strings, dates and times as ISO 8601 text, binary
as base64 text. Memory holds one document: a single document over :data:`MAX_DOCUMENT_CHARS`
characters is refused (convert it to JSON Lines, which is streamed), and so are aliases that expand
to more than :data:`MAX_NODES_PER_CHAR` nodes per character of the document (an alias bomb).

>>> import os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), "d.yaml")
>>> _ = open(p, "w").write("- id: 1\\n  text: hello\\n- id: 2\\n  text: world\\n")
>>> [(i, key, obj) for i, key, obj in iter_yaml_items(p)]
[(0, None, {'id': 1, 'text': 'hello'}), (1, None, {'id': 2, 'text': 'world'})]
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ..errors import InputError, MissingDependencyError
from .compressed import NOT_UTF8, open_text
from .jsonread import locate_bad_utf8

#: the most characters of one YAML document read into memory
MAX_DOCUMENT_CHARS = 64 * 1024 * 1024
#: aliases may repeat a node, not blow a document up: at most this many values per character (and 10,000)
MAX_NODES_PER_CHAR = 4
MAX_DEPTH = 500


def yaml_module() -> Any:
    """PyYAML, or :class:`~auditor.errors.MissingDependencyError` (the ``yaml`` extra)."""
    try:
        import yaml
    except ImportError:
        raise MissingDependencyError("pyyaml", "yaml", "reading YAML files") from None
    return yaml


class _Counted:
    """A text reader counting the characters of the current document, refusing one over the bound."""

    def __init__(self, f: IO[str], path: str):
        self.f, self.path = f, path
        self.total = 0
        self.doc_start = 0

    def read(self, n: int = -1) -> str:
        data = self.f.read(n if n and n > 0 else 1 << 16)
        self.total += len(data)
        if self.total - self.doc_start > MAX_DOCUMENT_CHARS:
            raise InputError(
                self.path,
                None,
                f"a YAML document longer than {MAX_DOCUMENT_CHARS // (1024 * 1024)} MiB: convert it to JSON Lines "
                "(read line by line) or split it into documents (---)",
            )
        return data


def iter_yaml_items(path: str | Path) -> Iterator[tuple[int, str | None, Any]]:
    """``(position, key, value)`` of each item of a YAML file (see the module doc); :class:`InputError`
    naming the line for invalid YAML, a tag the safe loader refuses, nesting deeper than :data:`MAX_DEPTH`."""
    yaml = yaml_module()
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    p = str(path)
    try:
        with open_text(p) as f:
            counted = _Counted(f, p)
            docs = yaml.load_all(counted, Loader=loader)
            first = next(docs, None)
            first_size = counted.total - counted.doc_start
            counted.doc_start = counted.total
            second = next(docs, _END)
            if second is _END:  # one document
                yield from _one_document(p, _plain(p, first, first_size))
                return
            position = 0
            for doc, size in _chain_docs(first, first_size, second, docs, counted):
                value = _plain(p, doc, size)
                if value is None:
                    continue
                for item in value if isinstance(value, list) else [value]:
                    yield position, None, item
                    position += 1
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else None
        problem = " ".join(str(getattr(e, "problem", None) or e).split())
        raise InputError(p, where, f"invalid YAML: {problem}") from None
    except RecursionError:
        raise InputError(p, None, "YAML nested too deeply") from None
    except UnicodeDecodeError:
        line = locate_bad_utf8(p)
        raise InputError(p, f"line {line}" if line else None, NOT_UTF8) from None
    except OSError as e:
        raise InputError(p, None, f"cannot read: {e.strerror or e}") from None


_END = object()


def _chain_docs(first: Any, first_size: int, second: Any, docs: Iterator[Any], counted: _Counted):
    yield first, first_size
    yield second, counted.total - counted.doc_start
    counted.doc_start = counted.total
    for doc in docs:
        yield doc, counted.total - counted.doc_start
        counted.doc_start = counted.total


def _one_document(path: str, value: Any) -> Iterator[tuple[int, str | None, Any]]:
    if value is None:
        raise InputError(path, None, "no YAML document (the file holds only comments or nothing)")
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield i, None, item
        return
    if isinstance(value, dict) and value and _map_of_records(value):
        for i, (key, item) in enumerate(value.items()):
            yield i, key, item
        return
    yield 0, None, value


def _map_of_records(value: dict) -> bool:
    """Every member an object, or every member a string: each is a record (as for JSON)."""
    kinds = {type(v) for v in value.values()}
    return kinds == {dict} or kinds == {str}


def _plain(path: str, value: Any, chars: int) -> Any:
    """``value`` with only JSON's types (iterative: aliases counted, depth bounded)."""
    budget = max(10_000, MAX_NODES_PER_CHAR * max(chars, 1))
    nodes = 0

    def leaf(v: Any) -> Any:
        if isinstance(v, (datetime.date, datetime.datetime, datetime.time)):
            return v.isoformat()
        if isinstance(v, bytes):
            return base64.b64encode(v).decode("ascii")
        return v

    def key(k: Any) -> str:
        if isinstance(k, bool):
            return "true" if k else "false"
        if k is None:
            return "null"
        return str(leaf(k))

    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]  # (source, target container, slot, depth)
    while stack:
        src, target, slot, depth = stack.pop()
        nodes += 1
        if nodes > budget:
            raise InputError(path, None, f"YAML aliases expand to more than {budget:,} values (an alias bomb?)")
        if depth > MAX_DEPTH:
            raise InputError(path, None, f"YAML nested deeper than {MAX_DEPTH} levels")
        if isinstance(src, dict):
            out: Any = {}
            target[slot] = out
            for k, v in src.items():
                name = key(k)
                out[name] = None
                stack.append((v, out, name, depth + 1))
        elif isinstance(src, (list, tuple, set, frozenset)):
            items = list(src)
            out = [None] * len(items)
            target[slot] = out
            stack.extend((v, out, i, depth + 1) for i, v in enumerate(items))
        else:
            target[slot] = leaf(src)
    return root[0]

"""The ``fields`` view: a training record read whole, every string of its raw object with its path.

An adapter's views (``query``, ``text``, ``calls`` …) are what its format *means*; what a training
record *holds* is more: an Alpaca ``input`` and ``output``, a DPO ``chosen``, a tool schema's
``description``, call arguments, a field no reader knows. The text tiers search the ``fields`` view
too, so a leak in any of them is found (a text nobody read is a text nobody can vouch for).

:func:`strings` walks a raw object in record order (dict values in key order, list items in order,
depth first) and yields ``(path, string)`` for

* every string at any depth, empty or blank ones left out;
* a string that is itself a JSON object or array (OpenAI ``function.arguments``, a schema stored as
  text) decoded and walked in its place, so its strings get paths of their own
  (``tool_calls[0].function.arguments.query``) — unless the string is searched already as it is (a
  tool result that is a line of the ``observations`` / ``text`` views);
* a dict key holding whitespace (text used as a key: ``{"Find flights to Paris": {...}}``), with the
  path of its value and `` (key)``; identifier-like keys (``role``, ``content``) are names, not text (a key with whitespace between two words is text);
* a list of two or more strings of one word each (a token list, ``["the", "weather", …]``) as *one*
  string, its words joined by spaces in order, with the list's path: word by word, repeated words would
  be left out of the ``fields`` view as strings searched already, and the text would lose its order.

Numbers, booleans and nulls are left out: a JSON number is no text an eval item can be copied into,
call arguments are compared as values by the ``calls`` tier, and a digit string alone proves nothing.

:func:`fields_view` keeps the strings not already searched as another view, one per line (embedded
newlines kept) — a string is left out when each of its lines is a line of another view or of an
earlier string, or is the record's id (an identifier: an id holding text is searched,
:func:`id_known`) — so a chat record's message texts, already in its ``text`` view, are not searched
twice, and a tool schema repeated in every message once. Paths are not stored: a finding names the
string it matched by walking ``raw`` again (:func:`auditor.text.locate.locate_field`).

Paths: ``.name`` for identifier keys, ``["any key"]`` (cut to 24 characters) for others, ``[i]``
for list items; :func:`path_kind` folds indices (``messages[].content``) for ``auditor inspect``.

>>> raw = {"instruction": "Summarize.", "input": "Find flights\\nto Paris", "n": 3,
...        "tools": [{"function": {"name": "search", "arguments": '{"q": "cheap hotels"}'}}]}
>>> [p for p, _ in strings(raw)]
['instruction', 'input', 'tools[0].function.name', 'tools[0].function.arguments.q']
>>> fields_view({"query": "Summarize."}, raw)
'Find flights\\nto Paris\\nsearch\\ncheap hotels'
>>> path_kind('tools[3].function["Find flights…"]')
'tools[].function[*]'
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

_walk: Callable[[Any, list[str], tuple[str, ...], Callable[[str], Any]], str | None] | None
try:  # the walk in C, built at install where a C compiler is found
    from ._fieldsc import fields_view as _walk
except ImportError:  # pragma: no cover - an install without a C compiler: the walk in Python
    _walk = None

#: the view's name (:data:`auditor.records.record.FIELDS` re-exports it)
FIELDS = "fields"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*\Z")
_INDEX = re.compile(r"\[\d+\]")
_QUOTED = re.compile(r'\["(?:[^"\\]|\\.)*"\]')
#: a key holding text: whitespace between two other characters
_TEXT_KEY = re.compile(r"\S\s+\S").search
_KEY_CHARS = 24
#: the longest string a token list (:func:`_is_token_list`) holds
TOKEN_CHARS = 40
_OPEN = frozenset("{[ \t\r\n")


def _key_path(parent: str, key: str) -> str:
    if _IDENT.match(key):
        return f"{parent}.{key}" if parent else key
    shown = key if len(key) <= _KEY_CHARS else key[: _KEY_CHARS - 1] + "…"
    return f"{parent}[{json.dumps(shown, ensure_ascii=False)}]"


def _is_token_list(value: list | tuple) -> bool:
    """Two or more strings, each one word (:data:`TOKEN_CHARS` characters at most, no inner space).

    >>> _is_token_list(["I", "want", "a", "flight", "."]), _is_token_list(["Book a flight", "ok"]), _is_token_list(["x"])
    (True, False, False)
    """
    if len(value) < 2:
        return False
    for v in value:
        if not isinstance(v, str) or len(v) > TOKEN_CHARS or len(v.split()) > 1:
            return False
    return True


def _joined(value: list | tuple) -> str:
    return " ".join(v.strip() for v in value if v and not v.isspace())


def with_text_key(raw: Any, key: Any) -> Any:
    """``raw`` under ``key`` (``{key: raw}``) when ``key`` holds text: a record that is one member of a
    JSON object keyed by its prompt (``{"Find flights to Paris": "response"}``, a cache of model
    outputs) holds that prompt in its key. Else ``raw`` itself.

    >>> with_text_key("response", "Find flights to Paris"), with_text_key({"a": 1}, "q17")
    ({'Find flights to Paris': 'response'}, {'a': 1})
    """
    return {key: raw} if isinstance(key, str) and _TEXT_KEY(key) else raw


def _decoded(s: str) -> Any:
    """``s`` parsed when it is a JSON object or array, else None (most strings cost one look)."""
    if s[0] not in _OPEN:
        return None
    t = s.strip()
    if len(t) < 2 or (t[0], t[-1]) not in (("{", "}"), ("[", "]")):
        return None
    try:
        value = json.loads(t)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, (dict, list)) else None


def strings(raw: Any, searched: Callable[[str], bool] | None = None) -> Iterator[tuple[str, str]]:
    """``(path, string)`` for every string of ``raw`` in record order (see the module doc);
    ``searched(s)`` true: a JSON string ``s`` is not decoded (it is searched as it is already).

    >>> list(strings({"a": [{"b": "x"}, "y", 7, None], "the key text": "v", "": ""}))
    [('a[0].b', 'x'), ('a[1]', 'y'), ('["the key text"] (key)', 'the key text'), ('["the key text"]', 'v')]
    """
    stack: list[tuple[str, Any]] = [("", raw)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if not value or value.isspace():
                continue
            inner = None if value[0] not in _OPEN or (searched is not None and searched(value)) else _decoded(value)
            if inner is None:
                yield path, value
            else:
                stack.append((path, inner))
        elif isinstance(value, dict):
            items = []
            for k, v in value.items():
                key = str(k)
                p = _key_path(path, key)
                if isinstance(k, str) and _TEXT_KEY(key):
                    items.append((f"{p} (key)", key))
                items.append((p, v))
            stack.extend(reversed(items))
        elif isinstance(value, (list, tuple)):
            if _is_token_list(value):
                yield path, _joined(value)
            else:
                stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(value))))


def texts(raw: Any, searched: Callable[[str], bool] | None = None) -> Iterator[str]:
    """The strings of :func:`strings`, in the same order, without their paths (what the scan
    needs: a path is only built for a finding's record).

    >>> raw = {"a": [{"b": "x"}, "y", 7], "the key text": '{"q": "v"}'}
    >>> list(texts(raw)) == [s for _, s in strings(raw)]
    True
    """
    stack: list[Any] = [raw]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        value = pop()
        if isinstance(value, str):
            if not value or value.isspace():
                continue
            inner = None if value[0] not in _OPEN or (searched is not None and searched(value)) else _decoded(value)
            if inner is None:
                yield value
            else:
                push(inner)
        elif isinstance(value, dict):
            if _any_text_key(value):
                for k, v in reversed(value.items()):
                    push(v)
                    if isinstance(k, str) and _TEXT_KEY(k):
                        push(_Key(k))
            else:
                extend(reversed(value.values()))
        elif isinstance(value, (list, tuple)):
            if _is_token_list(value):
                yield _joined(value)
            else:
                extend(reversed(value))
        elif type(value) is _Key:
            yield value.key


def _any_text_key(d: dict) -> bool:
    """Whether a key of ``d`` may hold text: one search over the keys joined (a conservative gate:
    the walk then checks each key)."""
    try:
        return _TEXT_KEY("\x00".join(d)) is not None
    except TypeError:  # a key that is no string
        return True


class _Key:
    """A dict key holding text, on :func:`texts`' stack (yielded as is, never decoded)."""

    __slots__ = ("key",)

    def __init__(self, key: str):
        self.key = key


class _Seen:
    """The lines already searched: every line of a record's other views (and ``known``), then of each
    kept string. A string that is a whole view (or known) is told apart without splitting anything (the
    common case: a generic record's text field *is* its text view); the line set is built on demand, and
    a kept string's lines join it only when a later string is looked at (a record's last string, often
    its only one, is never split)."""

    def __init__(self, views: Mapping[str, str], known: Iterable[str] = ()):
        self.texts = [text for name, text in views.items() if name != FIELDS and text]
        self.whole = {*self.texts, *known}
        self._lines: set[str] | None = None
        self._kept: list[str] = []  # kept strings whose lines are not in ``_lines`` yet

    @property
    def lines(self) -> set[str]:
        if self._lines is None:
            self._lines = set(self.whole)
            for text in self.texts:
                self._lines.update(text.split("\n"))
        for s in self._kept:
            self._lines.update(s.split("\n"))
        self._kept.clear()
        return self._lines

    def searched(self, s: str) -> bool:
        """True when every line of ``s`` is searched already (nothing remembered)."""
        if s in self.whole:
            return True
        lines = self.lines
        cut = s.find("\n")
        if cut < 0:
            return s in lines
        return s[:cut] in lines and all(line in lines for line in s.split("\n"))  # the first line before a split

    def keep(self, s: str) -> bool:
        """True (and its lines remembered) when ``s`` has a line not searched yet."""
        if s in self.whole:
            return False
        if not self.whole and not self._lines and not self._kept:  # nothing searched yet: every line is new
            self._kept.append(s)
            return True
        if self.searched(s):
            return False
        self._kept.append(s)
        return True


def kept(views: Mapping[str, str], raw: Any, known: Iterable[str] = ()) -> Iterator[tuple[str, str]]:
    """The ``(path, string)`` of :func:`strings` that the ``fields`` view of a record with ``views``
    holds: those with a line that is in no other view, not in ``known`` (the record's id) and in no
    earlier string."""
    if raw is None:
        return
    seen = _Seen(views, known)
    for path, s in strings(raw, seen.searched):
        if seen.keep(s):
            yield path, s


def id_known(rid: str) -> tuple[str, ...]:
    """The record id as a string :func:`fields_view` need not search: an identifier (``G1@33737``,
    ``42``), which the ``id`` tier compares; an id holding text (whitespace between two words, as a
    text key) is searched like any other string, so a query written into an id field is found.

    >>> id_known("G1@33737"), id_known("Book a flight to Paris")
    (('G1@33737',), ())
    """
    return () if _TEXT_KEY(rid) else (rid,)


def fields_view(views: Mapping[str, str], raw: Any, known: Iterable[str] = ()) -> str:
    """The ``fields`` view of a record with ``views`` and ``raw``: the strings :func:`kept` keeps,
    one per line, in record order. Walked in C where the package was built with a compiler
    (``_fieldsc.c``, the walk of every training record: ~3x faster), else in Python
    (:func:`walked_fields_view`, also for objects of subclasses of ``str``, ``dict``, ``list``, ``tuple``)."""
    if raw is None:
        return ""
    if _walk is not None:
        text = _walk(raw, [t for name, t in views.items() if name != FIELDS and t], tuple(known), _decoded)
        if text is not None:
            return text
    return walked_fields_view(views, raw, known)


def walked_fields_view(views: Mapping[str, str], raw: Any, known: Iterable[str] = ()) -> str:
    """:func:`fields_view` walked in Python (:func:`texts`, :class:`_Seen`)."""
    if raw is None:
        return ""
    seen = _Seen(views, known)
    keep = seen.keep
    return "\n".join(s for s in texts(raw, seen.searched) if keep(s))


def path_kind(path: str) -> str:
    """A path with list indices and quoted keys folded: the kind of field it names."""
    return _QUOTED.sub("[*]", _INDEX.sub("[]", path)) or "(record)"


def field_counts(views: Mapping[str, str], raw: Any, known: Iterable[str] = ()) -> Counter:
    """How many strings of each :func:`path_kind` the ``fields`` view holds (``auditor inspect``)."""
    return Counter(path_kind(p) for p, _ in kept(views, raw, known))

"""Field extraction shared by the generic (json/jsonl/csv/parquet/arrow/yaml) adapters.

Field names are matched exactly first; when no field has the exact name, a field whose name differs
only in case is used (a ``Query`` column for ``--text-field query``, a ``TEXT`` column for the default
``text``), unless several do (``Query`` and ``QUERY``): that record is refused with both names.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..io.jsonread import dotted_get
from ..records.callparse import calls_from_value, unbound
from ..records.messages import MessageSelector, is_chat
from ..records.pycalls import Schemas, default_schemas
from ..records.record import QUERY, TEXT, Record, Skip
from ..records.toolcalls import calls_view

#: tried in order when no ``text_field`` is given
TEXT_CANDIDATES = ("text", "query", "question", "prompt", "instruction", "input", "content", "goal")
ID_CANDIDATES = ("id", "query_id", "task_id", "uid", "idx")


class AmbiguousField(KeyError):
    """A field name that matches several fields once case is ignored, none exactly."""

    def __init__(self, path: str, names: list[str]):
        super().__init__(path)
        self.names = names

    def reason(self, what: str) -> str:
        shown = " and ".join(f"'{n}'" for n in self.names)
        return f"{what} '{self.args[0]}' matches {shown}, which differ only in case; name one exactly"


def lookup(obj: Any, path: str) -> tuple[Any, str]:
    """The value at dotted ``path`` and the path that holds it: :func:`~auditor.io.jsonread.dotted_get`,
    else each part matched regardless of case when no key has it exactly. KeyError when absent,
    :class:`AmbiguousField` when a part matches several keys that differ only in case.

    >>> lookup({"Query": "hi"}, "query"), lookup({"a": {"B": [1, 2]}}, "A.b.1")
    (('hi', 'Query'), (2, 'a.B.1'))
    """
    try:
        return dotted_get(obj, path), path
    except KeyError:
        pass
    cur, taken = obj, []
    for part in path.split("."):
        if isinstance(cur, dict):
            if part in cur:
                key = part
            else:
                folded = [k for k in cur if isinstance(k, str) and k.casefold() == part.casefold()]
                if len(folded) > 1:
                    raise AmbiguousField(path, folded)
                if not folded:
                    raise KeyError(path)
                key = folded[0]
            cur = cur[key]
            taken.append(key)
        elif isinstance(cur, list) and part.lstrip("-").isdigit():
            try:
                cur = cur[int(part)]
            except IndexError:
                raise KeyError(path) from None
            taken.append(part)
        else:
            raise KeyError(path)
    return cur, ".".join(taken)


def _spellings(obj: dict, names: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[tuple[str, tuple], ...]]:
    """The ``names`` that are keys of ``obj``, in order, then each other name with the keys of ``obj``
    spelling it in another case (those that do, in order; a name that is a key has no other spelling
    read). Records of a file mostly share their keys: worked out once per set of keys (in order).

    >>> _spellings({"ID": 1, "text": "hi", "Text": "x"}, ("text", "id", "uid"))
    (('text',), (('id', ('ID',)),))
    """
    keys = tuple(obj)
    return _key_spellings(keys, names) if len(keys) <= _REMEMBERED_KEYS else _key_spellings.__wrapped__(keys, names)


@lru_cache(maxsize=512)
def _key_spellings(keys: tuple, names: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[tuple[str, tuple], ...]]:
    exact = tuple(n for n in names if n in keys)
    other = ((n, tuple(k for k in keys if isinstance(k, str) and k.casefold() == n.casefold())) for n in names)
    return exact, tuple((n, ks) for n, ks in other if ks and n not in exact)


#: a record with more keys (an object keyed by ids, say) has its spellings worked out, not remembered
_REMEMBERED_KEYS = 64


def extract(adapter: Any, obj: Any, position: int, source: str) -> Record | Skip:
    """Turn one generic object into a Record using the adapter's text/id field options."""
    opts = adapter.options
    if isinstance(obj, str) and not opts.text_field:
        return adapter.record(position, source, {QUERY: obj, TEXT: obj}, raw=obj, positional_id=True)
    if not isinstance(obj, dict):
        return Skip(source, f"item is {type(obj).__name__}, not an object", raw=obj)
    selector = _selector(opts.messages)
    if opts.text_field:
        try:
            text, field = lookup(obj, opts.text_field)
        except AmbiguousField as e:
            return Skip(source, e.reason("text field") + _seen(obj), raw=obj)
        except KeyError:
            return Skip(source, f"missing text field '{opts.text_field}'" + _seen(obj), raw=obj)
    else:
        try:
            found = _text_candidate(obj)
        except AmbiguousField as e:
            return Skip(source, e.reason("text field") + _seen(obj), raw=obj)
        if found is None:
            exact, other = _spellings(obj, TEXT_CANDIDATES)
            present = next((k for k in exact if obj[k] is not None), None)
            present = present or next((k for _, ks in other for k in ks if obj[k] is not None), None)
            if present is not None:
                return Skip(
                    source,
                    f"text field '{present}' is {type(obj[present]).__name__}, not a string or a message list"
                    + _seen(obj),
                    raw=obj,
                )
            return Skip(
                source,
                "no text field found (tried " + ", ".join(TEXT_CANDIDATES) + ", in any case)" + _seen(obj),
                raw=obj,
            )
        field = found
        text = obj[field]
    if not isinstance(text, str) and is_chat(text):
        selected = selector.select(text)
        if selected is None:
            return Skip(source, f"field '{field}' is a message list with no message for '{selector}'", raw=obj)
        text = selected
    if not isinstance(text, str):
        return Skip(source, f"text field '{field}' is {type(text).__name__}, not a string or a message list", raw=obj)
    views = {QUERY: text, TEXT: text}
    meta: dict[str, Any] = {}
    if opts.calls_field:
        try:
            value, _ = lookup(obj, opts.calls_field)
        except AmbiguousField as e:
            return Skip(source, e.reason("calls field"), raw=obj)
        except KeyError:
            return Skip(source, f"missing calls field '{opts.calls_field}'" + _seen(obj), raw=obj)
        views["calls"], meta = calls_and_meta(value, record_schemas(obj))
    if opts.id_field:
        try:
            rid, _ = lookup(obj, opts.id_field)
        except AmbiguousField as e:
            return Skip(source, e.reason("id field"), raw=obj)
        except KeyError:
            return Skip(source, f"missing id field '{opts.id_field}'", raw=obj)
    else:
        rid = id_candidate(obj)
        if rid is None:
            return adapter.record(position, source, views, raw=obj, positional_id=True, **meta)
    if isinstance(rid, (dict, list)) or rid is None:
        return Skip(source, f"id is {type(rid).__name__}, not a scalar", raw=obj)
    return adapter.record(rid, source, views, raw=obj, **meta)


@lru_cache(maxsize=64)
def _selector(spec: str | None) -> MessageSelector:
    """:meth:`MessageSelector.parse`, once per spelling (it runs for every record; a bad spelling
    raises every time, as nothing is cached for it)."""
    return MessageSelector.parse(spec)


def _usable(value: Any) -> bool:
    return isinstance(value, str) or (value is not None and is_chat(value))


def _text_candidate(obj: dict) -> str | None:
    """The first of :data:`TEXT_CANDIDATES` holding a string or a message list; when none does under
    its exact name, the first holding one under a name that differs only in case (:class:`AmbiguousField`
    when two such names do).

    >>> _text_candidate({"query": 3, "prompt": "hi", "text": None}), _text_candidate({"ID": 1, "Question": "hi"})
    ('prompt', 'Question')
    """
    exact, other = _spellings(obj, TEXT_CANDIDATES)
    for c in exact:
        if _usable(obj[c]):
            return c
    for c, spelt in other:
        keys = [k for k in spelt if _usable(obj[k])]
        if len(keys) > 1:
            raise AmbiguousField(c, keys)
        if keys:
            return keys[0]
    return None


def id_candidate(obj: dict) -> Any:
    """The value of the first of :data:`ID_CANDIDATES` holding a string or an integer (exact names
    first, then names that differ only in case: ``ID``, ``Id``), else None."""
    exact, other = _spellings(obj, ID_CANDIDATES)  # a name that is a key: no other spelling of it is read
    for c in exact:
        value = obj[c]
        if isinstance(value, (str, int)):
            return value
    for _, spelt in other:
        keys = [k for k in spelt if isinstance(obj[k], (str, int))]
        if len(keys) == 1:
            return obj[keys[0]]
    return None


#: fields whose function docs give the parameter order for binding positional call arguments
SCHEMA_FIELDS = ("function", "functions", "tools")


def record_schemas(obj: dict) -> Schemas:
    """Known signatures plus the function docs the record itself carries (BFCL ``function``, ``tools``)."""
    schemas = default_schemas()
    for key in SCHEMA_FIELDS:
        if obj.get(key) is not None:
            schemas.add_docs(obj[key])
    return schemas


def calls_and_meta(value: Any, schemas: Schemas) -> tuple[str, dict[str, Any]]:
    """The ``calls`` view of a field value, and meta: how many calls kept positional arguments
    unbound for want of a schema (``calls_unbound``). Expected calls are not a trace (no results)."""
    steps = calls_from_value(value, schemas)
    meta: dict[str, Any] = {}
    if unbound(steps):
        meta["calls_unbound"] = unbound(steps)
    return calls_view(steps), meta


def _seen(obj: dict) -> str:
    """The hint that ends a no-text-field reason: the fields the record has and the flag to pass."""
    keys = list(obj)
    shown = ", ".join(str(k) for k in keys[:12]) + (f", … ({len(keys)} fields)" if len(keys) > 12 else "")
    return (
        f"; the record's fields are: {shown or 'none'}; pass --text-field FIELD (dotted path; "
        "--train-text-field / --eval-text-field for one side; --messages first-user for a message list) "
        "or --train-format / --eval-format NAME (see `auditor formats`)"
    )

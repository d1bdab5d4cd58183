"""Field extraction shared by the generic (json/jsonl/csv/parquet) adapters."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..io.jsonread import dotted_get
from ..records.callparse import Schemas, calls_from_value, default_schemas, unbound
from ..records.messages import MessageSelector, is_chat
from ..records.record import QUERY, TEXT, Record, Skip
from ..records.toolcalls import calls_view

#: tried in order when no ``text_field`` is given
TEXT_CANDIDATES = ("text", "query", "question", "prompt", "instruction", "input", "content", "goal")
ID_CANDIDATES = ("id", "query_id", "task_id", "uid", "idx")


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
            text = dotted_get(obj, opts.text_field)
        except KeyError:
            return Skip(source, f"missing text field '{opts.text_field}'" + _seen(obj), raw=obj)
        field = opts.text_field
    else:
        field = _text_candidate(obj)
        if field is None:
            present = next((c for c in TEXT_CANDIDATES if obj.get(c) is not None), None)
            if present is not None:
                return Skip(
                    source,
                    f"text field '{present}' is {type(obj[present]).__name__}, not a string or a message list"
                    + _seen(obj),
                    raw=obj,
                )
            return Skip(source, "no text field found (tried " + ", ".join(TEXT_CANDIDATES) + ")" + _seen(obj), raw=obj)
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
            value = dotted_get(obj, opts.calls_field)
        except KeyError:
            return Skip(source, f"missing calls field '{opts.calls_field}'" + _seen(obj), raw=obj)
        views["calls"], meta = calls_and_meta(value, record_schemas(obj))
    if opts.id_field:
        try:
            rid = dotted_get(obj, opts.id_field)
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


def _text_candidate(obj: dict) -> str | None:
    """The first of :data:`TEXT_CANDIDATES` holding a string or a message list.

    >>> _text_candidate({"query": 3, "prompt": "hi", "text": None})
    'prompt'
    """
    for c in TEXT_CANDIDATES:
        value = obj.get(c)
        if isinstance(value, str) or (value is not None and is_chat(value)):
            return c
    return None


def id_candidate(obj: dict) -> Any:
    """The value of the first of :data:`ID_CANDIDATES` holding a string or an integer, else None."""
    for c in ID_CANDIDATES:
        value = obj.get(c)
        if isinstance(value, (str, int)):
            return value
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

"""Field extraction shared by the generic (json/jsonl/csv/parquet) adapters."""

from __future__ import annotations

from typing import Any

from .._io import dotted_get
from ..records import QUERY, TEXT, Record, Skip

#: tried in order when no ``text_field`` is given
TEXT_CANDIDATES = ("text", "query", "question", "prompt", "instruction", "input", "content", "goal")
ID_CANDIDATES = ("id", "query_id", "task_id", "uid", "idx")


def extract(adapter: Any, obj: Any, position: int, source: str) -> Record | Skip:
    """Turn one generic object into a Record using the adapter's text/id field options."""
    opts = adapter.options
    if isinstance(obj, str) and not opts.text_field:
        return adapter.record(position, source, {QUERY: obj, TEXT: obj}, raw=obj, positional_id=True)
    if not isinstance(obj, dict):
        return Skip(source, f"item is {type(obj).__name__}, not an object")
    if opts.text_field:
        try:
            text = dotted_get(obj, opts.text_field)
        except KeyError:
            return Skip(source, f"missing text field '{opts.text_field}'")
        field = opts.text_field
    else:
        field = next((c for c in TEXT_CANDIDATES if isinstance(obj.get(c), str)), None)
        if field is None:
            present = next((c for c in TEXT_CANDIDATES if obj.get(c) is not None), None)
            if present is not None:
                return Skip(source, f"text field '{present}' is {type(obj[present]).__name__}, not a string")
            return Skip(source, "no text field found (tried " + ", ".join(TEXT_CANDIDATES) + "); pass text_field")
        text = obj[field]
    if not isinstance(text, str):
        return Skip(source, f"text field '{field}' is {type(text).__name__}, not a string")
    if opts.id_field:
        try:
            rid = dotted_get(obj, opts.id_field)
        except KeyError:
            return Skip(source, f"missing id field '{opts.id_field}'")
    else:
        rid = next((obj[c] for c in ID_CANDIDATES if isinstance(obj.get(c), (str, int))), None)
        if rid is None:
            return adapter.record(position, source, {QUERY: text, TEXT: text}, raw=obj, positional_id=True)
    if isinstance(rid, (dict, list)) or rid is None:
        return Skip(source, f"id is {type(rid).__name__}, not a scalar")
    return adapter.record(rid, source, {QUERY: text, TEXT: text}, raw=obj)

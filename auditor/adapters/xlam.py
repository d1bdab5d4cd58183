"""xLAM / APIGen function-calling records: ``{id, query, tools, answers}``, ``tools`` and ``answers`` JSON
strings (or already parsed): the tool schemas and the expected calls ``[{name, arguments}]``.

Views: ``query`` (the user request), ``calls`` (the expected calls, canonical; positional arguments bound
through the record's own ``tools``), ``text`` (query and calls). ``meta['calls_unbound']`` counts calls
that kept positional arguments. The id is ``id``, else the 0-based position.

>>> r = XlamAdapter("x").convert({"id": 7, "query": "Where can I find live giveaways for beta access?",
...     "tools": '[{"name": "live_giveaways_by_type", "parameters": {"type": {"type": "str"}}}]',
...     "answers": '[{"name": "live_giveaways_by_type", "arguments": {"type": "beta"}}]'}, 0, "x.json#0")
>>> r.id, r.views["calls"]
('7', 'live_giveaways_by_type({"type":"beta"})')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..records.pycalls import default_schemas
from ..records.record import QUERY, TEXT, Record, Skip
from ._fields import calls_and_meta
from ._rows import RowAdapter, joined, record_id, text_of
from .base import first_record


class XlamAdapter(RowAdapter):
    """xLAM / APIGen {query, tools, answers}: the request and its expected calls."""

    name = "xlam"

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        first = first_record(sample)
        return first is not None and isinstance(first.get("query"), str) and "answers" in first and "tools" in first

    def convert(self, obj: dict, position: int, source: str) -> Record | Skip:
        query = text_of(obj.get("query"))
        if not query:
            return Skip(source, "no 'query' text")
        schemas = default_schemas()
        if obj.get("tools") is not None:
            schemas.add_docs(obj["tools"])
        calls, meta = calls_and_meta(obj.get("answers"), schemas)
        views = {QUERY: query, "calls": calls, TEXT: joined(query, calls)}
        rid = record_id(obj)
        if rid is None:
            return self.record(position, source, views, raw=obj, positional_id=True, **meta)
        return self.record(rid, source, views, raw=obj, **meta)

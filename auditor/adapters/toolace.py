"""ToolACE records: ``{system, conversations[{from, value}]}`` with roles ``user`` / ``assistant`` /
``tool``; the system prompt lists the tools as JSON and an assistant turn calls them in Python-style
text, ``[func1(a=1), func2(b="x")]``.

Calls are parsed with :func:`auditor.records.callparse.parse_call_string` (never evaluated), positional
arguments bound through the tool list in the system prompt. Views: ``query`` (the first user turn),
``system``, ``calls``, ``observations`` (tool turns), ``answer`` (the last assistant text), ``text``.
The id is ``id``, else the 0-based position.

>>> r = ToolAceAdapter("t").convert({"system": 'You are an expert in composing functions. ... '
...     '[{"name": "GetCompetitions", "parameters": {"type": "dict", "properties": {}}}]. Should you ...',
...     "conversations": [{"from": "user", "value": "Which football competitions are televised in Peru?"},
...                       {"from": "assistant", "value": "[GetCompetitions(country='Peru')]"}]}, 0, "t.json#0")
>>> r.views["query"], r.views["calls"]
('Which football competitions are televised in Peru?', 'getcompetitions({"country":"Peru"})')
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..records.callparse import Schemas, default_schemas, parse_call_string
from ..records.record import Record, Skip
from ..records.trajectory import Turn, trajectory_views
from ._rows import RowAdapter, record_id
from .base import first_record
from .chat import message_turns

_ROLES = {"user", "assistant", "tool"}


def system_tools(system: str) -> Schemas:
    """The schemas of the JSON tool list inside a ToolACE system prompt (the first ``[{...}]`` that parses)."""
    schemas = default_schemas()
    decoder = json.JSONDecoder()
    start = system.find("[{")
    while start != -1:
        try:
            docs, _ = decoder.raw_decode(system, start)
        except ValueError:
            start = system.find("[{", start + 2)
            continue
        schemas.add_docs(docs)
        break
    return schemas


def _with_calls(turn: Turn, schemas: Schemas) -> Turn:
    """An assistant turn whose whole text is a bracketed call list becomes its calls."""
    text = turn.text.strip()
    if turn.role != "assistant" or turn.calls or not (text.startswith("[") and text.endswith("]") and "(" in text):
        return turn
    steps = parse_call_string(text, schemas)
    if not steps:
        return turn
    return Turn("assistant", "", [(s["name"], s["args"]) for s in steps])


class ToolAceAdapter(RowAdapter):
    """ToolACE {system, conversations[{from: user/assistant/tool, value}]}, calls as [func(a=1)] text."""

    name = "toolace"
    priority = 23

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        first = first_record(sample)
        if first is None or not isinstance(first.get("system"), str):
            return False
        conv = first.get("conversations")
        return (
            isinstance(conv, list)
            and bool(conv)
            and all(isinstance(m, dict) and m.get("from") in _ROLES and "value" in m for m in conv)
        )

    def convert(self, obj: dict, position: int, source: str) -> Record | Skip:
        conv = obj.get("conversations")
        if not isinstance(conv, list):
            return Skip(source, "no 'conversations' list")
        system = obj.get("system") if isinstance(obj.get("system"), str) else ""
        schemas = system_tools(system)
        turns = [_with_calls(t, schemas) for t in message_turns(conv)]
        if system.strip():
            turns.insert(0, Turn("system", system.strip()))
        views, meta = trajectory_views(turns, parse_text_calls=False)
        if not views["text"].strip():
            return Skip(source, "conversation has no text")
        rid = record_id(obj)
        if rid is None:
            return self.record(position, source, views, raw=obj, positional_id=True, **meta)
        return self.record(rid, source, views, raw=obj, **meta)

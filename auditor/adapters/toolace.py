"""ToolACE records: ``{system, conversations[{from, value}]}`` with roles ``user`` / ``assistant`` /
``tool``; the system prompt lists the tools as JSON and an assistant turn calls them in Python-style
text, ``[func1(a=1), Tool Name(b="x")]`` (ToolACE's tool names may hold spaces).

Calls are parsed with :func:`auditor.records.pycalls.parse_call_string` (never evaluated), positional
arguments bound through the tool list in the system prompt. Views: ``query`` (the first user turn;
``messages`` / ``--messages`` choose others), ``system``, ``calls``, ``observations`` (tool turns),
``answer`` (the last assistant text), ``text``. The id is ``id``, else the 0-based position.

>>> r = ToolAceAdapter("t").convert({"system": 'You are an expert in composing functions. ... '
...     '[{"name": "GetCompetitions", "parameters": {"type": "dict", "properties": {}}}]. Should you ...',
...     "conversations": [{"from": "user", "value": "Which football competitions are televised in Peru?"},
...                       {"from": "assistant", "value": "[GetCompetitions(country='Peru')]"}]}, 0, "t.json#0")
>>> r.views["query"], r.views["calls"]
('Which football competitions are televised in Peru?', 'getcompetitions({"country":"Peru"})')
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..records.pycalls import Schemas, default_schemas, parse_call_string
from ..records.record import Record, Skip
from ..records.trajectory import Turn
from ._rows import RowAdapter
from .base import first_record
from .chat import message_turns, turns_record

_ROLES = {"user", "assistant", "tool"}
_PY_NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")


def system_tools(system: str) -> tuple[Schemas, list[str]]:
    """The schemas and tool names of the JSON tool list inside a ToolACE system prompt (the first
    ``[{...}]`` that parses)."""
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
        names = [d["name"] for d in docs if isinstance(d, dict) and isinstance(d.get("name"), str)]
        return schemas, names
    return schemas, []


def parse_calls(text: str, schemas: Schemas, names: list[str]) -> list[tuple[str, Any]]:
    """The calls of a ``[func(a=1), ...]`` turn. ToolACE's tool names may hold spaces
    (``Get Manager Placeholder Image(sport="football")``): each known name that is no Python name
    is read under a stand-in and given back its own name.

    >>> parse_calls('[Market Trends API(trend_type="MARKET_INDEXES", country="us")]', Schemas(), ["Market Trends API"])
    [('Market Trends API', {'trend_type': 'MARKET_INDEXES', 'country': 'us'})]
    """
    stand_in: dict[str, str] = {}
    for i, name in enumerate(sorted(names, key=len, reverse=True)):
        if not _PY_NAME.match(name) and f"{name}(" in text:
            key = f"toolace_tool_{i}"
            stand_in[key] = name
            text = text.replace(f"{name}(", f"{key}(")
    return [(stand_in.get(s["name"], s["name"]), s["args"]) for s in parse_call_string(text, schemas)]


def _with_calls(turn: Turn, schemas: Schemas, names: list[str]) -> Turn:
    """An assistant turn whose whole text is a bracketed call list becomes its calls."""
    text = turn.text.strip()
    if turn.role != "assistant" or turn.calls or not (text.startswith("[") and text.endswith("]") and "(" in text):
        return turn
    calls = parse_calls(text, schemas, names)
    return Turn("assistant", "", calls) if calls else turn


class ToolAceAdapter(RowAdapter):
    """ToolACE {system, conversations[{from: user/assistant/tool, value}]}, calls as [func(a=1)] text."""

    name = "toolace"

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
        raw = obj.get("system")
        system = raw if isinstance(raw, str) else ""
        schemas, names = system_tools(system)
        turns = [_with_calls(t, schemas, names) for t in message_turns(conv)]
        if system.strip():
            turns.insert(0, Turn("system", system.strip()))
        return turns_record(self, obj, position, source, turns)

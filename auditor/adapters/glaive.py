"""Glaive function-calling records: v2 ``{system, chat}`` strings and v1 ``{sample}`` strings.

The conversation is one string of turns, each opening with a marker at the start or after a blank line:
``SYSTEM:`` (v1, inside ``sample``; v2 has it in ``system``), ``USER:``, ``ASSISTANT:``, ``FUNCTION
RESPONSE:``; an assistant turn ends with ``<|endoftext|>`` and may hold a call ``<functioncall> {"name":
..., "arguments": '{...}'}`` (the arguments a JSON string in single quotes, as Glaive writes them).
Views: ``query`` (the first user turn; ``messages`` / ``--messages`` choose others), ``system`` (the
marker stripped), ``calls``, ``observations`` (function responses), ``answer`` (the last assistant text),
``text``. Glaive has no ids: the id is ``id`` when present, else the 0-based position. (LLaMA-Factory's
ShareGPT conversion of Glaive, ``conversations`` + ``tools``, is read by ``chat``.)

>>> t = parse_chat('USER: Weather in Oslo?\\n\\n\\nASSISTANT: <functioncall> {"name": "weather", '
...                '"arguments": \\'{"city": "Oslo"}\\'} <|endoftext|>\\n\\n\\nFUNCTION RESPONSE: {"temp": 3}')
>>> [(x.role, x.text, x.calls) for x in t]
[('user', 'Weather in Oslo?', []), ('assistant', '', [('weather', {'city': 'Oslo'})]), ('tool', '{"temp": 3}', [])]
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..records.record import Record, Skip
from ..records.trajectory import Turn
from ._rows import RowAdapter
from .base import first_record
from .chat import turns_record

#: a marker opens the string or follows a blank line (Glaive separates turns with three newlines)
_MARKER = re.compile(r"(?:\A|\n[ \t]*\n)[ \t]*(SYSTEM|USER|ASSISTANT|FUNCTION RESPONSE)[ \t]*:[ \t]?")
_ROLE = {"SYSTEM": "system", "USER": "user", "ASSISTANT": "assistant", "FUNCTION RESPONSE": "tool"}
_CALL = "<functioncall>"
_END = "<|endoftext|>"
_NAME = re.compile(r'"name"\s*:\s*"((?:[^"\\]|\\.)*)"')
_QUOTED_ARGS = re.compile(r'"arguments"\s*:\s*\'(.*)\'\s*}\s*$', re.S)


def parse_call(text: str) -> tuple[str, Any] | None:
    """``(name, arguments)`` of the JSON after ``<functioncall>``; Glaive's single-quoted argument
    string is read as the JSON it holds (kept as text when it is not JSON).

    >>> parse_call('{"name": "f", "arguments": \\'{"a": "it\\'s"}\\'}')
    ('f', {'a': "it's"})
    """
    text = text.strip()
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        args = value.get("arguments", {})
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                pass
        return value["name"], args
    name = _NAME.search(text)
    if name is None:
        return None
    quoted = _QUOTED_ARGS.search(text)
    args_text = quoted.group(1) if quoted else ""
    try:
        parsed: Any = json.loads(args_text) if args_text else {}
    except ValueError:
        parsed = args_text
    return json.loads(f'"{name.group(1)}"'), parsed


def _assistant(text: str) -> Turn:
    text = text.replace(_END, "").strip()
    if _CALL not in text:
        return Turn("assistant", text)
    before, _, after = text.partition(_CALL)
    call = parse_call(after)
    if call is None:
        return Turn("assistant", text)
    return Turn("assistant", before.strip(), [call])


def parse_chat(chat: str) -> list[Turn]:
    """The turns of a Glaive conversation string (see the module doc); text before the first marker
    is a user turn."""
    turns: list[Turn] = []
    marks = list(_MARKER.finditer(chat))
    head = chat[: marks[0].start()].strip() if marks else chat.strip()
    if head:
        turns.append(Turn("user", head.replace(_END, "").strip()))
    for m, nxt in zip(marks, [*marks[1:], None]):
        role = _ROLE[m.group(1)]
        body = chat[m.end() : nxt.start() if nxt else len(chat)]
        if role == "assistant":
            turns.append(_assistant(body))
        else:
            turns.append(Turn(role, body.replace(_END, "").strip()))
    return turns


class GlaiveAdapter(RowAdapter):
    """Glaive function calling v2 {system, chat} and v1 {sample}: USER:/ASSISTANT:/FUNCTION RESPONSE: turns."""

    name = "glaive"

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        first = first_record(sample)
        if first is None:
            return False
        chat = first.get("chat", first.get("sample"))
        return isinstance(chat, str) and bool(re.search(r"(?:^|\n)\s*(USER|SYSTEM):", chat))

    def convert(self, obj: dict, position: int, source: str) -> Record | Skip:
        chat = obj.get("chat", obj.get("sample"))
        if not isinstance(chat, str):
            return Skip(source, "no 'chat' or 'sample' string")
        turns = parse_chat(chat)
        system = obj.get("system")
        if isinstance(system, str) and system.strip():
            text = re.sub(r"^\s*SYSTEM\s*:\s*", "", system)
            turns.insert(0, Turn("system", text.strip()))
        return turns_record(self, obj, position, source, turns)

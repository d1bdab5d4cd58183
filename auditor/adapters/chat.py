"""Chat records: OpenAI-style ``messages[{role, content}]`` or ShareGPT ``conversations[{from, value}]``.

Views: ``query`` is the user's task — the first user turn, or for ToolBench-style prompts the text
between ``Task:`` and ``Begin!``; ``system`` the system turns; ``text`` every turn. A ToolBench-V/R id
such as ``G1@33737`` or ``G2@42932_reflection`` also yields ``meta['ref_ids'] = ['33737']`` and
``meta['group'] = 'G1'``, which the ``id`` method compares with eval ids (as evidence only).

>>> extract_task("Now I will give you a task.\\nTask:\\nFind Messi's clubs.\\nBegin!\\n")
"Find Messi's clubs."
>>> parse_ref_id("G2@42932_reflection")
('G2', '42932')
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable, Iterator

from .._io import base_suffix, iter_json_items, iter_jsonl, json_container, load_json
from ..records import QUERY, TEXT, Record, Skip
from .base import Adapter

_TASK = re.compile(r"Task:\s*(.*?)\s*(?:Begin!|$)", re.S)
_REF_ID = re.compile(r"^(G\d)@(\d+)")
_ROLE_ALIASES = {"human": "user", "gpt": "assistant", "function": "tool", "observation": "tool",
                 "bot": "assistant", "model": "assistant"}


def extract_task(content: str) -> str:
    """The task of a ToolBench-style user prompt (``Task: ... Begin!``), else the content itself."""
    if "Task:" in content:
        m = _TASK.search(content)
        if m and m.group(1).strip():
            return m.group(1).strip()
    return content.strip()


def parse_ref_id(rid: str) -> tuple[str, str] | None:
    m = _REF_ID.match(rid)
    return (m.group(1), m.group(2)) if m else None


def turns(obj: dict) -> list[tuple[str, str]] | None:
    """``(role, text)`` pairs of a chat object, or None when it has no message list."""
    msgs = obj.get("messages")
    if isinstance(msgs, list):
        role_key, text_key = "role", "content"
    else:
        msgs = obj.get("conversations")
        if not isinstance(msgs, list):
            return None
        role_key, text_key = "from", "value"
    out = []
    for m in msgs:
        if not isinstance(m, dict):
            continue
        role = str(m.get(role_key, "")).lower()
        role = _ROLE_ALIASES.get(role, role)
        content = m.get(text_key)
        if isinstance(content, list):  # OpenAI content parts
            content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
        out.append((role, content if isinstance(content, str) else ""))
    return out


def chat_views(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    pairs = list(pairs)
    user = next((t for r, t in pairs if r == "user" and t.strip()), "")
    return {
        QUERY: extract_task(user) if user else "",
        "system": "\n".join(t for r, t in pairs if r == "system"),
        TEXT: "\n".join(t for _, t in pairs if t),
    }


class ChatAdapter(Adapter):
    name = "chat"
    suffixes = (".json", ".jsonl")
    priority = 30
    writable = True

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        return (isinstance(sample, list) and bool(sample) and isinstance(sample[0], dict)
                and (isinstance(sample[0].get("messages"), list)
                     or isinstance(sample[0].get("conversations"), list)))

    def read(self, path: Path) -> Iterator[Record | Skip]:
        if base_suffix(path) == ".jsonl":
            position = 0
            for lineno, obj, err in iter_jsonl(path):
                source = f"{path}:{lineno}"
                yield Skip(source, err) if err else self._one(obj, position, source)
                position += 1
            return
        if json_container(path) != "array":
            load_json(path)  # invalid JSON: InputError naming the line
            yield Skip(str(path), "expected a JSON list of chat records")
            return
        for i, _, obj in iter_json_items(path):  # streamed, one record in memory
            yield self._one(obj, i, f"{path}#{i}")

    def _one(self, obj: Any, position: int, source: str) -> Record | Skip:
        if not isinstance(obj, dict):
            return Skip(source, f"item is {type(obj).__name__}, not an object")
        pairs = turns(obj)
        if pairs is None:
            return Skip(source, "no 'messages' or 'conversations' list")
        views = chat_views(pairs)
        if not views[TEXT]:
            return Skip(source, "conversation has no text")
        rid = obj.get("id")
        meta: dict[str, Any] = {}
        if not isinstance(rid, (str, int)):
            rid, meta["positional_id"] = position, True
        ref = parse_ref_id(str(rid))
        if ref:
            meta["group"], ref_id = ref
            meta["ref_ids"] = [ref_id]
        return self.record(rid, source, views, raw=obj, **meta)

"""Typed views of an agent trajectory, shared by the chat, toolbench-answers and caft adapters.

A trajectory is a list of :class:`Turn` (role ``system`` / ``user`` / ``assistant`` / ``tool``, text,
tool calls). :func:`trajectory_views` turns it into the record views

``query`` (the task: first user turn, ToolBench ``Task: ... Begin!`` cut out), ``system``,
``calls`` (canonical tool calls, :mod:`auditor.records.toolcalls`), ``observations`` (tool results),
``reflection`` (assistant turns right after a failed tool result), ``answer`` (the final answer),
``user`` (every user turn),
``text`` (every turn, tool calls written as canonical calls)

and the meta ``trace`` (structured steps for the error taxonomy) and ``turn_starts`` (the character
offset of each turn inside the ``text`` view, so a finding can name the turn of a span).

>>> v, meta = trajectory_views([Turn("user", "Find X"), Turn("assistant", "", [("get_x", {"q": 1})]),
...                             Turn("tool", '{"error": "bad id"}'), Turn("assistant", "Sorry, retrying.")])
>>> v["query"], v["calls"], v["reflection"], meta["trace"][0]["observation"]
('Find X', 'get_x({"q":1})', 'Sorry, retrying.', '{"error": "bad id"}')
>>> turn_of(meta["turn_starts"], 8)
1
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any

from .record import QUERY, TEXT
from .toolcalls import NOT_TOOLS, calls_in_text, calls_view, canonical_call, parse_arguments, step

_TASK = re.compile(r"Task:\s*(.*?)\s*(?:Begin!|$)", re.S)
_ERROR = re.compile(
    r"""(?:^\s*(?:observation:\s*)?error\b|["']error["']\s*:\s*["'][^"'\s]|\bexception\b|\btraceback \(most)""", re.I
)


def extract_task(content: str) -> str:
    """The task of a ToolBench-style user prompt (``Task: ... Begin!``), else the content itself."""
    if "Task:" in content:
        m = _TASK.search(content)
        if m and m.group(1).strip():
            return m.group(1).strip()
    content = content.strip()
    if content.endswith("Begin!"):
        content = content[: -len("Begin!")].strip()
    return content


def is_error(observation: str | None) -> bool:
    """True when a tool result reports a failure (non-empty ``error`` field, ``Error: ...`` ...)."""
    return bool(observation and _ERROR.search(observation[:2000]))


@dataclass
class Turn:
    role: str
    text: str = ""
    calls: list[tuple[str, Any]] = field(default_factory=list)


def trajectory_views(
    turns: list[Turn], *, query: str | None = None, answer: str | None = None, parse_text_calls: bool = True
) -> tuple[dict[str, str], dict[str, Any]]:
    """Views and meta (``trace``, ``turn_starts``) of a trajectory; see the module doc."""
    trace: list[dict[str, Any]] = []
    parts: list[str] = []
    starts: list[int] = []
    offset = 0
    reflection: list[str] = []
    last_failed = False
    last_assistant = ""
    user = ""
    for t in turns:
        calls = list(t.calls)
        if not calls and parse_text_calls and t.role == "assistant" and t.text:
            calls = [(c.split("(", 1)[0], a) for c, a in calls_in_text(t.text)]
        shown = t.text or ""
        if t.calls and t.role == "assistant":  # structured calls are not in the text: write them out
            rendered = "\n".join(canonical_call(n, a) for n, a in t.calls)
            shown = f"{shown}\n{rendered}" if shown.strip() else rendered
        if t.role == "user" and not user and t.text.strip():
            user = t.text
        if t.role == "assistant":
            if last_failed and t.text.strip():
                reflection.append(t.text.strip())
            for n, a in calls:
                trace.append(step(n, parse_arguments(a)))
            if t.text.strip():
                last_assistant = t.text.strip()
            last_failed = False
        elif t.role == "tool":
            pending = [s for s in trace if s["observation"] is None]
            if pending:
                pending[0]["observation"] = t.text
            last_failed = is_error(t.text)
        starts.append(offset)
        parts.append(shown)
        offset += len(shown) + 1
    final = answer
    if final is None:
        finish = [s for s in trace if s["name"].lower() == "finish"]
        if finish:
            final = str(finish[-1]["args"].get("final_answer", ""))
        else:
            final = last_assistant
    views = {
        QUERY: query if query is not None else (extract_task(user) if user else ""),
        "system": "\n".join(t.text for t in turns if t.role == "system" and t.text),
        "calls": calls_view(trace),
        "observations": "\n".join(t.text for t in turns if t.role == "tool" and t.text),
        "reflection": "\n".join(reflection),
        "answer": final or "",
        "user": "\n".join(t.text for t in turns if t.role == "user" and t.text),
        TEXT: "\n".join(parts),
    }
    tools_trace = [s for s in trace if s["name"].lower() not in NOT_TOOLS]
    return views, {"trace": tools_trace, "turn_starts": starts}


def turn_of(turn_starts: list[int] | None, char: int) -> int | None:
    """0-based turn index holding character ``char`` of the ``text`` view (None when unknown)."""
    if not turn_starts:
        return None
    return max(0, bisect.bisect_right(turn_starts, char) - 1)

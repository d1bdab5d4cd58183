"""CAFT: critique-augmented agent trajectories, one JSON object per line (schema documented in docs/formats.md).

Derived from the CAFT paper's description (expert critiques of each agent turn, with corrected
actions). One line::

    {"task_id": "webshop-17", "environment": "webshop", "split": "train",
     "query": "optional: the task; default the first user turn",
     "tools": [{"name": "search", "parameters": {"type": "object", "properties": {...}, "required": [...]}}],
     "turns": [
       {"role": "user", "content": "Find a red mug under $10"},
       {"role": "assistant", "content": "I will search.", "tool_call": {"name": "search", "arguments": {"q": "red mug"}},
        "annotation": {"label": "correct"}},
       {"role": "tool", "content": "[B07X1 ...]"},
       {"role": "assistant", "content": "", "tool_call": {"name": "buy", "arguments": {"asin": "B000"}},
        "annotation": {"label": "incorrect", "critique": "The ASIN was never shown.",
                       "corrected_action": {"name": "click", "arguments": {"asin": "B07X1"}}}}]}

``role`` is ``system`` / ``user`` / ``assistant`` / ``tool``; ``tool_call`` and ``annotation`` only on
assistant turns; ``annotation.label`` is ``correct`` or ``incorrect``; ``corrected_action`` is a call
object or text. Views: those of every trajectory (:mod:`auditor.records.trajectory`) plus
``critique`` (the critiques, one per line). Meta: ``environment``, ``incorrect_turns`` (0-based turn
indices), ``mistake`` (any incorrect turn), ``corrections`` (canonical corrected calls), ``tools``,
``answered_instead_of_call`` (an incorrect turn without a call whose correction is a call).
A line that breaks the schema is skipped with its reason (or fails the run, per ``on_error``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..io.jsonread import LineSpan, iter_jsonl
from ..records.record import Record, Skip
from ..records.toolcalls import canonical_call
from ..records.trajectory import Turn, trajectory_views
from ._write import JsonLinesWriter, RecordWriter
from .base import Adapter, first_record, line_spans

ROLES = ("system", "user", "assistant", "tool")
LABELS = ("correct", "incorrect")


def _parse_line(obj: Any) -> tuple[list[Turn], dict[str, Any]] | str:
    """Turns and meta of one CAFT object, or the reason it breaks the schema."""
    if not isinstance(obj, dict):
        return f"line is {type(obj).__name__}, not an object"
    if not isinstance(obj.get("task_id"), (str, int)):
        return "missing 'task_id'"
    turns_raw = obj.get("turns")
    if not isinstance(turns_raw, list) or not turns_raw:
        return "missing or empty 'turns' list"
    turns: list[Turn] = []
    critiques: list[str] = []
    incorrect: list[int] = []
    corrections: list[str] = []
    answered_instead = False
    for k, t in enumerate(turns_raw):
        if not isinstance(t, dict) or t.get("role") not in ROLES:
            return f"turn {k}: 'role' must be one of {', '.join(ROLES)}"
        content = t.get("content") or ""
        if not isinstance(content, str):
            return f"turn {k}: 'content' is not a string"
        calls = []
        tc = t.get("tool_call")
        if tc is not None:
            if t["role"] != "assistant" or not isinstance(tc, dict) or not isinstance(tc.get("name"), str):
                return f"turn {k}: 'tool_call' must be an object with a 'name', on an assistant turn"
            calls.append((tc["name"], tc.get("arguments")))
        ann = t.get("annotation")
        if ann is not None:
            if not isinstance(ann, dict) or ann.get("label") not in LABELS:
                return f"turn {k}: annotation 'label' must be 'correct' or 'incorrect'"
            if ann["label"] == "incorrect":
                incorrect.append(k)
                if tc is None and isinstance(ann.get("corrected_action"), dict):
                    answered_instead = True
            if isinstance(ann.get("critique"), str) and ann["critique"].strip():
                critiques.append(ann["critique"].strip())
            fix = ann.get("corrected_action")
            if isinstance(fix, dict) and isinstance(fix.get("name"), str):
                corrections.append(canonical_call(fix["name"], fix.get("arguments")))
            elif isinstance(fix, str) and fix.strip():
                corrections.append(fix.strip())
        turns.append(Turn(t["role"], content, calls))
    tools = {}
    for tool in obj.get("tools") or []:
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            tools[tool["name"]] = tool.get("parameters") if isinstance(tool.get("parameters"), dict) else None
    meta = {
        "environment": obj.get("environment"),
        "incorrect_turns": incorrect,
        "mistake": bool(incorrect),
        "corrections": corrections,
        "tools": tools,
        "critiques": critiques,
        "answered_instead_of_call": answered_instead,
    }
    return turns, meta


class CaftAdapter(Adapter):
    name = "caft"
    suffixes = (".jsonl",)
    layouts = ("lines",)

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        first = first_record(sample)
        return first is not None and ("task_id" in first and isinstance(first.get("turns"), list))

    @classmethod
    def parts(cls, path: Path, split_bytes: int) -> list[LineSpan]:
        return line_spans(path, split_bytes)

    def read(self, path: Path) -> Iterator[Record | Skip]:
        return self.read_part(path, None)

    def read_part(self, path: Path, part: LineSpan | None) -> Iterator[Record | Skip]:
        for lineno, obj, err in iter_jsonl(path, span=part):
            source = f"{path}:{lineno}"
            if err:
                yield Skip(source, err)
                continue
            parsed = _parse_line(obj)
            if isinstance(parsed, str):
                yield Skip(source, parsed)
                continue
            turns, meta = parsed
            query = obj.get("query") if isinstance(obj.get("query"), str) else None
            views, tmeta = trajectory_views(turns, query=query)
            views["critique"] = "\n".join(meta.pop("critiques"))
            split = obj.get("split") if isinstance(obj.get("split"), str) else None
            yield self.record(obj["task_id"], source, views, raw=obj, split=split, **meta, **tmeta)

    def writer(self, source: Path, target: Path) -> RecordWriter:
        return JsonLinesWriter(source, target)

"""Chat records: OpenAI-style ``messages[{role, content, tool_calls}]``, ShareGPT ``conversations[{from, value}]``,
StepTool's nested ShareGPT and tau-bench trajectories.

Accepted shapes: a JSON list (or JSONL) of objects with ``messages`` / ``conversations`` / ``traj``;
StepTool's ``{query_id: {cnt, instances: [{id, conversations}]}}`` (one record per instance, the record
id being the query id, also in ``meta['ref_ids']``). Tool calls are read from OpenAI ``tool_calls``,
legacy ``function_call``, ShareGPT ``function_call`` turns and, in assistant text, ToolBench
``Action: / Action Input:`` lines and Python calls; ``role: tool`` / ``function`` / ``observation`` turns
(and ``Observation:`` user turns) are tool results. Views (see :mod:`auditor.records.trajectory`):
``query`` (first user turn, or the text between ``Task:`` and ``Begin!``), ``system``, ``calls``,
``observations``, ``reflection``, ``answer``, ``text``; with ``messages`` (a selector such as
``last-user``, :mod:`auditor.records.messages`) the ``query`` view is the selected messages instead. A ToolBench-V/R id such as ``G1@33737`` or
``G2@42932_reflection`` also yields ``meta['ref_ids'] = ['33737']`` and ``meta['group'] = 'G1'``, which
the ``id`` method compares with eval ids (as evidence only).

>>> extract_task("Now I will give you a task.\\nTask:\\nFind Messi's clubs.\\nBegin!\\n")
"Find Messi's clubs."
>>> parse_ref_id("G2@42932_reflection")
('G2', '42932')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ..io.files import base_suffix
from ..io.jsonread import LineSpan, iter_json_items, iter_jsonl, json_container, load_json
from ..io.sniff import sniff
from ..records.callparse import calls_from_value
from ..records.messages import ROLE_ALIASES, MessageSelector, content_text
from ..records.pycalls import Schemas
from ..records.record import QUERY, TEXT, Record, Skip
from ..records.trajectory import Turn, extract_task, trajectory_views
from ._rows import COLUMNAR_SUFFIXES, YAML_SUFFIXES, record_id, table_rows, table_writer
from ._write import JsonArrayWriter, JsonLinesWriter, RecordWriter, dumps, raw_of
from .base import Adapter, first_record, line_spans

_REF_ID = re.compile(r"^(G\d)@(\d+)")
_ROLE_ALIASES = ROLE_ALIASES
_MESSAGE_KEYS = ("messages", "conversations", "traj")

__all__ = ["ChatAdapter", "Tags", "extract_task", "message_turns", "parse_ref_id", "parse_turns", "select_query"]


def parse_ref_id(rid: str) -> tuple[str, str] | None:
    m = _REF_ID.match(rid)
    return (m.group(1), m.group(2)) if m else None


def _message_list(obj: dict, keys: tuple[str, ...] = _MESSAGE_KEYS) -> list | None:
    for key in keys:
        if isinstance(obj.get(key), list):
            return obj[key]
    return None


@dataclass(frozen=True)
class Tags:
    """How a message list spells its keys and roles (LLaMA-Factory's ``tags``). ``role`` / ``content``:
    the keys of a message (None: ``role`` or ``from``, ``content`` or ``value``); ``roles``: a role
    spelling -> ``user`` / ``assistant`` / ``tool`` / ``system`` / ``function_call`` (before the
    common aliases of :data:`auditor.records.messages.ROLE_ALIASES`)."""

    role: str | None = None
    content: str | None = None
    roles: dict[str, str] = field(default_factory=dict)


def _structured_calls(m: dict) -> list[tuple[str, Any]]:
    calls = []
    for tc in m.get("tool_calls") or []:
        if isinstance(tc, dict):
            fn = tc["function"] if isinstance(tc.get("function"), dict) else tc
            if fn.get("name"):
                calls.append((str(fn["name"]), fn.get("arguments", fn.get("parameters"))))
    fc = m.get("function_call")
    if isinstance(fc, dict) and fc.get("name"):
        calls.append((str(fc["name"]), fc.get("arguments")))
    return calls


def message_turns(msgs: list, tags: Tags | None = None, schemas: Schemas | None = None) -> list[Turn]:
    """The :class:`Turn` list of a message list (items that are not objects are left out).

    ShareGPT ``function_call`` turns (Glaive, LLaMA-Factory) are assistant turns whose value holds the
    call(s) as JSON; calls written in other forms go through :func:`auditor.records.callparse.calls_from_value`.

    >>> [(t.role, t.text, t.calls) for t in message_turns([{"from": "human", "value": "Weather in Oslo?"},
    ...     {"from": "function_call", "value": '{"name": "weather", "arguments": {"city": "Oslo"}}'}])]
    [('user', 'Weather in Oslo?', []), ('assistant', '', [('weather', {'city': 'Oslo'})])]
    """
    tags = tags or Tags()
    out: list[Turn] = []
    for m in msgs:
        if not isinstance(m, dict):
            continue
        raw = m.get(tags.role) if tags.role else m.get("role", m.get("from"))
        content = m.get(tags.content) if tags.content else m.get("content", m.get("value"))
        raw_role = str(raw if raw is not None else "").lower()
        text = content_text(content)
        calls = _structured_calls(m)
        role = tags.roles.get(raw_role, raw_role)
        if role == "function_call":  # the value is {"name", "arguments"} (or a list of them) as JSON
            found = calls_from_value(text, schemas)
            if found:
                calls, text = [(s["name"], s["args"]) for s in found], ""
            role = "assistant"
        else:
            role = _ROLE_ALIASES.get(role, role)
        if role == "user" and text.lstrip().startswith("Observation:"):
            role = "tool"
        out.append(Turn(role, text, calls))
    return out


def turns_record(adapter: Adapter, obj: dict, position: int, source: str, turns: list[Turn]) -> Record | Skip:
    """The record of a conversation a named reader parsed into ``turns`` (Glaive, ToolACE): views of
    :func:`~auditor.records.trajectory.trajectory_views` (calls already in the turns, none parsed from
    text), the ``messages`` selector applied, the id from ``obj['id']`` (else the position); a Skip
    when the conversation has no text or no message matches the selector."""
    views, meta = trajectory_views(turns, parse_text_calls=False)
    refused = select_query(views, turns, adapter.options.messages, source)
    if refused is not None:
        return refused
    if not views[TEXT].strip():
        return Skip(source, "conversation has no text")
    rid = record_id(obj)
    if rid is None:
        return adapter.record(position, source, views, raw=obj, positional_id=True, **meta)
    return adapter.record(rid, source, views, raw=obj, **meta)


def select_query(views: dict[str, str], turns: list[Turn], spec: str | None, source: str) -> Skip | None:
    """With a message selector (``messages`` / ``--messages``), the selected turns become the ``query``
    view; a Skip when none matches (None: done, or no selector)."""
    if not spec:
        return None
    chosen = MessageSelector.parse(spec).select([{"role": t.role, "content": t.text} for t in turns])
    if chosen is None:
        return Skip(source, f"no message for '{spec}'")
    views[QUERY] = chosen
    return None


def parse_turns(obj: dict, keys: tuple[str, ...] = _MESSAGE_KEYS, tags: Tags | None = None) -> list[Turn] | None:
    """The :class:`Turn` list of a chat object, or None when it has no message list. A top-level
    ``system`` string (ShareGPT, ToolACE) opens it when no message is a system one."""
    msgs = _message_list(obj, keys)
    if msgs is None:
        return None
    turns = message_turns(msgs, tags)
    system = obj.get("system")
    if isinstance(system, str) and system.strip() and not any(t.role == "system" for t in turns):
        turns.insert(0, Turn("system", system))
    return turns


#: files of rows (not JSON) a chat reader reads: Parquet, Arrow, YAML
_ROW_FILES = (*COLUMNAR_SUFFIXES, *YAML_SUFFIXES)


class ChatAdapter(Adapter):
    """OpenAI messages / ShareGPT conversations / tau-bench traj / StepTool: chat turns, tool calls, results."""

    name = "chat"
    suffixes = (".json", ".jsonl", *_ROW_FILES)
    layouts = ("array", "object", "lines")
    #: the keys holding the message list, tried in order
    message_keys: tuple[str, ...] = _MESSAGE_KEYS
    #: the keys holding the record id, tried in order (else the position)
    id_keys: tuple[str, ...] = ("id", "task_id")

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        if isinstance(sample, dict) and len(sample) == 1:  # StepTool {query_id: {cnt, instances}}
            value = next(iter(sample.values()))
            return isinstance(value, dict) and isinstance(value.get("instances"), list)
        first = first_record(sample)
        return first is not None and (_message_list(first) is not None)

    @classmethod
    def parts(cls, path: Path, split_bytes: int) -> list[LineSpan]:
        if base_suffix(path) in _ROW_FILES:
            return []
        return line_spans(path, split_bytes) if sniff(path).kind == "lines" else []

    def read_part(self, path: Path, part: LineSpan | None) -> Iterator[Record | Skip]:
        position = 0
        for lineno, obj, err in iter_jsonl(path, self.options.max_record_chars, part):
            source = f"{path}:{lineno}"
            yield Skip(source, err) if err else self._one(obj, position, source)
            position += 1

    def read(self, path: Path) -> Iterator[Record | Skip]:
        if base_suffix(path) in _ROW_FILES:  # a message-list column: rows are read as JSON records are
            for position, source, row in table_rows(path, self.options.max_record_chars):
                yield row if isinstance(row, Skip) else self._one(row, position, source)
            return
        if sniff(path).kind == "lines":
            yield from self.read_part(path, None)
            return
        kind = json_container(path)
        if kind == "object":  # StepTool's nested layout, streamed one query at a time
            yield from self._nested(path, ((str(key), value) for _, key, value in iter_json_items(path)))
            return
        if kind != "array":
            load_json(path)  # invalid JSON: InputError naming the line
            yield Skip(str(path), "expected a JSON list of chat records")
            return
        for i, _, obj in iter_json_items(path):  # streamed, one record in memory
            yield self._one(obj, i, f"{path}#{i}")

    def _nested(self, path: Path, items: Iterable[tuple[str, Any]]) -> Iterator[Record | Skip]:
        """StepTool: ``{query_id: {cnt, instances: [{id, conversations}]}}``."""
        position = 0
        for qid, entry in items:
            source = f"{path}#{position}"
            instances = entry.get("instances") if isinstance(entry, dict) else None
            if not isinstance(instances, list):
                position += 1
                yield Skip(source, f"query {qid}: no 'instances' list")
                continue
            for inst in instances:
                source = f"{path}#{position}"
                position += 1
                if not isinstance(inst, dict):
                    yield Skip(source, f"query {qid}: instance is {type(inst).__name__}, not an object")
                    continue
                rec = self._one({**inst, "id": str(qid)}, position - 1, source)
                if isinstance(rec, Record):
                    rec.meta.setdefault("ref_ids", [str(qid)])
                    rec.meta["instance"] = inst.get("id")
                    # written back as read: the instance under its query, with the query's other keys
                    rec.raw = inst
                    rec.meta["json_key"] = qid
                    rec.meta["json_group"] = {k: v for k, v in entry.items() if k != "instances"}
                    rec.meta["json_group_size"] = len(instances)
                yield rec

    def writer(self, source: Path, target: Path) -> RecordWriter:
        if base_suffix(source) in _ROW_FILES:
            return cast(RecordWriter, table_writer(source, target))
        if sniff(source).kind == "lines":  # as read(): JSON Lines whatever the name
            return JsonLinesWriter(source, target)
        if json_container(source) == "object":
            return NestedInstancesWriter(source, target)
        return JsonArrayWriter(source, target)

    def _one(self, obj: Any, position: int, source: str) -> Record | Skip:
        if not isinstance(obj, dict):
            return Skip(source, f"item is {type(obj).__name__}, not an object", raw=obj)
        turns = parse_turns(obj, self.message_keys)
        if turns is None:
            return Skip(source, "no " + " or ".join(f"'{k}'" for k in self.message_keys) + " list", raw=obj)
        views, meta = trajectory_views(turns)
        refused = select_query(views, turns, self.options.messages, source)  # the user's choice of messages
        if refused is not None:
            return Skip(refused.source, refused.reason, raw=obj)
        if not views[TEXT].strip():
            return Skip(source, "conversation has no text", raw=obj)
        rid = next((obj[k] for k in self.id_keys if isinstance(obj.get(k), (str, int))), None)
        if rid is None:
            rid, meta["positional_id"] = position, True
        ref = parse_ref_id(str(rid))
        if ref:
            meta["group"], ref_id = ref
            meta["ref_ids"] = [ref_id]
            if str(rid).endswith("_reflection"):
                meta["mistake"] = True
        return self.record(rid, source, views, raw=obj, **meta)


class NestedInstancesWriter(RecordWriter):
    """StepTool's ``{query_id: {cnt, instances: [...]}}``: the kept instances of each query under it,
    with the query's other keys (``cnt`` counts the kept instances when it counted them all)."""

    def begin(self) -> None:
        self._key: str | None = None
        self._group: dict[str, Any] = {}
        self._size = 0
        self._instances: list[Any] = []
        self._queries = 0
        self.emit("{")

    def _flush(self) -> None:
        if self._key is None:
            return
        group = dict(self._group)
        if group.get("cnt") == self._size:
            group["cnt"] = len(self._instances)
        group["instances"] = self._instances
        self.emit(("\n" if self._queries == 0 else ",\n") + dumps(self._key) + ": " + dumps(group))
        self._queries += 1
        self._instances = []

    def write_one(self, record: Record) -> None:
        key = str(record.meta.get("json_key", record.id))
        if key != self._key:
            self._flush()
            self._key = key
            self._group = dict(record.meta.get("json_group") or {})
            self._size = record.meta.get("json_group_size", 0)
        self._instances.append(raw_of(record))

    def end(self) -> None:
        self._flush()
        self.emit("\n}\n" if self._queries else "}\n")

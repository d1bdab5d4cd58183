"""tau2-bench ``tasks.json``: a list of tasks with ``id``, ``description``, ``user_scenario`` ...

``split`` (``train`` / ``test``) comes from the sibling ``split_tasks.json`` when present. The query
view is the user scenario's instructions (reason for call, known and unknown info, task instructions);
the text view adds the task's purpose and the expected actions' names and arguments; the ``calls``
view holds the expected actions as canonical calls (:mod:`auditor.records.toolcalls`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError
from ..io.jsonread import load_json
from ..records.record import QUERY, TEXT, Record, Skip
from ..records.toolcalls import calls_view, step
from ._write import JsonArrayWriter, RecordWriter, copy_companion
from .base import Adapter

_INSTRUCTION_KEYS = ("reason_for_call", "known_info", "unknown_info", "task_instructions")


def scenario_text(task: dict) -> str | None:
    scenario = task.get("user_scenario")
    if not isinstance(scenario, dict):
        return None
    instr = scenario.get("instructions")
    if isinstance(instr, str):
        return instr
    if isinstance(instr, dict):
        parts = [instr[k] for k in _INSTRUCTION_KEYS if isinstance(instr.get(k), str)]
        return "\n".join(parts) if parts else None
    return None


def load_split(tasks_path: Path) -> dict[str, str]:
    """task id → split name from ``split_tasks.json`` next to ``tasks_path`` (empty when absent)."""
    split_file = Path(tasks_path).with_name("split_tasks.json")
    if not split_file.exists():
        return {}
    doc = load_json(split_file)
    if not isinstance(doc, dict):
        raise InputError(str(split_file), None, "expected an object {split: [task ids]}")
    out: dict[str, str] = {}
    for split, ids in doc.items():
        if split == "base" or not isinstance(ids, list):
            continue
        for tid in ids:
            if str(tid) in out and out[str(tid)] != split:
                raise InputError(str(split_file), None, f"task {tid} is in both '{out[str(tid)]}' and '{split}'")
            out[str(tid)] = split
    return out


class Tau2TasksAdapter(Adapter):
    name = "tau2-tasks"
    suffixes = (".json",)
    layouts = ("array",)
    sniff_keys = frozenset({"user_scenario", "id"})

    def read(self, path: Path) -> Iterator[Record | Skip]:
        doc = load_json(path)
        if not isinstance(doc, list):
            yield Skip(str(path), "expected a JSON list of tasks")
            return
        splits = load_split(Path(path))
        for i, task in enumerate(doc):
            source = f"{path}#{i}"
            if not isinstance(task, dict) or "id" not in task:
                yield Skip(source, "task is not an object with an 'id'")
                continue
            query = scenario_text(task)
            if not query:
                yield Skip(source, "task has no user_scenario instructions")
                continue
            extra = []
            desc = task.get("description")
            if isinstance(desc, dict) and isinstance(desc.get("purpose"), str):
                extra.append(desc["purpose"])
            criteria = task.get("evaluation_criteria") or {}
            for action in criteria.get("actions") or []:
                if isinstance(action, dict):
                    extra.append(f"{action.get('name')} {json.dumps(action.get('arguments'), sort_keys=True)}")
            tid = str(task["id"])
            calls = calls_view(
                [
                    step(a["name"], a.get("arguments"))
                    for a in criteria.get("actions") or []
                    if isinstance(a, dict) and isinstance(a.get("name"), str)
                ]
            )
            yield self.record(
                tid,
                source,
                {QUERY: query, TEXT: "\n".join([query, *extra]), "calls": calls},
                raw=task,
                split=splits.get(tid),
                domain=_domain(task),
            )

    def writer(self, source: Path, target: Path) -> RecordWriter:
        return Tau2TasksWriter(source, target)


class Tau2TasksWriter(JsonArrayWriter):
    """The tasks as a JSON array, with the source's ``split_tasks.json`` copied alongside."""

    def close(self) -> list[Path]:
        written = super().close()
        return written + copy_companion(self.source, written[0], "split_tasks.json")


def _domain(task: dict) -> str | None:
    instr = (task.get("user_scenario") or {}).get("instructions")
    return instr.get("domain") if isinstance(instr, dict) else None

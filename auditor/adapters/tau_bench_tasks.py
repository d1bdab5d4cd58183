"""τ-bench (v1) tasks: ``[{task_id, user_id, instruction, actions[{name, kwargs}], outputs}]``.

τ-bench keeps its tasks as Python code; the only JSON copy in the public repository is inside the
historical trajectories (``info.task`` of each run). The bundled ``tau-bench-airline`` set is those
tasks, one per ``task_id`` (``scripts/bundle_data.py`` extracts them). ``query`` is the user
instruction, ``calls`` the gold actions, ``split`` ``test`` (the trajectories are test-set runs).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..io.jsonread import iter_json_items
from ..records.record import QUERY, TEXT, Record, Skip
from ..records.toolcalls import calls_view, step
from .base import Adapter


class TauBenchTasksAdapter(Adapter):
    """tau-bench (v1) tasks extracted from its historical trajectories: instruction and gold actions."""

    name = "tau-bench-tasks"
    suffixes = (".json",)
    layouts = ("array",)
    sniff_keys = frozenset({"task_id", "instruction", "actions"})

    def read(self, path: Path) -> Iterator[Record | Skip]:
        for i, _, task in iter_json_items(path):
            source = f"{path}#{i}"
            if not isinstance(task, dict) or not isinstance(task.get("instruction"), str):
                yield Skip(source, "task has no 'instruction' string")
                continue
            steps = [
                step(a["name"], a.get("kwargs"))
                for a in task.get("actions") or []
                if isinstance(a, dict) and isinstance(a.get("name"), str)
            ]
            query = task["instruction"].strip()
            yield self.record(
                task.get("task_id", i),
                source,
                {QUERY: query, TEXT: query, "calls": calls_view(steps)},
                raw=task,
                split=task.get("split", "test"),
                user_id=task.get("user_id"),
            )

"""ToolAlpaca evaluation sets (``eval_real.json``, ``eval_simulated.json``): a JSON list of API objects
``{Name, Description, …, Instructions, Golden_Answers}``; ``Instructions[i]`` pairs with
``Golden_Answers[i]`` (a list of ``{Action, Action_Input}``). In the released files both fields may be
Python-literal strings; they are parsed with :func:`ast.literal_eval` (never evaluated as code).

One record per instruction, id ``<API Name>/<index>`` (ToolAlpaca has no per-instruction id), ``split``
``real`` or ``simulated`` from the file name, ``query`` the instruction, ``calls`` the golden answer.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..io.jsonread import iter_json_items
from ..records.callparse import calls_from_value
from ..records.record import QUERY, TEXT, Record, Skip
from ..records.toolcalls import calls_view
from .base import Adapter

_SPLIT = re.compile(r"eval_(\w+)", re.I)


def _literal(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            return None
    return value


class ToolAlpacaAdapter(Adapter):
    """ToolAlpaca eval sets: one record per API instruction, golden actions as calls."""

    name = "toolalpaca"
    suffixes = (".json",)
    layouts = ("array",)
    sniff_keys = frozenset({"Name", "Instructions"})

    def read(self, path: Path) -> Iterator[Record | Skip]:
        m = _SPLIT.search(Path(path).name)
        split = m.group(1).lower() if m else None
        for i, _, api in iter_json_items(path):
            source = f"{path}#{i}"
            if not isinstance(api, dict):
                yield Skip(source, f"item is {type(api).__name__}, not an object")
                continue
            instructions = _literal(api.get("Instructions"))
            answers = _literal(api.get("Golden_Answers")) or []
            if not isinstance(instructions, list):
                yield Skip(source, "'Instructions' is not a list")
                continue
            for j, text in enumerate(instructions):
                if not isinstance(text, str) or not text.strip():
                    yield Skip(f"{source}", f"instruction {j} is not a string")
                    continue
                gold = answers[j] if isinstance(answers, list) and j < len(answers) else None
                calls = calls_view(calls_from_value(gold)) if gold is not None else ""
                yield self.record(
                    f"{api.get('Name', i)}/{j}",
                    source,
                    {QUERY: text.strip(), TEXT: text.strip(), "calls": calls},
                    raw={"Name": api.get("Name"), "instruction": text, "golden_answer": gold},
                    split=split,
                    api=api.get("Name"),
                    positional_id=True,
                )

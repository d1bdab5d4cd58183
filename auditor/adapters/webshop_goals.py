"""WebShop goals: a JSON list of instruction strings (``human_goals.json``).

The id is the goal's 0-based index; select a split by index range (``webshop:0:100``, ``split = "0:100"``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..io.jsonread import load_json
from ..records.record import QUERY, TEXT, Record, Skip
from ._write import JsonArrayWriter, RecordWriter
from .base import Adapter


class WebShopGoalsAdapter(Adapter):
    name = "webshop-goals"
    suffixes = (".json",)
    layouts = ("array",)

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        return isinstance(sample, list) and bool(sample) and isinstance(sample[0], str)

    def read(self, path: Path) -> Iterator[Record | Skip]:
        doc = load_json(path)
        if not isinstance(doc, list):
            yield Skip(str(path), "expected a JSON list of goal strings")
            return
        for i, goal in enumerate(doc):
            source = f"{path}#{i}"
            if isinstance(goal, dict):  # the WebShop env's goal objects carry 'instruction_text'
                goal = goal.get("instruction_text")
            if not isinstance(goal, str):
                yield Skip(source, "goal is not a string")
                continue
            yield self.record(i, source, {QUERY: goal, TEXT: goal}, raw=doc[i])

    def writer(self, source: Path, target: Path) -> RecordWriter:
        return JsonArrayWriter(source, target)

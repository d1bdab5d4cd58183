"""NESTFUL (IBM): sequences of nested API calls, ``[{input, output[{name, arguments, label}]}]``.

One record per item: ``query`` the user request (``input``), ``calls`` the call sequence (the final
``var_result`` pseudo-call left out; arguments that point at earlier results stay as their
``$var1.field$`` text). NESTFUL items have no id: the record id is the 0-based position. ``split`` from
the file name: ``executable``, ``glaive``, ``sgd``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..io.jsonread import iter_json_items
from ..records.record import QUERY, TEXT, Record, Skip
from ..records.toolcalls import calls_view, step
from .base import Adapter, first_record


def split_of(path: Path) -> str:
    stem = Path(path).name.split(".")[0].removesuffix("-data")
    return stem.removeprefix("non-executable-")


class NestfulAdapter(Adapter):
    """NESTFUL nested call sequences: user request and its call sequence."""

    name = "nestful"
    suffixes = (".json",)
    layouts = ("array",)

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        first = first_record(sample)
        if first is None:
            return False
        out = first.get("output")
        return (
            isinstance(first.get("input"), str)
            and isinstance(out, list)
            and bool(out)
            and all(isinstance(o, dict) and "name" in o and "arguments" in o for o in out)
        )

    def read(self, path: Path) -> Iterator[Record | Skip]:
        split = split_of(path)
        for i, _, obj in iter_json_items(path):
            source = f"{path}#{i}"
            if not isinstance(obj, dict) or not isinstance(obj.get("input"), str):
                yield Skip(source, "item has no 'input' string")
                continue
            steps = [
                step(o["name"], o.get("arguments"))
                for o in obj.get("output") or []
                if isinstance(o, dict) and isinstance(o.get("name"), str) and o["name"] != "var_result"
            ]
            query = obj["input"].strip()
            yield self.record(
                i,
                source,
                {QUERY: query, TEXT: query, "calls": calls_view(steps)},
                raw=obj,
                split=split,
                positional_id=True,
            )

"""What the text tiers search in each file of a training set (``auditor inspect``): how many records
have each view, and how many strings each kind of field (:func:`auditor.records.fields.path_kind`)
adds to the ``fields`` view; how many records were read whole (no known schema).

>>> from auditor.records.record import Record
>>> s = Searched()
>>> s.add(Record("t", "1", "t.jsonl:1", {"query": "hi", "fields": "Paris"}, raw={"q": "hi", "input": "Paris"}))
>>> s.render("t.jsonl")
['  searched: views query 1, fields 1', '    fields input: 1 strings']
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..records.fields import FIELDS, field_counts
from ..records.record import Record, split_source

#: kinds of field listed per file (the most frequent first)
MAX_KINDS = 25


@dataclass
class Searched:
    """Per file: records per view, strings per field kind, records read whole."""

    views: dict[str, Counter] = field(default_factory=dict)
    fields: dict[str, Counter] = field(default_factory=dict)
    whole: Counter = field(default_factory=Counter)

    def add(self, record: Record) -> None:
        path, _ = split_source(record.source)
        self.views.setdefault(path, Counter()).update(v for v, text in record.views.items() if text)
        if FIELDS in record.views:
            self.fields.setdefault(path, Counter()).update(field_counts(record.views, record.raw, (record.id,)))
        if record.meta.get("read_whole"):
            self.whole[path] += 1

    def render(self, path: str) -> list[str]:
        views = self.views.get(path)
        if not views:
            return []
        out = ["  searched: views " + ", ".join(f"{v} {n:,}" for v, n in views.items())]
        if self.whole[path]:
            out.append(f"    read whole (no known schema): {self.whole[path]:,} records")
        kinds = self.fields.get(path, Counter())
        for kind, n in kinds.most_common(MAX_KINDS):
            out.append(f"    fields {kind}: {n:,} strings")
        if len(kinds) > MAX_KINDS:
            out.append(f"    … {len(kinds) - MAX_KINDS} more kinds of field")
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            path: {"views": dict(views), "fields": dict(self.fields.get(path, {})), "read_whole": self.whole[path]}
            for path, views in self.views.items()
        }

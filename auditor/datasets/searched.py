"""What the text tiers search in each file of a training set (``auditor inspect``): how many records
have each view, and how many strings each kind of field (:func:`auditor.records.fields.path_kind`)
adds to the ``fields`` view; how many records were read whole (no known schema).

>>> from auditor.records.record import Record
>>> s = Searched()
>>> s.add(Record("t", "1", "t.jsonl:1", {"query": "hi", "fields": "Paris"}, raw={"q": "hi", "input": "Paris"}))
>>> s.render("t.jsonl")
['searched: views query 1, fields 1', '  fields input: 1 strings']
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..io.members import SEP
from ..records.fields import FIELDS, field_counts, id_known
from ..records.record import Record, split_source

#: kinds of field listed per file (the most frequent first)
MAX_KINDS = 12


@dataclass
class Searched:
    """Per file: records per view, strings per field kind, records read whole (by the reason their
    adapter could not read them)."""

    views: dict[str, Counter] = field(default_factory=dict)
    fields: dict[str, Counter] = field(default_factory=dict)
    whole: dict[str, Counter] = field(default_factory=dict)

    def add(self, record: Record) -> None:
        path, _ = split_source(record.source)
        self.views.setdefault(path, Counter()).update(v for v, text in record.views.items() if text)
        if FIELDS in record.views:
            self.fields.setdefault(path, Counter()).update(field_counts(record.views, record.raw, id_known(record.id)))
        reason = record.meta.get("read_whole")
        if reason:
            self.whole.setdefault(path, Counter())[reason] += 1

    def render(self, path: str, name: bool = False) -> list[str]:
        """Lines for file ``path`` (``name``: say which file, for a dataset of several); an archive's
        lines are its members' (``ARCHIVE!MEMBER``), each named."""
        members = [p for p in self.views if p.startswith(path + SEP)]
        if members and path not in self.views:
            return [line for m in members for line in self._render(m, True)]
        return self._render(path, name)

    def _render(self, path: str, name: bool) -> list[str]:
        views = self.views.get(path)
        if not views:
            return []
        where = f" in {path}" if name else ""
        out = [f"searched{where}: views " + ", ".join(f"{v} {n:,}" for v, n in views.items())]
        for reason, n in self.whole.get(path, Counter()).most_common(MAX_KINDS):
            out.append(f"  read whole {n:,} (not of the file's format): {reason}")
        kinds = self.fields.get(path, Counter())
        for kind, n in kinds.most_common(MAX_KINDS):
            out.append(f"  fields {kind}: {n:,} strings")
        if len(kinds) > MAX_KINDS:
            out.append(f"  … {len(kinds) - MAX_KINDS} more kinds of field (--json lists them)")
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            path: {
                "views": dict(views),
                "fields": dict(self.fields.get(path, {})),
                "read_whole": dict(self.whole.get(path, {})),
            }
            for path, views in self.views.items()
        }

"""Dolly records (databricks-dolly-15k): ``{instruction, context, response, category}``.

The item is the instruction and its context passage (``instruction\\ncontext``, as a prompt holds them:
Dolly's closed-QA, extraction and summarization items share instructions such as "Summarize this
paragraph" and differ by context). Views: ``query``, ``context``, ``answer`` (``response``), ``text``;
``split`` is the category (``open_qa``, ``closed_qa`` ...), so ``split = "closed_qa"`` selects one.
Dolly has no ids: the id is the 0-based position.

>>> r = DollyAdapter("d").convert({"instruction": "When did Virgin Australia start operating?",
...     "context": "Virgin Australia commenced services on 31 August 2000.", "response": "31 August 2000",
...     "category": "closed_qa"}, 0, "d.jsonl:1")
>>> r.views["query"].splitlines()[0], r.views["answer"], r.split
('When did Virgin Australia start operating?', '31 August 2000', 'closed_qa')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..records.record import QUERY, TEXT, Record, Skip
from ._rows import RowAdapter, joined, record_id, text_of
from .base import first_record


class DollyAdapter(RowAdapter):
    """Dolly {instruction, context, response, category}: query = instruction + context, split = category."""

    name = "dolly"

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        first = first_record(sample)
        return (
            first is not None
            and isinstance(first.get("instruction"), str)
            and "response" in first
            and ("context" in first or "category" in first)
        )

    def convert(self, obj: dict, position: int, source: str) -> Record | Skip:
        instruction, context = text_of(obj.get("instruction")), text_of(obj.get("context"))
        if not instruction and not context:
            return Skip(source, "no 'instruction' or 'context' text")
        answer = text_of(obj.get("response"))
        query = joined(instruction, context)
        views = {QUERY: query, "context": context, "answer": answer, TEXT: joined(query, answer)}
        category = obj.get("category")
        split = category if isinstance(category, str) and category else None
        rid = record_id(obj)
        if rid is None:
            return self.record(position, source, views, raw=obj, split=split, positional_id=True)
        return self.record(rid, source, views, raw=obj, split=split)

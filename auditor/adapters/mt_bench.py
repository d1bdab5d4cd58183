"""MT-Bench and Arena-Hard question files: ``{question_id, category, turns, reference?}``, ``turns`` a
list of the user's turns as strings (MT-Bench) or ``{content}`` objects (Arena-Hard).

The item is its first turn (the question; MT-Bench's second turn is a follow-up on the model's own answer,
"Rewrite your previous response ..."). Views: ``query`` (the first turn), ``user`` (every turn),
``answer`` (MT-Bench's ``reference`` answers, when present), ``text``; id ``question_id``; ``split`` the
category (``writing``, ``math`` ...; Arena-Hard's ``arena-hard-v0.1``).

>>> r = MtBenchAdapter("m").convert({"question_id": 81, "category": "writing", "turns": [
...     "Compose an engaging travel blog post about a recent trip to Hawaii.",
...     "Rewrite your previous response. Start every sentence with the letter A."]}, 0, "q.jsonl:1")
>>> r.id, r.split, r.views["query"]
('81', 'writing', 'Compose an engaging travel blog post about a recent trip to Hawaii.')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..records.record import QUERY, TEXT, Record, Skip
from ._rows import RowAdapter, joined, record_id, text_of
from .base import first_record


def _turn_text(turn: Any) -> str:
    return text_of(turn.get("content") if isinstance(turn, dict) else turn)


class MtBenchAdapter(RowAdapter):
    """MT-Bench / Arena-Hard questions {question_id, category, turns}: query = the first turn."""

    name = "mt-bench"

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        first = first_record(sample)
        turns = first.get("turns") if first is not None else None
        return (
            first is not None
            and "question_id" in first
            and isinstance(turns, list)
            and bool(turns)
            and all(isinstance(t, str) or (isinstance(t, dict) and isinstance(t.get("content"), str)) for t in turns)
        )

    def convert(self, obj: dict, position: int, source: str) -> Record | Skip:
        turns = obj.get("turns")
        texts = [t for t in (_turn_text(t) for t in turns) if t] if isinstance(turns, list) else []
        if not texts:
            return Skip(source, "no 'turns' text")
        reference = obj.get("reference")
        answer = joined(*(text_of(a) for a in reference)) if isinstance(reference, list) else ""
        views = {QUERY: texts[0], "user": "\n".join(texts), "answer": answer, TEXT: joined(*texts, answer)}
        category = obj.get("category")
        split = category if isinstance(category, str) and category else None
        rid = record_id(obj, ("question_id", "id"))
        if rid is None:
            return self.record(position, source, views, raw=obj, split=split, positional_id=True)
        return self.record(rid, source, views, raw=obj, split=split)

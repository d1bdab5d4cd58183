"""Alpaca records: ``{instruction, input, output}``, optionally ``system`` and ``history`` ``[[q, a], ...]``
(Stanford Alpaca, LLaMA-Factory's alpaca formatting; its preference form has ``chosen`` / ``rejected``
in place of ``output``; GPTeacher writes ``response``).

The item is the instruction **and** its input, as a model sees them (``instruction\ninput``, LLaMA-Factory's
rule), so an eval set whose items share one instruction ("Classify the sentiment of this review.") and
differ by input reads as distinct items. An instruction most of a file's records share
(:func:`template_instructions`: more than half of its first 1,000 records, at least 10) is the file's
template: a record with an input then has the input as its ``query`` and the template in its
``instruction`` view, so an item leaked into training without its template still matches whole (a 10-word
template beside a 20-word input would leave only 8 of 18 13-grams to find). Views: ``query``,
``instruction`` (a template left out of the query), ``system``, ``user`` (the history's questions, then the
query), ``answer`` (``output``, or ``chosen``), ``rejected``, ``text`` (every part, history first). The id
is ``id`` when the record has one, else the 0-based position.

>>> r = AlpacaAdapter("a").convert({"instruction": "Translate to French.", "input": "Good morning",
...                                  "output": "Bonjour", "history": [["Hi", "Hello!"]]}, 0, "a.json#0")
>>> r.views["query"], r.views["user"], r.views["answer"]
('Translate to French.\\nGood morning', 'Hi\\nTranslate to French.\\nGood morning', 'Bonjour')
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..records.record import QUERY, TEXT, Record, Skip
from ..text.normalize import normalize
from ._rows import RowAdapter, joined, record_id, text_of
from .base import first_record


@dataclass(frozen=True)
class AlpacaColumns:
    """Which field holds each part (LLaMA-Factory's ``columns`` of an alpaca-formatted dataset)."""

    prompt: str = "instruction"
    query: str = "input"
    response: str = "output"
    #: read when ``response`` is absent (GPTeacher and other Alpaca variants write ``response``)
    fallback_response: str | None = None
    history: str | None = "history"
    system: str | None = "system"
    chosen: str | None = "chosen"
    rejected: str | None = "rejected"


def _answers(value: Any) -> list[str]:
    """A response: a string, a message ``{role|from, content|value}``, or a list of these (ranked)."""
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    if isinstance(value, dict):
        return _answers(value.get("content", value.get("value")))
    if isinstance(value, list):
        return [a for v in value for a in _answers(v)]
    return []


#: an instruction held by more than this share of a file's first :data:`TEMPLATE_SAMPLE` records (at least
#: :data:`TEMPLATE_MIN` of them) is the file's template, not part of what tells its items apart
TEMPLATE_SHARE = 0.5
TEMPLATE_MIN = 10
TEMPLATE_SAMPLE = 1000


def template_instructions(sample: list[dict], columns: AlpacaColumns = AlpacaColumns()) -> frozenset[str]:
    """The normalized instructions that more than :data:`TEMPLATE_SHARE` of ``sample`` share (when it
    holds at least :data:`TEMPLATE_MIN` records): templates, such as API-Bank's one ICL instruction.

    >>> rows = [{"instruction": "Classify the review.", "input": f"review {i}"} for i in range(12)]
    >>> sorted(template_instructions(rows)), template_instructions(rows[:9])
    (['classify the review'], frozenset())
    """
    if len(sample) < TEMPLATE_MIN:
        return frozenset()
    counts = Counter(normalize(text_of(obj.get(columns.prompt))) for obj in sample)
    return frozenset(k for k, n in counts.items() if k and n > TEMPLATE_SHARE * len(sample))


def alpaca_views(
    obj: dict, columns: AlpacaColumns = AlpacaColumns(), templates: frozenset[str] = frozenset()
) -> dict[str, str] | str:
    """The views of one Alpaca-shaped object, or the reason it has none (see the module doc); an
    instruction in ``templates`` (:func:`template_instructions`) is left out of a query that has an input."""
    instruction, given = text_of(obj.get(columns.prompt)), text_of(obj.get(columns.query))
    template = bool(given) and bool(templates) and normalize(instruction) in templates
    query = given if template else joined(instruction, given)
    history: list[tuple[str, str]] = []
    raw_history = obj.get(columns.history) if columns.history else None
    if isinstance(raw_history, list):
        for pair in raw_history:
            if isinstance(pair, (list, tuple)) and pair:
                history.append((text_of(pair[0]), text_of(pair[1]) if len(pair) > 1 else ""))
    response = obj.get(columns.response)
    if response is None and columns.fallback_response:
        response = obj.get(columns.fallback_response)
    answers = _answers(response)
    chosen = _answers(obj.get(columns.chosen)) if columns.chosen else []
    rejected = _answers(obj.get(columns.rejected)) if columns.rejected else []
    if not answers and chosen:
        answers = chosen
    elif len(answers) > 1 and not rejected:  # a ranked list of responses: the first is the preferred one
        answers, rejected = answers[:1], answers[1:]
    system = text_of(obj.get(columns.system)) if columns.system else ""
    if not query and not history:
        return f"no '{columns.prompt}' or '{columns.query}' text"
    turns = [t for q, a in history for t in (q, a)]
    return {
        QUERY: query,
        "instruction": instruction if template else "",
        "system": system,
        "user": joined(*(q for q, _ in history), query),
        "answer": "\n".join(answers),
        "rejected": "\n".join(rejected),
        TEXT: joined(system, *turns, joined(instruction, given), *answers, *rejected),
    }


class AlpacaAdapter(RowAdapter):
    """Alpaca {instruction, input, output} (system, history; chosen/rejected): query = instruction + input."""

    name = "alpaca"
    columns = AlpacaColumns(fallback_response="response")

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        first = first_record(sample)
        return (
            first is not None
            and isinstance(first.get("instruction"), str)
            and any(k in first for k in ("output", "input", "chosen", "response"))
            and "context" not in first  # Dolly
            and "category" not in first
        )

    _templates: frozenset[str] = frozenset()
    _prepared: str | None = None

    def prepare(self, path: Path) -> None:
        if self._prepared != str(path):
            self._templates = template_instructions(self.sample(path, TEMPLATE_SAMPLE), self.columns)
            self._prepared = str(path)

    def convert(self, obj: dict, position: int, source: str) -> Record | Skip:
        views = alpaca_views(obj, self.columns, self._templates)
        if isinstance(views, str):
            return Skip(source, views)
        rid = record_id(obj)
        if rid is None:
            return self.record(position, source, views, raw=obj, positional_id=True)
        return self.record(rid, source, views, raw=obj)

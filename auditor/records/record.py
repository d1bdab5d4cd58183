"""The record model: one evaluation item or one training record, whatever its source format.

A :class:`Record` carries named text *views*. Adapters fill the views they can extract:

``query``        the task as the user stated it (an eval question, the user turn of a trajectory)
``text``         the whole record as text (every turn of a trajectory); defaults to ``query``
``system``       system prompt, ``calls`` canonical tool calls, ``observations`` tool results,
``critique`` / ``reflection``, ``answer`` — later views; any name is allowed.
``fields``       training records only: every other string of the raw object, one per line, in
                 record order (:mod:`auditor.records.fields`; filled by the dataset reader,
                 :class:`~auditor.datasets.units.UnitReader`, for every adapter). Each string's
                 field path is not stored: a finding's ``field`` evidence (e.g. ``input``,
                 ``tools[0].function.description``, ``messages[2].content``) is found by walking
                 ``raw`` again (:func:`auditor.text.locate.locate_field`). ``text``'s fallback
                 leaves it out.

>>> r = Record(dataset="demo", id="7", source="demo.jsonl:8", views={"query": "Book a flight"})
>>> r.view("text")
'Book a flight'
>>> r.key
('demo', 0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .fields import FIELDS

#: Views every adapter may rely on.
QUERY = "query"
TEXT = "text"
__all__ = ["FIELDS", "QUERY", "TEXT", "Record", "Skip", "split_source"]


@dataclass(slots=True)
class Record:
    """One item of a dataset.

    ``id`` is the source's own id as a string (or the 0-based position in its file when it has none);
    ``ordinal`` is the 0-based position within the whole dataset (unique, used as internal key);
    ``source`` is ``path#index`` for items of a JSON document or ``path:line`` for line-based files;
    ``raw`` keeps the parsed source object so a cleaned dataset can be written back.
    """

    dataset: str
    id: str
    source: str
    views: dict[str, str]
    meta: dict[str, Any] = field(default_factory=dict)
    raw: Any = None
    split: str | None = None
    ordinal: int = 0

    @property
    def key(self) -> tuple[str, int]:
        return (self.dataset, self.ordinal)

    def view(self, name: str) -> str:
        """Text of a view; ``text`` falls back to all views but ``fields`` joined, other names to ``''``."""
        value = self.views.get(name)
        if value is not None:
            return value
        if name == TEXT:
            return "\n".join(v for k, v in self.views.items() if v and k != FIELDS)
        return ""

    def has_view(self, name: str) -> bool:
        """``bool(self.view(name))``, without joining the views ``text`` falls back on.

        >>> r = Record("d", "1", "d:1", {"query": "Book a flight", "fields": "x"})
        >>> r.has_view("text"), r.has_view("calls"), Record("d", "2", "d:2", {"fields": "x"}).has_view("text")
        (True, False, False)
        """
        value = self.views.get(name)
        if value is not None:
            return bool(value)
        return name == TEXT and any(v for k, v in self.views.items() if k != FIELDS)

    def whole_text(self) -> str:
        """``text`` and ``fields``: all a training record holds as text (boilerplate is counted in it)."""
        fields = self.views.get(FIELDS)
        return f"{self.view(TEXT)}\n{fields}" if fields else self.view(TEXT)


def split_source(source: str) -> tuple[str, str | None]:
    """``'a.jsonl:12'`` → ``('a.jsonl', 'line 12')``; ``'a.json#3'`` → ``('a.json', 'item 3')``."""
    path, sep, idx = source.rpartition("#")
    if sep and idx.isdigit():
        return path, f"item {idx}"
    path, sep, line = source.rpartition(":")
    if sep and line.isdigit():
        return path, f"line {line}"
    return source, None


@dataclass(slots=True, frozen=True)
class Skip:
    """A record an adapter could not turn into a :class:`Record`: where it was and why.

    ``raw``: the parsed object when the record was well-formed but not of the adapter's schema (no
    text field, no message list …): the training side then reads it whole (the ``fields`` view)
    instead of skipping it; None when there is nothing to read (invalid JSON, a line too long).
    ``key``: the record's key when it is a member of a JSON object (kept as ``meta["json_key"]``)."""

    source: str
    reason: str
    raw: Any = None
    key: str | None = None

"""Findings located one training record after another: inside :func:`located_by_record` (the scan's
search stage), :meth:`auditor.methods.base.Index.finding` queues each finding (:func:`locate_later`)
instead of locating it at once, and they are located when it exits, record by record, so that a long
record is normalized and split into words once for all of its findings; its views are hashed once
for all of them too (:func:`hash_memo`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ..records.fields import with_text_key
from ..records.record import Record
from ..text.locate import locate_span

#: the findings made inside :func:`located_by_record`, each with its record, its proof target and the
#: number of evidence keys it had when made (where ``field`` and ``span`` go)
_LATER: list[list[tuple[Any, Record, str, int]]] = []
#: inside :func:`located_by_record`: the content hash of the views of each record hashed so far, by the
#: record's identity and the views (the record is held, so its identity stands)
_HASHED: list[dict[tuple[int, tuple[str, ...]], tuple[Record, str]]] = []


@contextlib.contextmanager
def located_by_record() -> Iterator[None]:
    """Findings made inside are located (:func:`~auditor.text.locate.locate_span`) when it exits,
    one training record after another: the tiers report a batch's findings tier by tier, and a long
    record is normalized and split into words once for all of its findings (the scan's search stage).
    The evidence is the same as when located at once, its keys in the same order."""
    pending: list[tuple[Any, Record, str, int]] = []
    _LATER.append(pending)
    _HASHED.append({})
    try:
        yield
    finally:
        _LATER.pop()
        _HASHED.pop()
    by_record: dict[int, list[tuple[Any, Record, str, int]]] = {}
    for item in pending:
        by_record.setdefault(id(item[1]), []).append(item)
    for items in by_record.values():
        tr = items[0][1]
        raw = with_text_key(tr.raw, tr.meta.get("json_key"))
        for f, _, target, at in items:
            place(f.evidence, locate_span(raw, target), at)


def place(evidence: dict[str, Any], spot: Any, at: int) -> None:
    """``field`` (unless "": the record is that one string) and ``span`` of ``spot`` into ``evidence``
    after its first ``at`` keys."""
    if spot is None:
        return
    tail = [(k, evidence.pop(k)) for k in list(evidence)[at:]]
    if spot.field:
        evidence["field"] = spot.field
    evidence["span"] = [spot.start, spot.end]
    evidence.update(tail)


def locating() -> bool:
    """Whether findings made now are located later (inside :func:`located_by_record`)."""
    return bool(_LATER)


def locate_later(f: Any, tr: Record, target: str, at: int) -> None:
    """Locate finding ``f`` (``target`` in ``tr``; ``field`` and ``span`` after its first ``at``
    evidence keys) when the innermost :func:`located_by_record` exits."""
    _LATER[-1].append((f, tr, target, at))


def hash_memo() -> dict[tuple[int, tuple[str, ...]], tuple[Record, str]] | None:
    """Inside :func:`located_by_record`: the content hashes of training records' views made so far,
    by the record's identity and the views (the record held, so that its identity stands), for a
    record's findings of every tier to hash its views once; None outside."""
    return _HASHED[-1] if _HASHED else None

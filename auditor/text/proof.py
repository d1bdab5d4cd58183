"""The training text kept beside a finding: the string that matched, windowed around the match.

A finding names where its match sits in the training record (``evidence["field"]``, its path, and
``evidence["span"]``, the character range in that string: :func:`auditor.text.locate.locate_span`).
The report keeps that string as the training side of the finding's "texts side by side"
(``report.json`` → ``texts``): the whole string when it is at most :data:`MAX_CHARS` long (key
``"DATASET#ORDINAL FIELD"``), else a window around the match saying how much was cut on each side
(:func:`windowed`; key ``"DATASET#ORDINAL FIELD@START-END"``, :func:`proof_key`); :func:`proof_keys`
lists where to look. The match itself is never cut. A finding that names no span (a record without a
raw object, an id found in no string) keeps the record's text, as before, under the record's key.

>>> proof_suffix({"field": "messages[1].content", "span": [12, 40]})
' messages[1].content@12-40'
>>> proof_key("train", 3, {"n": 13})
'train#3'
>>> windowed("a" * 10 + " match here " + "b" * 10, 11, 21, limit=12, context=3)
'[… 11 characters cut …] match here [… 11 characters cut …]'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..records.fields import strings

#: the most characters a kept training text has besides its match and the cut notes
MAX_CHARS = 4000
#: characters kept on each side of a match at least, when its string is cut
CONTEXT = 300
#: how a cut is written into a kept text (the renderers show it muted: :data:`CUT_RE`)
CUT = "[… {n:,} characters cut …]"
CUT_RE = re.compile(r"\[… [\d,]+ characters cut …\]")


def _span(evidence: Mapping[str, Any]) -> tuple[int, int] | None:
    span = evidence.get("span")
    if isinstance(span, (list, tuple)) and len(span) == 2 and all(isinstance(x, int) for x in span):
        return int(span[0]), int(span[1])
    return None


def proof_suffix(evidence: Mapping[str, Any]) -> str:
    """What :func:`proof_key` adds to the record's key: ``" FIELD@START-END"``, or ``""`` for a
    finding that names no span."""
    span = _span(evidence)
    if span is None:
        return ""
    return f" {evidence.get('field') or ''}@{span[0]}-{span[1]}"


def proof_key(dataset: str, ordinal: Any, evidence: Mapping[str, Any]) -> str:
    """The ``texts`` key of the training text shown beside a finding when its string was cut to a
    window around the match (see the module doc)."""
    return f"{dataset}#{ordinal}{proof_suffix(evidence)}"


def proof_keys(dataset: str, ordinal: Any, evidence: Mapping[str, Any]) -> list[str]:
    """The ``texts`` keys that may hold the training text shown beside a finding, the first present
    one holding it: the windowed string's (:func:`proof_key`), the whole string's (``" FIELD"``: a
    string of at most :data:`MAX_CHARS`, kept once for all its findings), the record's.

    >>> proof_keys("t", 3, {"field": "input", "span": [0, 9]})
    ['t#3 input@0-9', 't#3 input', 't#3']
    """
    record = f"{dataset}#{ordinal}"
    if _span(evidence) is None:
        return [record]
    return list(dict.fromkeys([proof_key(dataset, ordinal, evidence), record + _field_suffix(evidence), record]))


def _field_suffix(evidence: Mapping[str, Any]) -> str:
    """The key suffix of a whole string: its path (none for a record that is one string)."""
    field = evidence.get("field")
    return f" {field}" if field else ""


def _snap_left(s: str, at: int, limit: int) -> int:
    """``at`` moved right to the next word start within ``limit`` characters (a cut between words)."""
    if at <= 0:
        return 0
    m = re.compile(r"\s").search(s, at, min(len(s), at + limit))
    return m.end() if m else at


def _snap_right(s: str, at: int, limit: int) -> int:
    if at >= len(s):
        return len(s)
    i = s.rfind(" ", max(0, at - limit), at)
    return i if i > 0 else at


def windowed(s: str, start: int, end: int, limit: int = MAX_CHARS, context: int = CONTEXT) -> str:
    """``s`` when it is at most ``limit`` characters, else ``s[start:end]`` (never cut) with up to
    ``limit`` characters around it (at least ``context`` a side when the string has them), each cut
    written as :data:`CUT`."""
    if len(s) <= limit:
        return s
    start, end = max(0, min(start, len(s))), max(0, min(end, len(s)))
    room = max(context, (limit - (end - start)) // 2)
    a, b = max(0, start - room), min(len(s), end + room)
    b = min(len(s), b + room - (start - a))  # room one side does not use goes to the other
    a = max(0, a - (room - (b - end)))
    a, b = min(_snap_left(s, a, 40), start), max(_snap_right(s, b, 40), end)
    head = CUT.format(n=a) + " " if a > 0 else ""
    tail = " " + CUT.format(n=len(s) - b) if b < len(s) else ""
    return f"{head}{s[a:b].strip() if head or tail else s[a:b]}{tail}"


def record_texts(record: Any, evidences: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """The texts a report keeps for ``record`` behind findings with these ``evidences``: key suffix
    (:func:`proof_keys`) → text: each matched string whole (``" FIELD"``) or, when longer than
    :data:`MAX_CHARS`, windowed around each match (``" FIELD@START-END"``). The record's own key
    (``""``) holds its text (``text`` then ``fields``, the first :data:`MAX_CHARS` characters) for a
    finding that names no span, or the record when it is one string.

    >>> from auditor.records.record import Record
    >>> r = Record("t", "1", "t:1", {"text": "hi"}, raw={"sys": "Be brief.", "user": "Book a hotel"})
    >>> record_texts(r, [{"field": "user", "span": [0, 12]}, {"matched_id": "1"}])
    {' user': 'Book a hotel', '': 'hi'}
    """
    out: dict[str, str] = {}
    found: dict[str, str] | None = None
    for ev in evidences:
        suffix = proof_suffix(ev)
        if suffix in out or (_field_suffix(ev) and _field_suffix(ev) in out):
            continue
        span = _span(ev)
        if span is not None:
            if found is None:
                found = dict(strings(record.raw)) if record.raw is not None else {}
            s = found.get(str(ev.get("field") or ""))
            if s is not None:
                if len(s) > MAX_CHARS:
                    out[suffix] = windowed(s, *span)
                else:  # the whole string, once for every finding in it
                    out[_field_suffix(ev)] = s
                continue
        out[""] = record.whole_text()[:MAX_CHARS]
    return out

"""Proof on screen: a finding's eval text beside the training text it matched, shared runs highlighted.

Each finding names where its match sits in the training record (``evidence["field"]`` and
``evidence["span"]``: :mod:`auditor.text.locate`); ``report.json`` → ``texts`` keeps that string,
windowed around the match (:mod:`auditor.text.proof`). This module renders a finding's proof for
every tier and record shape, for report.html (:func:`pair_html`), report.md (:func:`pair_markdown`)
and the review list: the eval text and the training text side by side, the training side captioned
with its record and field path, the word runs both share highlighted (runs of 8 words, fewer for a
short item or a reworded one: :func:`shared_runs`), long texts cut to a window around the
highlighted runs that says what it cut (a run is never cut), and the tier's evidence in words
(:func:`evidence_summary`). Every value is escaped for its format.

>>> f = {"eval_dataset": "e", "eval_ordinal": 0, "train_dataset": "t", "train_ordinal": 4, "method": "exact",
...      "score": 1.0, "evidence": {"field": "messages[1].content", "span": [0, 19], "unit": "whole"}}
>>> texts = {"e#0": "Book a flight <now>", "t#4 messages[1].content": "Book a flight <now> please"}
>>> ev, tr = proof_texts(texts, f)
>>> tr, where(f)
('Book a flight <now> please', 'messages[1].content, characters 0–19')
>>> pair_markdown(texts, f)[-1]
'| **Book a flight &lt;now**&gt; | **Book a flight &lt;now**&gt; please |'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from html import escape
from typing import Any

from ..text.proof import CUT, CUT_RE, proof_keys
from ._md import md
from .results import FindingRow

_WORD = re.compile(r"\w+", re.UNICODE)
#: run lengths tried in turn for the highlighted shared runs (the first that finds any is used)
RUNS = (8, 4, 2)
HTML_CHARS = 3000  # characters of a text shown in report.html (besides its highlighted runs)
MD_CHARS = 600  # ... in report.md
CONTEXT = 200  # characters kept before the first and after the last highlighted run, at least
LEAD = 240  # report.html: characters at most before the first highlighted run (it stays in view)


def proof_texts(texts: Mapping[str, str], f: FindingRow) -> tuple[str | None, str | None]:
    """The eval text and the training text a finding matched (None: not kept). The training text is
    the matched string (:func:`auditor.text.proof.proof_keys`), else, from a report that names no
    span, the record's text."""
    ev = texts.get(f"{f['eval_dataset']}#{f.get('eval_ordinal', '')}")
    evidence = f.get("evidence") or {}
    keys = proof_keys(f["train_dataset"], f.get("train_ordinal", ""), evidence)
    field = evidence.get("field") if isinstance(evidence, dict) else None
    if field:  # a report naming the field but no span: the whole string's key still holds it
        keys.append(f"{f['train_dataset']}#{f.get('train_ordinal', '')} {field}")
    return ev, next((texts[k] for k in keys if k in texts), None)


def where(f: FindingRow) -> str:
    """Where in the training record the match sits, in words: its field path and character range."""
    ev = f.get("evidence") or {}
    span = ev.get("span")
    field = ev.get("field")
    at = ""
    if isinstance(span, list) and len(span) == 2:
        at = f"characters {span[0]}–{span[1]}"
    if field:
        return f"{field}, {at}" if at else str(field)
    if at:
        return f"the record's text, {at}"
    if f.get("method") in ("id", "ids"):
        return "the record's id"
    return ""


def _num(ev: Mapping[str, Any], key: str) -> str:
    v = ev.get(key)
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def _exact(ev: Mapping[str, Any]) -> str:
    unit = ev.get("unit", "whole")
    return f"exact copy (normalized) of the item's {'whole text' if unit == 'whole' else unit}" + (
        f" in the training view {ev['train_view']}" if ev.get("train_view") else ""
    )


def _ngram(ev: Mapping[str, Any]) -> str:
    text = f"{_num(ev, 'matched_ngrams')} of the item's {_num(ev, 'eval_ngrams')} word {_num(ev, 'n')}-grams found"
    if ev.get("whole_text"):
        text += "; the training text is the item, whole"
    return text + ("; in the user turns" if ev.get("user_turns") else "")


def _minhash(ev: Mapping[str, Any]) -> str:
    if ev.get("measure") == "word_set":
        text = f"{_num(ev, 'shared_words')} of the item's {_num(ev, 'eval_words')} distinct words shared"
    else:
        text = (
            f"{_num(ev, 'shared_shingles')} of the item's {_num(ev, 'eval_shingles')} {_num(ev, 'shingle')} shingles "
            f"shared (training text: {_num(ev, 'train_shingles')})"
        )
    return text + (f"; length ratio {_num(ev, 'char_ratio')}" if "char_ratio" in ev else "")


def _embedding(ev: Mapping[str, Any]) -> str:
    parts = [
        f"{k.replace('_', ' ')} {_num(ev, k)}" for k in ("cosine", "align_f1", "align_recall", "margin") if k in ev
    ]
    if ev.get("conflict"):
        parts.append("numbers or names conflict")
    if ev.get("train_segment"):
        parts.append(f"training segment {ev['train_segment']}")
    return "paraphrase evidence: " + ", ".join(parts)


def _calls(ev: Mapping[str, Any]) -> str:
    calls = ev.get("matched_calls") or []
    shown = "; ".join(str(c) for c in calls[:5]) + (" …" if len(calls) > 5 else "")
    return (
        f"tool calls ({ev.get('kind', '')}): {len(calls)} of the item's {_num(ev, 'eval_calls')} calls in the "
        f"record's {_num(ev, 'train_calls')}: {shown}"
    )


def _ids(ev: Mapping[str, Any]) -> str:
    return f"the training record carries the item's id {ev.get('matched_id', '')}" + (
        f" (group {ev['group']})" if ev.get("group") else ""
    )


def _entities(ev: Mapping[str, Any]) -> str:
    ids = ev.get("identifiers") or []
    shown = ", ".join(
        f"{i.get('id', '')} ({i.get('kind', '')})" if isinstance(i, dict) else str(i) for i in ids[:10]
    ) + (" …" if len(ids) > 10 else "")
    return f"{_num(ev, 'matched_ids')} of the item's {_num(ev, 'eval_ids')} identifiers found: {shown}"


#: method → its evidence in words (a method not named here: its evidence as key=value)
SUMMARIES: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "exact": _exact,
    "ngram": _ngram,
    "minhash": _minhash,
    "embedding": _embedding,
    "calls": _calls,
    "id": _ids,
    "entities": _entities,
}


def evidence_summary(f: FindingRow) -> str:
    """The finding's evidence: the tier's in words, then every value as ``key=value``."""
    ev = f.get("evidence") or {}
    if not isinstance(ev, dict):
        return str(ev)
    raw = ", ".join(f"{k}={v}" for k, v in ev.items())
    summary = SUMMARIES.get(str(f.get("method")))
    if summary is None:
        return raw
    try:
        words = summary(ev)
    except (TypeError, ValueError, AttributeError, KeyError):  # a hand-edited evidence: its values as they are
        return raw
    tier = " (suspected: below the conclusive bar)" if ev.get("tier") == "suspected" else ""
    return f"{words}{tier}. {raw}" if raw else words


def _tokens(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group().casefold()) for m in _WORD.finditer(text)]


def _runs(toks: list[tuple[int, int, str]], hit: list[bool]) -> list[tuple[int, int]]:
    out, i = [], 0
    while i < len(toks):
        if not hit[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(toks) and hit[j + 1]:
            j += 1
        out.append((toks[i][0], toks[j][1]))
        i = j + 1
    return out


def shared_runs(a: str, b: str, k: int = RUNS[0], fallback: bool = True) -> tuple[list, list]:
    """The character ranges of the word runs ``a`` and ``b`` share: runs of ``k`` words (at most the
    length of ``a``); with ``fallback``, shorter runs (:data:`RUNS`) when none of ``k`` is shared.

    ``a`` is the short side (the eval item): its runs are a set, and ``b`` (a training text, long at
    times) is read once, a run looked up only where its first word is one that starts a run of ``a``.

    >>> shared_runs("Find hotels in Paris", "I said: find hotels in Paris, now")
    ([(0, 20)], [(8, 28)])
    """
    ta, tb = _tokens(a), _tokens(b)
    wa, wb = [t[2] for t in ta], [t[2] for t in tb]
    for size in [k, *(r for r in RUNS if r < k)] if fallback else [k]:
        n = max(1, min(size, len(ta)))
        runs_a = {tuple(wa[i : i + n]) for i in range(len(wa) - n + 1)}
        firsts = {r[0] for r in runs_a}
        at_b = [i for i in range(len(wb) - n + 1) if wb[i] in firsts and tuple(wb[i : i + n]) in runs_a]
        if at_b or not fallback:
            shared = {tuple(wb[i : i + n]) for i in at_b}
            at_a = [i for i in range(len(wa) - n + 1) if tuple(wa[i : i + n]) in shared]
            return _runs(ta, _marked(len(wa), at_a, n)), _runs(tb, _marked(len(wb), at_b, n))
    return [], []


def _marked(count: int, starts: list[int], n: int) -> list[bool]:
    """Which of ``count`` words lie in a run of ``n`` words starting at one of ``starts``."""
    hit = [False] * count
    for i in starts:
        hit[i : i + n] = [True] * n
    return hit


def _window(text: str, runs: list[tuple[int, int]], limit: int, lead: int | None = None) -> tuple[int, int]:
    """The range of ``text`` shown: all of it when short, else around the runs (never cutting one).
    With ``lead`` (report.html, whose texts sit in scroll boxes), the first run starts at most ``lead``
    characters in, short text or not, so the highlighted part is in view without scrolling; the rest
    of the room goes after it."""
    if lead is not None and runs and (runs[0][0] > lead or len(text) > limit):
        a = max(0, runs[0][0] - lead)
        return a, min(len(text), max(a + limit, runs[-1][1]))
    if len(text) <= limit:
        return 0, len(text)
    if not runs:
        return 0, limit
    lo, hi = runs[0][0], runs[-1][1]
    room = max(CONTEXT, (limit - (hi - lo)) // 2)
    a, b = max(0, lo - room), min(len(text), hi + room)
    b = min(len(text), b + room - (lo - a))
    a = max(0, a - (room - (b - hi)))
    return a, b


def _render(
    text: str, runs: list[tuple[int, int]], limit: int, esc: Callable[[str], str], mark: str, lead: int | None = None
) -> str:
    """``text`` in its window (:func:`_window`), escaped by ``esc``, each run wrapped as ``mark`` says
    (``"html"``: ``<mark>``; ``"md"``: bold), each cut written as :data:`auditor.text.proof.CUT`."""
    a, b = _window(text, runs, limit, lead)
    out, pos = [], a
    for s, e in runs:
        if e <= a or s >= b:
            continue
        out.append(esc(text[pos:s]))
        inner = esc(text[s:e])
        out.append(f"<mark>{inner}</mark>" if mark == "html" else f"**{inner}**")
        pos = e
    out.append(esc(text[pos:b]))
    body = "".join(out)
    head = esc(CUT.format(n=a)) + " " if a > 0 else ""
    tail = " " + esc(CUT.format(n=len(text) - b)) if b < len(text) else ""
    body = head + body + tail
    if mark == "html":
        body = CUT_RE.sub(lambda m: f"<span class='cut'>{m.group()}</span>", body)
    return body


def highlight_html(eval_text: str, train_text: str, limit: int = HTML_CHARS) -> tuple[str, str]:
    """Both texts as HTML, the shared word runs in ``<mark>``, each cut to a window that starts at most
    :data:`LEAD` characters before its first run (in view in a scroll box, no script needed)."""
    ra, rb = shared_runs(eval_text, train_text)
    return (
        _render(eval_text, ra, limit, escape, "html", LEAD),
        _render(train_text, rb, limit, escape, "html", LEAD),
    )


def _missing_html() -> str:
    return "<span class='muted'>(text not kept)</span>"


def pair_html(texts: Mapping[str, str], f: FindingRow, limit: int = HTML_CHARS) -> str:
    """The finding's two texts side by side (``<div class='pair'>``), the training side captioned
    with where the match sits (:func:`where`)."""
    ev, tr = proof_texts(texts, f)
    if ev is not None and tr is not None:
        ev_html, tr_html = highlight_html(ev, tr, limit)
    else:
        ev_html = _render(ev, [], limit, escape, "html") if ev else _missing_html()
        tr_html = _render(tr, [], limit, escape, "html") if tr else _missing_html()
    spot = where(f)
    caption = f"<div class='where'>training: <code>{escape(spot)}</code></div>" if spot else ""
    return (
        f"<div class='pair'><div><div class='where'>eval item</div>{ev_html}</div><div>{caption}{tr_html}</div></div>"
    )


def _flat(text: str) -> str:
    return " ".join(text.split())


def pair_markdown(texts: Mapping[str, str], f: FindingRow, limit: int = MD_CHARS) -> list[str]:
    """The finding's two texts as a two-column Markdown table (header, rule, row), whitespace
    collapsed, shared runs in bold, every value escaped (:func:`auditor.report._md.md`)."""
    ev, tr = proof_texts(texts, f)
    ev_flat, tr_flat = _flat(ev) if ev is not None else None, _flat(tr) if tr is not None else None
    if ev_flat is not None and tr_flat is not None:
        ra, rb = shared_runs(ev_flat, tr_flat)
    else:
        ra = rb = []
    cells = [
        _render(t, r, limit, md, "md") if t is not None else "(text not kept)"
        for t, r in ((ev_flat, ra), (tr_flat, rb))
    ]
    spot = where(f)
    head = f"training record ({md(spot)})" if spot else "training record"
    return [f"| eval item | {head} |", "|---|---|", f"| {cells[0]} | {cells[1]} |"]


def snippet_html(texts: Mapping[str, str], f: FindingRow, limit: int) -> tuple[str, str]:
    """Both texts of ``f`` as short highlighted HTML (a review-list cell each)."""
    ev, tr = proof_texts(texts, f)
    if ev is None or tr is None:
        return (
            _render(_flat(ev), [], limit, escape, "html") if ev else _missing_html(),
            _render(_flat(tr), [], limit, escape, "html") if tr else _missing_html(),
        )
    return highlight_html(_flat(ev), _flat(tr), limit)


def snippet_markdown(texts: Mapping[str, str], f: FindingRow, limit: int) -> tuple[str, str]:
    """Both texts of ``f`` as short escaped Markdown with the shared runs in bold."""
    ev, tr = proof_texts(texts, f)
    if ev is None or tr is None:
        return tuple(_render(_flat(t), [], limit, md, "md") if t else "(text not kept)" for t in (ev, tr))  # type: ignore[return-value]
    ev_flat, tr_flat = _flat(ev), _flat(tr)
    ra, rb = shared_runs(ev_flat, tr_flat)
    return _render(ev_flat, ra, limit, md, "md"), _render(tr_flat, rb, limit, md, "md")

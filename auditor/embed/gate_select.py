"""What the encoder reads of a batch's training units once the lexical gate (:mod:`auditor.embed.gate`)
has decided their texts: whole units (:func:`keep_units`, ``gate_by = "unit"``, the default) or, under
the dice rule, the segments that pass (:func:`keep_segments`, ``gate_by = "segment"``). Both count
their decisions on the gate (``units_*``, ``segments_*``).

A unit is ``(view text, its segment texts, is a window)``; ``code`` says which units are code.
"""

from __future__ import annotations

from collections.abc import Sequence

from .gate import LexicalGate

#: what the gate decides (``EmbeddingConfig.gate_by``): a unit as one (``unit``: all its segments
#: are encoded when one passes) or, under the dice rule, each segment (``segment``: only the segments
#: that pass are encoded; a code unit's whole text and code prose are scored together, so they stay
#: one decision)
GATE_BY = ("unit", "segment")


def _segment_passes(
    gate: LexicalGate, units: Sequence[tuple[str, Sequence[str], bool]], max_words: int, code: Sequence[bool] | None
) -> list[bool]:
    """The dice rule's decision of every segment of ``units`` (flattened in order), each on its own
    text as far as the model reads it (a long one's first ``max_words`` words, and with the gate's
    ``reach``, only its first word pieces: :mod:`auditor.embed.reach`); a unit's first
    segment, its whole text (a window unit has none), passes too when it is too short to judge
    (:meth:`LexicalGate.too_short`)."""
    flat = [" ".join(t.split()[:max_words]) for _, texts, _ in units for t in texts]
    if gate.reach is not None:  # as far as the model reads it: its first word pieces
        flat = gate.reach.cut(flat)
    flags = [bool(c) for c, (_, texts, _) in zip(code or [False] * len(units), units) for _ in texts]
    whole = [k == 0 and not window for _, texts, window in units for k in range(len(texts))]
    return gate.passes(flat, code=flags, whole=whole).tolist()


def keep_segments(
    gate: LexicalGate,
    units: Sequence[tuple[str, Sequence[str], bool]],
    max_words: int = 160,
    code: Sequence[bool] | None = None,
) -> list[list[bool]]:
    """Which segments of each unit the encoder reads (``gate_by = "segment"``), counted: under the dice
    rule, the segments that pass — except a code unit's (``code``), which are read all together when
    one passes (its whole text and code prose are scored as a pair); under another rule, all of a
    passed unit's (:func:`keep_units`). ``units`` as for :func:`keep_units`.

    >>> g = LexicalGate(rule="dice").fit(["Book a room at the Sheraton Hotel in New York for 2 adults"])
    >>> keep_segments(g, [("...", ["release notes: the build now checks flags", "Reserve a Sheraton room in New York"], False)])
    [[False, True]]
    >>> g.take_counts()["segments_passed"]
    1
    """
    if not units:
        return []
    if gate.rule != "dice":
        return [[k] * len(texts) for k, (_, texts, _) in zip(keep_units(gate, units, max_words, code), units)]
    ok = _segment_passes(gate, units, max_words, code)
    out, at = [], 0
    for c, (_, texts, _) in zip(code or [False] * len(units), units):
        mine = ok[at : at + len(texts)]
        at += len(texts)
        out.append([any(mine)] * len(mine) if c else mine)
    segs = sum(len(t) for _, t, _ in units)
    gate.count(len(units), sum(any(k) for k in out), segs, sum(sum(k) for k in out))
    return out


def keep_units(
    gate: LexicalGate,
    units: Sequence[tuple[str, Sequence[str], bool]],
    max_words: int = 160,
    code: Sequence[bool] | None = None,
) -> list[bool]:
    """Which units pass ``gate``, counted: each unit is ``(view text, its segment texts, is a window)``.

    The dice rule decides each segment on its own text, its first ``max_words`` words (what the
    model reads of a long one); a unit passes when one of its segments does. ``code``: which units
    are code (hold a ``doc`` segment: the decision's code thresholds apply to them), held to
    ``dice_code``.

    A unit of a view's whole / last / doc segments is decided on the view text itself, tokenized in
    the batch the exact and n-gram tiers built for it (:func:`auditor.text.batch.token_batch`); a
    window only when its view passes (a window's tokens are among its view's), on its own text.

    >>> g = LexicalGate(min_shared=2, terms=6).fit(["Book a room at the Sheraton Hotel in New York"])
    >>> keep_units(g, [("a Sheraton room, New York", ["a Sheraton room, New York"], False),
    ...                ("apple pie", ["apple pie"], False)])
    [True, False]
    >>> g.take_counts()["units_stopped"]
    1
    """
    if not units:
        return []
    if gate.rule == "dice":  # each segment on its own text, as far as the model reads it (a long one's start)
        ok = _segment_passes(gate, units, max_words, code)
        keep, at = [], 0
        for _, texts, _ in units:
            keep.append(any(ok[at : at + len(texts)]))
            at += len(texts)
        segs = [len(t) for _, t, _ in units]
        gate.count(len(units), sum(keep), sum(segs), sum(n for n, k in zip(segs, keep) if k))
        return keep
    views = list({id(v): v for v, _, _ in units}.values())
    view_ok = dict(zip(map(id, views), gate.passes(views, shared=True).tolist()))
    keep = [view_ok[id(v)] for v, _, _ in units]
    ask = [i for i, (v, _, window) in enumerate(units) if window and keep[i]]
    if ask:
        for i, ok in zip(ask, gate.passes([units[i][1][0] for i in ask]).tolist()):
            keep[i] = ok
    segs = [len(t) for _, t, _ in units]
    gate.count(len(units), sum(keep), sum(segs), sum(n for n, k in zip(segs, keep) if k))
    return keep

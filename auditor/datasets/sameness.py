"""An eval set whose items read as one text is an error, not a pass.

When a reader takes the wrong field — the generic reader reading the ``instruction`` that every item of an
Alpaca-shaped eval set shares, a system prompt, a template — most items read as the same text, the audit
compares that one text with the training set, and a PASS would say nothing about the items themselves.
:func:`require_distinct_items` refuses such an eval set before anything is indexed: one line naming the
dataset, the shared text and the fix (a format that reads the file, or the field whose values differ).

The rule (:data:`MIN_ITEMS`, :data:`MAX_SHARE`): among at least 10 items of one eval dataset, more than half
with one normalized ``query``. Real eval sets repeat an item now and then, never as most of the set
(``benchmarks/eval_sameness.py`` measures it): every bundled eval set, whole and split by split, at most
18.8% (BFCL ``live_parallel``, 3 of 16 alike); every data file in ``../shared/data`` read as an eval set
with its detected format (≥ 10 items), at most 40.9% (a StepTool RFT training sample, 9 of 22). A set read
by a field its items share is at or near 100%: API-Bank's ``level-3-batch-inf-icl.json`` under the generic
reader, 245 of 245 (its one instruction); read as ``alpaca`` (instruction + input), no two alike. Below 10
items one repeat is already a large share, and a tiny set is audited as it is.

>>> from auditor.records.record import Record
>>> same = [Record("ev", str(i), f"ev.json#{i}", {"query": "Classify the sentiment."}, raw={
...     "instruction": "Classify the sentiment.", "input": f"review {i}", "output": "positive"}) for i in range(12)]
>>> try:
...     require_distinct_items(same)
... except InputError as e:
...     print(e.problem.split("; ")[1])
pass --eval-format alpaca, or --eval-text-field input (fields whose values differ) (`auditor formats` lists the formats)
>>> require_distinct_items(same[:9])  # fewer than MIN_ITEMS: audited as it is

Errors: :class:`~auditor.errors.InputError` (named by the first shared item's file).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..adapters import in_sniff_order, is_generic, registry
from ..errors import InputError
from ..records.record import QUERY, Record, split_source
from ..text.batch import token_batch

#: the fewest items an eval dataset must have for the rule to apply
MIN_ITEMS = 10
#: the largest share of an eval dataset's items that may read as one text
MAX_SHARE = 0.5
_SHOWN = 80


def most_shared(records: Iterable[Record]) -> tuple[str, int, int, list[Record]]:
    """``(normalized text, its count, items, the items holding it)`` of the commonest normalized query."""
    recs = list(records)
    batch, at = token_batch([r.view(QUERY) for r in recs])  # normalized at once, for the indexes too
    keys = [batch.normalized(i) for i in at]
    if not keys:
        return "", 0, 0, []
    text, count = Counter(keys).most_common(1)[0]
    return text.decode("utf-8"), count, len(recs), [r for k, r in zip(keys, recs) if k == text]


def require_distinct_items(records: Iterable[Record]) -> None:
    """Raise :class:`InputError` when, in some eval dataset of ``records``, more than :data:`MAX_SHARE`
    of at least :data:`MIN_ITEMS` items have one normalized ``query`` (see the module doc)."""
    by_dataset: dict[str, list[Record]] = {}
    for r in records:
        by_dataset.setdefault(r.dataset, []).append(r)
    for name, recs in by_dataset.items():
        text, count, total, holders = most_shared(recs)
        if total < MIN_ITEMS or count <= MAX_SHARE * total:
            continue
        shown = holders[0].view(QUERY).strip()
        shown = " ".join(shown.split())
        shown = shown if len(shown) <= _SHOWN else shown[: _SHOWN - 1] + "…"
        path, _ = split_source(holders[0].source)
        raise InputError(
            path,
            None,
            f"eval set '{name}': {count} of its {total} items read as the same text, {shown!r} "
            f"(more than {MAX_SHARE:.0%}): the audit would check that one text, not the items; " + _fix(holders),
        )


def _fix(holders: list[Record]) -> str:
    """What to pass instead: formats that recognize the items, else the fields whose values differ."""
    raws = [r.raw for r in holders[:200] if isinstance(r.raw, dict)]
    hints = [f"--eval-format {f}" for f in (_formats_for(raws[0]) if raws else [])]
    varying = _varying_fields(raws)
    if varying:
        hints.append("--eval-text-field " + " / ".join(varying) + " (fields whose values differ)")
    if not hints:
        return "say which field holds the item with --eval-text-field FIELD (`auditor inspect FILE` shows the views)"
    return "pass " + ", or ".join(hints) + " (`auditor formats` lists the formats)"


def _formats_for(raw: dict) -> list[str]:
    """Named (non-generic) formats whose detection accepts ``raw`` as a first record."""
    out = []
    for adapter in in_sniff_order(registry().values()):
        if is_generic(adapter) or not adapter.layouts:
            continue
        try:
            if adapter.sniff(Path("eval.json"), [raw]):
                out.append(adapter.name)
        except (TypeError, ValueError, KeyError, AttributeError):
            continue
    return out[:2]


def _varying_fields(raws: list[dict[str, Any]]) -> list[str]:
    """Top-level string fields whose values differ across the items, most distinct first (at most 2)."""
    values: dict[str, set[str]] = {}
    for raw in raws:
        for k, v in raw.items():
            if isinstance(v, str) and v.strip():
                values.setdefault(str(k), set()).add(v)
    ranked = sorted((k for k, v in values.items() if len(v) > 1), key=lambda k: -len(values[k]))
    return ranked[:2]

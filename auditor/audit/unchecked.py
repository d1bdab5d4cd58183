"""Eval items a check could not check because they were skipped as bad input, named for the report.

With ``on_error = "skip"`` on an eval set, a bad record (invalid JSON, no instruction, too long …)
is counted and not read: an eval item nothing searched for. A check reading it is never ``pass``
(``incomplete`` unless it fails); :func:`skipped_eval` lists every such item for
``checks[].skipped_eval_items`` and :func:`skipped_eval_note` names the first ones in the check's notes.

>>> import tempfile, os
>>> from auditor.datasets.dataset import Dataset, DatasetSpec
>>> p = os.path.join(tempfile.mkdtemp(), "ev.jsonl")
>>> _ = open(p, "w").write('{"text": "fine"}\\n{"text": oops\\n')
>>> ds = {"ev": Dataset(DatasetSpec("ev", [p], role="eval", on_error="skip"))}
>>> _ = list(ds["ev"].records())
>>> items = skipped_eval(["ev"], ds)
>>> items[0]["source"].endswith("ev.jsonl:2"), items[0]["reason"].startswith("invalid JSON")
(True, True)
>>> skipped_eval_note(["ev"], ds, items, 1).startswith("1 eval items were skipped as bad input and are unchecked: ")
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..datasets.dataset import Dataset

#: skipped eval items a check's note names (report.json lists them all: ``skipped_eval_items``)
SKIPS_SHOWN = 10


def skipped_eval(eval_names: Sequence[str], datasets: Mapping[str, Dataset]) -> list[dict[str, str]]:
    """The eval records of ``eval_names`` skipped as bad input, each ``{dataset, source, reason}``
    (``source``: ``file:line`` or ``file#index``), in reading order."""
    return [
        {"dataset": name, "source": source, "reason": reason}
        for name in eval_names
        for source, reason in datasets[name].stats.skipped_items
    ]


def skipped_eval_note(
    eval_names: Sequence[str], datasets: Mapping[str, Dataset], items: list[dict[str, str]], total: int
) -> str:
    """A note naming the unchecked eval items: the first skipped records (file:line: reason) and the
    eval files not read at all."""
    shown = "; ".join(f"{i['source']}: {i['reason']}" for i in items[:SKIPS_SHOWN])
    more = f" … ({total - SKIPS_SHOWN} more in report.json, checks[].skipped_eval_items)" if total > SKIPS_SHOWN else ""
    files = [f"{f['file']}: {f['reason']}" for n in eval_names for f in datasets[n].stats.skipped_files]
    text = f"{total} eval items were skipped as bad input and are unchecked" + (f": {shown}{more}" if shown else "")
    if files:
        text += f"; eval files not read (their items unchecked): {'; '.join(files)}"
    return text

"""What a check could not check, named for the report: eval items skipped as bad input, and the
detection methods that checked nothing.

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

**Methods that checked nothing.** :func:`not_checked` names, per check, every registered detection
method that did not run (not selected, run only when named — the paraphrase tier ``embedding`` —,
not installed) and every method that ran but indexed none of the eval items or read none of the
records of a training set (:meth:`~auditor.methods.base.Index.reads`, counted during the scan by
:class:`SearchedStage`), each with its reason (``checks[].not_checked``; the report says "not
checked: …"). A method the check *asked for* that checked nothing makes it ``incomplete`` at best
(:attr:`~auditor.report.results.NotChecked.incomplete`): every method a check names (``--method``,
``methods = [...]``), and of the defaults a text tier (:data:`TEXT_VIEWS`: a conclusive method that
reads a record's text, ``exact``, ``ngram``, ``minhash``) that read none of a training set's records.
The rest is named and decides nothing: a default tier that indexed no eval item (``minhash`` on items
too short to shingle: the items are the other tiers', and one no conclusive tier covers is unchecked
already, ``uncovered_items``), the defaults' methods for one kind of data — ``calls`` (tool calls),
``id`` and ``entities`` (evidence only, never counted) —, since data without tool calls has no calls
to miss, and a method not selected.

>>> from auditor.methods import create
>>> exact = create("exact").build(list(ds["ev"].records()))  # "fine": too short to index
>>> [(n.where(), n.status, n.incomplete) for n in not_checked(["exact"], [exact], {}, {})][:3]
[('exact', 'nothing_indexed', True), ('calls', 'not_run', False), ('embedding', 'not_run', False)]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .. import methods
from ..datasets.dataset import Dataset
from ..records.record import FIELDS, QUERY, TEXT
from ..report.results import NOT_RUN, NOTHING_INDEXED, NOTHING_SEARCHED, NotChecked
from ..scan.stage import Batch, Stage

if TYPE_CHECKING:
    from ..datasets.account import Shift
    from ..methods.base import Index

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


#: the views of a record's text: a default method reading one of them (and conclusive) is a text tier,
#: whose checking nothing makes a check incomplete (see the module doc)
TEXT_VIEWS = frozenset({QUERY, TEXT, FIELDS})


class SearchedStage(Stage[Counter]):
    """The scan stage counting, per method of one check, the training records it reads
    (:meth:`~auditor.methods.base.Index.reads`) into the caller's ``sink`` (method → records).
    It holds the check's indexes, shipped in the same job as its search stage (one copy)."""

    def __init__(self, sink: Counter | None, indexes: Sequence[Index]):
        self.sink = sink
        self.indexes = list(indexes)
        self.counts: Counter = Counter()

    def __getstate__(self) -> dict:
        return {**self.__dict__, "sink": None}  # the run's counts stay with the caller

    def run(self, batch: Batch) -> None:
        for ix in self.indexes:
            self.counts[ix.name] += sum(1 for r in batch.records if ix.reads(r))

    def take_counts(self) -> Counter:
        counts, self.counts = self.counts, Counter()
        return counts

    def add_counts(self, counts: Counter, shift: Shift) -> None:
        if self.sink is not None:
            self.sink.update(counts)


def _extras(cls: type[Index]) -> str:
    """``pip install 'auditor[embed]'`` for a method needing an extra (and whether it is missing)."""
    extras = sorted(set(cls.requires.values()))
    if not extras:
        return ""
    state = " (not installed)" if cls.missing_requirements() else ""
    return "; needs " + ", ".join(f"pip install 'auditor[{e}]'" for e in extras) + state


def _not_run(name: str, named: Sequence[str] | None) -> str:
    """Why registered method ``name`` did not run in a check naming ``named`` (None: the defaults); a
    built-in method a check runs by default is not imported to say that a check naming others left it out."""
    left_out = None if named is None else f"not selected (the check's methods: {', '.join(named)})"
    builtin_default = name in methods.BUILTIN and name not in methods.NAMED_ONLY
    if left_out is not None and builtin_default and not methods.METHODS.loaded(name):
        return left_out
    cls = methods.get(name)
    if not cls.in_default:  # e.g. the paraphrase tier: never a default
        label = cls.summary.removeprefix("[run when named] ").split(":")[0].strip() or name
        return f"not selected: the {label} runs only when named (--method {name}){_extras(cls)}"
    return left_out or f"not installed{_extras(cls)}"


def _asked(ix: Index, named: Sequence[str] | None, status: str) -> bool:
    """Does checking nothing with ``ix`` (``status``) make the check incomplete (see the module doc)?"""
    if named is not None:
        return True
    text_tier = ix.conclusive and bool(TEXT_VIEWS & set(ix.searched_views()))
    return text_tier and status == NOTHING_SEARCHED


def not_checked(
    named: Sequence[str] | None,
    indexes: Sequence[Index],
    searched: Mapping[str, Counter],
    train_records: Mapping[str, int],
    method_stats: Sequence[Mapping] | None = None,
) -> list[NotChecked]:
    """Every registered method that checked nothing of a check (see the module doc): the methods
    ``indexes`` ran, then the others by name. ``named``: the check's own methods (None: the defaults);
    ``searched``: training set → method → records read (:class:`SearchedStage`); ``train_records``:
    the records of each training set (one of none has nothing for a method to miss); ``method_stats``:
    the indexes' :meth:`~auditor.methods.base.Index.stats` when taken already."""
    out: list[NotChecked] = []
    for ix, stats in zip(indexes, method_stats or [ix.stats() for ix in indexes]):
        total, missing = stats["eval_items"], stats["eval_not_indexed"]
        if total and missing >= total:
            reasons = "; ".join(f"{r}: {n:,}" for r, n in stats["not_indexed_reasons"].items())
            why = f"indexed none of the {total:,} eval items" + (f" ({reasons})" if reasons else "")
            out.append(NotChecked(ix.name, NOTHING_INDEXED, why, incomplete=_asked(ix, named, NOTHING_INDEXED)))
            continue
        for name, n in train_records.items():
            if n and not searched.get(name, Counter())[ix.name]:
                why = f"read none of its {n:,} records: {ix.unread()}"
                gap = NotChecked(
                    ix.name, NOTHING_SEARCHED, why, dataset=name, incomplete=_asked(ix, named, NOTHING_SEARCHED)
                )
                out.append(gap)
    ran = {ix.name for ix in indexes}
    out += [NotChecked(m, NOT_RUN, _not_run(m, named)) for m in methods.names() if m not in ran]
    return out

"""A detector for data pipelines: built once from eval sets, then asked about any record or stream.

:class:`Detector` holds the same eval indexes an audit builds (:mod:`auditor.methods`) and searches
whatever a pipeline hands it, one record or a batch at a time: strings, JSON-like dicts (the rows of
Hugging Face ``datasets``, datatrove documents' metadata, Ray Data batches) or
:class:`~auditor.records.record.Record` objects. A training record is read as ``auditor audit`` reads
one of a JSON Lines file: the same adapter choice by its fields (or ``format=``), the same ``fields``
view (:func:`auditor.datasets.units.read_whole`), so a record gives the findings it gives in a run.

>>> d = Detector(["Book a table for two at an Italian place tonight near the station"], methods=["exact"])
>>> d.contains("book a table for two at an italian place tonight near the station")
True
>>> [f.method for f in d.search(["Something else entirely", {"text": "Book a table for two at an "
...  "Italian place tonight near the station"}])]
['exact']
>>> list(d.filter(["keep me, I am harmless", "Book a table for two at an Italian place tonight near the station"]))
['keep me, I am harmless']

**Boilerplate.** ``auditor audit`` masks training-set boilerplate (lines and n-grams found in a large
share of the training records, :mod:`auditor.masking.boilerplate`) for the methods with
``mask_boilerplate`` on (``ngram`` and ``embedding`` by default). Masking never hides eval text, so
``exact`` and ``ngram`` find the same with or without it; it changes the scores of a tier that compares
whole records (``embedding``, ``minhash`` with ``mask_boilerplate = true``), where a shared system
prompt dilutes the similarity. A detector sees one record at a time and cannot tell boilerplate from
content, so it masks nothing unless given the training data (``boilerplate_from=``: paths), in which
it detects boilerplate from the same sample the audit reads and masks it the same way.

**Saving and shipping.** :meth:`Detector.save` writes a folder (``detector.json``, the eval items as
``eval.jsonl``, each method's index in the checksummed, no-pickle index format of
:mod:`auditor.store.indexes`); :meth:`Detector.load` verifies and memory-maps it. A loaded detector
pickles as its folder's path (for the worker processes of the caller's own pipeline: pickle is never
the file format), so each worker maps the same index files instead of receiving a copy.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import methods as _methods
from ..adapters import AdapterOptions, get_adapter, in_sniff_order
from ..adapters import registry as adapter_registry
from ..adapters._fields import extract
from ..adapters._rows import RowAdapter
from ..adapters.base import Adapter
from ..audit.indexes import build_index
from ..datasets.dataset import Dataset, DatasetSpec
from ..datasets.sameness import require_distinct_items
from ..datasets.units import read_whole
from ..errors import ConfigError, IndexFileError
from ..masking import masker
from ..methods.base import Finding, Index, Searcher
from ..records.record import Record, Skip
from ._folder import load_folder, save_folder

__all__ = ["Detector"]

#: searched once when a detector is made, so the kernels the methods build on first use (ngram's) exist before
#: threads share it; what stays lazy (minhash's window classes) any thread computes to the same value
_WARM_UP = " ".join(f"warm up the search kernels of every method with word{i} and its neighbours" for i in range(40))

#: what a detector is given as eval items: a bundled name or path, a spec, or the items themselves
EvalSource = str | DatasetSpec | Sequence[Any]


class Detector:
    """Eval indexes built once; :meth:`search`, :meth:`contains`, :meth:`filter` any training text.

    ``evals``: a bundled name or a path (``"stabletoolbench"``, ``"data/test.jsonl"``), a
    :class:`DatasetSpec`, a list of eval items (strings or dicts, read as a JSON Lines file of them
    would be), or a mapping of eval dataset name to any of these. ``methods``: the methods to run
    (default: those ``auditor audit`` runs by default); ``method_params``: method → parameters, as a
    manifest's ``[methods.NAME]`` tables. ``format``: the training records' format (an adapter name,
    e.g. ``"alpaca"``; default: chosen from each dict's fields as the audit chooses it from a file's
    first record). ``boilerplate_from``: training files to detect boilerplate in (see the module).
    ``index_dir``: build or reuse the indexes there as ``auditor audit --index-dir`` does (the same
    folders: an index a run persisted is reused when the eval data and parameters match, and checked).
    ``name``: the ``check`` and training dataset name findings carry.
    """

    def __init__(
        self,
        evals: EvalSource | Mapping[str, EvalSource],
        methods: Sequence[str] | None = None,
        method_params: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        format: str | None = None,
        boilerplate_from: str | Sequence[str] | None = None,
        index_dir: str | None = None,
        name: str = "detector",
    ):
        self.name = name
        self.format = format
        self.method_names = list(methods) if methods is not None else _methods.default_methods()
        if not self.method_names:
            raise ConfigError("a detector needs at least one method")
        self.method_params = {m: dict(p) for m, p in (method_params or {}).items()}
        for m in [*self.method_names, *self.method_params]:
            _methods.get(m)
        self.eval_records = _eval_records(evals)
        require_distinct_items(self.eval_records)
        self.indexes: list[Index] = [
            build_index(m, self.method_params.get(m), self.eval_records, index_dir) for m in self.method_names
        ]
        self.boilerplate_from = [boilerplate_from] if isinstance(boilerplate_from, str) else boilerplate_from
        self._folder: str | None = None
        self._checksum: str | None = None
        self._setup()

    # -- state shared by the constructors -------------------------------------------------------
    def _setup(self) -> None:
        self._adapters: dict[tuple[str, ...], Adapter] = {}
        self._searchers: list[Searcher] = list(self.indexes)
        self._masker = None
        if self.boilerplate_from:
            train = Dataset(DatasetSpec(self.name, list(self.boilerplate_from), role="train", format=self.format))
            self._masker = masker.prepare(self.indexes, [train], self.eval_records)
            self._searchers = list(self._masker.indexes)
        self.search([_WARM_UP])  # builds what the methods build lazily (kernels) before threads share them

    # -- searching ------------------------------------------------------------------------------
    def records(self, items: Iterable[Any], start: int = 0) -> Iterator[Record]:
        """``items`` as the training records a search reads (positions from ``start`` are their ids
        when they have none, and their ordinals): strings, dicts or :class:`Record` objects (kept)."""
        for i, item in enumerate(items, start):
            rec = self._record(item, i)
            if rec is not None:
                yield rec

    def _record(self, item: Any, position: int) -> Record | None:
        if isinstance(item, Record):
            return item
        source = f"{self.name}:{position + 1}"
        if isinstance(item, str):
            rec: Record | Skip = extract(self._adapter(None), item, position, source)
        elif isinstance(item, Mapping):
            obj = dict(item)
            adapter = self._adapter(obj)
            rec = (
                adapter.one(obj, position, source)
                if isinstance(adapter, RowAdapter)
                else extract(adapter, obj, position, source)
            )
        else:
            raise TypeError(f"a detector searches strings, dicts or Records, not {type(item).__name__}")
        rec = read_whole(self.name, rec, position)
        if isinstance(rec, Skip):
            return None  # nothing to search in it (no string at all)
        rec.ordinal = position
        return rec

    def _adapter(self, obj: dict | None) -> Adapter:
        """The adapter a record is read with: ``format``, else the one that would read a JSON Lines file
        whose first record is ``obj`` (cached by its field names)."""
        key = tuple(obj) if obj is not None else ()
        adapter = self._adapters.get(key)
        if adapter is None:
            if self.format is not None:
                cls = get_adapter(self.format)
            elif obj is None:
                cls = get_adapter("jsonl")
            else:
                order = in_sniff_order(a for a in adapter_registry().values() if "lines" in a.layouts)
                cls = next((a for a in order if a.sniff(Path(f"{self.name}.jsonl"), [obj])), get_adapter("jsonl"))
            adapter = self._adapters[key] = cls(self.name, AdapterOptions())
        return adapter

    def search(self, items: Iterable[Any], start: int = 0) -> list[Finding]:
        """Every finding of the eval items in ``items`` (strings, dicts or Records), with the evidence
        ``auditor audit`` reports; ``train_ordinal`` is an item's position (from ``start``), or a
        Record's own ordinal."""
        return self._search(enumerate(items, start))

    def _search(self, numbered: Iterable[tuple[int, Any]]) -> list[Finding]:
        """:meth:`search` of ``(position, item)`` pairs (a batch of rows numbered by the pipeline)."""
        batch: list[Record] = []
        own: list[int] = []
        for i, item in numbered:
            rec = self._record(item, i)
            if rec is None:
                continue
            own.append(rec.ordinal)
            batch.append(dataclasses.replace(rec, ordinal=len(batch)))
        findings: list[Finding] = []
        if not batch:
            return findings
        for searcher in self._searchers:
            for f in searcher.search(batch):
                f.check = self.name
                f.train_ordinal = own[f.train_ordinal]
                findings.append(f)
        findings.sort(key=lambda f: (f.train_ordinal, f.eval_dataset, f.eval_ordinal, f.method))
        return findings

    def flags(self, items: Sequence[Any], suspected: bool = False, start: int = 0) -> list[bool]:
        """For each item of ``items``: does it hold an eval item (a conclusive finding; with
        ``suspected``, a suspected one too)?"""
        hit = {f.train_ordinal for f in self.search(items, start) if f.conclusive or (suspected and f.suspected)}
        return [start + i in hit for i in range(len(items))]

    def contains(self, text: Any, suspected: bool = False) -> bool:
        """Does ``text`` (a string, dict or Record) hold an eval item? (see :meth:`flags`)"""
        return self.flags([text], suspected)[0]

    def filter(self, items: Iterable[Any], suspected: bool = False, batch_size: int = 512) -> Iterator[Any]:
        """The items of ``items`` that hold no eval item, in order, searched ``batch_size`` at a time
        (what ``auditor audit --write-clean`` keeps: records behind conclusive findings are removed)."""
        for batch in _batches(items, batch_size):
            for item, bad in zip(batch, self.flags(batch, suspected)):
                if not bad:
                    yield item

    def clean(self, items: Iterable[Any], suspected: bool = False) -> tuple[list[Any], list[Finding]]:
        """``(kept, findings)``: the items holding no eval item and every finding (all of ``items`` read)."""
        data = list(items)
        findings = self.search(data)
        hit = {f.train_ordinal for f in findings if f.conclusive or (suspected and f.suspected)}
        return [x for i, x in enumerate(data) if i not in hit], findings

    # -- pipeline callables -----------------------------------------------------------------------
    def keep(self, row: Mapping[str, Any]) -> bool:
        """``Dataset.filter(detector.keep)`` (Hugging Face ``datasets``): True for a row holding no eval item."""
        return not self.flags([row])[0]

    def keep_batch(self, batch: Mapping[str, Sequence[Any]]) -> list[bool]:
        """``Dataset.filter(detector.keep_batch, batched=True, num_proc=N)``: a column batch's rows to keep."""
        return [not bad for bad in self.flags(_rows(batch))]

    def drop_batch(self, batch: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
        """``ray.data.Dataset.map_batches(detector.drop_batch)`` (Ray Data; any column batch, lists or
        NumPy arrays): the batch without its rows holding an eval item."""
        keep = [not bad for bad in self.flags(_rows(batch))]
        out: dict[str, Any] = {}
        for column, values in batch.items():
            if isinstance(values, np.ndarray):
                out[column] = values[np.asarray(keep, dtype=bool)]
            else:
                out[column] = [v for v, k in zip(values, keep) if k]
        return out

    def findings_batch(self, batch: Mapping[str, Sequence[Any]], indices: Sequence[int]) -> dict[str, list[str]]:
        """``Dataset.map(detector.findings_batch, batched=True, with_indices=True)``: a column
        ``auditor_findings`` holding each row's findings as a JSON list (:meth:`Finding.to_dict`), its
        ``train_ordinal`` the row's index."""
        rows = _rows(batch)
        found: dict[int, list[dict]] = {}
        for f in self._search(zip(map(int, indices), rows)):
            found.setdefault(f.train_ordinal, []).append(dict(f.to_dict()))
        return {"auditor_findings": [json.dumps(found.get(int(ix), [])) for ix in indices]}

    # -- persistence --------------------------------------------------------------------------------
    def save(self, folder: str | Path) -> Path:
        """Write this detector to ``folder`` (see the module); returns its path. Methods without a
        persisted index (``exact``, ``calls`` ...) are rebuilt from the eval items on load.

        The folder is written beside ``folder`` and renamed into place: a detector folder there is
        replaced whole (a reader never sees half of either); any other non-empty folder is refused
        (:class:`~auditor.errors.OutputError`)."""
        settings = {
            "name": self.name,
            "format_of_train": self.format,
            "methods": self.method_names,
            "method_params": self.method_params,
            "boilerplate_from": self.boilerplate_from,
        }
        return save_folder(folder, settings, self.eval_records, self.indexes)

    @classmethod
    def load(cls, folder: str | Path, *, verify: bool = True) -> Detector:
        """A detector :meth:`save` wrote, its indexes memory-mapped. Every file is checked against its
        checksum and each index must find a sample of its own eval items (as the audit checks a
        persisted index); a bad folder is an :class:`~auditor.errors.IndexFileError`."""
        doc, eval_records, indexes = load_folder(folder, verify)
        self = cls.__new__(cls)
        self.name = doc["name"]
        self.format = doc.get("format_of_train")
        self.method_names = list(doc["methods"])
        self.method_params = doc.get("method_params") or {}
        self.boilerplate_from = doc.get("boilerplate_from")
        self.eval_records = eval_records
        self.indexes = indexes
        self._folder = str(Path(folder).resolve())
        self._checksum = str(doc["checksum"])
        self._setup()
        return self

    def __getstate__(self) -> dict[str, Any]:
        if self._folder is not None:  # a loaded detector ships as its folder: workers map the same files
            # with the description's checksum: a pipeline cache keyed on the pickle (datasets' fingerprint)
            # changes when the folder does, and a worker refuses a folder saved over meanwhile
            return {"folder": self._folder, "checksum": self._checksum}
        state = {k: v for k, v in vars(self).items() if k != "_adapters"}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        if "folder" in state:
            loaded = Detector.load(state["folder"], verify=False)
            if loaded._checksum != state.get("checksum"):
                raise IndexFileError(f"{state['folder']}: the detector folder changed after this detector was loaded")
            vars(self).update(vars(loaded))
            return
        vars(self).update(state)
        self._adapters = {}

    def __repr__(self) -> str:
        sets = sorted({r.dataset for r in self.eval_records})
        return f"Detector({len(self.eval_records)} eval items of {', '.join(sets)}; methods {', '.join(self.method_names)})"


def _eval_records(evals: EvalSource | Mapping[str, EvalSource]) -> list[Record]:
    sources: list[tuple[str, EvalSource]]
    if isinstance(evals, Mapping):
        sources = list(evals.items())
    elif isinstance(evals, str):
        sources = [(_name_of(evals), evals)]
    elif isinstance(evals, DatasetSpec):
        sources = [(evals.name, evals)]
    else:
        sources = [("eval", evals)]
    out: list[Record] = []
    for name, src in sources:
        if isinstance(src, str):
            out.extend(Dataset(DatasetSpec(name, [src], role="eval")).records())
        elif isinstance(src, DatasetSpec):
            out.extend(Dataset(dataclasses.replace(src, role="eval")).records())
        else:
            adapter = get_adapter("jsonl")(name, AdapterOptions())
            ordinal = 0
            for i, item in enumerate(src):
                rec = extract(adapter, item, i, f"{name}:{i + 1}")
                if isinstance(rec, Skip):
                    raise ConfigError(f"eval item {i} of '{name}': {rec.reason}")
                rec.ordinal = ordinal
                ordinal += 1
                out.append(rec)
    if not out:
        raise ConfigError("a detector needs at least one eval item")
    return out


def _name_of(source: str) -> str:
    if "/" in source or "." in Path(source).name:
        return Path(source).name.split(".")[0] or "eval"
    return source.split(":")[0]


def _rows(batch: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """A column batch (``{"text": [...], "id": [...]}``) as its rows."""
    columns = list(batch)
    n = len(batch[columns[0]]) if columns else 0
    return [{c: batch[c][i] for c in columns} for i in range(n)]


def _batches(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for x in items:
        batch.append(x)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch

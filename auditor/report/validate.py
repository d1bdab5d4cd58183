"""A report.json read back is checked before anything renders it: every value of the type it must have.

``auditor report`` re-renders a ``report.json`` that anyone may have written or edited. The renderers
escape every value they print, and before that :func:`check_report` checks that each value is of
its type — the typed sections by their fields' annotations (:class:`~auditor.report.results.CheckResult`,
:class:`~auditor.datasets.summary.DatasetSummary`, :class:`~auditor.report.results.RunStats`,
:class:`~auditor.report.results.ProvenanceResult`, :class:`~auditor.report.results.DecisionsRead`), the findings, texts, the methods' statistics and
the ``error_types`` / ``clean`` sections by the shapes below — so a count holding
``<img src=x onerror=…>`` is one clear error naming the field, not markup and not a crash. Keys a
section does not know are left alone (a later version's), and so are keys it lacks (the typed
results give those their defaults or name the missing one: :meth:`auditor.io.jsonable.JsonObject.from_dict`).

>>> check_report({"verdict": "fail", "checks": [{"name": "c", "eval_items": "<b>9</b>"}], "datasets": {}, "findings": []})
Traceback (most recent call last):
...
ValueError: checks[0].eval_items: a whole number expected, not a string
>>> check_report({"verdict": "fail", "checks": [], "datasets": {}, "findings": [{"score": "1"}]})
Traceback (most recent call last):
...
ValueError: findings[0].score: a number expected, not a string
>>> check_report({"verdict": "pass", "checks": [], "datasets": {}, "findings": [], "texts": {"a#0": "ok"}})

Raises ValueError naming the first value of the wrong type.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any

from ..datasets.summary import DatasetSummary
from ..io.jsonable import JsonObject
from .results import CheckResult, DecisionsRead, ProvenanceResult, RunStats

#: a number (int or float, not a bool), a whole number, text, an id (text or a whole number)
NUMBER, INT, STR, ID, BOOL = "number", "int", "str", "id", "bool"

#: the keys of a finding the renderers read, and their kinds
FINDING: dict[str, Any] = {
    "check": STR,
    "eval_dataset": STR,
    "eval_id": ID,
    "eval_source": STR,
    "eval_ref": STR,
    "train_dataset": STR,
    "train_id": ID,
    "train_source": STR,
    "train_ref": STR,
    "method": STR,
    "score": NUMBER,
    "conclusive": BOOL,
    "evidence": dict[str, Any],
    "eval_ordinal": INT,
    "train_ordinal": INT,
}
REQUIRED = ("check", "eval_dataset", "eval_id", "train_dataset", "train_id", "method", "score")
EVIDENCE: dict[str, Any] = {"field": STR, "span": list[int], "tier": STR}
METHOD_STATS: dict[str, Any] = {
    "method": STR,
    "conclusive": BOOL,
    "eval_items": INT,
    "eval_not_indexed": INT,
    "not_indexed_reasons": dict[str, int],
    "params": dict[str, Any],
    "fixed_threshold": NUMBER,
    "train_records_read": dict[str, int],
}
CLEAN_FILE: dict[str, Any] = {"source": STR, "written": STR, "format": STR, "records": INT}
CLEAN_DATASET: dict[str, Any] = {
    "kept": INT,
    "removed": INT,
    "not_written_skipped": INT,
    "files": list[dict[str, Any]],
    "not_written_files": list[str],
}
CLEAN: dict[str, Any] = {"dir": STR, "removed_file": STR, "manifest": STR, "datasets": dict[str, dict[str, Any]]}
PROVENANCE_RECORD: dict[str, Any] = {
    "derived_dataset": STR,
    "derived_id": ID,
    "derived_ref": STR,
    "source_dataset": str | None,  # None: unattributed
    "source_id": str | int | None,
    "source_ref": str | None,
    "source_split": str | None,
    "how": STR,
    "score": NUMBER,
    "confidence": NUMBER,
}
PER_DATASET: dict[str, Any] = {"records": INT, "unattributed": INT, "conflicts": INT, "by_split": dict[str, int]}
TOP: dict[str, Any] = {"verdict": STR, "texts": dict[str, str], "error_types": dict[str, dict[str, int]]}

_NAMES = {dict: "an object", list: "a list", str: "a string", bool: "true or false", type(None): "null"}


def _what(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return "a non-finite number"
    return _NAMES.get(type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__)


def _fail(where: str, wanted: str, value: Any) -> None:
    raise ValueError(f"{where}: {wanted} expected, not {_what(value)}")


def _kind(kind: Any, value: Any, where: str) -> None:
    """``value`` is of ``kind`` (one of the names above, a type annotation or a shape dict)."""
    if kind == NUMBER:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            _fail(where, "a number", value)
    elif kind == INT:
        if isinstance(value, bool) or not isinstance(value, int):
            _fail(where, "a whole number", value)
    elif kind == STR or kind is str:
        if not isinstance(value, str):
            _fail(where, "a string", value)
    elif kind == ID:
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            _fail(where, "an id (a string)", value)
    elif kind == BOOL or kind is bool:
        if not isinstance(value, bool):
            _fail(where, "true or false", value)
    elif isinstance(kind, dict):
        if not isinstance(value, dict):
            _fail(where, "an object", value)
        for key, sub in kind.items():
            if key in value:
                _kind(sub, value[key], f"{where}.{key}")
    else:
        _hint(kind, value, where)


def _hint(hint: Any, value: Any, where: str) -> None:
    """``value`` matches the annotation ``hint`` (int, float, str, bool, lists, dicts, unions, results)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any or hint is object:
        return
    if hint is int:
        _kind(INT, value, where)
    elif hint is float:
        _kind(NUMBER, value, where)
    elif hint in (str, bool):
        _kind(hint, value, where)
    elif isinstance(hint, type) and issubclass(hint, JsonObject):
        _result(hint, value, where)
    elif origin in (typing.Union, types.UnionType):
        if value is not None and not any(_fits(a, value) for a in args if a is not type(None)):
            _hint(next(a for a in args if a is not type(None)), value, where)
    elif origin is list:
        if not isinstance(value, list):
            _fail(where, "a list", value)
        for i, v in enumerate(value):
            _hint(args[0] if args else Any, v, f"{where}[{i}]")
    elif origin is dict:
        if not isinstance(value, dict):
            _fail(where, "an object", value)
        for k, v in value.items():
            _hint(args[1] if len(args) == 2 else Any, v, f"{where}.{k}")


def _fits(hint: Any, value: Any) -> bool:
    try:
        _hint(hint, value, "")
    except ValueError:
        return False
    return True


def _result(cls: type[JsonObject], value: Any, where: str, section: bool = False) -> None:
    """``value`` holds ``cls``'s fields with values of their types. A ``section`` of the report that is
    no object is left to ``cls.from_dict``, which names it."""
    if not isinstance(value, dict):
        if not section:
            _fail(where, "an object", value)
        return
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.name != "extra" and f.name in value:
            _hint(hints[f.name], value[f.name], f"{where}.{f.name}")


def _each(items: Any, shape: dict[str, Any], where: str) -> None:
    if isinstance(items, list):
        for i, item in enumerate(items):
            _kind(shape, item, f"{where}[{i}]")


def check_report(doc: Any) -> None:
    """Check the values of a ``report.json`` document (see the module doc); raises ValueError."""
    if not isinstance(doc, dict):
        return  # Report.from_dict names what is missing
    for key, kind in TOP.items():
        if key in doc:
            _kind(kind, doc[key], key)
    for i, c in enumerate(doc.get("checks") or [] if isinstance(doc.get("checks"), list) else []):
        _result(CheckResult, c, f"checks[{i}]", section=True)
        if isinstance(c, dict):
            _each(c.get("method_stats"), METHOD_STATS, f"checks[{i}].method_stats")
    if isinstance(doc.get("datasets"), dict):
        for name, d in doc["datasets"].items():
            _result(DatasetSummary, d, f"datasets.{name}", section=True)
            for j, sf in enumerate(d.get("skipped_files") or [] if isinstance(d, dict) else []):
                _kind({"file": STR, "reason": STR}, sf, f"datasets.{name}.skipped_files[{j}]")
    if "run" in doc:
        _result(RunStats, doc["run"], "run", section=True)
    if "decisions" in doc:
        _result(DecisionsRead, doc["decisions"], "decisions", section=True)
    for i, f in enumerate(doc.get("findings") or [] if isinstance(doc.get("findings"), list) else []):
        where = f"findings[{i}]"
        _kind(FINDING, f, where)
        missing = [k for k in REQUIRED if k not in f]
        if missing:
            raise ValueError(f"{where}: missing {', '.join(missing)}")
        _kind(EVIDENCE, f.get("evidence") or {}, f"{where}.evidence")
    if "clean" in doc:
        _kind(CLEAN, doc["clean"], "clean")
        for name, d in (doc["clean"].get("datasets") or {}).items():
            _kind(CLEAN_DATASET, d, f"clean.datasets.{name}")
            _each(d.get("files"), CLEAN_FILE, f"clean.datasets.{name}.files")
    if isinstance(doc.get("provenance"), list):
        for i, p in enumerate(doc["provenance"]):
            _result(ProvenanceResult, p, f"provenance[{i}]", section=True)
            if not isinstance(p, dict):
                continue
            _each(p.get("records"), PROVENANCE_RECORD, f"provenance[{i}].records")
            for name, d in (p.get("per_dataset") or {}).items():
                _kind(PER_DATASET, d, f"provenance[{i}].per_dataset.{name}")

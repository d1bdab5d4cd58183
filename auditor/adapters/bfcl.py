"""Berkeley Function-Calling Leaderboard (BFCL) question files, v4 and the v1 test set.

v4 (``BFCL_v4_<category>.json``, JSON Lines despite the name): ``{id, question, function}``, where
``question`` is a list of turns, each a list of ``{role, content}`` messages (live items open with a
system prompt); multi-turn, memory and web-search items carry ``involved_classes`` instead of
``function``. v1 (``gorilla_openfunctions_v1_test_<category>.json``): ``{question: str, function}``
with no id; the record id is ``<category>_<line index>``, the form later BFCL releases adopted.

``split`` is the category from the file name (``simple_python``, ``live_multiple``, ``multi_turn_base``
…; v1: ``simple``, ``parallel_function`` …). ``query`` (= ``text``) is the question's user messages
(message selector ``all-user`` by default; ``messages = "first-user"`` etc. changes it). The ``calls``
view holds the ground truth from the sibling ``possible_answer/<same file name>`` when present
or the item's own ``ground_truth`` (v1 executable categories: call strings)
(single-turn ``{func: {param: [values]}}`` → one canonical call each, :func:`auditor.records.callparse.bfcl_ground_truth`;
multi-turn call strings parsed with :mod:`ast`, positional arguments bound with the function docs in
``multi_turn_func_doc/``); ``meta['functions']`` names the functions offered.

>>> import json, os, tempfile
>>> d = tempfile.mkdtemp(); os.mkdir(os.path.join(d, "possible_answer"))
>>> q = {"id": "simple_python_0", "question": [[{"role": "user", "content": "Area of a 10 by 5 triangle?"}]],
...      "function": [{"name": "area", "parameters": {"properties": {"base": {}, "height": {}}}}]}
>>> _ = open(os.path.join(d, "BFCL_v4_simple_python.json"), "w").write(json.dumps(q) + "\\n")
>>> a = {"id": "simple_python_0", "ground_truth": [{"area": {"base": [10], "height": [5]}}]}
>>> _ = open(os.path.join(d, "possible_answer", "BFCL_v4_simple_python.json"), "w").write(json.dumps(a) + "\\n")
>>> r = next(BfclAdapter("bfcl").read(Path(d) / "BFCL_v4_simple_python.json"))
>>> r.id, r.split, r.view("query"), r.view("calls")
('simple_python_0', 'simple_python', 'Area of a 10 by 5 triangle?', 'area({"base":10,"height":5})')
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..io.jsonread import iter_json_items, iter_jsonl
from ..io.sniff import sniff
from ..records.callparse import calls_from_value, unbound
from ..records.messages import MessageSelector
from ..records.pycalls import Schemas, default_schemas
from ..records.record import QUERY, TEXT, Record, Skip
from ..records.toolcalls import calls_view
from .base import Adapter, first_record

_CATEGORY = re.compile(r"^(?:BFCL_v\d+_|gorilla_openfunctions_v1_test_)(.+?)\.json", re.I)


def category(path: Path) -> str | None:
    m = _CATEGORY.match(Path(path).name)
    return m.group(1) if m else None


def _items(path: Path, max_chars: int) -> Iterator[tuple[str, Any, str | None]]:
    """``(source, object, error)`` for a JSON Lines or JSON-array file."""
    kind = sniff(path).kind
    if kind in ("lines", "object"):  # one object alone: a one-line JSON Lines file
        for lineno, obj, err in iter_jsonl(path, max_chars):
            yield f"{path}:{lineno}", obj, err
    else:
        for i, _, obj in iter_json_items(path):
            yield f"{path}#{i}", obj, None


def _answers(path: Path, max_chars: int) -> dict[str, Any]:
    """Ground truth by id (v4) or by ``@position`` (v1, one answer per line) from ``possible_answer/``."""
    answer_file = Path(path).parent / "possible_answer" / Path(path).name
    if not answer_file.exists():
        return {}
    out: dict[str, Any] = {}
    for i, (_, obj, err) in enumerate(_items(answer_file, max_chars)):
        if err or not isinstance(obj, dict):
            continue
        if "ground_truth" in obj and "id" in obj:
            out[str(obj["id"])] = obj["ground_truth"]
        else:
            out[f"@{i}"] = [obj]
    return out


def _class_docs(path: Path) -> Schemas:
    """Function docs of the multi-turn API classes (``multi_turn_func_doc/*.json``), when present."""
    schemas = default_schemas()
    folder = Path(path).parent / "multi_turn_func_doc"
    if folder.is_dir():
        for f in sorted(folder.iterdir()):
            for _, obj, err in _items(f, 10_000_000):
                if not err:
                    schemas.add_docs(obj)
    return schemas


class BfclAdapter(Adapter):
    """BFCL question files (v4 JSON Lines with nested message turns; v1 test set); ground truth from possible_answer/."""

    name = "bfcl"
    suffixes = (".json", ".jsonl")
    layouts = ("lines", "array")

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        first = first_record(sample)
        if first is None:
            return False
        question = first.get("question")
        nested = isinstance(question, list) and all(isinstance(t, list) for t in question)
        if nested and isinstance(first.get("id"), str):
            return True
        # v1: a question string and function docs (chatable has none: "function": ""), named as BFCL names them
        return isinstance(question, str) and "function" in first and category(path) is not None

    def read(self, path: Path) -> Iterator[Record | Skip]:
        limit = self.options.max_record_chars
        cat = category(path)
        answers = _answers(path, limit)
        selector = MessageSelector.parse(self.options.messages)
        multi_docs: Schemas | None = None
        for position, (source, obj, err) in enumerate(_items(path, limit)):
            if err:
                yield Skip(source, err)
                continue
            if not isinstance(obj, dict) or "question" not in obj:
                yield Skip(source, "not a BFCL item (no 'question')")
                continue
            question = obj["question"]
            query = question.strip() if isinstance(question, str) else selector.select(question)
            if not query:
                yield Skip(source, f"question has no message for '{selector}'")
                continue
            rid = obj.get("id")
            positional = not isinstance(rid, (str, int))
            if positional:
                rid = f"{cat}_{position}" if cat else position
            functions = obj.get("function")
            schemas = default_schemas()
            if functions is not None:
                schemas.add_docs(functions)
            elif obj.get("involved_classes"):
                if multi_docs is None:
                    multi_docs = _class_docs(path)
                schemas = multi_docs
            truth = answers.get(str(rid), answers.get(f"@{position}", obj.get("ground_truth")))
            steps = _v1_names(calls_from_value(truth, schemas) if truth is not None else [], functions)
            meta: dict[str, Any] = {"functions": _names(functions)}
            if positional:  # <category>_<line>: a position, not an id the benchmark gave
                meta["positional_id"] = True
            if unbound(steps):
                meta["calls_unbound"] = unbound(steps)
            views = {QUERY: query, TEXT: query, "calls": calls_view(steps)}
            yield self.record(rid, source, views, raw=obj, split=cat, **meta)


_NUMBERED = re.compile(r"^(.+)_\d+$")


def _v1_names(steps: list[dict[str, Any]], functions: Any) -> list[dict[str, Any]]:
    """v1 parallel answers number repeated calls (``spotify.play_1``, ``spotify.play_2``): the
    function offered is ``spotify.play``."""
    offered = {n.lower() for n in _names(functions)}
    for s in steps:
        m = _NUMBERED.match(s["name"])
        if m and s["name"].lower() not in offered and m.group(1).lower() in offered:
            s["name"] = m.group(1)
    return steps


def _names(functions: Any) -> list[str]:
    items = functions if isinstance(functions, list) else [functions] if isinstance(functions, dict) else []
    return [f["name"] for f in items if isinstance(f, dict) and isinstance(f.get("name"), str)]

"""Tool-MVR's RefineToolBench: erroneous tool calls paired with their corrections.

``I1.json`` / ``I2.json``: a JSON list of ``{query, action{thought, python_code, json_function_calling
{api_name, parameters}, observation}, answer{api_name, parameters}, api_name, api_doc, ...}`` — one
erroneous call (``action``) and the corrected call (``answer``). ``I3.json``: ``{query, api_docs[],
pre_messages[], pre_actions[], action, answer{thought, python_code, json_function_calling}, data_path}`` —
a multi-step trace whose last action is wrong.

Views: ``query``; ``system`` (the API docs); ``calls`` (the corrected sequence: the pre-actions, then
the corrected call); ``observations``; ``critique`` (the correction's reasoning, I3); ``answer`` (the
corrected call, canonical); ``text``. Meta: ``trace`` (the steps as executed, ending with the erroneous
call and its observation), ``corrected`` (the corrected step), ``tools`` (name → parameter schema),
``mistake = True``; ``split`` is the file stem (``I1``, ``I2``, ``I3``). An I3 ``data_path`` such as
``.../G2_13487_multi_agent.json`` names its StableToolBench query: ``meta['group'] = 'G2'``,
``meta['ref_ids'] = ['13487']``. Records have no native id: the id is the 0-based position.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..io.jsonread import load_json
from ..records.record import QUERY, TEXT, Record, Skip
from ..records.toolcalls import calls_view, canonical_call, step
from ._write import JsonArrayWriter, RecordWriter
from .base import Adapter

_DATA_PATH_ID = re.compile(r"\b(G\d)_(\d+)")


def _call(obj: Any) -> dict[str, Any] | None:
    """Step from ``{api_name, parameters}`` or an action's ``json_function_calling``."""
    if not isinstance(obj, dict):
        return None
    fc = obj.get("json_function_calling", obj)
    if isinstance(fc, str):
        try:
            fc = json.loads(fc)
        except ValueError:
            return None
    if not isinstance(fc, dict) or not isinstance(fc.get("api_name"), str):
        return None
    observation = obj.get("observation")
    return step(fc["api_name"], fc.get("parameters"), observation if isinstance(observation, str) else None)


def _tools(docs: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for d in docs:
        fn = d.get("function") if isinstance(d, dict) and isinstance(d.get("function"), dict) else d
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            out[fn["name"]] = fn["parameters"] if isinstance(fn.get("parameters"), dict) else None
    return out


class RefineToolBenchAdapter(Adapter):
    name = "refinetoolbench"
    suffixes = (".json",)
    sniff_keys = frozenset({"query", "action", "answer"})

    def read(self, path: Path) -> Iterator[Record | Skip]:
        doc = load_json(path)
        if not isinstance(doc, list):
            yield Skip(str(path), "expected a JSON list of RefineToolBench cases")
            return
        level = Path(path).name.split(".")[0]
        for i, case in enumerate(doc):
            source = f"{path}#{i}"
            if not isinstance(case, dict) or not isinstance(case.get("query"), str):
                yield Skip(source, "case is not an object with a string 'query'")
                continue
            wrong, fixed = _call(case.get("action")), _call(case.get("answer"))
            if wrong is None or fixed is None:
                yield Skip(source, "case lacks an erroneous 'action' or a corrected 'answer' call")
                continue
            pre = [s for s in (_call(a) for a in case.get("pre_actions") or []) if s]
            docs = case["api_docs"] if isinstance(case.get("api_docs"), list) else [case.get("api_doc")]
            tools = _tools(docs)
            critique = case["answer"]["thought"] if isinstance(case["answer"].get("thought"), str) else ""
            trace = [*pre, wrong]
            views = {
                QUERY: case["query"],
                "system": "\n".join(json.dumps(d, ensure_ascii=False, sort_keys=True) for d in docs if d),
                "calls": calls_view([*pre, fixed]),
                "observations": "\n".join(s["observation"] for s in trace if s["observation"]),
                "critique": critique,
                "answer": canonical_call(fixed["name"], fixed["args"]),
                TEXT: "\n".join(
                    [
                        case["query"],
                        *(canonical_call(s["name"], s["args"]) for s in trace),
                        critique,
                        canonical_call(fixed["name"], fixed["args"]),
                    ]
                ),
            }
            meta: dict[str, Any] = {
                "trace": trace,
                "corrected": fixed,
                "tools": tools,
                "mistake": True,
                "positional_id": True,
            }
            m = _DATA_PATH_ID.search(str(case.get("data_path", "")))
            if m:
                meta["group"], meta["ref_ids"] = m.group(1), [m.group(2)]
            yield self.record(i, source, views, raw=case, split=level, **meta)

    def writer(self, source: Path, target: Path) -> RecordWriter:
        return JsonArrayWriter(source, target)

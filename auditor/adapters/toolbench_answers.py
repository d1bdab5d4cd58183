"""ToolBench / StableToolBench answers: DFSDT answer trees, CoT trajectories, ToolEval converted answers.

Three shapes, all yielding the query and the tool-call sequence:

* DFSDT tree files (``<id>_ChatGPT_DFS_woFilter_w2.json``): one object ``{win, tree, forward_args,
  compare_candidates, answer_generation}``. The call sequence is the final chain
  (``answer_generation.train_messages`` last conversation), else the tree's first root-to-leaf path
  (``Action`` / ``Action Input`` node pairs); ``meta['tree_calls']`` holds every call in the tree.
* CoT files (``<id>_CoT@1.json``): ``{win, try_count, trys[{chain}], ...}``; calls of the last try.
* ToolEval converted files: ``{query_id: {query, available_tools, answer{method, final_answer,
  answer_details}}}``; calls from the first path of the ``answer_details`` tree (``role: tool`` nodes).

The id is the query id (file-name prefix for single-object files); ``meta['group']`` (``G1`` ...) comes
from the folder or file name (``G1_answer``, ``G1_instruction``), ``split`` is the file's folder stem.

>>> _id_from_name("588_DFS_woFilter_w2.json"), _id_from_name("10_CoT@1.json")
('588', '10')
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..io.jsonread import load_json
from ..records.record import QUERY, Record, Skip
from ..records.toolcalls import calls_view, canonical_call, parse_arguments, step
from ..records.trajectory import Turn, extract_task, trajectory_views
from ._write import JsonDocumentWriter, JsonObjectWriter, RecordWriter
from .base import Adapter
from .chat import parse_turns

_GROUP = re.compile(r"\b(G\d)(?:_|\b)")
_LEAD_ID = re.compile(r"^(\d+)_")


def _id_from_name(name: str) -> str | None:
    m = _LEAD_ID.match(name)
    return m.group(1) if m else None


def _group(path: Path) -> str | None:
    for part in (path.name, path.parent.name, path.parent.parent.name):
        m = _GROUP.search(part.replace("@", " "))
        if m:
            return m.group(1)
    return None


def chain_steps(chain: list[dict]) -> list[dict[str, Any]]:
    """Steps of a ToolBench node chain (``Action`` then ``Action Input`` nodes with ``observation``)."""
    steps: list[dict[str, Any]] = []
    name = None
    for node in chain:
        if not isinstance(node, dict):
            continue
        if node.get("node_type") == "Action":
            name = node.get("description")
        elif node.get("node_type") == "Action Input" and name:
            steps.append(step(name, node.get("description"), node.get("observation")))
            name = None
    return steps


def tree_paths(node: dict) -> Iterator[list[dict]]:
    """Root-to-leaf node paths of a DFSDT tree, depth first, children in order."""
    children = [c for c in node.get("children") or [] if isinstance(c, dict)]
    if not children:
        yield [node]
        return
    for c in children:
        for path in tree_paths(c):
            yield [node, *path]


def answer_detail_steps(node: Any) -> list[dict[str, Any]]:
    """Steps along the first path of a ToolEval ``answer_details`` tree."""
    steps: list[dict[str, Any]] = []
    while isinstance(node, dict):
        msg = node.get("message")
        if node.get("role") == "tool" and isinstance(msg, str):  # ToolEval files: a truncated Python repr
            msg = _message_repr(msg)
        if node.get("role") == "tool" and isinstance(msg, dict) and msg.get("name"):
            steps.append(step(msg["name"], msg.get("arguments"), msg.get("response")))
        nxt = node.get("next")
        node = nxt[0] if isinstance(nxt, list) and nxt else None
    return steps


_REPR_NAME = re.compile(r"""['"]name['"]:\s*['"]([^'"]+)['"]""")
_REPR_ARGS = re.compile(r"""['"]arguments['"]:\s*'((?:[^'\\]|\\.)*)'""")


def _message_repr(msg: str) -> dict[str, Any] | None:
    """``{'name': ..., 'arguments': '...', 'response': ...}`` written as (possibly truncated) text."""
    try:
        value = ast.literal_eval(msg)
        if isinstance(value, dict):
            return value
    except (ValueError, SyntaxError, RecursionError):
        pass
    name = _REPR_NAME.search(msg)
    if not name:
        return None
    args = _REPR_ARGS.search(msg)
    arg_text = args.group(1).encode().decode("unicode_escape", errors="replace") if args else ""
    return {"name": name.group(1), "arguments": arg_text}


def _steps_views(query: str, steps: list[dict[str, Any]], answer: str) -> tuple[dict[str, str], dict[str, Any]]:
    tool_steps = [s for s in steps if s["name"].lower() != "finish"]
    text = "\n".join([query, *(canonical_call(s["name"], s["args"]) for s in tool_steps), answer])
    views = {
        QUERY: query,
        "calls": calls_view(tool_steps),
        "answer": answer,
        "text": text,
        "observations": "\n".join(s["observation"] for s in tool_steps if s.get("observation")),
    }
    return views, {"trace": tool_steps}


def _final_answer(steps: list[dict[str, Any]], fallback: Any) -> str:
    for s in reversed(steps):
        if s["name"].lower() == "finish" and s["args"].get("final_answer"):
            return str(s["args"]["final_answer"])
    if isinstance(fallback, str):
        parsed = parse_arguments(fallback)
        return str(parsed.get("final_answer", fallback)) if "_raw" not in parsed else fallback
    return ""


class ToolBenchAnswersAdapter(Adapter):
    name = "toolbench-answers"
    suffixes = (".json",)

    @classmethod
    def sniff(cls, path: Path, sample: Any) -> bool:
        if not isinstance(sample, dict) or len(sample) != 1:
            return False
        key, value = next(iter(sample.items()))
        if key == "win":
            return True
        return isinstance(value, dict) and "query" in value and isinstance(value.get("answer"), dict)

    def read(self, path: Path) -> Iterator[Record | Skip]:
        path = Path(path)
        doc = load_json(path)
        group = _group(path)
        split = path.parent.name
        if isinstance(doc, dict) and "win" in doc:
            rec = self._tree_file(path, doc, group, split)
            yield rec
            return
        if not isinstance(doc, dict):
            yield Skip(str(path), "expected an answer object or {query_id: {query, available_tools, answer}}")
            return
        split = path.name.split(".")[0]
        group = _group(path)
        for i, (qid, entry) in enumerate(doc.items()):
            source = f"{path}#{i}"
            if not isinstance(entry, dict) or not isinstance(entry.get("query"), str):
                yield Skip(source, f"query {qid}: not an object with a string 'query'")
                continue
            answer = entry["answer"] if isinstance(entry.get("answer"), dict) else {}
            steps = answer_detail_steps((answer.get("answer_details") or [None])[0])
            views, meta = _steps_views(entry["query"], steps, _final_answer(steps, answer.get("final_answer")))
            yield self.record(
                qid,
                source,
                views,
                raw=entry,
                split=split,
                group=group,
                tools=_tool_schemas(entry.get("available_tools")),
                **meta,
            )

    def writer(self, source: Path, target: Path) -> RecordWriter:
        """One answer file stays one document (``{}`` when its record is removed); a converted
        ``{query_id: ...}`` file stays an object keyed by query id."""
        doc = load_json(source)  # as read() does: answer files are read whole
        if isinstance(doc, dict) and "win" in doc:
            return JsonDocumentWriter(source, target)
        return JsonObjectWriter(source, target)

    def _tree_file(self, path: Path, doc: dict, group: str | None, split: str) -> Record | Skip:
        source = f"{path}#0"
        gen = doc["answer_generation"] if isinstance(doc.get("answer_generation"), dict) else {}
        query = gen.get("query")
        qid = _id_from_name(path.name)
        tree_calls: list[str] = []
        train = gen.get("train_messages") or []
        if train and isinstance(train[-1], list):
            turns = parse_turns({"messages": train[-1]}) or []
            views, meta = trajectory_views(turns)
            if isinstance(query, str) and query.strip():
                views[QUERY] = query.strip()
        else:
            steps: list[dict[str, Any]] = []
            if isinstance(doc.get("trys"), list) and doc["trys"]:
                last = doc["trys"][-1]
                steps = chain_steps(last.get("chain") or []) if isinstance(last, dict) else []
            elif isinstance(doc.get("tree"), dict) and isinstance(doc["tree"].get("tree"), dict):
                steps = chain_steps(next(tree_paths(doc["tree"]["tree"]), []))
            if not isinstance(query, str) or not query.strip():
                query = _query_from_tree(doc)
            if not query:
                return Skip(source, "answer file has no query (answer_generation.query or a user turn)")
            views, meta = _steps_views(extract_task(query), steps, _final_answer(steps, gen.get("final_answer")))
        if isinstance(doc.get("tree"), dict) and isinstance(doc["tree"].get("tree"), dict):
            seen: set[str] = set()
            for p in tree_paths(doc["tree"]["tree"]):
                for s in chain_steps(p):
                    c = canonical_call(s["name"], s["args"])
                    if s["name"].lower() != "finish" and c not in seen:
                        seen.add(c)
                        tree_calls.append(c)
        if not views.get(QUERY):
            return Skip(source, "answer file has no query")
        meta["tools"] = _tool_schemas(gen.get("function"))
        if tree_calls:
            meta["tree_calls"] = tree_calls
        extra: dict[str, Any] = {"win": doc.get("win")}
        if qid is None:
            extra["positional_id"] = True
        return self.record(0 if qid is None else qid, source, views, raw=doc, split=split, group=group, **meta, **extra)


def _query_from_tree(doc: dict) -> str | None:
    def walk(node: Any) -> str | None:
        if isinstance(node, dict):
            for m in node.get("messages") or []:
                if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str):
                    return m["content"]
            for c in node.get("children") or []:
                found = walk(c)
                if found:
                    return found
        return None

    tree = doc.get("tree")
    return walk(tree.get("tree")) if isinstance(tree, dict) else None


def _tool_schemas(functions: Any) -> dict[str, Any]:
    """tool name → JSON schema of its parameters, from OpenAI-style function lists."""
    out: dict[str, Any] = {}
    for f in functions or []:
        if isinstance(f, dict):
            fn = f["function"] if isinstance(f.get("function"), dict) else f
            if isinstance(fn.get("name"), str):
                out[fn["name"]] = fn["parameters"] if isinstance(fn.get("parameters"), dict) else None
    return out


__all__ = ["ToolBenchAnswersAdapter", "Turn", "answer_detail_steps", "chain_steps", "tree_paths"]

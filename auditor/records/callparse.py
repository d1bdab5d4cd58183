"""Tool calls from anywhere: JSON call objects, Python-style call strings, BFCL ground truth.

:func:`calls_from_value` turns the value of a record field (``calls_field``) into structured steps
(:func:`auditor.records.toolcalls.step`) in the forms benchmarks write them:

- JSON: ``{"name", "arguments"}`` (also ``parameters`` / ``kwargs`` / ``args``), OpenAI
  ``{"function": {...}}``, ToolAlpaca ``{"Action", "Action_Input"}``, lists of these;
- BFCL ground truth ``{func: {param: [acceptable values]}}`` (:func:`bfcl_ground_truth`);
- strings: JSON text, or Python-style calls (``torch.hub.load('a', model='b')``,
  API-Bank's ``API-Request: [ToolSearcher(keywords='x')]``, BFCL's ``"cd(folder='document')"``),
  parsed with :mod:`ast` and **never evaluated**: argument values are literals, anything else is
  kept as its source text.

Positional arguments are bound to parameter names when the function's schema is known
(:class:`Schemas`: from the record's own function docs, a benchmark's spec files, or
:data:`KNOWN_SIGNATURES` for the library calls APIBench asks for), so ``load('a', 'b')`` and
``load(repo_or_dir='a', model='b')`` become one canonical call. When no schema is known they keep
the keys ``_0``, ``_1`` … and the step says ``"bound": False`` (the record's ``meta['calls_unbound']``
counts them), so a positional call is never silently equated with a keyword one.

>>> s = Schemas(); s.add("torch.hub.load", ["repo_or_dir", "model"])
>>> from auditor.records.toolcalls import calls_view
>>> calls_view(calls_from_value("model = torch.hub.load('intel-isl/MiDaS', 'DPT_Hybrid', pretrained=True)", s))
'torch.hub.load({"model":"DPT_Hybrid","pretrained":true,"repo_or_dir":"intel-isl/MiDaS"})'
>>> calls_view(bfcl_ground_truth([{"calc_area": {"base": [10], "height": [5], "unit": ["units", ""]}}]))
'calc_area({"base":10,"height":5})'
>>> [c["bound"] for c in calls_from_value("f(1, x=2)")]
[False]

No function here raises on bad input: what does not parse yields no call.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from .toolcalls import balanced_end, step

#: documented signatures (leading positional parameters) of the library calls APIBench uses:
#: torch.hub.load(repo_or_dir, model, ...) — pytorch.org/docs/stable/hub.html;
#: tensorflow_hub.load(handle, tags, options) / KerasLayer(handle, trainable, ...) — tensorflow.org/hub/api_docs;
#: transformers.pipeline(task, model, ...) and *.from_pretrained(pretrained_model_name_or_path, ...) — huggingface.co/docs
KNOWN_SIGNATURES: dict[str, list[str]] = {
    "torch.hub.load": ["repo_or_dir", "model"],
    "hub.load": ["handle", "tags", "options"],
    "tensorflow_hub.load": ["handle", "tags", "options"],
    "hub.keraslayer": ["handle", "trainable"],
    "tensorflow_hub.keraslayer": ["handle", "trainable"],
    "pipeline": ["task", "model"],
    "from_pretrained": ["pretrained_model_name_or_path"],
}
_MAX_CALL_TEXT = 200_000
_NAME_KEYS = ("name", "api_name", "Action", "tool", "function_name")
_ARG_KEYS = ("arguments", "parameters", "kwargs", "args", "Action_Input", "input", "param_dict")


class Schemas:
    """Parameter order per function name (lower case), for binding positional arguments."""

    def __init__(self, known: dict[str, list[str]] | None = None):
        self._params: dict[str, list[str]] = {k.lower(): list(v) for k, v in (known or {}).items()}

    def add(self, name: str, params: list[str]) -> None:
        if name and params:
            self._params[name.strip().lower()] = list(params)

    def add_docs(self, docs: Any) -> None:
        """Add function docs: BFCL / OpenAI ``{name, parameters{properties}}`` (or ``{"function": {...}}``),
        NESTFUL ``{name, arguments{...}}``, a list of these, or such a list as JSON text."""
        if isinstance(docs, str):
            try:
                docs = json.loads(docs)
            except ValueError:
                return
        for doc in docs if isinstance(docs, list) else [docs]:
            if isinstance(doc, dict) and isinstance(doc.get("function"), dict):
                doc = doc["function"]
            if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
                continue
            params = doc.get("parameters")
            props = params.get("properties") if isinstance(params, dict) else None
            if not isinstance(props, dict):
                props = doc.get("arguments") if isinstance(doc.get("arguments"), dict) else None
            if isinstance(props, dict):
                self.add(doc["name"], [str(k) for k in props])

    def params(self, name: str) -> list[str] | None:
        low = name.strip().lower()
        found = self._params.get(low)
        if found is None and "." in low:  # method on an object: x.from_pretrained
            found = self._params.get(low.rsplit(".", 1)[1])
        return found

    def __bool__(self) -> bool:
        return bool(self._params)


def default_schemas() -> Schemas:
    return Schemas(KNOWN_SIGNATURES)


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
        return ast.unparse(node)


def _bind(name: str, positional: list[Any], keywords: dict[str, Any], schemas: Schemas | None) -> dict[str, Any]:
    args = dict(keywords)
    if not positional:
        return step(name, args) | {"bound": None}
    params = schemas.params(name) if schemas else None
    if params and len(positional) <= len(params):
        for pname, value in zip(params, positional, strict=False):
            args.setdefault(pname, value)
        return step(name, args) | {"bound": True}
    for i, value in enumerate(positional):
        args[f"_{i}"] = value
    return step(name, args) | {"bound": False}


def parse_call_string(text: str, schemas: Schemas | None = None) -> list[dict[str, Any]]:
    """Every call in Python-style ``text`` as steps, outermost first in source order (see module doc).

    A leading ``API-Request:`` and a surrounding ``[...]`` (API-Bank) are accepted; calls nested
    as arguments of another call are not separate steps."""
    text = text.strip()
    if not text or len(text) > _MAX_CALL_TEXT or "(" not in text:
        return []
    if text.startswith("API-Request:"):
        text = text[len("API-Request:") :].strip()
    try:
        tree = ast.parse(text, mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _calls_in_prose(text, schemas)
    out: list[tuple[int, int, dict[str, Any]]] = []
    inner: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for sub in [*node.args, *(k.value for k in node.keywords)]:
            inner.update(id(n) for n in ast.walk(sub) if isinstance(n, ast.Call))
        name = _dotted(node.func)
        if name is None:
            continue
        if any(isinstance(a, ast.Starred) for a in node.args):
            continue
        positional = [_literal(a) for a in node.args]
        keywords: dict[str, Any] = {}
        for k in node.keywords:
            value = _literal(k.value)
            if k.arg:
                keywords[k.arg] = value
            elif isinstance(value, dict):  # **{literal dict}
                keywords.update({str(key): v for key, v in value.items()})
            else:
                break
        else:
            out.append((node.lineno, node.col_offset, _bind(name, positional, keywords, schemas) | {"_id": id(node)}))
    out.sort(key=lambda t: (t[0], t[1]))
    return [{k: v for k, v in s.items() if k != "_id"} for _, _, s in out if s["_id"] not in inner]


_CALL_START = re.compile(r"(?<![\w.])([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)\s*\(")


def _calls_in_prose(text: str, schemas: Schemas | None) -> list[dict[str, Any]]:
    """Calls embedded in text that is not Python as a whole (APIBench's ``code`` field): each
    ``name(`` with a balanced, parsable argument list (at most 5,000 characters) is one call."""
    out: list[dict[str, Any]] = []
    end_of_last = 0
    for m in _CALL_START.finditer(text):
        if m.start() < end_of_last:
            continue
        end = balanced_end(text, m.end() - 1, m.end() + 5000)
        if end is None:
            continue
        try:
            node = ast.parse(text[m.start() : end], mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        if isinstance(node, ast.Call) and (node.args or node.keywords):
            found = parse_call_string(text[m.start() : end], schemas)
            if found:
                out.extend(found)
                end_of_last = end
    return out


def bfcl_ground_truth(value: Any) -> list[dict[str, Any]]:
    """BFCL ``[{func: {param: [acceptable values]}}]`` as steps: each parameter takes its first
    acceptable value; a parameter whose acceptable values include ``""`` (may be omitted) is left out,
    so the canonical call is the one every accepted answer contains."""
    out = []
    for item in value if isinstance(value, list) else [value]:
        if not isinstance(item, dict):
            continue
        for fname, params in item.items():
            if not isinstance(params, dict):
                continue
            args = {}
            for p, options in params.items():
                opts = options if isinstance(options, list) else [options]
                if not opts or "" in opts:
                    continue
                args[p] = _chosen(opts[0])
            out.append(step(fname, args) | {"bound": None})
    return out


def _chosen(value: Any) -> Any:
    """A nested dict in BFCL ground truth holds ``{key: [acceptable values]}`` too: first choice each,
    optional keys (``""`` accepted) left out."""
    if isinstance(value, dict) and all(isinstance(v, list) for v in value.values()):
        return {k: _chosen(v[0]) for k, v in value.items() if v and "" not in v}
    return value


def _is_bfcl_truth(value: Any) -> bool:
    items = value if isinstance(value, list) else [value]
    return bool(items) and all(
        isinstance(i, dict)
        and len(i) >= 1
        and all(isinstance(p, dict) and all(isinstance(v, list) for v in p.values()) for p in i.values())
        and not any(k in i for k in _NAME_KEYS)
        for i in items
    )


def calls_from_value(value: Any, schemas: Schemas | None = None) -> list[dict[str, Any]]:
    """Steps for a field value in any of the forms of the module doc (empty when none is found)."""
    if schemas is None:
        schemas = default_schemas()
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in "[{":
            try:
                return calls_from_value(json.loads(text), schemas)
            except ValueError:
                pass
        return parse_call_string(text, schemas)
    if isinstance(value, list):
        if all(isinstance(v, list) for v in value) and value:  # per-turn lists (BFCL multi-turn)
            return [s for turn in value for s in calls_from_value(turn, schemas)]
        if _is_bfcl_truth(value):
            return bfcl_ground_truth(value)
        return [s for v in value for s in calls_from_value(v, schemas)]
    if isinstance(value, dict):
        if isinstance(value.get("function"), dict):
            value = value["function"]
        name = next((value[k] for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
        if name is None:
            return bfcl_ground_truth(value) if _is_bfcl_truth(value) else []
        args: Any = next((value[k] for k in _ARG_KEYS if k in value), {})
        return [step(name, args) | {"bound": None}]
    return []


def unbound(steps: list[dict[str, Any]]) -> int:
    """How many steps kept positional arguments unbound (no schema known)."""
    return sum(1 for s in steps if s.get("bound") is False)

"""Tool calls from anywhere: JSON call objects, Python-style call strings, BFCL ground truth.

:func:`calls_from_value` turns the value of a record field (``calls_field``) into structured steps
(:func:`auditor.records.toolcalls.step`) in the forms benchmarks write them:

- JSON: ``{"name", "arguments"}`` (also ``parameters`` / ``kwargs`` / ``args`` / ``input``;
  arguments as an object or as JSON text), OpenAI ``{"function": {...}}`` and messages with
  ``tool_calls``, Anthropic ``{"type": "tool_use", "name", "input"}`` blocks (inside a message's
  ``content`` list too), Seal-Tools ``{"api", "parameters"}``, ToolAlpaca ``{"Action",
  "Action_Input"}``, lists of these; an object that is none of these (a message, a turn, a content
  part) is searched for them in its values and in its JSON-text values (Glaive's ``function_call``
  turns, LLaMA-Factory's ``tool_call`` parts), except under keys that hold tool *schemas*
  (``tools``, ``functions``) and in tool results (``role: tool``, ``from: observation``); an object
  whose arguments are a JSON schema (``{"type": "object", "properties": …}``) is a schema, not a
  call; a message's prose is not read for calls (only its ``<tool_call>`` tags);
- BFCL ground truth ``{func: {param: [acceptable values]}}`` (:func:`bfcl_ground_truth`);
- strings: JSON text, Python literal text (``"[{'api': 'x', 'parameters': {}}]"``), Hermes / Qwen
  ``<tool_call>{…}</tool_call>`` tags, or Python-style calls (``torch.hub.load('a', model='b')``,
  API-Bank's ``API-Request: [ToolSearcher(keywords='x')]``, BFCL's ``"cd(folder='document')"``),
  parsed with :mod:`ast` and **never evaluated**: argument values are literals, anything else is
  kept as its source text. A call Python's parser rejects (APIBench's
  ``load(repo_or_dir='x', 'meal_v2', model='y')``: a positional after a keyword) is read
  argument by argument (:func:`loose_call`).

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
>>> calls_view(calls_from_value("torch.hub.load(repo_or_dir='szq0214/MEAL-V2', 'meal_v2', model='mealv2_b0')"))
'torch.hub.load({"_0":"meal_v2","model":"mealv2_b0","repo_or_dir":"szq0214/MEAL-V2"})'
>>> calls_view(calls_from_value([{"api": "getWeather", "parameters": {"city": "Paris"}, "responses": ["API_call_0"]}]))
'getweather({"city":"Paris"})'
>>> calls_view(calls_from_value('Sure. <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'))
'get_weather({"city":"Paris"})'

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
_NAME_KEYS = ("name", "api_name", "api", "Action", "tool", "function_name")
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
    """Positional arguments bound to the schema's parameters in order, as Python binds them; unbound
    (``_0``, ``_1`` …) when no schema is known, when there are more of them than parameters, or when
    one would take a parameter a keyword already gives (Python would reject the call: nothing is
    dropped or guessed)."""
    args = dict(keywords)
    if not positional:
        return step(name, args) | {"bound": None}
    params = schemas.params(name) if schemas else None
    if params and len(positional) <= len(params) and not set(params[: len(positional)]) & set(keywords):
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
            loose = loose_call(text[m.start() : end], schemas)
            if loose is not None:
                out.append(loose)
                end_of_last = end
            continue
        if isinstance(node, ast.Call) and (node.args or node.keywords):
            found = parse_call_string(text[m.start() : end], schemas)
            if found:
                out.extend(found)
                end_of_last = end
    return out


_LOOSE_CALL = re.compile(r"\s*([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)\s*\((.*)\)\s*$", re.S)
_KEYWORD = re.compile(r"([A-Za-z_]\w*)\s*=(?!=)\s*(.*)$", re.S)


def loose_call(src: str, schemas: Schemas | None = None) -> dict[str, Any] | None:
    """One call ``name(args)`` that Python's parser rejects, read argument by argument: the argument
    list is cut at its top-level commas (outside brackets and quotes), ``key=value`` is a keyword,
    anything else a positional; each value is a literal when it parses as one, else its text. None
    when ``src`` is not ``name(...)`` or an argument is empty or starred.

    >>> loose_call("f(a=1, 'x', b=[1, 2])")["args"]
    {'a': 1, 'b': [1, 2], '_0': 'x'}
    >>> loose_call("f(a=1,, b=2)") is None, loose_call("not a call") is None
    (True, True)
    """
    m = _LOOSE_CALL.match(src)
    if m is None:
        return None
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    parts = _top_level_split(m.group(2))
    if parts and not parts[-1].strip():
        parts.pop()  # a trailing comma
    for part in parts:
        part = part.strip()
        if not part or part.startswith("*"):
            return None
        kw = _KEYWORD.match(part)
        if kw:
            keywords[kw.group(1)] = _loose_value(kw.group(2))
        else:
            positional.append(_loose_value(part))
    if not positional and not keywords:
        return None
    return _bind(m.group(1), positional, keywords, schemas)


def _loose_value(text: str) -> Any:
    text = text.strip()
    try:
        return _literal(ast.parse(text, mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text


def _top_level_split(body: str) -> list[str]:
    """``body`` cut at the commas outside brackets and string quotes.

    >>> _top_level_split("a='x,y', b=(1, 2), c")
    ["a='x,y'", ' b=(1, 2)', ' c']
    """
    parts: list[str] = []
    depth, quote, start, i = 0, "", 0, 0
    while i < len(body):
        c = body[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
        i += 1
    parts.append(body[start:])
    return parts


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
    return _from_value(value, schemas, 0)


#: keys of a message or content part (a dict with one of them and a name, but no arguments, is no call)
_MESSAGE_KEYS = ("role", "content", "from", "value", "text")
#: keys whose values are tool *schemas* (definitions), never calls
SCHEMA_KEYS = frozenset({"tools", "functions", "function_docs", "api_list", "api_docs", "tool_schemas"})
_TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
_MAX_DEPTH = 12


def _from_value(value: Any, schemas: Schemas, depth: int) -> list[dict[str, Any]]:
    if depth > _MAX_DEPTH:
        return []
    if isinstance(value, str):
        return _from_string(value, schemas, depth)
    if isinstance(value, list):
        if all(isinstance(v, list) for v in value) and value:  # per-turn lists (BFCL multi-turn)
            return [s for turn in value for s in _from_value(turn, schemas, depth + 1)]
        if _is_bfcl_truth(value):
            return bfcl_ground_truth(value)
        return [s for v in value for s in _from_value(v, schemas, depth + 1)]
    if isinstance(value, dict):
        call = value["function"] if isinstance(value.get("function"), dict) else value
        name = next((call[k] for k in _NAME_KEYS if isinstance(call.get(k), str)), None)
        if name is not None and not any(k in call for k in _ARG_KEYS) and any(k in call for k in _MESSAGE_KEYS):
            name = None  # a message with a ``name`` (OpenAI's sender name), not a call: read what it holds
        if name is not None:
            args: Any = next((call[k] for k in _ARG_KEYS if k in call), {})
            if _is_json_schema(args):
                return []  # a tool definition, not a call
            return [step(name, args) | {"bound": None}]
        if _is_bfcl_truth(value):
            return bfcl_ground_truth(value)
        if _is_tool_result(value):
            return []  # a tool's answer may hold objects with a "name"; they are not calls
        # not a call itself (a message, a turn, a content part): the calls it holds, tool definitions left out
        out: list[dict[str, Any]] = []
        for key, v in value.items():
            if key in SCHEMA_KEYS or isinstance(v, (int, float, bool)) or v is None:
                continue
            if isinstance(v, str):
                if v.lstrip()[:1] in ("[", "{") or "<tool_call>" in v:  # JSON text or tagged calls
                    out.extend(_from_string(v, schemas, depth + 1))
                # other text (a message's prose) is not read for calls
            else:
                out.extend(_from_value(v, schemas, depth + 1))
        return out
    return []


def _from_string(value: str, schemas: Schemas, depth: int) -> list[dict[str, Any]]:
    text = value.strip()
    if "<tool_call>" in text:
        return _tagged(text, schemas, depth)
    if text[:1] in "[{":
        for parse in (json.loads, ast.literal_eval):
            try:
                parsed = parse(text) if len(text) <= _MAX_CALL_TEXT else None
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(parsed, (list, dict)):
                return _from_value(parsed, schemas, depth + 1)
    return parse_call_string(text, schemas)


def _tagged(text: str, schemas: Schemas, depth: int) -> list[dict[str, Any]]:
    """The calls in Hermes / Qwen ``<tool_call>…</tool_call>`` tags of ``text``."""
    if "<tool_call>" not in text:
        return []
    return [s for body in _TOOL_CALL_TAG.findall(text) for s in _from_string(body, schemas, depth + 1)]


#: role / from / type values of a message or content part that carries a tool's result
_RESULT_MARKS = frozenset({"tool", "function", "observation", "ipython", "tool_result", "function_call_output"})


def _is_tool_result(obj: dict) -> bool:
    """A message or part holding a tool's answer (OpenAI ``role: tool``, ShareGPT ``from: observation``,
    Anthropic ``type: tool_result``)."""
    return any(isinstance(obj.get(k), str) and obj[k].lower() in _RESULT_MARKS for k in ("role", "from", "type"))


def _is_json_schema(args: Any) -> bool:
    """``{"type": "object", "properties": {...}}``: the parameters of a tool definition."""
    return (
        isinstance(args, dict) and isinstance(args.get("properties"), dict) and args.get("type") in ("object", "dict")
    )


def describe_value(value: Any) -> str:
    """What a field holds, in a few words, for an error that says why no call was found in it.

    >>> describe_value([{"api": "x", "parameters": {}, "responses": []}])
    'a list of 1 item, the first an object with keys api, parameters, responses'
    >>> describe_value("Let me look that up.")
    "a string: 'Let me look that up.'"
    >>> describe_value(None), describe_value({})
    ('null', 'an object with no keys')
    """
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"a string: {value[:80]!r}" + ("…" if len(value) > 80 else "") if value.strip() else "an empty string"
    if isinstance(value, dict):
        keys = [str(k) for k in value]
        if not keys:
            return "an object with no keys"
        return "an object with keys " + ", ".join(keys[:8]) + (f", … ({len(keys)} keys)" if len(keys) > 8 else "")
    if isinstance(value, list):
        if not value:
            return "an empty list"
        first = describe_value(value[0]).replace("a string", "a string", 1)
        return f"a list of {len(value)} item{'s' if len(value) > 1 else ''}, the first {first}"
    return f"a {type(value).__name__}: {value!r}"[:100]


def unbound(steps: list[dict[str, Any]]) -> int:
    """How many steps kept positional arguments unbound (no schema known)."""
    return sum(1 for s in steps if s.get("bound") is False)

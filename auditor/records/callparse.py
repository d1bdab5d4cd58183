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
  parsed with :mod:`ast` and **never evaluated**, positional arguments bound to parameter names
  where the function's schema is known (:mod:`auditor.records.pycalls`).

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

from .pycalls import MAX_CALL_TEXT, Schemas, default_schemas, parse_call_string
from .toolcalls import step

_NAME_KEYS = ("name", "api_name", "api", "Action", "tool", "function_name")
_ARG_KEYS = ("arguments", "parameters", "kwargs", "args", "Action_Input", "input", "param_dict")


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
                parsed = parse(text) if len(text) <= MAX_CALL_TEXT else None
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

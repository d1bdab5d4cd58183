"""Canonical tool calls: the one place where a tool call becomes comparable text.

A call is canonicalized as ``name(ARGS)`` where ``name`` is stripped and lower-cased and ``ARGS`` is
the arguments as sorted-key compact JSON with normalized scalars: numeric strings become numbers
(``"0"`` → ``0``, ``1.0`` → ``1``), ``"true"`` / ``"false"`` become booleans, strings are stripped.
So two calls that differ only in key order, whitespace or quoting of numbers are equal. String
values carrying text in disguise are decoded (:func:`decode_disguised`): JSON escapes left in a value
(``"\\u0046ind ..."``) and base64 that decodes to printable UTF-8 text. Every
adapter builds its ``calls`` view (one canonical call per line) with :func:`calls_view`, and keeps
the structured steps in ``meta['trace']`` (see :func:`step`) for the error taxonomy.

>>> canonical_call("Get_User", '{"b": " 2 ", "a": {"y": true, "x": "1.0"}}')
'get_user({"a":{"x":1,"y":true},"b":2})'
>>> canonical_call("get_user", {"a": {"x": 1, "y": "true"}, "b": 2})
'get_user({"a":{"x":1,"y":true},"b":2})'
>>> canonical_call("search", {"q": "\\u0046ind a hotel", "p": "Ym9vayBhIGZsaWdodCB0byBQYXJpcw=="})
'search({"p":"book a flight to Paris","q":"Find a hotel"})'
>>> [c for c, _ in calls_in_text('Thought: go\\nAction: search_for_x\\nAction Input: {"q": "a"}')]
['search_for_x({"q":"a"})']
>>> [c for c, _ in calls_in_text('print(get_weather(city="Paris", days=3))')]
['get_weather({"city":"Paris","days":3})']

No function here raises: unparsable argument strings are kept as ``{"_raw": text}``.
"""

from __future__ import annotations

import ast
import base64
import binascii
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

_NUM = re.compile(r"^-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
_ACTION = re.compile(
    r"Action:\s*([^\n]+?)\s*\n\s*Action Input:\s*(.*?)(?=\n\s*(?:Thought|Action|Observation):|\Z)", re.S
)
#: a name called: what :func:`code_calls` finds (the reference it is tested against)
_CODE_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
#: names that are control flow, not tool calls (ToolBench's Finish, python builtins around calls)
NOT_TOOLS = frozenset({"finish", "print", "str", "int", "float", "len", "list", "dict", "json.dumps"})


def canonical_value(v: Any) -> Any:
    """Normalize one argument value (recursively) as described in the module doc."""
    if isinstance(v, dict):
        return {str(k).strip(): canonical_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [canonical_value(x) for x in v]
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, float):
        return int(v) if v.is_integer() else v
    if isinstance(v, int):
        return v
    s = str(v).strip()
    while (decoded := decode_disguised(s).strip()) != s:  # to a fixed point: every decoding shortens
        s = decoded  # the text, and a canonical value read back canonicalizes to itself
    low = s.lower()
    if low in ("true", "false"):
        return low == "true"
    if _NUM.match(s) and len(s) < 19 and not (len(s) > 1 and s[0] == "0" and s[1] != "."):
        f = float(s)
        return int(f) if f.is_integer() else f
    return s


_JSON_ESCAPE = re.compile(r'\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])')
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")


def decode_disguised(s: str) -> str:
    """A string value with JSON escapes decoded, or the text a base64 value encodes; else ``s``.

    Base64 counts only when the whole value is base64 and decodes to UTF-8 text that is at least 90 %
    printable and holds a space (so ids, hashes and binary payloads stay as they are).

    >>> decode_disguised("\\u0042ook\\nnow"), decode_disguised("dGhlIHF1aWNrIGJyb3duIGZveA=="), decode_disguised("abc")
    ('Book\\nnow', 'the quick brown fox', 'abc')
    """
    if "\\" in s and _JSON_ESCAPE.search(s):
        try:
            s = json.loads('"' + s.replace('"', '\\"') + '"', strict=False)
        except ValueError:
            pass
    if len(s) >= 16 and _BASE64.fullmatch(s):
        try:
            raw = base64.b64decode(s + "=" * (-len(s) % 4), altchars=b"-_" if ("-" in s or "_" in s) else None)
            text = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            return s
        if " " in text and sum(c.isprintable() or c in "\n\t" for c in text) >= 0.9 * len(text):
            return text.strip()
    return s


def parse_arguments(args: Any) -> dict[str, Any]:
    """Arguments as a dict: JSON text, Python-literal text or a dict; else ``{"_raw": text}``."""
    if isinstance(args, dict):
        return args
    if args is None or args == "":
        return {}
    if isinstance(args, str):
        text = args.strip()
        for parse in (json.loads, ast.literal_eval):
            try:
                value = parse(text)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(value, dict):
                return value
        return {"_raw": " ".join(text.split())}
    return {"_value": args}


def canonical_call(name: str, arguments: Any) -> str:
    """``name(sorted-key JSON of normalized arguments)``."""
    args = canonical_value(parse_arguments(arguments))
    return f"{str(name).strip().lower()}({json.dumps(args, sort_keys=True, separators=(',', ':'), ensure_ascii=False)})"


def call_name(canonical: str) -> str:
    return canonical.split("(", 1)[0]


def step(name: str, arguments: Any, observation: str | None = None) -> dict[str, Any]:
    """One structured step of ``meta['trace']``: name, parsed arguments, tool result (or None)."""
    return {"name": str(name).strip(), "args": parse_arguments(arguments), "observation": observation}


def calls_view(steps: Iterable[dict[str, Any]]) -> str:
    """The ``calls`` view: one canonical call per line, control calls (``Finish``) left out."""
    return "\n".join(canonical_call(s["name"], s["args"]) for s in steps if s["name"].strip().lower() not in NOT_TOOLS)


def split_calls(view: str) -> list[str]:
    return [line for line in view.split("\n") if line.strip()] if view else []


def calls_in_text(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Tool calls written inside assistant text: Hermes / Qwen ``<tool_call>{"name", "arguments"}</tool_call>``
    tags, ToolBench ``Action: / Action Input:`` pairs and Python calls with keyword arguments
    (Tool-MVR's ``print(api_for_tool(x=1))``). Returns ``(canonical call, parsed arguments)`` pairs in
    text order.

    >>> [c for c, _ in calls_in_text('On it. <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>')]
    ['get_weather({"city":"Paris"})']
    """
    if not text:
        return []
    out: list[tuple[int, str, dict[str, Any]]] = []
    whole = _call_objects(text)
    if whole is not None:  # the turn is a JSON / Python-literal list of call objects (Seal-Tools' answers)
        return [(canonical_call(n, a), a) for n, a in whole if n.strip().lower() not in NOT_TOOLS]
    if "<tool_call>" in text:
        for m in _TOOL_CALL_TAG.finditer(text):
            out.extend((m.start(), name, args) for name, args in _tagged_calls(m.group(1)))
        text = _TOOL_CALL_TAG.sub(lambda m: " " * len(m.group(0)), text)  # not read twice below
    for m in _ACTION.finditer(text) if "Action:" in text else ():
        name = m.group(1).strip()
        args = parse_arguments(m.group(2).strip())
        out.append((m.start(), name, args))
    if "(" in text and "=" in text:
        for start, name in code_calls(text, keyword_first=True):
            if name.lower() in NOT_TOOLS:
                continue
            kwargs = _python_call_args(text, start)
            if kwargs is not None:
                out.append((start, name, kwargs))
    out.sort(key=lambda t: t[0])
    return [(canonical_call(n, a), a) for _, n, a in out if n.strip().lower() not in NOT_TOOLS]


_TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)


_CALL_NAME_KEYS = ("name", "api", "api_name")
_CALL_ARG_KEYS = ("arguments", "parameters", "input", "args")


def _tagged_calls(body: str) -> list[tuple[str, dict[str, Any]]]:
    """``(name, arguments)`` of the JSON object (or list of objects) inside one ``<tool_call>`` tag."""
    try:
        value = json.loads(body)
    except ValueError:
        return []
    out = []
    for obj in value if isinstance(value, list) else [value]:
        if isinstance(obj, dict) and isinstance(obj.get("function"), dict):
            obj = obj["function"]
        if isinstance(obj, dict) and isinstance(obj.get("name"), str):
            args: Any = next((obj[k] for k in ("arguments", "parameters", "input") if k in obj), {})
            out.append((obj["name"], parse_arguments(args)))
    return out


def _call_objects(text: str) -> list[tuple[str, dict[str, Any]]] | None:
    """``(name, arguments)`` when the whole ``text`` is a JSON or Python-literal call object or list of
    them — every object with a name (``name`` / ``api`` / ``api_name``) *and* arguments (an object or
    JSON text under ``arguments`` / ``parameters`` / ``input`` / ``args``), so a data answer such as
    ``[{"name": "Alice"}]`` is not one, nor a tool definition (``parameters`` a JSON schema); else None.

    >>> _call_objects("[{'api': 'endGame', 'parameters': {'game_id': 37}, 'responses': ['API_call_0']}]")
    [('endGame', {'game_id': 37})]
    >>> _call_objects('[{"name": "Alice", "age": 3}]') is None
    True
    """
    text = text.strip()
    if text[:1] not in ("[", "{") or len(text) > 200_000:
        return None
    value: Any = None
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(text)
            break
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    objs = value if isinstance(value, list) else [value]
    out = []
    for obj in objs:
        if isinstance(obj, dict) and isinstance(obj.get("function"), dict):
            obj = obj["function"]
        if not isinstance(obj, dict):
            return None
        name = next((obj[k] for k in _CALL_NAME_KEYS if isinstance(obj.get(k), str)), None)
        args = next((obj[k] for k in _CALL_ARG_KEYS if isinstance(obj.get(k), (dict, str))), None)
        if name is None or args is None or (isinstance(args, dict) and isinstance(args.get("properties"), dict)):
            return None  # not a call, or a tool definition (arguments given as a JSON schema)
        out.append((name, parse_arguments(args)))
    return out or None


def code_calls(text: str, keyword_first: bool = False) -> Iterator[tuple[int, str]]:
    """``(start, name)`` of each match of ``_CODE_CALL`` in ``text`` (an ASCII identifier, spaces, ``(``),
    in order: found from each ``(`` back (``str.find``), several times faster than the pattern, which tries
    every position of the text. A match starts where a run of word characters starts (``\\b``), so the run
    before a ``(`` (and its spaces) is the name when it is ASCII and starts with no digit. With
    ``keyword_first``, only the calls whose first argument is a keyword one (:data:`_KEYWORD_FIRST`),
    the only ones :func:`_python_call_args` reads: the other parentheses are not looked behind.

    >>> list(code_calls("x = f (a=1); ab\u00e9(2) + _g(h(3))")), list(code_calls("f(a=1, g(2)); h(b=3)", True))
    ([(4, 'f'), (22, '_g'), (25, 'h')], [(0, 'f'), (14, 'h')])
    """
    opens = (m.start() for m in _KEYWORD_OPEN.finditer(text)) if keyword_first else _all(text, "(")
    for at in opens:
        j = at
        while j and text[j - 1].isspace():
            j -= 1
        k = j
        while k and (text[k - 1].isalnum() or text[k - 1] == "_"):
            k -= 1
        if k < j and text[k:j].isascii() and not text[k].isdigit():
            yield k, text[k:j]


def _all(text: str, char: str) -> Iterator[int]:
    at = text.find(char)
    while at >= 0:
        yield at
        at = text.find(char, at + 1)


#: a parenthesis, for :func:`balanced_end`
_PAREN = re.compile(r"[()]")


def balanced_end(text: str, open_at: int, stop: int) -> int | None:
    """The index after the ``)`` closing the ``(`` at ``open_at``, looking no further than ``stop``.

    >>> balanced_end("f(a, g(b)) + 1", 1, 100)
    10
    >>> balanced_end("f(a, g(b)", 1, 100) is None
    True
    """
    depth = 0
    for m in _PAREN.finditer(text, open_at, min(len(text), stop)):
        if m.group() == "(":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.end()
    return None


#: how a call :func:`_python_call_args` reads begins: a keyword argument first (after the ``(``, any
#: whitespace, comments and line continuations), so a call whose first argument is positional, or that
#: has none, is told without parsing it. Looser than Python's grammar (the name: a run of any characters
#: but delimiters), never stricter; possessive, so linear in what it reads
_KEYWORD_ARG = r"(?:\s|\\|#[^\n]*+)*+[^\s=()#,*\\]++(?:\s|\\)*+=(?!=)"
_KEYWORD_FIRST = re.compile(r"\(" + _KEYWORD_ARG)
#: the ``(`` of each call :data:`_KEYWORD_FIRST` matches, the rest looked ahead (no parenthesis skipped)
_KEYWORD_OPEN = re.compile(r"\((?=" + _KEYWORD_ARG + ")")


def _python_call_args(text: str, start: int) -> dict[str, Any] | None:
    """Keyword arguments of the Python call starting at ``start`` (literals only), else None."""
    open_at = text.index("(", start)
    if not _KEYWORD_FIRST.match(text, open_at):  # positional arguments or none: never read
        return None
    return _call_keywords(text, start, balanced_end(text, open_at, start + 5000))


def _call_keywords(text: str, start: int, end: int | None) -> dict[str, Any] | None:
    """Keyword arguments of the call ``text[start:end]`` (its parentheses closed at ``end``; None: they
    are not), literals as values and any other expression as its source, else None (no keyword
    argument, a positional one, ``**kwargs``, or not one call)."""
    if end is None or "=" not in text[start:end]:  # no keyword argument
        return None
    try:
        node = ast.parse(text[start:end], mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    if not isinstance(node, ast.Call) or node.args or not node.keywords:
        return None
    args: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None:
            return None
        try:
            args[kw.arg] = ast.literal_eval(kw.value)
        except (ValueError, SyntaxError, TypeError, RecursionError):
            args[kw.arg] = ast.unparse(kw.value)
    return args

"""Python-style call strings (``torch.hub.load('a', model='b')``, API-Bank's ``API-Request:
[ToolSearcher(keywords='x')]``, BFCL's ``"cd(folder='document')"``) as tool-call steps
(:func:`auditor.records.toolcalls.step`), parsed with :mod:`ast` and **never evaluated**: argument
values are literals, anything else is kept as its source text. A call Python's parser rejects
(APIBench's ``load(repo_or_dir='x', 'meal_v2', model='y')``: a positional after a keyword) is read
argument by argument (:func:`loose_call`).

Positional arguments are bound to parameter names when the function's schema is known
(:class:`Schemas`: from the record's own function docs, a benchmark's spec files, or
:data:`KNOWN_SIGNATURES` for the library calls APIBench asks for), so ``load('a', 'b')`` and
``load(repo_or_dir='a', model='b')`` become one canonical call. When no schema is known they keep
the keys ``_0``, ``_1`` … and the step says ``"bound": False`` (the record's ``meta['calls_unbound']``
counts them), so a positional call is never silently equated with a keyword one.

>>> s = Schemas(); s.add("torch.hub.load", ["repo_or_dir", "model"])
>>> parse_call_string("model = torch.hub.load('intel-isl/MiDaS', 'DPT_Hybrid', pretrained=True)", s)[0]["bound"]
True

No function here raises on bad input: what does not parse yields no call. Every call in any field
value, JSON and tagged forms too, is :func:`auditor.records.callparse.calls_from_value`'s.
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
MAX_CALL_TEXT = 200_000


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
    if not text or len(text) > MAX_CALL_TEXT or "(" not in text:
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

"""A small TOML writer for the manifests auditor writes (strings, numbers, booleans, lists, tables).

>>> print(dumps({"a": 1, "t": {"x.y": ["s\\n", 2.5, True], "in": {"k": "v"}}, "rows": [{"n": "c"}]}))
a = 1
rows = [{ n = "c" }]
<BLANKLINE>
[t]
"x.y" = ["s\\n", 2.5, true]
in = { k = "v" }
<BLANKLINE>

Raises :class:`TypeError` for a value TOML cannot hold (None, bytes, objects).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def key(k: str) -> str:
    """A TOML key: bare when it can be, else a quoted string."""
    return k if _BARE.match(k) else string(k)


def string(s: str) -> str:
    """A TOML basic string (JSON's escapes, which TOML shares, plus DEL)."""
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{key(str(k))} = {value(x)}" for k, x in v.items()) + " }" if v else "{}"
    raise TypeError(f"TOML cannot hold {type(v).__name__}")


def table(name: str | None, body: dict[str, Any]) -> str:
    """``[name]`` (omitted when None) and its ``key = value`` lines; nested dicts are inline tables."""
    lines = [f"[{name}]"] if name else []
    lines += [f"{key(str(k))} = {value(v)}" for k, v in body.items() if v is not None]
    return "\n".join(lines) + "\n"


def array_table(name: str, body: dict[str, Any]) -> str:
    """One ``[[name]]`` entry of an array of tables."""
    return f"[[{name}]]\n" + table(None, body)


def dumps(doc: dict[str, Any]) -> str:
    """Top-level scalars and lists first, then each dict-valued key as a ``[table]``."""
    top = {k: v for k, v in doc.items() if not isinstance(v, dict)}
    out = [table(None, top)] if top else []
    out += [table(key(str(k)), v) for k, v in doc.items() if isinstance(v, dict)]
    return "\n".join(out)

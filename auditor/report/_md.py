"""Markdown text that stays text: every value a report prints goes through :func:`md`.

Values come from data (ids, file names, record texts, check names), so a value must never become
markup: HTML (``<script>``), links, emphasis, table pipes, or a line break that starts a forged
``# … PASS`` heading. :func:`md` backslash-escapes Markdown punctuation, writes ``<``, ``>``
and ``&`` as entities, and shows control and format characters (newlines, tabs, bidi overrides,
zero-width characters) as visible ``\\uXXXX`` escapes.

>>> md("x\\n\\n# Contamination audit: **PASS**")
'x\\\\u000a\\\\u000a\\\\# Contamination audit: \\\\*\\\\*PASS\\\\*\\\\*'
>>> md("<script>alert(1)</script> [a](b) | c")
'&lt;script&gt;alert(1)&lt;/script&gt; \\\\[a\\\\](b) \\\\| c'
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_PUNCT = re.compile(r"([\\`*_\[\]#|~])")  # ( ) ! + are inert once [ ] are escaped
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_ENTITY_TABLE = str.maketrans(_ENTITIES)


def _visible(ch: str) -> str:
    if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn") and ch != " ":
        return "\\u%04x" % ord(ch) if ord(ch) < 0x10000 else "\\U%08x" % ord(ch)
    return _ENTITIES.get(ch, ch)


def md(value: Any) -> str:
    """``value`` as inert Markdown text (one line, safe in a table cell): a printable text has its
    entities written by one ``str.translate``, another is read character by character."""
    text = _PUNCT.sub(r"\\\1", str(value))
    if text.isprintable():
        return text.translate(_ENTITY_TABLE)
    return "".join(_visible(c) if (not c.isprintable() or c in _ENTITIES) else c for c in text)

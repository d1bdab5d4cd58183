"""Cut a text into the segments that are embedded and matched (MiniLM reads 256 word pieces):
``whole`` (the text), ``last`` (the final line of a multi-line text, of at least ``min_words`` words:
the question after a quoted passage), ``window`` (overlapping windows of ``max_words`` words, stride
half that, for a longer text) and, for code, ``doc`` (its comments, docstrings and function-name words:
the meaning, which survives a translation into another language). A segment records its kind and
position, so a finding says which one matched.

>>> [s.kind for s in segments("Passage line one is long enough.\\nWhich of these is true?")]
['whole', 'last']
>>> seg = segments('def add_two(x):\\n    \"\"\"Return x plus two.\"\"\"\\n    return x + 2\\n')
>>> [(s.kind, s.text) for s in seg][1]
('doc', 'add two Return x plus two.')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...text.normalize import clean

_STRONG_CODE = re.compile(r"(?:^|\n)\s*(?:def \w+\(|class \w+|function\s*\w*\(|#include)|```")
_WEAK_CODE = re.compile(r"[{};]\s*(?:\n|$)")
_DOCSTRING = re.compile(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', re.S)
_BLOCK_COMMENT = re.compile(r"/\*(.*?)\*/", re.S)
_LINE_COMMENT = re.compile(r"(?://|#(?!include|define|!))\s?(.*)")
_FUNC_NAME = re.compile(r"(?:\bdef|\bfunction|\b[A-Za-z_][\w<>\[\]\*]*)\s+\**([A-Za-z_]\w*)\s*\(")
_WORD = re.compile(r"[^\W\d_]{2,}")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SKIP_NAMES = {"if", "for", "while", "switch", "return", "main", "printf", "sizeof", "print", "console"}


@dataclass(frozen=True, slots=True)
class Segment:
    kind: str
    text: str
    position: int = 0

    def label(self) -> str:
        return self.kind if self.kind in ("whole", "doc") else f"{self.kind}@{self.position}"


def looks_like_code(text: str) -> bool:
    return bool(_STRONG_CODE.search(text)) or len(_WEAK_CODE.findall(text)) >= 3


def name_words(name: str) -> str:
    return " ".join(_CAMEL.sub(" ", name).replace("_", " ").split())


def code_doc(text: str) -> str:
    """Prose of a code text: function-name words, then docstrings and comments, without doctest lines."""
    parts: list[str] = []
    for m in _FUNC_NAME.finditer(text):
        if m.group(1) not in _SKIP_NAMES:
            parts.append(name_words(m.group(1)))
            break
    chunks = [a or b for a, b in _DOCSTRING.findall(text)] + _BLOCK_COMMENT.findall(text)
    stripped = _BLOCK_COMMENT.sub(" ", _DOCSTRING.sub(" ", text))
    chunks += [m.group(1) for m in _LINE_COMMENT.finditer(stripped)]
    for chunk in chunks:
        for line in chunk.splitlines():
            line = line.strip().lstrip("*").strip()
            if not line or line.startswith(">>>") or len(_WORD.findall(line)) < 2:
                continue
            parts.append(line)
    return " ".join(" ".join(parts).split())


def segments(text: str, max_words: int = 160, min_words: int = 3) -> list[Segment]:
    """The segments of ``text`` (see the module doc); an empty text has none. The text is first
    :func:`auditor.text.normalize.clean`-ed (zero-width characters, markup, homoglyphs undone), as for every tier."""
    text = clean(text)
    if not text or not text.strip():
        return []
    out = [Segment("whole", text)]
    if looks_like_code(text):
        doc = code_doc(text)
        if len(doc.split()) >= min_words:
            out.append(Segment("doc", doc))
        return out
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) >= 2 and len(lines[-1].split()) >= min_words:
        out.append(Segment("last", lines[-1], len(lines) - 1))
    words = text.split()
    if len(words) > max_words:
        stride = max(1, max_words // 2)
        for start in range(0, len(words) - max_words + stride, stride):
            out.append(Segment("window", " ".join(words[start : start + max_words]), start))
    return out

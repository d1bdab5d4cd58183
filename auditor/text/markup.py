"""Markup undone by normalization: HTML entities unescaped and tag-shaped ``<…>`` removed
(:func:`strip_markup`, a stage of :func:`~auditor.text.normalize.undo_evasion`), only what has the shape
of a tag (:func:`strip_tags`), so a stray ``<`` never swallows prose. No errors are raised for any ``str``.
"""

from __future__ import annotations

import html
import re

#: every element name of HTML (the WHATWG Living Standard's elements, its obsolete and non-conforming
#: ones, and the ``svg`` / ``math`` roots): a tag of one of these names is markup wherever it stands
HTML_ELEMENTS = frozenset(
    """a abbr acronym address applet area article aside audio b base basefont bdi bdo bgsound big blink
    blockquote body br button canvas caption center cite code col colgroup data datalist dd del details dfn
    dialog dir div dl dt em embed fieldset figcaption figure font footer form frame frameset h1 h2 h3 h4 h5 h6
    head header hgroup hr html i iframe image img input ins isindex kbd keygen label legend li link listing
    main map mark marquee math menu menuitem meta meter multicol nav nextid nobr noembed noframes noscript
    object ol optgroup option output p param picture plaintext portal pre progress q rb rp rt rtc ruby s samp
    script search section select slot small source spacer span strike strong style sub summary sup svg table
    tbody td template textarea tfoot th thead time title tr track tt u ul var video wbr xmp""".split()
)
#: HTML's boolean attributes: the only attribute names a tag may carry without a value (so that the
#: words of ``a<b and c>d`` are never read as attributes of a ``<b>``)
_BOOLEAN_ATTRIBUTES = (
    "allowfullscreen async autofocus autoplay checked compact controls declare default defer disabled "
    "formnovalidate hidden inert ismap itemscope loop multiple muted nohref noresize noshade novalidate nowrap "
    "open playsinline readonly required reversed scoped seamless selected truespeed"
).split()
#: a tag or attribute name (``p``, ``h1``, ``tool_call``, ``ns:tag``, ``my-element``), at most 64 characters
_NAME = r"[A-Za-z][A-Za-z0-9]{0,63}+(?:[-_:.][A-Za-z0-9]{1,63}+){0,7}+"
#: an attribute: ``name=value`` (quoted, or unquoted without spaces or quotes, as browsers read
#: ``href=/p?q=1``; 2,000 characters at most), or a boolean attribute or ``data-*`` alone
_ATTRIBUTE = (
    r"""[A-Za-z_:@][-A-Za-z0-9_:.@]{0,63}+\s*+=\s*+(?:"[^"<>]{0,2000}+"|'[^'<>]{0,2000}+'|[^\s"'<>=`][^\s"'<>`]{0,1999}+)"""
    rf"|(?i:{'|'.join(_BOOLEAN_ATTRIBUTES)}|data-[-A-Za-z0-9_]{{1,63}}+)(?![-A-Za-z0-9_:.=])"
)
#: an opening tag (name, attributes, ``/``) or a closing tag (name): shaped as a tag, nothing else
_TAG = re.compile(rf"<({_NAME})((?:\s++(?:{_ATTRIBUTE})){{0,100}}+)\s*+(/?)>|</({_NAME})\s*+>")
_CLOSING = re.compile(rf"</({_NAME})\s*+>")
#: inline tags are removed without a break (``<b>wo</b>rd`` → ``word``); any other tag breaks words
_INLINE = frozenset(
    "a abbr b bdi bdo big cite code del dfn em font i ins kbd mark q s samp small span strong sub sup tt u var".split()
)
_ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);?")


def strip_tags(text: str) -> str:
    """Tags removed from ``text``: only what has the shape of a tag, so a stray ``<`` never swallows
    prose (``score<threshold. … x>0``, ``a<b and c>d``, ``if x<y then … >`` are left as they are):

    * a **closing tag** ``</name>`` (no attributes; prose never writes one);
    * an **HTML element** (:data:`HTML_ELEMENTS`, any case) with attribute-shaped content only:
      ``name=value`` (value quoted, or unquoted without spaces), a boolean attribute
      (``checked``, ``disabled`` …) or ``data-*`` alone, optionally ``/`` before ``>``;
    * an element of **another name** (``<think>``, ``<tool_call>``, ``<ns:tag attr="v">``) in the same
      shape only when it is closed in the same text (``</think>``), self-closing (``<x/>``) or carries a
      ``name=value`` attribute: ``List<String>``, ``#include <stdio.h>``, ``Vec<T>`` and placeholders
      such as ``<name>`` or ``<sevice_id>`` are code and prose, not markup, and stay.

    Names are at most 64 characters, attribute values 2,000, a tag 100 attributes. Inline elements
    (:data:`_INLINE`) are removed without a break (``<b>wo</b>rd`` → ``word``); any other tag breaks words.

    >>> strip_tags('<p class="x">Bo<b>ok</b></p> a<br/>flight <tool_call>{}</tool_call> if a<b and c>d')
    ' Book  a flight  {}  if a<b and c>d'
    >>> strip_tags("score<threshold. Book it. x>0; List<String> <think>")
    'score<threshold. Book it. x>0; List<String> <think>'
    """
    closed: set[str] | None = None

    def untag(m: re.Match) -> str:
        nonlocal closed
        name = m.group(1)
        if name is None:  # a closing tag
            return "" if m.group(4).lower() in _INLINE else " "
        low = name.lower()
        if low not in HTML_ELEMENTS and not m.group(3) and "=" not in m.group(2):
            if closed is None:
                closed = {c.group(1) for c in _CLOSING.finditer(text)}
            if name not in closed:
                return m.group(0)
        return "" if low in _INLINE else " "

    return _TAG.sub(untag, text)


def strip_markup(text: str) -> str:
    """Tags removed and HTML entities unescaped (only when the text has ``<...>`` or ``&...;``)."""
    if "<" in text and ">" in text:
        text = strip_tags(text)
    if "&" in text and _ENTITY.search(text):
        text = html.unescape(text)
    return text

"""Decoders of evasions that change how text is written but not what it says, for
:func:`auditor.text.normalize.clean`: percent-encoding, terminal escapes, hyphenated hard wraps,
right-to-left overrides, default-ignorable characters (dropped, or spaces where they stand for them)
and combining marks on Latin letters (camel-cased runs: :mod:`auditor.text.camel`). Each takes and returns a ``str``;
none raises. None deletes text it cannot prove is encoding: an override is undone only where it
reverses something, an ignorable that stands for a space becomes one.

>>> percent_decode("Book%20a%20flight%2C%20please%21")
'Book a flight, please!'
>>> undo_overrides("see \\u202esiraP ot thgilf a kooB\\u202c now"), undo_overrides("\\u202eBook a flight")
('see \\u202eBook a flight to Paris\\u202c now', '\\u202eBook a flight')
>>> strip_terminal_escapes("\\x1b[31mBook\\x1b[0m a flight"), join_hyphen_wraps("informa-\\ntion")
(' Book  a flight', 'information')
>>> strip_latin_marks("cafe\\u0301 \\u1ea1nd na\\u0308ive \\u0915\\u093f\\u0924\\u093e\\u092c")  # Hindi keeps its signs
'cafe and naive \\u0915\\u093f\\u0924\\u093e\\u092c'
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np

from .kernel import char_ranges, char_set, first_in

# -- percent-encoding ------------------------------------------------------------------------------

_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _decoded_run(hexes: list[str]) -> str:
    """A run of ``%XX`` escapes (their hex digits) decoded as UTF-8; where it is not UTF-8 (``100%ab``
    in prose, or Latin-1), each ASCII byte alone and the others kept as they were written."""
    data = bytes.fromhex("".join(hexes))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(chr(b) if b < 0x80 else "%" + x for b, x in zip(data, hexes))


_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def _decode_once(text: str) -> str:
    """Each maximal run of ``%XX`` escapes (:data:`_PERCENT`) of ``text`` decoded (:func:`_decoded_run`),
    found by splitting on ``%``: one Python step per ``%``, not a scan of the text in the regex engine
    (a 2 MB record holding a few escapes)."""
    parts = text.split("%")
    out = [parts[0]]
    run: list[str] = []  # hex digits of the escapes of the run being read
    for part in parts[1:]:
        if len(part) >= 2 and part[0] in _HEX_DIGITS and part[1] in _HEX_DIGITS:
            run.append(part[:2])
            if len(part) == 2:  # the next ``%`` may go on with the run
                continue
            out += (_decoded_run(run), part[2:])
            run = []
            continue
        if run:
            out.append(_decoded_run(run))
            run = []
        out += ("%", part)
    if run:
        out.append(_decoded_run(run))
    return "".join(out)


def has_percent_escape(text: str) -> bool:
    """True when ``text`` holds a ``%XX`` escape (what :func:`percent_decode` decodes)."""
    return "%" in text and _PERCENT.search(text) is not None


def percent_decode(text: str) -> str:
    """``%XX`` runs decoded as UTF-8 (URLs, ``quote`` / ``quote_plus`` output, plain text alike), up
    to three times (``%2520`` is ``%20`` encoded again). A run that is not UTF-8 keeps its non-ASCII
    bytes encoded. ``+`` is left alone: it is punctuation, which ``normalize`` turns into a space anyway.

    >>> percent_decode("q=caf%C3%A9+au+lait&x=%2520%2C and 100%ab %%41%4")
    'q=café+au+lait&x= , and 100%ab %A%4'
    """
    for _ in range(3):
        if "%" not in text:
            break
        decoded = _decode_once(text)
        if decoded == text:
            break
        text = decoded
    return text


# -- right-to-left override ------------------------------------------------------------------------

#: U+202E RIGHT-TO-LEFT OVERRIDE: the characters up to U+202C POP DIRECTIONAL FORMATTING (or the end of
#: the paragraph) are displayed right to left, so Latin text stored reversed reads forwards
_RLO, _PDF = "\u202e", "\u202c"
_OVERRIDE = re.compile("\u202e([^\u202c\n\r\u2029\x1c-\x1e\x85]*)")
_RTL_CLASSES = frozenset({"R", "AL"})

#: very common words of English, Spanish, French, German, Portuguese and Italian whose reversal is no
#: common word of these languages (``on`` / ``no``, ``le`` / ``el``, ``is`` / ``si``, ``not`` / ``ton``,
#: ``out`` / ``tuo``, ``del`` / ``led``, ``das`` / ``sad`` and palindromes are left out: they count the
#: same either way)
_COMMON_WORDS = frozenset(
    """the and to of for you with that this what how can my be have from about please want need find also
    get would like which there they will could any all are your some more know help one has had her his our
    just when where who why should them then than been into over only other new do we
    los las que por para con una como pero este esta quiero puedes gracias
    les des du est une pour dans qui je vous avec pas sur mais nous
    die und ist ich nicht mit eine zu auf den dem bitte auch wie
    um uma com você che sono della""".split()
)
#: word endings of English that read as no ending reversed (``gni``, ``noit``, ``thg`` start no word)
_ENDINGS = ("ing", "tion", "sion", "ment", "ness", "ight", "ould", "ful", "ous", "ble", "ally")
#: a word: letters not glued to digits or letters (``Paris``, ``I`` of ``I'm``; not the ``eb`` of a hex id)
_LETTERS = re.compile(r"(?<![^\W_])[^\W\d_]++(?![^\W_])")
#: a letter, then punctuation that follows a word (``word,`` ``word.``), then a space or the end
_AFTER_WORD = re.compile(r"(?<=[^\W\d_])[.,;:!?](?=\s|$)")


def wordiness(text: str) -> int:
    """How much ``text`` reads as words written in their order: its common words (:data:`_COMMON_WORDS`),
    capitalized words (``Paris``), words with a common English ending (``-ing``, ``-tion`` …) and
    punctuation right after a word (``Paris,``). A Latin text reversed scores (next to) nothing: its
    capitals end words (``siraP``), its punctuation starts them (``,siraP``), its words are no words.

    >>> wordiness("Book a flight to Paris, please."), wordiness(".esaelp ,siraP ot thgilf a kooB")
    (7, 0)
    """
    score = len(_AFTER_WORD.findall(text))
    for word in _LETTERS.findall(text):
        low = word.lower()
        score += (
            (low in _COMMON_WORDS)
            + (len(word) > 1 and word[0].isupper() and word[1:].islower())
            + (len(low) > 4 and low.endswith(_ENDINGS))
        )
    return score


def _reverse(m: re.Match) -> str:
    inner = m.group(1)
    if any(unicodedata.bidirectional(c) in _RTL_CLASSES for c in inner):
        return m.group(0)  # right-to-left script under the override reads in stored order: keep it
    flipped = inner[::-1]
    if wordiness(flipped) <= wordiness(inner):
        return m.group(0)  # the stored order reads as well or better: the override reverses nothing
    return _RLO + flipped


def undo_overrides(text: str) -> str:
    """Text under a right-to-left override put in the order it is displayed (and read) in, only where
    the override reverses something: the span (up to U+202C or the end of the paragraph) is reversed
    when the reversed reading has more :func:`wordiness` than the stored one (Latin text stored
    reversed, ``siraP ot thgilf a kooB``), and left as it is otherwise: an unpaired override before
    text stored forwards (what any model trained on it reads), a tie (no words either way) and spans
    holding right-to-left letters (Arabic, Hebrew), whose reading order is the stored one. The
    override characters themselves are kept (``clean`` drops them as default-ignorable).

    >>> undo_overrides("Note:\\u202e Book a flight to Paris")
    'Note:\\u202e Book a flight to Paris'
    """
    if _RLO not in text:
        return text
    return _OVERRIDE.sub(_reverse, text)


# -- terminal escapes ------------------------------------------------------------------------------

#: ECMA-48 escape sequences: CSI (``ESC [`` or U+009B, parameters, intermediates, a final byte: SGR
#: colours ``\x1b[31m``, cursor and erase codes), OSC / DCS / SOS / PM / APC strings up to their
#: terminator (BEL or ``ESC \``, 2,000 characters at most: an unterminated one loses only its
#: introducer), escapes with intermediate bytes (``ESC (B``) and ``ESC 7`` / ``8`` / ``=`` / ``>`` / ``\``;
#: not ESC before a letter, which may be a lone ESC before a word (``ESC c`` resets a terminal, rarely)
_ESCAPE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]{0,64}+[ -/]{0,8}+[@-~]"
    r"|\x1b\][^\x07\x1b]{0,2000}+(?:\x07|\x1b\\)"
    r"|\x1b[PX^_][^\x1b]{0,2000}+\x1b\\"
    r"|\x1b(?:[ -/]{1,8}+[0-~]|[78=>\\])"
)


def strip_terminal_escapes(text: str) -> str:
    """ANSI / ECMA-48 escape sequences (colours, cursor codes, OSC 8 hyperlinks and titles) replaced
    by a space each: a word boundary, so ``\\x1b[31mword\\x1b[0m`` leaves ``word``, not ``31mword``.
    A lone ESC is left (``normalize`` makes it a space like any control character).

    >>> strip_terminal_escapes("\\x1b[1;31mBook\\x1b[0m a \\x1b]8;;https://x.example\\x1b\\\\flight\\x1b]8;;\\x07")
    ' Book  a  flight '
    """
    if "\x1b" not in text and "\x9b" not in text:
        return text
    return _ESCAPE.sub(" ", text)


# -- hyphenated hard wraps -------------------------------------------------------------------------

#: a hyphen (ASCII, soft or U+2010) at the end of a line, then the next line's indentation, before a letter
_WRAP = re.compile(r"[-\u00ad\u2010]\r?\n[ \t]{0,64}+(?=[^\W\d_])")


def has_hyphen_wrap(text: str) -> bool:
    """A cheap test: False when ``text`` surely has no hyphen at the end of a line."""
    if "-\n" in text or ("\r" in text and "-\r\n" in text):  # a character is found faster than a string
        return True
    return not text.isascii() and first_in(text, _OTHER_HYPHENS) >= 0 and _WRAP.search(text) is not None


#: the hyphens of :data:`_WRAP` but ``-``: a text without them needs no search for one ending a line
_OTHER_HYPHENS = char_ranges([0xAD, 0x2010])


def _join_wrap(m: re.Match) -> str:
    start = m.start()
    return "" if start and m.string[start - 1].islower() else m.group(0)


def join_hyphen_wraps(text: str) -> str:
    """Words broken by a hard wrap (PDF-extracted text) joined: a hyphen after a lower-case letter at
    the end of a line, and a letter starting the next one (after its indentation), are one word.
    ``-`` after a capital, a digit or a space, and a line starting with anything but a letter, stay.

    >>> join_hyphen_wraps("the informa-\\n  tion you need, A-\\nB, 3-\\n4, e-\\nmail, x -\\ny")
    'the information you need, A-\\nB, 3-\\n4, email, x -\\ny'
    """
    if not has_hyphen_wrap(text):
        return text
    for hyphen, wrap in _WRAPS.items():  # one hyphen at a time: a pattern led by a character is found fast
        if hyphen in text:
            text = wrap.sub(_join_wrap, text)
    return text


#: :data:`_WRAP` for each of its hyphens: the wraps of one hyphen neither make nor touch another's (a
#: joined wrap leaves a letter where it was, and a wrap is told by the letter before its hyphen), so
#: joining them hyphen by hyphen gives what one pass of ``_WRAP`` gives
_WRAPS = {h: re.compile(re.escape(h) + r"\r?\n[ \t]{0,64}+(?=[^\W\d_])") for h in "-\u00ad\u2010"}


# -- default-ignorable characters ------------------------------------------------------------------

#: more letters and digits than this, joined by default-ignorable characters into one run, are no word:
#: the ignorables stand for spaces (of the 4.1 million words of tests/data/foreign and ../shared/data,
#: 0.07 % are longer, nearly all of them code identifiers)
MAX_WORD = 24
#: blocks of scripts written without spaces between words (Thai, Lao, Tibetan, Myanmar, Khmer, CJK,
#: kana, Yi): a zero-width space there is a line-break hint inside running text, never a separator
_UNSPACED = (
    (0x0E00, 0x0FFF), (0x1000, 0x109F), (0x1780, 0x17FF), (0x19E0, 0x19FF), (0x2E80, 0x2FDF),
    (0x3040, 0x30FF), (0x3100, 0x312F), (0x31A0, 0x31FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
    (0xA000, 0xA4CF), (0xF900, 0xFAFF), (0xFF66, 0xFF9F), (0x20000, 0x3FFFF),
)  # fmt: skip


def _unspaced(c: str) -> bool:
    cp = ord(c)
    return cp >= 0x0E00 and any(lo <= cp <= hi for lo, hi in _UNSPACED)


_CLASSES: dict[frozenset[str], tuple[bytes, re.Pattern]] = {}


def _present(text: str, chars: frozenset[str]) -> tuple[set[str], int]:
    """The characters of ``chars`` that ``text`` holds: one pass of the kernel tells whether it holds any
    (:func:`~auditor.text.kernel.first_in`; a set of its characters costs many times more), a
    pattern of them finds which, from the first one on; and where that first one stands (-1: none).

    >>> found, at = _present("fl\u200bight \U000e0041", frozenset({"\u200b", "\U000e0041", "\u00ad"}))
    >>> sorted(found), at
    (['\u200b', '\U000e0041'], 2)
    """
    made = _CLASSES.get(chars)
    if made is None:
        ranges = char_ranges(map(ord, chars))
        pairs = np.frombuffer(ranges, dtype=np.uint32).reshape(-1, 2).tolist()
        body = "".join(re.escape(chr(a)) + ("" if a == b else "-" + re.escape(chr(b))) for a, b in pairs)
        made = _CLASSES[chars] = (ranges, re.compile(f"[{body}]" if body else "(?!)"))
    at = first_in(text, made[0])
    return (set(), -1) if at < 0 else (set(made[1].findall(text, at)), at)


def _chunk_start(text: str, at: int) -> int:
    """A place where a whitespace-free chunk of ``text`` starts, at or before the chunk holding position
    ``at``: after the last space, tab or line break before it, or 0 (a chunk starts after any
    whitespace, so one starting at or after this place starts after it in the whole text too).

    >>> _chunk_start("book a fl\\u200bight", 9), _chunk_start("fl\\u200bight", 2)
    (7, 0)
    """
    return max(text.rfind(c, 0, at) for c in " \n\t\r") + 1


def drop_ignorables(text: str, ignorable: frozenset[str] | set[str]) -> str:
    """``text`` without its default-ignorable characters (those of ``ignorable`` it holds), except
    where they stand for spaces: in a whitespace-free chunk where they join letters and digits of
    spaced scripts into a run of more than :data:`MAX_WORD` of them (``Book\\u200ba\\u200bflight…``,
    every space replaced by a zero-width space or a Hangul filler), each run of ignorables inside
    that chunk becomes a space (but next to a letter of an unspaced script). Inside words (``fl\\u200bight``,
    ``bo\\u00adok``) and in scripts written without spaces they are dropped.

    >>> zwsp = {"\\u200b", "\\u00ad", "\\u3164"}
    >>> drop_ignorables("fl\\u200bight bo\\u00adok", zwsp)
    'flight book'
    >>> drop_ignorables("Find\\u3164me\\u3164a\\u3164cheap\\u3164flight\\u3164to\\u3164Paris,\\u3164please", zwsp)
    'Find me a cheap flight to Paris, please'
    """
    present, at = _present(text, ignorable) if isinstance(ignorable, frozenset) else (set(text) & ignorable, 0)
    if not present:
        return text
    cls = "".join(map(re.escape, sorted(present)))
    word = rf"[^\W_{cls}]"
    chunk = re.compile(rf"(?<!\S)[^\s{cls}]*+[{cls}]\S*+")
    joined = re.compile(rf"{word}++(?:[{cls}]++{word}++)++")
    inside = re.compile(rf"(?<=\S)[{cls}]++(?=\S)")
    strip = re.compile(rf"[{cls}]++")

    def space(b: re.Match) -> str:
        c = b.string
        return "" if _unspaced(c[b.start() - 1]) or _unspaced(c[b.end()]) else " "

    def separated(m: re.Match) -> str:
        c = m.group(0)
        for run in joined.finditer(c):
            r = run.group(0)
            if len(strip.sub("", r)) > MAX_WORD and not any(map(_unspaced, r)):
                c = inside.sub(space, c)
                break
        return strip.sub("", c)

    start = _chunk_start(text, at)  # no chunk before the first ignorable's has one
    return text[:start] + chunk.sub(separated, text[start:])


# -- combining marks on Latin letters ---------------------------------------------------------------

_LATIN_BLOCKS = (
    (0xC0, 0x24F),  # Latin-1 Supplement letters, Latin Extended-A and -B
    (0x250, 0x2AF),  # IPA extensions
    (0x1D00, 0x1DBF),  # phonetic extensions
    (0x1E00, 0x1EFF),  # Latin Extended Additional
    (0x2C60, 0x2C7F),  # Latin Extended-C
    (0xA720, 0xA7FF),  # Latin Extended-D
    (0xAB30, 0xAB6F),  # Latin Extended-E
)
_MARK_CATEGORIES = frozenset({"Mn", "Me"})
#: every ASCII character (a text's others are its set of characters less these, in one C call)
_ASCII_CHARS = frozenset(map(chr, range(128)))
_STRIPPED: dict[str, str | None] = {}


def is_latin_letter(c: str) -> bool:
    """An ASCII letter or a letter of a Latin block (``é``, ``ø``, ``ɐ``); not ``×`` / ``÷``."""
    if c.isascii():
        return c.isalpha()
    cp = ord(c)
    return c.isalpha() and any(lo <= cp <= hi for lo, hi in _LATIN_BLOCKS)


def _stripped(c: str) -> str | None:
    """``c`` without its combining marks when it is a Latin letter that has them (``ạ`` -> ``a``), else None."""
    if c not in _STRIPPED:
        d = unicodedata.normalize("NFD", c)
        keep = "".join(x for x in d if unicodedata.category(x) not in _MARK_CATEGORIES)
        _STRIPPED[c] = keep if keep != c and keep and all(map(is_latin_letter, keep)) else None
    return _STRIPPED[c]


def strip_latin_marks(text: str) -> str:
    """Combining marks on Latin letters removed, precomposed (``é``, ``ạ``, ``ñ``) or not (``e`` +
    U+0301); marks on any other script's letters (Devanagari and Arabic vowel signs, Cyrillic ``й``,
    Greek tonos) are kept, so non-Latin text stays as distinct as it was. ``text`` is NFKC-normalized."""
    if text.isascii():
        return text
    return marks_stripped(text, char_set(text))[0]


def marks_stripped(text: str, chars: set[str]) -> tuple[str, set[str]]:
    """:func:`strip_latin_marks` of ``text``, whose characters are ``chars``, and the characters of the
    result (a letter's replacement holds no mark, so it is stripped of none: one pass)."""
    marks, gone, added = [], [], []
    for c in chars.difference(_ASCII_CHARS):
        if unicodedata.category(c) in _MARK_CATEGORIES:
            marks.append(c)
            continue
        base = _stripped(c)
        if base is not None:
            text = text.replace(c, base)
            gone.append(c)
            added.append(base)
    if gone:
        chars = chars.difference(gone).union(*added)
    if marks:
        bases = "".join(re.escape(c) for c in chars if is_latin_letter(c))
        if bases:
            pattern = f"(?<=[{bases}])[{''.join(map(re.escape, marks))}]+"
            text = re.sub(pattern, "", text)
            chars = char_set(text)
    return text, chars

"""Decoders of evasions that change how text is written but not what it says, for
:func:`auditor.text.normalize.clean`: percent-encoding, right-to-left overrides, camel-cased runs of
words and combining marks on Latin letters. Each takes and returns a ``str``; none raises.

>>> percent_decode("Book%20a%20flight%2C%20please%21")
'Book a flight, please!'
>>> undo_overrides("see \\u202esiraP ot thgilf a kooB\\u202c now")
'see \\u202eBook a flight to Paris\\u202c now'
>>> split_camel_runs("BookAFlightToParis on my iPhone with JavaScript")
'Book A Flight To Paris on my iPhone with JavaScript'
>>> strip_latin_marks("cafe\\u0301 \\u1ea1nd na\\u0308ive \\u0915\\u093f\\u0924\\u093e\\u092c")  # Hindi keeps its signs
'cafe and naive \\u0915\\u093f\\u0924\\u093e\\u092c'
"""

from __future__ import annotations

import re
import unicodedata

# -- percent-encoding ------------------------------------------------------------------------------

_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _unquote(m: re.Match) -> str:
    raw = m.group(0)
    data = bytes.fromhex(raw.replace("%", ""))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:  # not UTF-8 (``100%ab`` in prose, or Latin-1): each ASCII byte alone
        return "".join(chr(b) if b < 0x80 else raw[3 * i : 3 * i + 3] for i, b in enumerate(data))


def has_percent_escape(text: str) -> bool:
    """True when ``text`` holds a ``%XX`` escape (what :func:`percent_decode` decodes)."""
    return "%" in text and _PERCENT.search(text) is not None


def percent_decode(text: str) -> str:
    """``%XX`` runs decoded as UTF-8 (URLs, ``quote`` / ``quote_plus`` output, plain text alike), up
    to three times (``%2520`` is ``%20`` encoded again). A run that is not UTF-8 keeps its non-ASCII
    bytes encoded. ``+`` is left alone: it is punctuation, which ``normalize`` turns into a space anyway.

    >>> percent_decode("q=caf%C3%A9+au+lait&x=%2520%2C and 100%ab")
    'q=café+au+lait&x= , and 100%ab'
    """
    for _ in range(3):
        if "%" not in text:
            break
        decoded = _PERCENT.sub(_unquote, text)
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


def _reverse(m: re.Match) -> str:
    inner = m.group(1)
    if any(unicodedata.bidirectional(c) in _RTL_CLASSES for c in inner):
        return m.group(0)  # right-to-left script under the override reads in stored order: keep it
    return _RLO + inner[::-1]


def undo_overrides(text: str) -> str:
    """Text under a right-to-left override put in the order it is displayed (and read) in: reversed,
    unless it holds right-to-left letters (Arabic, Hebrew), whose reading order is the stored one.
    The override characters themselves are kept (``clean`` drops them as default-ignorable)."""
    if _RLO not in text:
        return text
    return _OVERRIDE.sub(_reverse, text)


# -- camel-cased runs ------------------------------------------------------------------------------

#: a run of non-space characters with at least one lower-case letter followed by a capital (matched
#: from the run's start only, the rest possessively: twice as fast as the plain pattern)
_CAMEL_CANDIDATE = re.compile(r"(?<!\S)\S*?[a-z][A-Z]\S*+")
#: the humps that count: ``aB`` and ``ABc`` (``HTTPServer`` -> ``HTTP Server``); letters only, so
#: upper-case codes (``8DT4XZ``, ASINs) and text in one case never split, whatever its digits
_HUMP = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
#: where a run that has enough humps splits: those and a digit before a capital (``Find5Hotels``)
_SPLIT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
#: a run is split only when it has this many humps (pieces) or more
MIN_HUMPS = 3
#: bytes -> b"a" (lower-case letter), b"A" (capital), b" " (anything else): a camel-cased run holds
#: b"aA" once mapped, a cheap test run before any regular expression
CASE_CLASSES = bytes(ord("a") if 97 <= i <= 122 else ord("A") if 65 <= i <= 90 else 32 for i in range(256))


def may_have_camel_run(data: bytes) -> bool:
    """False when ``data`` (ASCII) surely has no camel-cased run (no lower-case letter directly
    followed by a capital). A fast pre-test: :func:`has_camel_run` decides."""
    return b"aA" in data.translate(CASE_CLASSES)


#: a run of letters that reads as words written together: an optional lower-case word, then
#: capitalized words with a vowel (``Book``, ``Flight``, ``By``, ``It``), the one-letter words ``A`` /
#: ``I`` and acronyms (``ID``, ``API``, ``VoIP``: capitals not followed by a lower-case letter), each
#: taken atomically (linear, whatever the run). A random mixed-case id (``hXQ7qFFt``, ``LkqUSBNCOu``, ``fINfRtJpnA``,
#: ``ZiHuFk2ga5Pv``) is neither
_WORDS = re.compile(r"[a-z]*+(?>[A-Z](?=[a-z]*[aeiouy])[a-z]++|[AEIOUY][a-z]++|[A-Z]+s?(?![a-z]))*+")
_LETTER_RUN = re.compile(r"[A-Za-z]+")
#: a capitalized word of three letters or more with a vowel: a run needs :data:`MIN_HUMPS` of them
_TITLE_WORD = re.compile(r"[A-Z](?=[a-z]*[aeiouy])[a-z]{2,}")


def _words_run_together(run: str) -> bool:
    """True when ``run`` is words written together: at least :data:`MIN_HUMPS` pieces and as many
    capitalized words of three letters or more, and every run of letters in it reads as words (:data:`_WORDS`; digits and punctuation between them are fine:
    ``Find5HotelsInParis``, ``ToParis,AndThen``). Random mixed-case ids keep one token, so a
    lower-cased copy of them still matches.

    >>> runs = ("BookAFlightToParis", "I'mPlanningATripToParis,AndThen", "for2AdultsInParisToday", "TheUserIDIsMine",
    ...         "hXQ7qFFt", "LkqUSBNCOu", "vyBYVVYshoSp", "fINfRtJpnA", "ZiHuFk2ga5Pv", "iPhone")
    >>> [_words_run_together(r) for r in runs]
    [True, True, True, True, False, False, False, False, False, False]
    """
    if len(_HUMP.split(run)) < MIN_HUMPS or len(_TITLE_WORD.findall(run)) < MIN_HUMPS:
        return False
    return all(_WORDS.fullmatch(letters) for letters in _LETTER_RUN.findall(run))


def _split_token(m: re.Match) -> str:
    run = m.group(0)
    return " ".join(_SPLIT.split(run)) if _words_run_together(run) else run


def has_camel_run(text: str) -> bool:
    """True when :func:`split_camel_runs` changes ``text``."""
    return any(_words_run_together(m.group(0)) for m in _CAMEL_CANDIDATE.finditer(text))


def split_camel_runs(text: str) -> str:
    """Words run together in camel case (``BookAFlightToParis``) split apart: a run of non-space
    characters with at least :data:`MIN_HUMPS` humps in all (punctuation between them does not count:
    ``ToParis,AndThen`` is one run of four; a hump is a lower-case letter before a capital, or the last
    capital of several before a lower-case letter) is cut at each hump and before each capital that
    follows a digit. Two-hump names standing alone (``iPhone``, ``JavaScript``, ``YouTube``,
    ``PostgreSQL``) and text in one case (``8DT4XZ``, ``B07ZPKBL9V``) stay whole, so ``normalize`` still
    gives one result for a text in upper and in lower case.

    >>> split_camel_runs("I'mPlanningATripToParis,AndThenRome. (JavaScript, iPhone)")
    "I'm Planning A Trip To Paris,And Then Rome. (JavaScript, iPhone)"
    """
    if not may_have_camel_run(text.encode("ascii", "replace")):
        return text
    return _CAMEL_CANDIDATE.sub(_split_token, text)


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
    chars = {c for c in set(text) if not c.isascii()}
    marks = []
    for c in chars:
        if unicodedata.category(c) in _MARK_CATEGORIES:
            marks.append(c)
            continue
        base = _stripped(c)
        if base is not None:
            text = text.replace(c, base)
    if marks:
        bases = "".join(re.escape(c) for c in set(text) if is_latin_letter(c))
        if bases:
            pattern = f"(?<=[{bases}])[{''.join(map(re.escape, marks))}]+"
            text = re.sub(pattern, "", text)
    return text

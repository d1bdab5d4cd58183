"""Decoders of evasions that change how text is written but not what it says, for
:func:`auditor.text.normalize.clean`: percent-encoding, terminal escapes, hyphenated hard wraps,
right-to-left overrides, default-ignorable characters (dropped, or spaces where they stand for them),
camel-cased runs of words and combining marks on Latin letters. Each takes and returns a ``str``;
none raises. None deletes text it cannot prove is encoding: an override is undone only where it
reverses something, an ignorable that stands for a space becomes one.

>>> percent_decode("Book%20a%20flight%2C%20please%21")
'Book a flight, please!'
>>> undo_overrides("see \\u202esiraP ot thgilf a kooB\\u202c now"), undo_overrides("\\u202eBook a flight")
('see \\u202eBook a flight to Paris\\u202c now', '\\u202eBook a flight')
>>> strip_terminal_escapes("\\x1b[31mBook\\x1b[0m a flight"), join_hyphen_wraps("informa-\\ntion")
(' Book  a flight', 'information')
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
    return "-\n" in text or "-\r\n" in text or (not text.isascii() and _WRAP.search(text) is not None)


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
    return _WRAP.sub(_join_wrap, text)


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
    present = set(text) & ignorable
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

    return chunk.sub(separated, text)


# -- camel-cased runs ------------------------------------------------------------------------------

#: a run of non-space characters with at least one lower-case letter followed by a capital: what a
#: candidate for splitting is (:func:`_camel_candidates` finds the same runs without it; the tests'
#: reference path, tests/reference_paths.py, uses it)
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


#: the ASCII characters ``str.isspace`` (and ``\s`` of a ``str`` pattern) holds to be whitespace
_ASCII_WHITESPACE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"


def _camel_candidates(text: str) -> tuple[bytes, list[tuple[int, int]]]:
    """The case classes of ``text`` (:data:`CASE_CLASSES`, one byte per character) and the spans of its
    whitespace-delimited runs that hold a lower-case letter followed by a capital: what
    :data:`_CAMEL_CANDIDATE` matches, found with ``bytes.find`` on the classes and ``str.find`` /
    ``rfind`` for the whitespace around each hit (C loops; the pattern steps through every run of the
    text in Python's regex engine). The whitespace is ``str.isspace``'s, as that of the pattern's ``\\s``.

    >>> _camel_candidates("see BookAFlight and\u00a0iPhone, x")[1]
    [(4, 15), (20, 27)]
    """
    classes = text.encode("ascii", "replace").translate(CASE_CLASSES)
    p = classes.find(b"aA")
    if p < 0:
        return classes, []
    if text.isascii():
        spaces = [c for c in _ASCII_WHITESPACE if c in text]
    else:
        spaces = [c for c in set(text) if c.isspace()]
    n = len(text)
    ahead = dict.fromkeys(spaces, -1)  # the next occurrence of each whitespace character at or after a hit
    spans = []
    prev = 0
    while p >= 0:
        start = prev
        for c in spaces:
            at = text.rfind(c, prev, p)
            if at >= start:
                start = at + 1
        end = n
        for c in spaces:
            at = ahead[c]
            if at < p and at != n:
                at = ahead[c] = text.find(c, p) % (n + 1)  # -1 (none) -> n
            end = min(end, at)
        spans.append((start, end))
        prev = end
        p = classes.find(b"aA", end)
    return classes, spans


def _humped(classes: bytes, start: int, end: int) -> bool:
    """At least :data:`MIN_HUMPS` pieces between the humps of ``classes[start:end]`` (``aA`` and ``AAa``
    in the case classes, neither overlapping itself): the first test of :func:`_words_run_together`,
    without a regular expression (``iPhone``, ``JavaScript`` stop here)."""
    return classes.count(b"aA", start, end) + classes.count(b"AAa", start, end) + 1 >= MIN_HUMPS


def has_camel_run(text: str) -> bool:
    """True when :func:`split_camel_runs` changes ``text``."""
    classes, spans = _camel_candidates(text)
    return any(_humped(classes, a, b) and _words_run_together(text[a:b]) for a, b in spans)


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
    classes, spans = _camel_candidates(text)
    pieces: list[str] = []
    done = 0
    for a, b in spans:
        if _humped(classes, a, b) and _words_run_together(run := text[a:b]):
            pieces += (text[done:a], " ".join(_SPLIT.split(run)))
            done = b
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


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

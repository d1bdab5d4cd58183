"""Camel-cased runs of words (``BookAFlightToParis``), an evasion :func:`auditor.text.normalize.normalize`
undoes when it folds case: :func:`split_camel_runs` cuts a run apart where it reads as words written
together and leaves names (``iPhone``, ``JavaScript``) and random mixed-case ids whole. Takes and returns
a ``str``; never raises.

>>> split_camel_runs("BookAFlightToParis on my iPhone with JavaScript")
'Book A Flight To Paris on my iPhone with JavaScript'
"""

from __future__ import annotations

import re

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
    return len(_HUMP.split(run)) >= MIN_HUMPS and _reads_as_words(run)


def _reads_as_words(run: str) -> bool:
    """:func:`_words_run_together` of a run known to have :data:`MIN_HUMPS` pieces or more (the
    kernel's ``camel_runs`` and :func:`_humped` count them, as ``_HUMP`` does): its capitalized words
    and letter runs alone are read. A run of many distinct ones costs this for each.

    >>> _reads_as_words("BookAFlightToParis"), _reads_as_words("fINfRtJpnA")
    (True, False)
    """
    if len(_TITLE_WORD.findall(run)) < MIN_HUMPS:
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
    return any(_humped(classes, a, b) and _reads_as_words(text[a:b]) for a, b in spans)


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
    return split_runs(text, [(a, b) for a, b in spans if _humped(classes, a, b)])


def split_runs(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each of its runs ``spans`` (whitespace-delimited, with enough humps, in order)
    split where it reads as words written together (:func:`_words_run_together`); ``text`` itself when
    none does.

    >>> split_runs("see BookAFlightToParis LkqUSBNCOuTx", [(4, 22), (23, 35)])
    'see Book A Flight To Paris LkqUSBNCOuTx'
    """
    pieces: list[str] = []
    done = 0
    for a, b in spans:
        if _reads_as_words(run := text[a:b]):
            pieces += (text[done:a], " ".join(_SPLIT.split(run)))
            done = b
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


def split_candidates(raw: bytes, spans: list[tuple[int, int]], found: list[tuple[int, int]] | None = None) -> bytes:
    """:func:`split_camel_runs` of ASCII text in bytes, given its candidate runs: ``spans`` are the
    whitespace-delimited runs holding a lower-case letter before a capital and at least
    :data:`MIN_HUMPS` pieces between their humps (``aA``, ``AAa``), in order, as the batch kernel's
    ``camel_runs`` finds them (:mod:`auditor.text._batchpy`); only these are read as words
    (:func:`_words_run_together`) in Python. Every plain piece of a joined batch
    (:class:`~auditor.text.batch.TokenBatch`) at once: a separator holds spaces, so no run crosses
    two pieces, and pieces that ``normalize`` wrote hold no capital.

    With ``found``, each run split is noted there as ``(its start in raw, the spaces it gained)``.

    >>> raw = b"BookAFlightToParis iPhone \\x00 x FindMeAHotelNearParis"
    >>> found = []
    >>> split_candidates(raw, [(0, 18), (31, 53)], found), found
    (b'Book A Flight To Paris iPhone \\x00 x Find Me A Hotel Near Paris', [(0, 4), (31, 5)])
    """
    out: list[bytes] = []
    done = 0
    for start, end in spans:
        run = raw[start:end]
        split = _SPLITS.get(run, _UNSEEN)
        if split is _UNSEEN:
            split = _split_run(run)
            if len(run) <= _SPLITS_RUN:  # an identifier, not a blob of megabytes with humps in it
                if len(_SPLITS) >= _SPLITS_MAX:
                    _SPLITS.clear()
                _SPLITS[run] = split
        if split is not None:
            out += (raw[done:start], split)
            done = end
            if found is not None:
                found.append((start, len(split) - len(run)))
    if not out:
        return raw
    out.append(raw[done:])
    return b"".join(out)


def _split_run(run: bytes) -> bytes | None:
    """A candidate run split at its humps where it reads as words (:func:`_words_run_together`), else None."""
    text = run.decode("ascii")
    return " ".join(_SPLIT.split(text)).encode("ascii") if _reads_as_words(text) else None


#: the candidate runs read so far and how each splits (None: it does not): the same identifiers
#: recur across a corpus, and a batch's lines are read again by the exact tier's line units; at most
#: :data:`_SPLITS_MAX` runs of at most :data:`_SPLITS_RUN` bytes each (~12 MB at most, ~4 MB of identifiers)
_SPLITS: dict[bytes, bytes | None] = {}
_SPLITS_MAX = 1 << 15
_SPLITS_RUN = 128
_UNSEEN = b"\x00unseen"

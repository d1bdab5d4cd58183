"""Where in a training record a match sits: the ``field`` and ``span`` evidence of findings.

The tiers search a training record's views as text; a finding names where in the *record* the eval
item sits by walking the record's raw object (:func:`auditor.records.fields.strings`, every string
with its path) once more: the first string whose normalized text contains the eval item's
normalized text (at word boundaries; a string under an id-like key such as ``id`` or ``query_id``
only when no other string does: an id that repeats the query is not where a reader looks for it),
else the string sharing the most of its distinct words. :func:`locate_span` also says *where in
that string*: the character range of the densest run of the item's words (an exact copy is the
copy itself), which the report shows, highlighted, beside the eval text
(:mod:`auditor.text.proof`). Only records behind a finding pay for it, and a record with several
findings is normalized and split into words once (a cache of the last few records that holds their raw
objects, so their identities cannot be reused meanwhile). Words are compared by their xxh64, as the
scan compares tokens: the kernel hashes a string's words in one pass (no Python object per word).

>>> raw = {"instruction": "Answer the question.", "input": "Find me FLIGHTS to Paris, please!"}
>>> locate_field(raw, "find me flights to paris please")
'input'
>>> locate_field({"messages": [{"role": "user", "content": "book a hotel in Rome for two"}]}, "hotel in rome")
'messages[0].content'
>>> locate_field({"a": "nothing alike"}, "book a flight") is None
True
>>> locate_field({"id": "Step 1: book a hotel", "turns": ["System prompt.", "book a hotel"]}, "book a hotel")
'turns[1]'
>>> s = locate_span({"turns": ["You are a helpful agent.", "Hi! Book a hotel in Rome. Thanks"]}, "book a hotel in rome")
>>> s.field, s.start, s.end, "Hi! Book a hotel in Rome. Thanks"[s.start : s.end]
('turns[1]', 4, 24, 'Book a hotel in Rome')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..records.fields import strings
from . import kernel
from .normalize import normalize
from .tokens import token_hashes

#: the records behind the latest findings, most recent last: (raw object, [(path, " normalized text ",
#: string)], {path: :func:`_words_of` of that string}); an entry holds its raw object, so the identity it
#: is found by cannot be reused meanwhile
_cache: list[tuple[Any, list[tuple[str, str, str]], dict[str, Any]]] = []
#: records kept, and their characters at most (the newest is kept whatever its size): the scan locates a
#: record's findings together (:func:`auditor.methods._located.located_by_record`), but a caller searching
#: index by index (a Detector of several methods) gets one record's findings between other records'
_CACHED, _CACHED_CHARS = 8, 4_000_000
#: characters of a string whose word characters are told at a time (:func:`_words_of`): ``np.take``
#: makes int64 indices of what it is given (a 2 MB record's would be 16 MB)
_WORDS_PART = 1 << 16
_WORD = re.compile(r"\w+", re.UNICODE)
_ID_KEY = re.compile(r"(?:^|[._\[\"])(?:[a-z0-9]*_)?(?:id|uuid|key)\"?\]?\Z", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Span:
    """Where a match sits: ``field`` (the string's path in the raw object; ``""``: the record is that
    one string), ``start`` / ``end`` (its character range in that string) and the string itself."""

    field: str
    start: int
    end: int
    text: str


def _entry(raw: Any) -> tuple[Any, list[tuple[str, str, str]], dict[str, Any]]:
    """The cache entry of ``raw``, made (every string normalized once) when it has none."""
    for k, entry in enumerate(_cache):
        if entry[0] is raw:
            if k != len(_cache) - 1:
                _cache.append(_cache.pop(k))
            return entry
    entry = (raw, [(p, f" {_normalize(s)} ", s) for p, s in strings(raw)], {})
    _cache.append(entry)
    del _cache[:-_CACHED]
    while len(_cache) > 1 and sum(len(n) for e in _cache for _, n, _ in e[1]) > _CACHED_CHARS:
        del _cache[0]
    return entry


def forget_located() -> None:
    """Drop the cached records (the scan, after each batch: their findings are located by then)."""
    _cache.clear()


def _normalize(s: str) -> str:
    """``normalize(s)``, read from the scan's token batch when it holds this very string."""
    from .batch import remembered  # the scan's module, loaded by then (numpy, pyarrow): not at start-up

    known = remembered(s)
    return normalize(s) if known is None else known[0].normalized(known[1]).decode("utf-8")


def _normalized(raw: Any) -> list[tuple[str, str, str]]:
    return _entry(raw)[1]


def _id_like(path: str) -> bool:
    return bool(path) and bool(_ID_KEY.search(path))


def _find(raw: Any, text: str) -> tuple[str, str] | None:
    """``(path, string)`` of the string of ``raw`` holding ``text`` (see the module doc), or None."""
    target = normalize(text)
    if raw is None or not target:
        return None
    needle = f" {target} "
    words = set(target.split())
    best, where, fallback = 0, None, None
    for path, norm, s in _normalized(raw):
        if needle in norm:
            if not _id_like(path):
                return path, s
            fallback = fallback or (path, s)
            continue
        if fallback is None:
            score = sum(f" {w} " in norm for w in words)  # its tokens, each between single spaces
            if score > best:
                best, where = score, (path, s)
    return fallback or where


def _firsts(hashes: np.ndarray) -> tuple[np.ndarray, dict[int, int]]:
    """For each of ``hashes``, the index of its first copy; and those indexes by hash, one per distinct
    hash (the kernel's :func:`~auditor.text.kernel.lookup` of ``hashes`` among themselves).

    >>> ids, by_hash = _firsts(np.array([7, 5, 7], dtype=np.uint64))
    >>> ids.tolist(), by_hash
    ([0, 1, 0], {7: 0, 5: 1})
    """
    hashes = np.ascontiguousarray(hashes, dtype=np.uint64)
    ids = np.frombuffer(kernel.lookup(hashes.data, hashes.tobytes()), dtype=np.int64) - 1
    first = np.flatnonzero(ids == np.arange(len(ids)))
    return ids, dict(zip(hashes[first].tolist(), first.tolist()))


def _word_hashes(data: bytes) -> np.ndarray:
    """The xxh64 of each word of ``data`` (the runs of bytes other than a space), its ASCII lowered, in
    order: the kernel squeezes the words one space apart, lowering them in the same pass, as a token
    batch's buffer, and hashes them.

    >>> _word_hashes(b"  aB  c D").tolist() == token_hashes(["ab", "c", "d"]).tolist()
    True
    """
    packed, offsets, _, _ = kernel.impl.squeeze(data + b" ", _ASCII_LOWER)  # " ": the last word's end
    return np.frombuffer(kernel.impl.token_hashes(packed, offsets), dtype=np.uint64)


def locate_field(raw: Any, text: str) -> str | None:
    """The path of the string of ``raw`` that holds ``text`` (see the module doc), or None when
    ``raw`` is None or no string shares a word with it."""
    found = _find(raw, text)
    return None if found is None else found[0]


def word_span(
    s: str, text: str, words: tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, int]] | None = None
) -> tuple[int, int]:
    """The character range of ``s`` holding the densest run of ``text``'s words: the window of as many
    words as ``text`` has (a quarter more when no window holds them all: a reworded copy) with the
    most of them, trimmed to its first and last shared word; (0, 0) when they share none.

    >>> word_span("intro words. Book a cheap flight to Rome! more", "book a flight to rome")
    (13, 40)
    """
    starts, ends, ids, by_hash = words if words is not None else _words_of(s)
    found = _WORD.findall(text)
    wanted = [by_hash[h] for h in token_hashes(list({w.casefold() for w in found})).tolist() if h in by_hash]
    if not wanted:
        return 0, 0
    marked = np.zeros(len(ids), dtype=bool)  # an id is the index of its word's first occurrence
    marked[wanted] = True
    hits = marked[ids]
    n = max(1, len(found))
    seen = np.concatenate(([0], np.cumsum(hits, dtype=np.int64)))
    width = min(len(hits), n)
    sums = seen[width:] - seen[:-width]  # hits in each window of ``width`` words
    if sums.max() < n:  # no copy of every word in a row: a reworded run, allowed some slack
        width = min(len(hits), n + max(2, n // 4))
        sums = seen[width:] - seen[:-width]
    first = int(np.argmax(sums))
    inside = np.flatnonzero(hits[first : first + width]) + first
    return int(starts[inside[0]]), int(ends[inside[-1]])


#: whether each ASCII character is a word character of :data:`_WORD` (``\\w``: ``str.isalnum`` or ``_``)
_ASCII_WORD = np.array([chr(i).isalnum() or i == 95 for i in range(128)])


def _words_of(s: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, int]]:
    """The start and end of every word of ``s`` (:data:`_WORD`), an id for each word case-folded (the
    index of its first occurrence) and the ids by the word's xxh64 (``token_hashes``). The words are
    found on the code points of ``s`` with numpy (a character is a word character of ``\\w`` when it
    is ``_`` or ``str.isalnum``, asked once per distinct non-ASCII character), and case-folded all at
    once in a copy of ``s`` with every other character a space (case folding never makes a space, nor
    an empty string, of a word character: the folded copy holds the same words in the same order),
    whose words the kernel hashes (:func:`_word_hashes`) and tells apart by hash (:func:`_firsts`): no
    Python step per word. On a 2 MB record 4x faster than ``findall`` and ``casefold`` word by word
    (the regex is kept as the tests' reference: ``reference_paths.words_of``).

    >>> starts, ends, ids, by_hash = _words_of("Hi, \u00dftra\u00dfe 12 hi!")
    >>> starts.tolist(), ends.tolist(), ids.tolist(), list(by_hash.values())
    ([0, 4, 11, 14], [2, 10, 13, 16], [0, 1, 2, 0], [0, 1, 2])
    >>> list(by_hash) == token_hashes(["hi", "sstrasse", "12"]).tolist()
    True
    """
    cps = np.frombuffer(s.encode("utf-32-le", "surrogatepass"), np.uint32).copy()  # writable: spaced below
    word = np.empty(len(cps), dtype=bool)  # every code point past 127 reads as DEL (no word) here
    for at in range(0, len(cps), _WORDS_PART):  # by parts: take makes int64 indices of what it is given
        np.take(_ASCII_WORD, cps[at : at + _WORDS_PART], mode="clip", out=word[at : at + _WORDS_PART])
    at_high = np.flatnonzero(cps > 127)
    letters: list[str] = []  # the distinct word characters past ASCII
    if len(at_high):
        high = cps[at_high]
        distinct = np.unique(high)
        letters = [c for c in map(chr, distinct.tolist()) if c.isalnum()]
        word[at_high] = np.isin(high, np.array([ord(c) for c in letters], dtype=np.uint32))
    edges = np.diff(word.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    del edges
    cps[~word] = 32
    del word
    spaced = str(cps, "utf-32-le", "surrogatepass")  # read from the array's buffer, not a copy of it
    del cps
    return starts, ends, *_firsts(_word_hashes(_folded(spaced, letters)))


#: ASCII upper case lowered, every other byte kept (:func:`_word_hashes`)
_ASCII_LOWER = bytes.maketrans(bytes(range(65, 91)), bytes(range(97, 123)))
#: the most characters past ASCII :func:`_folded` replaces one by one (more: the string is folded whole)
_FOLDED_ONE_BY_ONE = 32


def _folded(spaced: str, letters: list[str]) -> bytes:
    """``spaced.casefold()`` as UTF-8 but for ASCII upper case (:func:`_word_hashes` lowers it), for a
    string whose characters past ASCII are ``letters``: each letter that folds to something else
    replaced by its folding in the bytes, where they are few (a folding folds to itself, so no
    replacement touches another's output: the tests check it for every character). Folding a string
    whole reads it character by character: 15 ms for 2 MB holding one accented capital.

    >>> _folded("Stra\u00dfe \u00c9t\u00e9", ["\u00df", "\u00c9", "\u00e9"]) == "Strasse \u00e9t\u00e9".encode()
    True
    """
    folds = [(c, f) for c in letters if (f := c.casefold()) != c]
    if len(folds) > _FOLDED_ONE_BY_ONE:
        return spaced.casefold().encode("utf-8", "surrogatepass")
    data = spaced.encode("utf-8", "surrogatepass")
    for c, f in folds:  # UTF-8 is self-synchronizing: a character's bytes are found only where it stands
        data = data.replace(c.encode("utf-8"), f.encode("utf-8"))
    return data


def locate_span(raw: Any, text: str) -> Span | None:
    """Where ``text`` sits in ``raw``: its field (:func:`locate_field`) and the character range in it
    (:func:`word_span`); None when no string of ``raw`` shares a word with it."""
    found = _find(raw, text)
    if found is None:
        return None
    path, s = found
    spans = _entry(raw)[2]
    words = spans.get(path)
    if words is None:
        words = spans[path] = _words_of(s)
    start, end = word_span(s, text, words)
    if end <= start:
        return None
    return Span(path, start, end, s)

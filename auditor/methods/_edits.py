"""How a near-copy of an eval item differs from it, word by word: what the ``minhash`` word-set
channel reads before it calls a match conclusive.

A light edit (words dropped, neighbours swapped, case and punctuation changed, a courtesy phrase
added) leaves the item's content words and values where they were; a *sibling* (the same template
around another value, another colour, another connector) replaces one. Words are compared as
:func:`chunks`: whitespace-separated, normalized (:mod:`auditor.text.normalize`), punctuation squeezed
out, so that ``0.01`` / ``001`` or ``jane.doe@example.com`` / ``janedoe@example;com`` are the same word.

>>> substituted("a blue ottoman for the living room", "a green ottoman for the living room")
True
>>> values_kept("buy 3 tickets in Chicago on 2024-03-19", "Please help. buy tickets in chicago on 2024-03-19")
True
"""

from __future__ import annotations

import re
from collections import Counter

from ..text.normalize import has_digit, tokens

#: words whose addition or removal never changes what is asked (function words, courtesy)
LIGHT_WORDS = frozenset(
    "a an the to for of and or in on at by with from as is are am be it its this that these those i im i'm me my "
    "we our you your please thanks thank kindly could would can will help advance lot some any need want looking".split()
)


def chunks(text: str) -> list[str]:
    """The text's whitespace-separated words, each normalized and with its punctuation squeezed out, so
    that a changed or dropped dot, comma or dash inside a word (``0.01`` / ``001``, ``192.168.1.1`` /
    ``192168.1;1``, ``jane.doe@example.com`` / ``janedoe@example;com``) leaves the word as it was.

    >>> chunks("Ping 192.168.1.1, e.g. NOW!")
    ['ping', '19216811', 'eg', 'now']
    """
    return [c for c in ("".join(tokens(w)) for w in text.split()) if c]


def values_kept(eval_text: str, train_text: str) -> bool:
    """True when the training text keeps the eval text's values (words with a digit: ids, sizes, dates,
    amounts, as :func:`chunks`) well enough to be that item: all of them, or at least as many as it
    lacks, and those it shares in the item's order (one swap of neighbours allowed: all but one of them
    in one common subsequence). A text that lacks
    the item's only value, or most of them, matches the template, not the item (``salary greater than
    $5000`` / ``salary greater than``: any threshold fits); one whose values stand elsewhere is another
    instance of it (``3x^2 + 7x + 2``, ``5x^2 - 4x + 1`` / ``3x^2 + 4x + 2``, ``5x^2 - 7x + 3``).

    >>> values_kept("buy 3 tickets for Dune in Chicago on 2024-03-19", "buy tickets for dune in chicago on 2024-03-19")
    True
    >>> values_kept("employees with a salary greater than $5000", "employees with a salary greater than, thanks")
    False
    >>> values_kept("roots of 3x + 7 = 0 and 5x - 4 = 0", "roots of 3x + 4 = 0 and 5x - 7 = 0")
    False
    >>> values_kept("scores 85, 90, 88 and 92", "scores 85 88 90; and 92 please")
    True
    """
    ev = [c for c in chunks(eval_text) if has_digit(c)]
    tr = [c for c in chunks(train_text) if has_digit(c)]
    return _kept(ev, tr, replaced=True)


def values_match(eval_text: str, train_text: str) -> bool:
    """True when ``train_text`` (the copy: a training view, or the span of a longer text that the copy
    fills) holds the eval text's values well enough to be a copy of *that* item: its values are its
    runs of digits, read in the text as it is (so ``10.5`` and ``10 . 5`` agree, and ``In2023`` holds
    ``2023``) or in its :func:`chunks` (so ``4.4`` and ``44`` agree): either reading passes; at most
    half of them dropped and not the only one (a light edit drops a value; a text without the item's
    values matches its template), none *replaced* by another value (``sides as 4 and 5`` / ``sides
    as 5 and 6``: a sibling item), and those kept in the item's order, one swap of neighbours allowed
    (as :func:`values_kept`).

    >>> values_match("the other two sides as 4 and 5", "Q: the other two sides as 4 and 5. Thanks")
    True
    >>> values_match("the other two sides as 4 and 5", "the other two sides as 5 and 6")
    False
    >>> values_match("a room for 2 adults and 1 child on May 1, 2022", "a room for 2 adults and child on may 1 2022")
    True
    >>> values_match("status of the interface on node 42", "status of the interface on node"), values_match("no values", "x")
    (False, True)
    """
    return _kept(_DIGITS.findall(eval_text), _DIGITS.findall(train_text), replaced=False) or _kept(
        _chunk_digits(eval_text), _chunk_digits(train_text), replaced=False
    )


_DIGITS = re.compile(r"\d+")


def _chunk_digits(text: str) -> list[str]:
    return [d for c in chunks(text) for d in _DIGITS.findall(c)]


def _kept(ev: list[str], tr: list[str], replaced: bool) -> bool:
    """The eval values ``ev`` kept by ``tr``: at most half of them missing (none, when ``replaced`` is
    False and ``tr`` holds a value ``ev`` lacks: a value replaced), the shared ones in order (one swap
    of neighbours allowed). No values: kept."""
    missing = sum((Counter(ev) - Counter(tr)).values())
    if missing and (2 * missing > len(ev) or (not replaced and Counter(tr) - Counter(ev))):
        return False
    shared = sum((Counter(ev) & Counter(tr)).values())
    return common_in_order(ev, tr) >= shared - 1


def common_in_order(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of ``a`` and ``b`` (0 where both are long: 300 x 300
    values and more, so that a table of numbers costs no quadratic time; the caller then reads the
    values as not kept in order).

    >>> common_in_order(["3", "7", "0", "5", "4", "0"], ["3", "4", "0", "5", "7", "0"])
    4
    """
    if len(a) * len(b) > 90_000:
        return 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def substituted(eval_text: str, train_text: str) -> bool:
    """True when a content word or value of the eval text was replaced by another (``blue`` → ``green``,
    ``male to female`` → ``male to male``, order ``#W2378156`` → ``#W9421980``): both texts hold content
    words the other lacks, counted as multisets of :func:`chunks` (so punctuation inside a word is no
    change). Words only dropped (a value included: nothing took its place) or only added (a courtesy
    phrase) are no substitution.

    >>> substituted("i am looking for a blue ottoman for the living room", "i am looking for a green ottoman for the living room")
    True
    >>> substituted("i am looking for a blue ottoman for the living room", "looking for a blue ottoman for the living room. Thanks a lot!")
    False
    >>> substituted("Ping 192.168.1.1 from 10.0.0.2 every 5 s", "please help. ping 192168.1;1 from 10.0.0.2 every s")
    False
    >>> substituted("Ping 192.168.1.1 from 10.0.0.2 every 5 s", "ping 192.168.1.7 from 10.0.0.2 every 5 s")
    True
    """
    ev, tr = Counter(chunks(eval_text)), Counter(chunks(train_text))
    only_eval = [w for w in (ev - tr) if w not in LIGHT_WORDS]
    only_train = [w for w in (tr - ev) if w not in LIGHT_WORDS]
    return bool(only_eval) and bool(only_train)


def all_values_kept(eval_text: str, train_text: str, min_values: int = 3) -> bool:
    """True when the two texts hold the same values (words with a digit), at least ``min_values`` of
    them, in the same order: one common subsequence of at least 90 % of each side's values (all of them
    below 10). The mark of a rewording that kept the item's slots (names, dates, counts) while its
    other words changed (``1 child`` / ``a child`` is the one value of 12 that BFCL v4
    live_parallel_10-6-0 and v1 parallel_function_57 do not share); a text that holds the item's
    values among others of its own (a dialog of several requests) is no such rewording.

    >>> all_values_kept("Book 2 rooms at the Sheraton from May 1, 2022 to May 5, 2022",
    ...                 "First, secure 2 rooms at the Sheraton, checking in May 1, 2022 and out May 5, 2022")
    True
    >>> all_values_kept("Book 2 rooms at the Sheraton from May 1, 2022 to May 5, 2022",
    ...                 "Book 2 rooms at the Sheraton from May 2, 2022 to May 5, 2022")
    False
    >>> all_values_kept("Book 2 rooms at the Sheraton from May 1, 2022 to May 5, 2022",
    ...                 "Book 2 rooms at the Sheraton from May 1, 2022 to May 5, 2022, and 3 at the Hilton on June 7, 2023")
    False
    """
    ev = [c for c in chunks(eval_text) if has_digit(c)]
    if len(ev) < max(1, min_values):
        return False
    tr = [c for c in chunks(train_text) if has_digit(c)]
    common = common_in_order(ev, tr)
    return 10 * common >= 9 * len(ev) and 10 * common >= 9 * len(tr)

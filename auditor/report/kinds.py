"""What a suspected finding of each method is, in words: the notes, the review and the reports say it."""

from __future__ import annotations

from collections.abc import Iterable

#: what a suspected finding of a method is, in words (a method not named here: "<method> matches")
SUSPECTED_KINDS = {
    "embedding": "possible paraphrases",
    "ngram": "shared word n-grams or partial copies",
    "minhash": "near-duplicates below the copy bar",
    "exact": "copies of part of the item",
    "calls": "shared tool calls",
    "entities": "shared identifiers",
}


def suspected_kinds(methods: Iterable[str]) -> str:
    """What the suspected findings of ``methods`` are, in words, by method, in a stable order.

    >>> suspected_kinds(["ngram", "embedding", "ngram"])
    'embedding: possible paraphrases; ngram: shared word n-grams or partial copies'
    >>> suspected_kinds([])
    'below the conclusive bar'
    """
    named = sorted(set(methods))
    if not named:
        return "below the conclusive bar"
    return "; ".join(f"{m}: {SUSPECTED_KINDS.get(m, 'matches')}" for m in named)

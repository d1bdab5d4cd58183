"""Fast kernels for the scan's hot path: n-gram containment over a whole batch, and exact-match units.

The n-gram kernel avoids hashing every training n-gram in Python. Each training token is mapped
to an id in the *eval vocabulary* with one C-level ``map(dict.get, ...)`` over the whole batch
(tokens absent from every eval item get id 0). An n-gram that contains a token of no eval item
cannot be an eval n-gram, so only windows free of id 0 are hashed (a rare-token prefilter that
drops almost every window of unrelated text), with numpy, in the same polynomial-of-xxh64 hash as
:func:`auditor.text.tokens.ngram_hashes` — so the persisted index tables are unchanged. A
separator token (never in the vocabulary) between records keeps windows inside one record.

>>> import numpy as np
>>> from auditor.text.tokens import ngram_hashes, token_hashes
>>> grams = np.unique(ngram_hashes(token_hashes("a b c d".split()), 3))
>>> scanner = NgramScanner(["a", "b", "c", "d"], {3: (grams, np.zeros(len(grams), dtype=np.int64))})
>>> scanner.matches(["x a b c d y", "a b x c d", "b c d"], n_eval=1)
[(0, 0, 2), (2, 0, 1)]

No errors are raised here: empty texts and empty tables give no matches.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import repeat
from string import punctuation

import numpy as np
import xxhash

from .normalize import is_plain, normalize, text_hash, tokens
from .tokens import _P

_SEP = b"\x00"  # normalize() never yields it: a record boundary token outside every vocabulary


class NgramScanner:
    """Counts, per training text and eval item, the item's distinct n-grams present in the text.

    ``vocab_tokens``: every token of every eval item (a superset is fine); ``tables``: n →
    ``(sorted n-gram hashes, eval position of each)`` as built by the ``ngram`` index.
    """

    def __init__(self, vocab_tokens: Iterable[str], tables: dict[int, tuple[np.ndarray, np.ndarray]]):
        vocab: dict[bytes, int] = {}
        for t in vocab_tokens:
            b = t.encode("utf-8")
            if b not in vocab:
                vocab[b] = len(vocab) + 1
        self.vocab = vocab
        th = np.zeros(len(vocab) + 1, dtype=np.uint64)
        for b, i in vocab.items():
            th[i] = xxhash.xxh64_intdigest(b)
        self.token_hash = th
        self.tables = tables
        self._register()

    def _register(self) -> None:
        """Add this vocabulary to the process's shared one; ``_local`` maps a shared id to this
        scanner's id (0: not in it; the last entry, 0, stands for ids added after this scanner)."""
        for b in self.vocab:
            if b not in _SHARED_VOCAB:
                _SHARED_VOCAB[b] = len(_SHARED_VOCAB) + 1
        local = np.zeros(len(_SHARED_VOCAB) + 2, dtype=np.int64)
        for b, i in self.vocab.items():
            local[_SHARED_VOCAB[b]] = i
        self._local = local

    def __getstate__(self):  # shared ids belong to one process: rebuilt where it is unpickled
        state = dict(self.__dict__)
        state.pop("_local", None)
        return state

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)
        self._register()

    def matches(self, texts: Sequence[str], n_eval: int) -> list[tuple[int, int, int]]:
        """``(text index, eval position, distinct matched n-grams)``, sorted by text then eval position."""
        if not self.tables or not texts:
            return []
        shared, starts = _shared_ids(texts)
        local = self._local
        ids = local[np.minimum(shared, len(local) - 1)]
        zeros = np.concatenate(([0], np.cumsum(ids == 0)))
        th = self.token_hash[ids]
        keys: list[np.ndarray] = []
        for n, (H, P) in self.tables.items():
            count = len(ids) - n + 1
            if count <= 0 or not len(H):
                continue
            starts_ok = np.flatnonzero(zeros[n : n + count] == zeros[:count])
            if not len(starts_ok):
                continue
            h = np.zeros(len(starts_ok), dtype=np.uint64)
            with np.errstate(over="ignore"):
                for j in range(n):
                    h = h * _P + th[starts_ok + j]
            left = np.searchsorted(H, h, "left")
            right = np.searchsorted(H, h, "right")
            hit = right > left
            if not hit.any():
                continue
            doc = np.searchsorted(starts, starts_ok[hit], "right") - 1
            h, left, right = h[hit], left[hit], right[hit]
            # one count per distinct n-gram of a text
            order = np.lexsort((h, doc))
            doc, h, left, right = doc[order], h[order], left[order], right[order]
            first = np.ones(len(h), dtype=bool)
            first[1:] = (doc[1:] != doc[:-1]) | (h[1:] != h[:-1])
            doc, left, right = doc[first], left[first], right[first]
            lengths = right - left
            offsets = np.repeat(left - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
            pos = P[offsets + np.arange(lengths.sum())]
            keys.append(np.repeat(doc, lengths) * np.int64(n_eval) + pos)
        if not keys:
            return []
        uniq, counts = np.unique(np.concatenate(keys), return_counts=True)
        return [(int(k // n_eval), int(k % n_eval), int(c)) for k, c in zip(uniq.tolist(), counts.tolist())]


#: every scanner's tokens under one id space, so that the scanners of several checks (one pass over
#: a training set) map a batch's tokens once: :func:`_shared_ids`, then a numpy lookup per scanner
_SHARED_VOCAB: dict[bytes, int] = {}
#: the last batch mapped: (its texts, the shared vocabulary's size then, shared ids, text starts)
_LAST_BATCH: list = []


def _shared_ids(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Shared-vocabulary ids of the tokens of ``texts`` (a separator after each text) and where each
    text starts; computed once for the same text objects while the shared vocabulary is unchanged."""
    last = _LAST_BATCH
    if (
        last
        and last[1] == len(_SHARED_VOCAB)
        and len(last[0]) == len(texts)
        and all(a is b for a, b in zip(last[0], texts))
    ):
        return last[2], last[3]
    toks: list[bytes] = []
    starts = np.empty(len(texts), dtype=np.int64)
    for d, text in enumerate(texts):
        starts[d] = len(toks)
        toks += text_tokens(text)
        toks.append(_SEP)
    ids = np.fromiter(map(_SHARED_VOCAB.get, toks, repeat(0)), dtype=np.int64, count=len(toks))
    last[:] = [list(texts), len(_SHARED_VOCAB), ids, starts]
    return ids, starts


_ASCII_PUNCT = str.maketrans({c: " " for c in punctuation})  # as in auditor.text.normalize
#: ASCII bytes: lower case, punctuation → space, and the separators str.split() treats as
#: whitespace but bytes.split() does not (\x1c-\x1f) → space; one pass, same tokens as normalize
_ASCII_BYTES = bytes(
    32 if (chr(i) in punctuation or 0x1C <= i <= 0x1F) else ord(chr(i).lower()) if i < 128 else i for i in range(256)
)
_TOKENS_CACHE: dict[int, tuple[str, list[bytes]]] = {}
_TOKENS_CACHE_MAX = 1024  # about two batches of records


def text_tokens(text: str) -> list[bytes]:
    """:func:`auditor.text.normalize.tokens` of ``text`` as UTF-8 bytes, remembered for the last ~1024 texts.

    The exact and n-gram tiers tokenize the same training texts one after the other; this makes the
    second one free. ASCII text takes one ``bytes.translate`` and one ``split``. Do not mutate the result.

    >>> text_tokens("Book a flight to N.Y.C.!")
    [b'book', b'a', b'flight', b'to', b'n', b'y', b'c']
    """
    hit = _TOKENS_CACHE.get(id(text))
    if hit is not None and hit[0] is text:
        return hit[1]
    if is_plain(text):
        toks = text.encode("ascii").translate(_ASCII_BYTES).split()
    else:
        toks = [t.encode("utf-8") for t in tokens(text)]
    if len(_TOKENS_CACHE) >= _TOKENS_CACHE_MAX:
        _TOKENS_CACHE.clear()
    _TOKENS_CACHE[id(text)] = (text, toks)
    return toks


def exact_units(text: str, lines: bool) -> list[tuple[str, int]]:
    """``(unit, hash of normalized text)`` for the whole text and (when ``lines``) each non-blank line.

    Same result as hashing :func:`auditor.text.normalize.normalize` of each unit; ASCII text is lowered
    and translated once for all its lines.

    >>> [u for u, _ in exact_units("Hi there\\n\\nBook it!", lines=True)]
    ['whole', 'line 1', 'line 3']
    """
    key = (id(text), lines)
    hit = _UNITS_CACHE.get(key)
    if hit is not None and hit[0] is text:
        return hit[1]
    units = _exact_units(text, lines)
    if len(_UNITS_CACHE) >= _TOKENS_CACHE_MAX:
        _UNITS_CACHE.clear()
    _UNITS_CACHE[key] = (text, units)
    return units


#: exact_units of the last ~1024 texts: checks sharing a training set hash each text once (one pass,
#: several checks' exact indexes); keyed like the token cache, by the text object itself
_UNITS_CACHE: dict[tuple[int, bool], tuple[str, list[tuple[str, int]]]] = {}


def _exact_units(text: str, lines: bool) -> list[tuple[str, int]]:
    whole = ("whole", xxhash.xxh64_intdigest(b" ".join(text_tokens(text))))  # == text_hash(normalize(text))
    if not (lines and "\n" in text):
        return [whole]
    if is_plain(text):
        low = text.lower().translate(_ASCII_PUNCT)
        out = [whole]
        for i, (raw, line) in enumerate(zip(text.split("\n"), low.split("\n")), start=1):
            if raw.strip():
                out.append((f"line {i}", text_hash(" ".join(line.split()))))
        return out
    out = [whole]
    for i, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            out.append((f"line {i}", text_hash(normalize(line))))
    return out

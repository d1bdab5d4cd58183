"""A batch of texts normalized at once: one buffer, no Python object per token.

The scan's exact and n-gram tiers need, for every training text of a batch, the hash of its
normalized text (:func:`auditor.text.normalize.normalize`) and the ids of its tokens. Splitting each
text into a list of ``bytes`` tokens costs a Python object per word; a :class:`TokenBatch` instead
writes the batch into one byte buffer in which **every token is followed by exactly one space** and
every text by a separator token ``"\\x00 "`` (``normalize`` never yields a NUL):

    b"book a flight to n y c \\x00 \\x00 hi there \\x00 "     (texts "Book a flight to N.Y.C.!", "", "Hi  there")

so that text ``i``'s normalized form is the bytes from its start to one before its separator
(hashed in place by :meth:`TokenBatch.whole_hashes`), and token ``j`` *with its space* is
``data[token_offsets[j] : token_offsets[j + 1]]`` (:meth:`TokenBatch.token_array`: an Arrow binary
array over the same buffer). The xxh64 of every token (:meth:`TokenBatch.token_hashes`) is mapped to
vocabulary ids by :func:`~auditor.text.kernel.lookup`, the separators given id 0, which is the layout the n-gram kernel
scans (a window holding a 0 is never an eval n-gram, so none crosses two texts).

Plain ASCII text is copied into the buffer as it is, lowered and has punctuation and control
characters turned into spaces, and runs of spaces squeezed, in one pass over the whole batch —
exactly what ``normalize`` does to it — after its ``%XX`` escapes are decoded (or its tags stripped,
:func:`~auditor.text.markup.strip_tags`) and its camel-cased runs split (candidate runs and their
humps found in the same kind of pass, only runs with enough humps read as words in Python). These
byte loops are the kernel's (:mod:`auditor.text.kernel`): C (``_batchc.c``, built at install) or, without a C compiler, its
Python twin (:mod:`auditor.text._batchpy`). Any other text has its evasion undone as a whole
(:func:`~auditor.text.normalize.undo_evasion`: escapes, markup, overrides) and is then read line by
line: lines left ASCII take the plain path, only the others are normalized in Python
(:func:`~auditor.text.normalize.normalize_undone`), so one accented word costs its line, not its
record. So the buffer holds exactly ``normalize(text)`` for every text (``tests/test_batch.py`` and
``tests/test_batch_kernel.py`` check it against ``normalize`` on real data and adversarial strings,
on both kernels).

>>> b = TokenBatch(["Book a flight to N.Y.C.!", "", "  ", "Ｈi\\x01there\\t!"])
>>> [b.normalized(i) for i in range(4)]
[b'book a flight to n y c', b'', b'', b'hi there']
>>> b.token_starts.tolist()   # token index of each text's first token, and the total
[0, 8, 9, 10, 13]
>>> vocab = np.array([xxhash.xxh64_intdigest(t) for t in (b"flight", b"there")], dtype=np.uint64)
>>> from auditor.text.kernel import lookup
>>> np.frombuffer(lookup(b.token_hashes().data, vocab.tobytes()), dtype=np.int64).tolist()   # ids, 0: not in it
[0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0]

Nothing is raised for any ``str`` input (``normalize`` turns lone surrogates into spaces).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from string import ascii_uppercase, punctuation
from typing import TYPE_CHECKING

import numpy as np
import xxhash

from . import kernel
from .arrowbuf import large_binary
from .camel import MIN_HUMPS, split_candidates
from .normalize import is_plain, normalize, tokens
from .pieces import piece_by_lines
from .tokens import ngram_hashes, token_hashes

if TYPE_CHECKING:  # pyarrow: imported where a batch first needs it (and by arrowbuf), not at start-up
    import pyarrow as pa

_SPACE = 32
#: between texts: a token of its own (a NUL, then the space every token has)
_SEPARATOR = b" \x00 "
#: plain ASCII text → its normalized bytes before squeezing: upper case lowered; punctuation and
#: every control character (tab, newline, \x1c-\x1f, DEL, ...) → space, as ``normalize``'s ASCII path
PLAIN_BYTES = bytes(
    _SPACE if (i < 32 or i == 127 or chr(i) in punctuation) else ord(chr(i).lower()) if chr(i) in ascii_uppercase else i
    for i in range(256)
)
#: the same for a whole batch joined by separators: NUL kept (plain texts with a NUL take ``normalize``);
#: every byte of a normalized text maps to itself (lower case, digits, spaces, UTF-8 of non-ASCII)
_BATCH_BYTES = bytes(0 if i == 0 else b for i, b in enumerate(PLAIN_BYTES))
_EMPTY_HASH = xxhash.xxh64_intdigest(b"")


def normalized_bytes(text: str) -> bytes:
    """``normalize(text)`` as UTF-8 except that runs of spaces are not squeezed yet (plain text).
    Never holds a NUL: ``normalize`` turns control characters into spaces.

    >>> normalized_bytes("Hi,  you!")
    b'hi   you '
    """
    if is_plain(text):
        return text.encode("ascii").translate(PLAIN_BYTES)
    return normalize(text).encode("utf-8")


class TokenBatch:
    """The normalized texts and tokens of ``texts`` in one buffer (see the module doc).

    Attributes: ``texts`` (as given); ``data`` (uint8 array); ``text_offsets`` (``n + 1``: where each
    text starts, then the buffer's length); ``token_offsets`` (``tokens + 1`` byte offsets: token ``j``
    and its space, separators included); ``token_starts`` (``n + 1``: index of each text's first
    token, then the number of tokens; text ``i``'s separator is token ``token_starts[i + 1] - 1``).
    """

    __slots__ = (
        "texts",
        "_where",
        "data",
        "text_offsets",
        "token_offsets",
        "token_starts",
        "slow",
        "splits",
        "kept",
        "local",
        "_array",
        "_whole",
        "memo",
    )

    def __init__(self, texts: Sequence[str]):
        self.texts = list(texts)
        self._where: dict[int, int] | None = None
        self.slow = kernel.impl.not_plain(self.texts)
        found: list[tuple[int, int, int]] = []
        #: the pieces of the slow texts with lines (of up to KEPT_CHARS), for their lines (:mod:`~auditor.text.lines`)
        self.kept: dict[int, bytes] = {}
        #: the kept slow texts whose piece reads, line for line, as their lines alone do (:func:`~auditor.text.pieces.piece_by_lines`)
        self.local: set[int] = set()
        joined = _joined(self.texts, self.slow, found, self.kept, self.local)
        #: the camel-cased runs split (:func:`_joined`): ``(text, where in its piece, tokens gained)``
        self.splits = np.array(found, dtype=np.int64).reshape(-1, 3)
        data, token_offsets, text_offsets, token_starts = kernel.impl.squeeze(joined, _BATCH_BYTES)
        self.data = np.frombuffer(data, dtype=np.uint8)
        self.token_offsets = np.frombuffer(token_offsets, dtype=np.int64)
        self.text_offsets = np.frombuffer(text_offsets, dtype=np.int64)
        self.token_starts = np.frombuffer(token_starts, dtype=np.int64)
        self._array: pa.Array | None = None
        self._whole: list[int] | None = None
        #: results computed from this batch by its users (e.g. token ids per vocabulary state)
        self.memo: dict = {}

    def __len__(self) -> int:
        return len(self.texts)

    def extended(self, texts: Sequence[str]) -> TokenBatch:
        """A batch of this batch's texts and then ``texts``: the same as ``TokenBatch(self.texts +
        texts)``, but only ``texts`` are normalized (the buffers are concatenated). Results in
        :attr:`memo` are not carried over, but for the token hashes (:meth:`text_token_hashes`): those of
        ``texts`` are appended to this batch's.

        >>> a = TokenBatch(["Hi there", ""]).extended(["", "x, y"])
        >>> [a.normalized(i) for i in range(4)], a.token_starts.tolist()
        ([b'hi there', b'', b'', b'x y'], [0, 3, 4, 5, 8])
        """
        other = TokenBatch(texts)
        out = TokenBatch.__new__(TokenBatch)
        out.texts = self.texts + other.texts
        out._where = None
        out.slow = self.slow + [i + len(self.texts) for i in other.slow]
        out.kept = {**self.kept, **{k + len(self.texts): p for k, p in other.kept.items()}}
        out.local = self.local | {k + len(self.texts) for k in other.local}
        out.splits = np.concatenate((self.splits, other.splits + np.array([len(self.texts), 0, 0], dtype=np.int64)))
        size = len(self.data)
        out.data = np.concatenate((self.data, other.data))
        out.text_offsets = np.concatenate((self.text_offsets[:-1], other.text_offsets + size))
        out.token_offsets = np.concatenate((self.token_offsets[:-1], other.token_offsets + size))
        out.token_starts = np.concatenate((self.token_starts[:-1], other.token_starts + self.n_tokens))
        out._array = None
        out._whole = None if self._whole is None or other._whole is None else self._whole + other._whole
        out.memo = {}
        if (hashes := self.memo.get("token hashes")) is not None:  # the tokens are this batch's, then other's
            out.memo["token hashes"] = np.concatenate((hashes, other.token_hashes()))
        return out

    @property
    def where(self) -> dict[int, int]:
        """The id of each text object → its index (the batch holds the texts, so an id here is theirs;
        a text held twice: its last index), made on first use."""
        if self._where is None:
            self._where = {id(t): i for i, t in enumerate(self.texts)}
        return self._where

    @property
    def n_tokens(self) -> int:
        """Tokens in the batch, the separators included."""
        return len(self.token_offsets) - 1

    def normalized(self, i: int) -> bytes:
        """``normalize(texts[i])`` as UTF-8."""
        a, b = int(self.text_offsets[i]), int(self.text_offsets[i + 1]) - 3  # before " \x00 "
        return self.data[a:b].tobytes() if b > a else b""

    def whole_hashes(self) -> list[int]:
        """``text_hash(normalize(t))`` of every text, hashed in place."""
        if self._whole is None:
            view = self.data.data  # a memoryview of the buffer
            offs = self.text_offsets.tolist()
            self._whole = [
                xxhash.xxh64_intdigest(view[a : b - 3]) if b - 3 > a else _EMPTY_HASH for a, b in zip(offs, offs[1:])
            ]
        return self._whole

    def token_counts(self) -> np.ndarray:
        """``len(tokens(t))`` of every text (its separator left out).

        >>> TokenBatch(["Ab, c!", "", "BookAFlightToParis now"]).token_counts().tolist()
        [2, 0, 6]
        """
        return np.diff(self.token_starts) - 1

    def distinct_tokens(self) -> list[str]:
        """Every distinct token of the batch's texts (``tokens(t)`` of each), in order of first
        appearance, read from the buffer at once.

        >>> TokenBatch(["Book a flight", "", "a FLIGHT to Paris"]).distinct_tokens()
        ['book', 'a', 'flight', 'to', 'paris']
        """
        words = dict.fromkeys(self.data.tobytes().split(b" "))  # each token is followed by one space
        words.pop(b"\x00", None)  # the separators
        words.pop(b"", None)  # after the last space
        return [w.decode("utf-8") for w in words]

    def char_lengths(self) -> np.ndarray:
        """``len(normalize(t))`` of every text (characters, not bytes).

        >>> TokenBatch(["Ab, c!", "", "Éa"]).char_lengths().tolist()
        [4, 0, 2]
        """
        offs = self.text_offsets
        lengths = np.maximum(np.diff(offs) - 3, 0)  # bytes before " \x00 " (an empty text has none)
        if len(self.data) and int(self.data.max()) >= 0x80:  # UTF-8 continuation bytes are not characters
            follow = np.flatnonzero((self.data & 0xC0) == 0x80)  # where they are (few: not a count per byte)
            lengths -= np.diff(np.searchsorted(follow, offs))
        return lengths

    def token_hashes(self) -> np.ndarray:
        """xxh64 of every token (as :func:`auditor.text.tokens.token_hashes` hashes ``tokens(t)``),
        separators included; computed once per batch by the kernel (remembered in :attr:`memo`).

        >>> from auditor.text.tokens import token_hashes
        >>> b = TokenBatch(["a b a", "c"])
        >>> b.token_hashes()[[0, 1, 2, 4]].tolist() == token_hashes(["a", "b", "a", "c"]).tolist()
        True
        """
        hashes = self.memo.get("token hashes")
        if hashes is None:
            raw = kernel.impl.token_hashes(self.data.data, self.token_offsets.data)
            hashes = self.memo["token hashes"] = np.frombuffer(raw, dtype=np.uint64)
        return hashes

    def text_token_hashes(self, positions: Sequence[int]) -> list[np.ndarray]:
        """The token hashes of the texts at ``positions`` (each :func:`~auditor.text.tokens.token_hashes`
        of ``tokens(texts[p])``, its separator left out), from :meth:`token_hashes` of the whole batch,
        computed once per batch (remembered in :attr:`memo`).

        >>> from auditor.text.tokens import token_hashes
        >>> b = TokenBatch(["a b", "", "c"])
        >>> [h.tolist() == token_hashes(t.split()).tolist() for h, t in zip(b.text_token_hashes([2, 1, 0]), ["c", "", "a b"])]
        [True, True, True]
        """
        hashes = self.token_hashes()
        starts = self.token_starts.tolist()
        return [hashes[starts[p] : starts[p + 1] - 1] for p in positions]

    def text_ngram_hashes(self, positions: Sequence[int], n: int) -> list[np.ndarray]:
        """:func:`~auditor.text.tokens.ngram_hashes` of each text's token hashes (:meth:`text_token_hashes`)
        at ``positions``, sliced from those of the whole batch's token hashes, computed once per batch and
        ``n`` (remembered in :attr:`memo`): a window that crosses a separator is in no text's slice.

        >>> from auditor.text.tokens import ngram_hashes
        >>> b = TokenBatch(["a b c d", "e", "c d e f g"])
        >>> [g.tolist() == ngram_hashes(h, 3).tolist() for g, h in zip(b.text_ngram_hashes([2, 1, 0], 3), b.text_token_hashes([2, 1, 0]))]
        [True, True, True]
        """
        grams = self.memo.get(("ngram hashes", n))
        if grams is None:
            grams = self.memo["ngram hashes", n] = ngram_hashes(self.token_hashes(), n)
        starts = self.token_starts.tolist()
        return [grams[starts[p] : starts[p] + max(starts[p + 1] - starts[p] - n, 0)] for p in positions]

    def token_array(self) -> pa.Array:
        """Every token followed by its space, as an Arrow ``large_binary`` array over :attr:`data`."""
        if self._array is None:
            self._array = large_binary(self.n_tokens, self.token_offsets, self.data)
        return self._array


def _joined(
    texts: list[str],
    slow: list[int],
    splits: list[tuple[int, int, int]] | None = None,
    kept: dict | None = None,
    local: set[int] | None = None,
) -> bytes:
    """The texts, each followed by a separator, each as ``normalized_bytes`` gives it but for case,
    punctuation and spaces (the batch's ``squeeze`` translates and squeezes them): plain ASCII is
    copied as it is (joined by the kernel, C where built), the others (``slow``, the kernel's
    ``not_plain``) read as :func:`~auditor.text.pieces.piece` says; camel-cased runs split for the whole batch at once
    (:func:`~auditor.text.camel.split_candidates`, on the kernel's candidate runs). With ``splits``,
    each run split is noted there as ``(its text, its start in the text's piece, the tokens it gained)``;
    in ``kept``, the piece of each slow text with a line break (of at most :data:`KEPT_CHARS`), and in
    ``local`` those of them whose piece reads, line for line, as their lines alone do (:func:`~auditor.text.pieces.piece_by_lines`).

    >>> texts = ["Hi, you!", "GetUserToken now", "a%20b", "", "<b>Bo</b>ok List<String>"]
    >>> splits = []
    >>> _joined(texts, kernel.impl.not_plain(texts), splits), splits
    (b'Hi, you! \\x00 Get User Token now \\x00 a b \\x00  \\x00 Book List<String> \\x00 ', [(1, 0, 2)])
    """
    pieces: list[str | bytes] = list(texts)
    for i in slow:
        p, by_lines = piece_by_lines(texts[i])
        pieces[i] = p
        if kept is not None and len(texts[i]) <= KEPT_CHARS and "\n" in texts[i]:
            kept[i] = p
            if by_lines and local is not None:
                local.add(i)
    raw = kernel.impl.join(pieces)
    found: list[tuple[int, int]] | None = None if splits is None else []
    joined = split_candidates(raw, kernel.impl.camel_runs(raw, MIN_HUMPS), found)
    if found and splits is not None:
        starts = np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)) + len(_SEPARATOR))
        where = np.array(found, dtype=np.int64)
        text = np.searchsorted(starts, where[:, 0], side="right")
        into = where[:, 0] - np.concatenate(([0], starts))[text]
        splits.extend(zip(text.tolist(), into.tolist(), where[:, 1].tolist()))
    return joined


#: the longest slow text whose piece a batch keeps for its lines: a longer one's lines are normalized again
KEPT_CHARS = 1 << 20

#: the last batch built by :func:`token_batch` (it keeps its texts alive, so their ids stay theirs)
_LAST: list[TokenBatch] = []


def token_batch(texts: Sequence[str]) -> tuple[TokenBatch, list[int]]:
    """A :class:`TokenBatch` holding every text of ``texts`` and the index of each text in it.

    The exact and n-gram tiers (and the indexes of several checks) ask for the same training texts
    one after the other: the last batch is reused when it holds every one of these text objects
    (by identity); when it holds most of their text (the others' characters are at most half of
    those asked for), the others are normalized and appended to it (:meth:`TokenBatch.extended`: the
    n-gram tier scans the views it joins, many short, beside long texts the exact tier normalized);
    otherwise a new batch is built of the distinct objects, in order.

    >>> texts = ["b", "a"]
    >>> token_batch(texts)[1], token_batch(texts[1:] + texts)[1], token_batch(["c", *texts])[1]
    ([0, 1], [1, 0, 1], [2, 0, 1])
    """
    last = _LAST[0] if _LAST else None
    if last is not None:
        positions = [last.where.get(id(t), -1) for t in texts]
        if -1 not in positions:
            return last, positions
        new = list({id(t): t for t, p in zip(texts, positions) if p < 0}.values())
        if 2 * sum(map(len, new)) <= sum(map(len, texts)):
            batch = last.extended(new)
            _LAST[:] = [batch]
            return batch, [batch.where[id(t)] for t in texts]
    distinct = list({id(t): t for t in texts}.values())
    batch = TokenBatch(distinct)
    _LAST[:] = [batch]
    return batch, [batch.where[id(t)] for t in texts]


def remembered(text: str) -> tuple[TokenBatch, int] | None:
    """The batch :func:`token_batch` remembers and ``text``'s index in it when it holds this very
    object (a finding's record reads what the scan normalized instead of normalizing it again), else None.

    >>> b, i = remembered(token_batch(["x", "Book a flight to N.Y.C.!"])[0].texts[1])
    >>> b.normalized(i), remembered("another") is None
    (b'book a flight to n y c', True)
    """
    i = _LAST[0].where.get(id(text)) if _LAST else None
    return None if i is None or _LAST[0].texts[i] is not text else (_LAST[0], i)


def hashes_and_words(text: str) -> tuple[np.ndarray, Callable[[int, int], str]]:
    """The ``token_hashes`` of ``tokens(text)`` and a function giving its tokens ``a`` to ``b`` (a slice)
    joined by spaces, read from the remembered batch where it holds ``text``: a long text's tokens are
    not made into strings, but those asked for.

    >>> t = token_batch(["Hi, you there"])[0].texts[0]
    >>> hashes, words = hashes_and_words(t)
    >>> words(1, 3), words(0, 9), words(2, 1), hashes.tolist() == hashes_and_words("hi you there")[0].tolist()
    ('you there', 'hi you there', '', True)
    """
    if (known := remembered(text)) is None:
        toks = tokens(text)
        return token_hashes(toks), lambda a, b: " ".join(toks[a:b])
    batch, i = known
    hashes = batch.text_token_hashes([i])[0]
    first, offsets = int(batch.token_starts[i]), batch.token_offsets

    def words(a: int, b: int) -> str:
        a, b = min(a, len(hashes)), min(b, len(hashes))  # as a slice of the tokens clips it
        return batch.data[offsets[first + a] : offsets[first + b] - 1].tobytes().decode("utf-8") if b > a else ""

    return hashes, words


def forget_batch() -> None:
    """Drop the remembered batch (tests; and a caller that wants its texts freed)."""
    _LAST.clear()

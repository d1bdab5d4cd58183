"""The lexical gate in front of the ``embedding`` encoder (``gate = "lexical"``, the default; ``"none"``
encodes every segment): a training unit reaches the encoder only if one of its segments shares enough of
some eval segment's words, a question numpy answers thousands of times faster than the encoder. A unit
it passes is decided exactly as without the gate; one it stops gets no finding (:func:`keep_units`).
The rule and how it was fitted: docs/methods.md#lexical-gate.

Tokens are read as every tier reads them (:class:`~auditor.text.batch.TokenBatch`), cut to their
:func:`stem` and counted once per text; a stem weighs its IDF over the bundled background
(``auditor/data/gate_background.json``, ``scripts/build_gate_background.py``) plus the eval side, stop
words and single letters 0. A segment, as far as the model reads it (:mod:`.reach`), passes when its
weighted Dice coefficient with some eval segment (twice the weight of the stems both hold, over the
text's plus the item's) reaches ``dice`` (``dice_code`` for code); a text stem also counts as an item
stem it neighbours at ``synonyms`` (:mod:`.synonyms`), earning at most its own weight; a unit's whole
text of at most ``short`` content stems passes whatever it shares (a short rewording may share no word;
an item without content stems then opens the gate to nothing but short texts).

>>> d = LexicalGate().fit(["Book a room at the Sheraton Hotel in New York for 2 adults"])
>>> notes = ("Sheraton release notes: the build script now checks compiler flags, drops a stale patch, "
...          "refreshes translations for German and Polish; mirrors in New York were synced")
>>> d.passes(["Reserve a Sheraton room in New York for two adults", notes]).tolist()
[True, False]
>>> round(float(d.dice_scores_of([notes])[0]), 2), d.passes([notes], code=[True]).tolist()  # code: dice_code
(0.19, [True])

>>> item, reworded = "a new highway from a major city through farmland", "a freeway out of a large urban area"
>>> [round(float(LexicalGate(synonyms=s).fit([item]).dice_scores_of([reworded])[0]), 2) for s in (0, SYNONYMS)]
[0.0, 0.36]

>>> short = LexicalGate().fit(["Who are you?", "Patterns of drug use in Britain reveal that:"])
>>> texts = ["The trend of substance abuse in the UK shows that:", "Tell me your name",
...          "changelog: the build script now checks compiler flags, drops a stale patch and refreshes translations"]
>>> short.passes(texts, whole=[True] * 3).tolist(), short.passes(texts).tolist(), short.describe()["open_items"]
([True, True, False], [False, False, False], 1)

Errors: :class:`~auditor.errors.ConfigError` (``dice`` / ``dice_code`` / ``synonyms`` / ``short`` out of
range), :class:`~auditor.errors.IndexFileError` (a damaged background or synonyms file).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import ConfigError, IndexFileError
from ...text.batch import TokenBatch
from ...text.normalize import has_digit
from .synonyms import check_bar, neighbours

if TYPE_CHECKING:
    from .reach import ModelReach

BACKGROUND = Path(__file__).resolve().parents[2] / "data" / "gate_background.json"
BACKGROUND_FORMAT = "auditor-gate-background"
PREFIX = 6  # a stem keeps at most this many letters ("reservation" / "reserved" → "reserv")
MODES = ("lexical", "none")  # the gate's rules (``gate``)
DICE = 0.2  # fitted leave-one-file-out (benchmarks/bench_gate.py)
DICE_CODE = 0.1333  # DICE × 2/3, the ratio of the decision's suspected bars for code and text (not fitted)
SYNONYMS = 0.7  # the bundled table's floor (not fitted)
SHORT = 8  # whole texts of at most this many distinct content stems pass (not fitted)
NOTE = "embedding: the lexical gate stopped"  # how the gate's line in a check's notes starts
MEMO = 1 << 20  # the gate remembers at most this many stems' weights
#: English function words and the commonest request words: weight 0
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most my
    myself no nor not now of off on once only or other our ours ourselves out over own same she should so
    some such than that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves also get give got let may might must need please shall tell us want would
    like know find help make use using used one s t d ll m re ve""".split()
)


@lru_cache(maxsize=1 << 18)
def stem(token: str) -> str:
    """A token's stem: itself when it holds a digit (a value), else a light suffix strip and at most
    :data:`PREFIX` letters.

    >>> [stem(t) for t in ("booking", "booked", "flights", "cities", "city", "reservation", "2023")]
    ['book', 'book', 'flight', 'city', 'city', 'reserv', '2023']
    """
    if has_digit(token):
        return token
    t = token
    if len(t) > 4 and t.endswith("ies"):
        t = t[:-3] + "y"
    elif len(t) > 4 and t.endswith("es") and (t[-3] in "sxz" or t[-4:-2] in ("ch", "sh")):
        t = t[:-2]
    elif len(t) > 3 and t.endswith("s") and not t.endswith("ss"):
        t = t[:-1]
    if len(t) > 5 and t.endswith("ing"):
        t = t[:-3]
    elif len(t) > 4 and t.endswith("ed"):
        t = t[:-2]
    return t[:PREFIX]


def load_background(path: str | Path = BACKGROUND) -> tuple[int, dict[str, int]]:
    """``(documents, {stem: document frequency})`` of the bundled background."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        if doc.get("format") != BACKGROUND_FORMAT:
            raise ValueError(f"format is not {BACKGROUND_FORMAT}")
        return int(doc["documents"]), {str(k): int(v) for k, v in doc["df"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise IndexFileError(f"{path}: not a gate background file ({e})") from None


def _distinct_stems(batch: TokenBatch) -> tuple[list[str], np.ndarray]:
    """The batch's distinct stems and each token's index into them (separators included)."""
    import pyarrow.compute as pc  # here, not at import: a run without the paraphrase tier loads no pyarrow

    encoded = pc.dictionary_encode(batch.token_array())
    uniq: dict[str, int] = {}
    words = encoded.dictionary.to_pylist()
    col = np.fromiter(
        (uniq.setdefault(stem(t[:-1].decode("utf-8", "replace")), len(uniq)) for t in words), np.int64, len(words)
    )
    return list(uniq), col[np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)]


def _presence(n: int, stems: int, index: np.ndarray, text_of: np.ndarray):
    """texts × distinct stems, 1 where the text holds the stem (a stem counts once per text)."""
    from scipy import sparse

    present = sparse.csr_matrix((np.ones(len(index)), (text_of, index)), shape=(n, stems))
    present.sum_duplicates()
    present.data[:] = 1.0
    return present


class LexicalGate:
    """See the module doc. Counters (``take_counts``): units and segments (the texts the encoder would
    have read) seen, passed and stopped, and ``short_passed`` (passed only for being short)."""

    COUNTERS = tuple(f"{k}_{v}" for k in ("units", "segments") for v in ("seen", "passed", "stopped")) + (
        "short_passed",
    )

    def __init__(
        self,
        dice: float = DICE,
        dice_code: float = DICE_CODE,
        synonyms: float = SYNONYMS,
        short: int = SHORT,
        background: tuple[int, dict[str, int]] | None = None,
    ):
        for name, value, ok, bounds in (
            ("dice", dice, 0 < dice <= 1, "(0, 1]"),
            ("dice_code", dice_code, 0 < dice_code <= 1, "(0, 1]"),
            ("short", short, 0 <= short <= 64, "0..64"),
        ):
            if not ok:
                raise ConfigError(f"method 'embedding': gate_{name} must be in {bounds}, not {value}")
        self.dice, self.dice_code, self.short = float(dice), float(dice_code), int(short)
        self.synonyms = check_bar(synonyms)
        self.syn: dict[str, np.ndarray] = {}
        self.background = background if background is not None else load_background()
        self.counts: Counter = Counter()
        self.reach: ModelReach | None = None  # what the encoder reads of a text, set by the index
        self.open_items = 0
        self.vocab: dict[str, int] = {}
        self.dice_mass = self.vocab_w = self.dice_bar = np.zeros(0, dtype=np.float64)  # set by fit
        self._idf_n = self.background[0]
        self._idf_ev: Counter = Counter()
        self._idf_memo: dict[str, float] = {}

    def fit(self, item_texts: Sequence[str], code: Sequence[bool] | None = None) -> LexicalGate:
        """Every content stem of each eval segment, IDF-weighted, and each one's total weight. ``code``:
        which items are code (held to ``dice_code``)."""
        from scipy import sparse

        batch = TokenBatch(list(item_texts))
        distinct, index = _distinct_stems(batch)
        starts = batch.token_starts
        per_item = [
            sorted({distinct[k] for k in index[starts[i] : starts[i + 1] - 1].tolist()} - STOP_WORDS - {""})
            for i in range(len(item_texts))
        ]
        self._idf_n = self.background[0] + len(per_item)
        self._idf_ev = Counter(s for stems in per_item for s in stems)
        self._idf_memo = {}
        self.vocab = {}
        vr: list[int] = []
        vc: list[int] = []
        mass = np.zeros(len(per_item), dtype=np.float64)
        for i, stems in enumerate(per_item):
            for s in stems:
                if self.weight(s) > 0:
                    vr.append(self.vocab.setdefault(s, len(self.vocab)))
                    vc.append(i)
                    mass[i] += self.weight(s)
        self.dice_items = sparse.csr_matrix(
            (np.ones(len(vr)), (vr, vc)), shape=(len(self.vocab), len(per_item)), dtype=np.float64
        )
        self.dice_mass = mass
        self.vocab_w = np.fromiter((self.weight(s) for s in self.vocab), np.float64, len(self.vocab))
        self.syn = neighbours(self.vocab, self.synonyms, self.weight) if self.synonyms else {}
        is_code = np.zeros(len(per_item), dtype=bool) if code is None else np.asarray(code, dtype=bool)
        self.dice_bar = np.where(is_code, self.dice_code, self.dice)
        self.open_items = int((mass == 0).sum())
        return self

    def weight(self, s: str) -> float:
        """A stem's weight: its IDF over background + eval side; 0 for a stop word or a single letter (a
        single digit is a value and counts)."""
        w = self._idf_memo.get(s)
        if w is None:
            if len(self._idf_memo) >= MEMO:  # a corpus's distinct stems are unbounded: keep memory bounded
                self._idf_memo.clear()
            if s in STOP_WORDS or not s or (len(s) == 1 and not s.isdigit()):
                w = 0.0
            else:
                w = math.log((self._idf_n + 1) / (self.background[1].get(s, 0) + self._idf_ev[s] + 1))
            self._idf_memo[s] = w
        return w

    def passes(
        self, texts: Sequence[str], code: Sequence[bool] | None = None, whole: Sequence[bool] | None = None
    ) -> np.ndarray:
        """One bool per text: its weighted Dice coefficient with some item reaches that item's bar.
        ``code``: texts held to ``dice_code``; ``whole``: a unit's whole text, passed when short."""
        if not len(texts):
            return np.zeros(0, dtype=bool)
        if self.open_items and not self.short:  # an item without content stems: every text may reword it
            return np.ones(len(texts), dtype=bool)
        best, relative, content = self._best(TokenBatch(list(texts)))
        out = relative >= 1 - 1e-9
        if code is not None:
            out |= np.asarray(code, dtype=bool) & (best >= self.dice_code - 1e-9)
        if whole is not None and self.short:
            short = np.asarray(whole, dtype=bool) & (content <= self.short)
            self.counts["short_passed"] += int((short & ~out).sum())
            out |= short
        return out

    def too_short(self, texts: Sequence[str]) -> np.ndarray:
        """Which texts hold at most ``short`` distinct content stems (0: none).

        >>> g = LexicalGate().fit(["Patterns of drug use in Britain reveal that:"])
        >>> long = "Drug policy papers from Britain compare trends in cannabis, heroin and cocaine markets"
        >>> g.too_short(["The trend of substance abuse in the UK shows that:", long]).tolist()
        [True, False]
        """
        if not self.short or not len(texts):
            return np.zeros(len(texts), dtype=bool)
        return self._best(TokenBatch(list(texts)))[2] <= self.short

    def dice_scores_of(self, texts: Sequence[str]) -> np.ndarray:
        """Each text's highest weighted Dice coefficient with an eval item."""
        return self._best(TokenBatch(list(texts)))[0]

    def _best(self, batch: TokenBatch) -> np.ndarray:
        """Rows: each text's highest weighted Dice coefficient with an item, its best score over the
        item's bar, and its distinct content stems."""
        n = len(batch)
        best = np.zeros((3, n), dtype=np.float64)
        if not n:
            return best
        distinct, index = _distinct_stems(batch)
        text_of = np.repeat(np.arange(n, dtype=np.int64), np.diff(batch.token_starts))
        w = np.fromiter((self.weight(s) for s in distinct), dtype=np.float64, count=len(distinct))
        present = _presence(n, len(distinct), index, text_of)
        best[2] = present @ (w > 0).astype(np.float64)
        if not len(self.vocab):
            return best
        mass = present @ w
        tid = np.fromiter((self.vocab.get(s, -1) for s in distinct), dtype=np.int64, count=len(distinct))
        hits = (present @ self._stands_for(distinct, w, tid)).tocsr()  # texts × item stems
        hits.data = np.minimum(hits.data, 1.0) * self.vocab_w[hits.indices]  # an item stem counts once
        shared = (hits @ self.dice_items).tocsr()  # texts × items: weight shared
        if shared.nnz:
            rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(shared.indptr))
            score = 2 * shared.data / (mass[rows] + self.dice_mass[shared.indices])
            np.maximum.at(best[0], rows, score)
            np.maximum.at(best[1], rows, score / self.dice_bar[shared.indices])
        return best

    def _stands_for(self, distinct: list[str], w: np.ndarray, tid: np.ndarray):
        """distinct stems × item stems: 1 where a stem is the item stem; with ``synonyms``, the share
        of the item stem's weight a neighbour earns (at most 1)."""
        from scipy import sparse

        mine = np.nonzero((tid >= 0) & (w > 0))[0]
        rows, cols, vals = mine, tid[mine], np.ones(len(mine))
        extra = [(j, self.syn[s]) for j, s in enumerate(distinct) if s in self.syn] if self.syn else []
        if extra:
            jr = np.concatenate([np.full(len(ids), j, dtype=np.int64) for j, ids in extra])
            jc = np.concatenate([ids for _, ids in extra])
            keep = w[jr] > 0
            jr, jc = jr[keep], jc[keep]
            rows, cols = np.concatenate([rows, jr]), np.concatenate([cols, jc])
            vals = np.concatenate([vals, np.minimum(1.0, w[jr] / self.vocab_w[jc])])
        return sparse.csr_matrix((vals, (rows, cols)), shape=(len(distinct), len(self.vocab)))

    def count(self, units: int, passed_units: int, segments: int, passed_segments: int) -> None:
        for k, n, passed in (("units", units, passed_units), ("segments", segments, passed_segments)):
            self.counts.update({f"{k}_seen": n, f"{k}_passed": passed, f"{k}_stopped": n - passed})

    def take_counts(self) -> Counter:
        out, self.counts = self.counts, Counter()
        return out

    def add_counts(self, counts: dict[str, int]) -> None:
        self.counts.update({k: int(counts.get(k, 0)) for k in self.COUNTERS})

    def describe(self) -> dict[str, Any]:
        c = self.counts
        seen = c["segments_seen"]
        return {
            "mode": "lexical",
            "dice": self.dice,
            "dice_code": self.dice_code,
            "synonyms": self.synonyms,
            "short": self.short,
            "eval_stems": len(self.vocab),
            "open_items": self.open_items,
            "background_documents": self.background[0],
            **{k: int(c[k]) for k in self.COUNTERS},
            "stopped_share": round(c["segments_stopped"] / seen, 4) if seen else 0.0,
        }

    def sentence(self) -> str:
        """What the gate did, in words, for the report's notes and the CLI's summary."""
        c = self.counts
        seen, stopped = c["segments_seen"], c["segments_stopped"]
        share = f" ({stopped / seen:.1%})" if seen else ""
        return (
            f"{NOTE} {stopped:,} of {seen:,} training segments{share} before the "
            f"encoder, sharing too few words with every eval item (units {c['units_stopped']:,} of "
            f"{c['units_seen']:,}); --embed-gate none encodes every segment"
        )


def keep_units(
    gate: LexicalGate,
    units: Sequence[tuple[str, Sequence[str], bool]],
    max_words: int = 160,
    code: Sequence[bool] | None = None,
) -> list[bool]:
    """Which units pass ``gate``, counted: each unit is ``(view text, its segment texts, is a window)``;
    one passes when one of its segments does, each judged as far as the model reads it (``max_words``
    words, the gate's ``reach``), its whole text also when short. ``code``: units held to ``dice_code``.

    >>> g = LexicalGate().fit(["Book a room at the Sheraton Hotel in New York for 2 adults"])
    >>> notes = "release notes: the build now checks compiler flags, drops a stale patch and refreshes translations"
    >>> keep_units(g, [("a Sheraton room, New York", ["a Sheraton room, New York"], False), (notes, [notes], False)])
    [True, False]
    >>> g.take_counts()["units_stopped"]
    1
    """
    if not units:
        return []
    flat = [" ".join(t.split()[:max_words]) for _, texts, _ in units for t in texts]
    if gate.reach is not None:  # as far as the model reads it: its first word pieces
        flat = gate.reach.cut(flat)
    flags = [bool(c) for c, (_, texts, _) in zip(code or [False] * len(units), units) for _ in texts]
    whole = [k == 0 and not window for _, texts, window in units for k in range(len(texts))]
    ok = gate.passes(flat, code=flags, whole=whole).tolist()
    keep, at = [], 0
    for _, texts, _ in units:
        keep.append(any(ok[at : at + len(texts)]))
        at += len(texts)
    segs = [len(t) for _, t, _ in units]
    gate.count(len(units), sum(keep), sum(segs), sum(n for n, k in zip(segs, keep) if k))
    return keep

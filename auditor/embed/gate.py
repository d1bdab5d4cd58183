"""The lexical gate of the ``embedding`` tier: a training unit reaches the MiniLM encoder only if it
shares enough of some eval item's words (the dice rule) or rare words and values (count, span).

Why: the encoder runs ~100–140 texts/s on a CPU core, and in a large corpus almost no text is a
rewording of any eval item. A rewording keeps what makes the item that item — its slot values,
names, numbers and rare content words — so a text that shares too few of them with every item is not
a paraphrase of any. That is a lexical question answered on the batch's tokens in numpy, thousands of
times faster than the encoder. A unit the gate passes is encoded and decided exactly as without the
gate (same vectors, candidates and decision); a unit it stops gets no finding. By segment
(:func:`auditor.embed.gate_select.keep_segments`, ``gate_by = "segment"``), only the segments of a unit that pass are encoded.

**Terms.** Texts are tokenized as every tier tokenizes them (:class:`auditor.text.batch.TokenBatch`:
``normalize``, lower case, punctuation split), and each token is reduced to its :func:`stem` (a light
English suffix strip, then at most :data:`PREFIX` letters; a token holding a digit — a value — is
kept whole). An eval item's *terms* are its ``terms`` rarest stems that are not stop words, rarity
being the IDF of a **background**: the document frequencies bundled in
``auditor/data/gate_background.json`` (stems of 1,000+ real agent texts from Apache-2.0 / MIT
sources that are neither benchmark sets scored here nor the throughput bench's corpus; notice in
``gate_background.NOTICE``; rebuilt by ``scripts/build_gate_background.py``), blended with the
eval side's own frequencies (a word common among the eval items tells none of them apart). A stem the
background never saw is rarest.

**Rule.** A text passes when, for some item, it holds at least ``need`` of the item's terms, where
``need`` is ``min_shared`` capped at the number of the item's *values* among its terms (numbers,
names: stems of tokens holding a digit and of capitalised words not opening a sentence) and at least
1: a rewording keeps an item's values, but may replace all but one of its ordinary words. An item without any term (stop words only) keeps the gate open: every text passes
(``describe()["open_items"]``; under the dice rule with ``short``, it does not: see **Short texts**). Parameters ``min_shared`` and ``terms`` were chosen
leave-one-file-out on the paraphrase benchmarks (``benchmarks/bench_gate.py``; docs/methods.md).

**Span rule** (``rule="span"``; the rule above is ``"count"``): a text passes when, for some item,
the distinct item terms within one run of ``span`` × the item's token count (at least
:data:`MIN_SPAN` tokens) weigh, by IDF, at least ``share`` of the item's terms' total IDF (with
``by_values``: or hold all of the item's values). Fitted the same way; docs/methods.md gives the
figures (at the only recall-safe share it stops about what the count rule stops).

>>> g = LexicalGate(min_shared=2, terms=6).fit(["Book a room at the Sheraton Hotel in New York for 2 adults"])
>>> g.item_terms(0)
['sherat', 'adult', 'hotel', 'york', 'new']
>>> g.passes(["Reserve a Sheraton room in New York for two adults", "a recipe for apple pie"]).tolist()
[True, False]
>>> g.passes(["the weather in Paris", "a hotel for 2 adults"]).tolist()
[False, True]

>>> s = LexicalGate(terms=8, by_values=False, rule="span", span=2, share=0.5).fit(
...     ["Book a room at the Sheraton Hotel in New York for 2 adults"])
>>> far = "Sheraton " + "the agent waited for the api response " * 10 + "New York hotel"
>>> s.passes(["a Sheraton hotel room in New York", far]).tolist(), g.passes([far]).tolist()
([True, False], [True])

**Dice rule** (``rule="dice"``, the default rule of ``gate = "lexical"``): each segment the encoder
would read (a long one's first ``max_words`` words, as the model reads it) passes when, for some item,
the weighted Dice coefficient of their distinct content stems — twice the weight (:meth:`weight`, the
IDF above; 0 for stop words) of the stems they share, over the text's stems' weight plus the item's —
is at least ``dice``; a unit passes when one of its segments does. Unlike the rules above it counts
the *text's* own words too: a window of unrelated text that happens to hold a couple of an item's
rare words scores low, a rewording (mostly the item's words) high. Code (a training unit with a
``doc`` segment, or a code eval item) is held to ``dice_code``, because the decision holds code to
lower thresholds.

**Synonyms** (``synonyms``, the dice rule only; 0, off, for this class, 0.7 for the method): a text's stem
also counts as an item's stem it neighbours at a cosine of at least ``synonyms`` in the bundled table
of the model's own words (:mod:`auditor.embed.synonyms`: "freeway" for "highway", "urban" for
"city"), earning the item stem's weight scaled down to its own where that is lower; an item stem
counts at most once. A rewording that swaps an item's words for near-synonyms then scores like one
that keeps them, so the threshold can be higher for the same recall. The method uses every pair the
table holds (its floor, 0.7: the bar is not fitted) and a threshold of 0.2 (0.12 without synonyms),
chosen leave-one-file-out like the others (``bench_gate.py --rule short``); docs/methods.md gives the figures.

**Short texts** (``short``, the dice rule only; 0, off, for this class, 8 for the method): a training
unit's whole text of at most ``short`` distinct content stems passes whatever it shares
(:meth:`too_short`). A rewording of a short item can share none of its words, not even a neighbour
("Patterns of drug use in Britain reveal that:" → "The trend of substance abuse in the UK shows
that:"), and a text that short says too little for its overlap to decide anything; it is also cheap to
encode. Only a unit's whole text: the last line or a window of a long text is judged as before. For the
same reason an item without content stems ("Who are you?", "help me") no longer opens the gate to every
text (:attr:`closes_open_items`): its rewordings are short texts.

>>> item, reworded = "a new highway from a major city through farmland", "a freeway out of a large urban area"
>>> soft = LexicalGate(rule="dice", dice=0.2, synonyms=0.7).fit([item])
>>> plain = LexicalGate(rule="dice", dice=0.2).fit([item])
>>> [round(float(g.dice_scores_of([reworded])[0]), 2) for g in (plain, soft)], soft.passes([reworded]).tolist()
([0.0, 0.36], [True])

>>> short = LexicalGate(rule="dice", dice=0.2, synonyms=0.7, short=8).fit(["Who are you?", "Patterns of drug use in Britain reveal that:"])
>>> texts = ["The trend of substance abuse in the UK shows that:", "Tell me your name",
...          "changelog: the build script now checks compiler flags, drops a stale patch and refreshes translations"]
>>> short.passes(texts, whole=[True] * 3).tolist(), short.passes(texts).tolist(), short.describe()["open_items"]
([True, True, False], [False, False, False], 1)

>>> d = LexicalGate(rule="dice").fit(["Book a room at the Sheraton Hotel in New York for 2 adults"])
>>> notes = ("Sheraton release notes: the build script now checks compiler flags, drops a stale patch, "
...          "refreshes translations for German and Polish, fixes a crash when the cache directory is "
...          "missing, documents the new logging option, bumps the minimum library version and moves "
...          "the test fixtures; mirrors in New York were synced")
>>> d.passes(["Reserve a Sheraton room in New York for two adults", notes]).tolist()
[True, False]
>>> d.passes([notes], code=[True]).tolist()  # as code: held to dice_code (0.08)
[True]

Two ways to ask more of a pair, off by default and not in the method's configuration, kept for
``benchmarks/bench_gate_ceiling.py``, which measures them (each loses right findings before it stops
much more: docs/scale.md#the-gates-ceiling): ``cover`` (the text must also hold at least that share
of the item's weight) and ``common`` (they must share at least that many distinct content stems,
or all of a shorter item's).

>>> strict = LexicalGate(rule="dice", common=2).fit(["Book a room at the Sheraton Hotel in New York for 2 adults"])
>>> d.passes(["Sheraton"]).tolist(), strict.passes(["Sheraton"]).tolist()
([True], [False])

Errors: :class:`~auditor.errors.ConfigError` (``min_shared`` / ``terms`` / ``rule`` / ``span`` /
``share`` / ``dice`` / ``dice_code`` / ``cover`` / ``common`` / ``synonyms`` out of range),
:class:`~auditor.errors.IndexFileError` (a damaged background or synonyms file).
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow.compute as pc

from ..errors import ConfigError, IndexFileError
from ..text.batch import TokenBatch, token_batch
from .synonyms import check_bar, neighbours

if TYPE_CHECKING:
    from .reach import ModelReach

_SERIALS = itertools.count()
BACKGROUND = Path(__file__).resolve().parent.parent / "data" / "gate_background.json"
BACKGROUND_FORMAT = "auditor-gate-background"
#: a stem keeps at most this many letters ("reservation" / "reserved" → "reserv")
PREFIX = 6
#: a stem in more than this share of the background's documents, or of one character, is a term only
#: where an item has too few others (values — names, numbers — of two or more characters always are)
MAX_SHARE = 0.01
#: the gate modes of ``EmbeddingConfig.gate``
MODES = ("lexical", "none")
#: the lexical gate's rules (``EmbeddingConfig.gate_rule``): ``count`` (enough terms anywhere in the
#: text), ``span`` (enough of the item's term IDF within one span of about the item's length) and
#: ``dice`` (the default: weighted Dice coefficient of distinct stems, the text's own words counted)
RULES = ("count", "span", "dice")
#: a span is at least this many tokens, however short the item
MIN_SPAN = 16
#: the dice rule remembers at most this many stems' weights
MEMO = 1 << 20
#: English function words and the commonest request words: never an item's term
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
    if any(c.isdigit() for c in token):
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


_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][A-Za-z]+|\b\w*\d\w*")


def _values(text: str) -> set[str]:
    """The stems of a text's values: tokens holding a digit, and capitalised words not opening a
    sentence (names).

    >>> sorted(_values("Book the Sheraton in New York for 2 adults. Then call me."))
    ['2', 'new', 'sherat', 'york']
    """
    out: set[str] = set()
    for m in _NAME.findall(text):
        out.update(stem(t.decode()) for t in TokenBatch([m]).normalized(0).split())
    return out - STOP_WORDS


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
    """The batch's distinct stems and each token's index into them (separators included). Distinct
    tokens may share a stem ("continent", "continents"): it is listed once, so every rule counts a
    stem once per text."""
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
    """See the module doc. Counters (``take_counts``): ``units_seen``, ``units_passed``,
    ``units_stopped`` and the same for ``segments`` (the texts the encoder would have read), and
    ``short_passed`` (whole texts passed only because they are too short to judge: ``short``)."""

    COUNTERS = (
        "units_seen",
        "units_passed",
        "units_stopped",
        "segments_seen",
        "segments_passed",
        "segments_stopped",
        "short_passed",
    )

    def __init__(
        self,
        min_shared: int = 2,
        terms: int = 8,
        by_values: bool = True,
        background: tuple[int, dict[str, int]] | None = None,
        rule: str = "count",
        span: float = 2.0,
        share: float = 0.5,
        dice: float = 0.12,
        dice_code: float = 0.08,
        cover: float = 0.0,
        common: int = 1,
        synonyms: float = 0.0,
        short: int = 0,
    ):
        if not 1 <= min_shared <= 64:
            raise ConfigError(f"method 'embedding': gate_min_shared must be in 1..64, not {min_shared}")
        if not 1 <= terms <= 1000:
            raise ConfigError(f"method 'embedding': gate_terms must be in 1..1000, not {terms}")
        if rule not in RULES:
            raise ConfigError(f"method 'embedding': gate_rule must be one of {', '.join(RULES)}, not '{rule}'")
        if not 0.5 <= span <= 100:
            raise ConfigError(f"method 'embedding': gate_span must be in 0.5..100, not {span}")
        if not 0 < share <= 1:
            raise ConfigError(f"method 'embedding': gate_share must be in (0, 1], not {share}")
        if not 0 < dice <= 1:
            raise ConfigError(f"method 'embedding': gate_dice must be in (0, 1], not {dice}")
        if not 0 < dice_code <= 1:
            raise ConfigError(f"method 'embedding': gate_dice_code must be in (0, 1], not {dice_code}")
        self.rule, self.span, self.share = rule, float(span), float(share)
        if not 0 <= cover <= 1:
            raise ConfigError(f"method 'embedding': gate_cover must be in [0, 1], not {cover}")
        self.dice, self.dice_code, self.cover = float(dice), float(dice_code), float(cover)
        if not 1 <= common <= 64:
            raise ConfigError(f"method 'embedding': gate_common must be in 1..64, not {common}")
        self.common = int(common)
        if not 0 <= short <= 64:
            raise ConfigError(f"method 'embedding': gate_short must be in 0..64, not {short}")
        self.short = int(short)
        self.synonyms = check_bar(synonyms)
        self.syn: dict[str, np.ndarray] = {}
        self.min_shared = min_shared
        self.terms = terms
        self.by_values = by_values
        self.background = background if background is not None else load_background()
        self.counts: Counter = Counter()
        #: what the encoder reads of a text (:class:`auditor.embed.reach.ModelReach`), set by the
        #: embedding index from its model: the dice rule then judges each segment on its first word
        #: pieces, not on its first ``max_words`` words (:mod:`auditor.embed.gate_select`)
        self.reach: ModelReach | None = None
        self.serial = next(_SERIALS)  # names this fit in a batch's memo (an id() may be reused)
        self.term_id: dict[str, int] = {}
        self.items: list[list[str]] = []
        self.need = np.zeros(0, dtype=np.int64)
        self.open_items = 0
        self.vocab: dict[str, int] = {}
        self.dice_mass = np.zeros(0, dtype=np.float64)
        self.vocab_w = np.zeros(0, dtype=np.float64)

    # -- fit -----------------------------------------------------------------------------------
    def fit(self, item_texts: Sequence[str], code: Sequence[bool] | None = None) -> LexicalGate:
        """Each item's terms: its ``terms`` rarest non-stop-word stems (IDF of background + eval side).
        ``code``: which items are code (the dice rule holds a code item to ``dice_code``)."""
        from scipy import sparse

        batch = TokenBatch(list(item_texts))
        distinct, index = _distinct_stems(batch)
        starts = batch.token_starts
        per_item = [
            sorted({distinct[k] for k in index[starts[i] : starts[i + 1] - 1].tolist()} - STOP_WORDS - {""})
            for i in range(len(item_texts))
        ]
        n_bg, df_bg = self.background
        df_ev: Counter = Counter(s for stems in per_item for s in stems)
        n = n_bg + len(per_item)

        def idf(s: str) -> float:
            return math.log((n + 1) / (df_bg.get(s, 0) + df_ev[s] + 1))

        cap = MAX_SHARE * n_bg

        def pick(stems: list[str], vals: set[str]) -> list[str]:
            ranked = sorted(stems, key=lambda s: (-idf(s), s))
            rare = [s for s in ranked if len(s) > 1 and (s in vals or df_bg.get(s, 0) <= cap)]
            if len(rare) < self.min_shared:  # too few rare ones: the rarest of the rest make up the number
                rare += [s for s in ranked if s not in rare][: self.min_shared - len(rare)]
            return rare[: self.terms]

        values = [_values(t) for t in item_texts]
        self.items = [pick(stems, v) for stems, v in zip(per_item, values)]
        self.term_id = {}
        self.serial = next(_SERIALS)
        rows, cols = [], []
        for i, stems in enumerate(self.items):
            for s in stems:
                rows.append(self.term_id.setdefault(s, len(self.term_id)))
                cols.append(i)
        self.open_items = sum(1 for stems in self.items if not stems)
        if self.by_values:
            need = [min(self.min_shared, max(1, len(values[i] & set(t)))) for i, t in enumerate(self.items)]
        else:
            need = [min(self.min_shared, len(t)) for t in self.items]
        self.need = np.array(need, dtype=np.int64)
        ones = np.ones(len(rows), dtype=np.int32)
        self.matrix = sparse.csr_matrix((ones, (rows, cols)), shape=(len(self.term_id), len(self.items)))
        # the span rule: each term's IDF, each item's bar (share of its terms' IDF) and span (tokens)
        weights = np.array([idf(s) for i, stems in enumerate(self.items) for s in stems], dtype=np.float64)
        self.wmatrix = sparse.csr_matrix((weights, (rows, cols)), shape=(len(self.term_id), len(self.items)))
        self.item_ids = [np.array(sorted(self.term_id[s] for s in stems), dtype=np.int64) for stems in self.items]
        w_of = {s: idf(s) for stems in self.items for s in stems}
        inv = {v: k for k, v in self.term_id.items()}
        self.item_w = [np.array([w_of[inv[t]] for t in ids], dtype=np.float64) for ids in self.item_ids]
        bar = [self.share * float(w.sum()) for w in self.item_w]
        if self.by_values:  # a rewording keeps the values: all of them within a span are enough
            for i, stems in enumerate(self.items):
                kept = values[i] & set(stems)
                if kept:
                    bar[i] = min(bar[i], sum(w_of[s] for s in kept))
        self.bar = np.array(bar, dtype=np.float64) - 1e-9
        lengths = np.diff(starts) - 1
        self.span_len = np.ceil(self.span * np.maximum(lengths, MIN_SPAN / self.span)).astype(np.int64)
        # the dice rule: every content stem of each item (IDF-weighted), each item's total weight
        self._idf_n, self._idf_ev = n, df_ev
        self._idf_memo: dict[str, float] = {}
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
        use = self.synonyms and self.rule == "dice"  # only the dice rule reads them
        self.syn = neighbours(self.vocab, self.synonyms, self.weight) if use else {}
        self.dice_terms = np.asarray(self.dice_items.sum(axis=0)).ravel()
        is_code = np.zeros(len(per_item), dtype=bool) if code is None else np.asarray(code, dtype=bool)
        self.dice_bar = np.where(is_code, self.dice_code, self.dice)
        if self.rule == "dice":
            self.open_items = int((mass == 0).sum())
        return self

    def weight(self, s: str) -> float:
        """A stem's weight in the dice rule: its IDF over background + eval side; 0 for a stop word or a
        single letter (a single digit is a value and counts)."""
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

    def item_terms(self, item: int) -> list[str]:
        """The terms of eval item ``item``, rarest first."""
        return list(self.items[item])

    # -- decide --------------------------------------------------------------------------------
    def passes(
        self,
        texts: Sequence[str],
        shared: bool = False,
        code: Sequence[bool] | None = None,
        whole: Sequence[bool] | None = None,
    ) -> np.ndarray:
        """One bool per text: shares enough terms with some item. ``shared``: tokenize through
        :func:`auditor.text.batch.token_batch`, i.e. reuse the batch the exact and n-gram tiers
        built for these very text objects (the training views), instead of a batch of their own.
        ``code`` (the dice rule): which texts are code, held to ``dice_code`` against every item.
        ``whole`` (the dice rule): which texts are a training unit's whole text; with ``short``, such a
        text of at most ``short`` distinct content stems passes whatever it shares (:meth:`too_short`)."""
        if not len(texts):
            return np.zeros(0, dtype=bool)
        if self.open_items and not self.closes_open_items:
            return np.ones(len(texts), dtype=bool)
        if shared:
            batch, positions = token_batch(texts)
        else:
            batch, positions = TokenBatch(list(texts)), list(range(len(texts)))
        key = ("gate", self.serial)
        ok = batch.memo.get(key)
        if ok is None:
            ok = batch.memo[key] = self._batch_passes(batch)
        at = np.asarray(positions, dtype=np.int64)
        if self.rule != "dice":
            return ok[at]
        best, relative = ok[0][at], ok[1][at]
        out = relative >= 1 - 1e-9
        if code is not None:
            out |= np.asarray(code, dtype=bool) & (best >= self.dice_code - 1e-9)
        if whole is not None and self.short:
            short = np.asarray(whole, dtype=bool) & (ok[2][at] <= self.short)
            self.counts["short_passed"] += int((short & ~out).sum())
            out |= short
        return out

    @property
    def closes_open_items(self) -> bool:
        """Whether an item without any content stem (``open_items``: "Who are you?", "help me") leaves
        the gate closed: under the dice rule with ``short``, a rewording of such an item is itself a
        short text, which passes (:meth:`too_short`), so the gate need not open for every text."""
        return self.rule == "dice" and self.short > 0

    def too_short(self, texts: Sequence[str]) -> np.ndarray:
        """Which texts hold at most ``short`` distinct content stems (0: none): too few words for what
        they share with an item to say anything. A rewording of a short item can share none of its
        words ("Patterns of drug use in Britain reveal that:" → "The trend of substance abuse in the UK
        shows that:"), and such a text is cheap to encode, so the dice rule lets a training unit's whole
        text this short through (``whole`` in :meth:`passes`).

        >>> g = LexicalGate(rule="dice", short=8).fit(["Patterns of drug use in Britain reveal that:"])
        >>> long = "Drug policy papers from Britain compare trends in cannabis, heroin and cocaine markets"
        >>> g.too_short(["The trend of substance abuse in the UK shows that:", long]).tolist()
        [True, False]
        """
        if not self.short or not len(texts):
            return np.zeros(len(texts), dtype=bool)
        return self._content_stems(TokenBatch(list(texts))) <= self.short

    def _batch_passes(self, batch: TokenBatch) -> np.ndarray:
        from scipy import sparse

        n = len(batch)
        if not n or not len(self.term_id):
            if self.rule != "dice":
                return np.zeros(n, dtype=bool)
            empty = np.zeros((3, n), dtype=np.float64)
            if n and self.short:  # no item term: the content stems are still counted (too_short)
                empty[2] = self._content_stems(batch)
            return empty
        distinct, index = _distinct_stems(batch)
        text_of = np.repeat(np.arange(n, dtype=np.int64), np.diff(batch.token_starts))
        if self.rule == "dice":
            return self._dice_best(n, distinct, index, text_of)
        tid = np.fromiter((self.term_id.get(s, -1) for s in distinct), dtype=np.int64, count=len(distinct))
        per_token = tid[index]
        hit = per_token >= 0
        if not hit.any():
            return np.zeros(n, dtype=bool)
        if self.rule == "span":
            return self._span_passes(n, per_token, text_of, hit, batch.token_starts)
        present = sparse.csr_matrix(
            (np.ones(int(hit.sum()), dtype=np.int32), (text_of[hit], per_token[hit])), shape=(n, len(self.term_id))
        )
        present.sum_duplicates()
        present.data[:] = 1  # a term counts once per text
        shared = (present @ self.matrix).tocsr()  # texts × items: terms shared
        ok = shared.data >= self.need[shared.indices]
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(shared.indptr))
        out = np.zeros(n, dtype=bool)
        out[rows[ok]] = True
        return out

    def dice_scores_of(self, texts: Sequence[str]) -> np.ndarray:
        """:meth:`dice_scores` of ``texts`` (a batch of their own)."""
        batch = TokenBatch(list(texts))
        distinct, index = _distinct_stems(batch)
        text_of = np.repeat(np.arange(len(texts), dtype=np.int64), np.diff(batch.token_starts))
        return self.dice_scores(len(texts), distinct, index, text_of)

    def dice_scores(self, n: int, distinct: list[str], index: np.ndarray, text_of: np.ndarray) -> np.ndarray:
        """Each text's highest weighted Dice coefficient with an eval item (see :meth:`_dice_best`)."""
        return self._dice_best(n, distinct, index, text_of)[0]

    def _dice_best(self, n: int, distinct: list[str], index: np.ndarray, text_of: np.ndarray) -> np.ndarray:
        """Each text's highest weighted Dice coefficient with an eval item: twice the weight of the
        distinct stems they share over the weight of the text's stems plus the item's. A long text that
        happens to hold a few of an item's words scores low (its own weight is large); a rewording,
        mostly the item's words, high. Rows: each text's best score, and its best score over the
        item's bar (``dice``, or ``dice_code`` for a code item)."""
        from scipy import sparse

        w = np.fromiter((self.weight(s) for s in distinct), dtype=np.float64, count=len(distinct))
        tid = np.fromiter((self.vocab.get(s, -1) for s in distinct), dtype=np.int64, count=len(distinct))
        present = _presence(n, len(distinct), index, text_of)
        mass = present @ w
        content = present @ (w > 0).astype(np.float64)
        mine = np.nonzero((tid >= 0) & (w > 0))[0]
        hits = (present @ self._stands_for(distinct, w, tid, mine)).tocsr()  # texts × item stems
        hits.data = np.minimum(hits.data, 1.0) * self.vocab_w[hits.indices]  # an item stem counts once
        shared = (hits @ self.dice_items).tocsr()  # texts × items: weight shared
        # the best score, the best score over its item's bar, and the text's distinct content stems
        best = np.zeros((3, n), dtype=np.float64)
        best[2] = content
        if shared.nnz:
            rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(shared.indptr))
            score = 2 * shared.data / (mass[rows] + self.dice_mass[shared.indices])
            if self.cover:  # a pair counts only when the text holds enough of the item's weight
                score = np.where(shared.data >= self.cover * self.dice_mass[shared.indices] - 1e-9, score, 0.0)
            if self.common > 1:  # ... and when they share enough distinct stems (all of a shorter item's)
                ones = sparse.csr_matrix(
                    (np.ones(len(mine)), (mine, tid[mine])), shape=(len(distinct), len(self.vocab))
                )
                both = ((present @ ones) @ self.dice_items).tocsr()[rows, shared.indices]
                need = np.minimum(self.common, self.dice_terms[shared.indices])
                score = np.where(np.asarray(both).ravel() >= need - 1e-9, score, 0.0)
            np.maximum.at(best[0], rows, score)
            np.maximum.at(best[1], rows, score / self.dice_bar[shared.indices])
        return best

    def _content_stems(self, batch: TokenBatch) -> np.ndarray:
        """Each text's number of distinct content stems (weight above 0)."""
        n = len(batch)
        distinct, index = _distinct_stems(batch)
        text_of = np.repeat(np.arange(n, dtype=np.int64), np.diff(batch.token_starts))
        w = np.fromiter((self.weight(s) > 0 for s in distinct), dtype=np.float64, count=len(distinct))
        return np.asarray(_presence(n, len(distinct), index, text_of) @ w).ravel()

    def _stands_for(self, distinct: list[str], w: np.ndarray, tid: np.ndarray, mine: np.ndarray):
        """distinct stems × item stems: 1 where a stem is the item stem; with ``synonyms``, the share
        of the item stem's weight a neighbour earns (its own weight over the item stem's, at most 1)."""
        from scipy import sparse

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

    def _span_passes(
        self, n: int, per_token: np.ndarray, text_of: np.ndarray, hit: np.ndarray, starts: np.ndarray
    ) -> np.ndarray:
        """The span rule: a text passes when, for some item, the distinct item terms within some run
        of ``span_len`` tokens weigh (IDF) at least the item's bar. Candidates first: the pairs whose
        shared terms anywhere in the text weigh enough (an upper bound of any span's weight)."""
        from scipy import sparse

        pos = np.nonzero(hit)[0]
        h_text, h_term = text_of[pos], per_token[pos]
        present = sparse.csr_matrix(
            (np.ones(len(pos), dtype=np.float64), (h_text, h_term)), shape=(n, len(self.term_id))
        )
        present.sum_duplicates()
        present.data[:] = 1.0
        weighed = (present @ self.wmatrix).tocsr()
        cand = weighed.data >= self.bar[weighed.indices]
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(weighed.indptr))[cand]
        items = weighed.indices[cand]
        bounds = np.searchsorted(h_text, np.arange(n + 1))
        out = np.zeros(n, dtype=bool)
        for r, i in zip(rows.tolist(), items.tolist()):
            if out[r]:
                continue
            p, t = pos[bounds[r] : bounds[r + 1]], h_term[bounds[r] : bounds[r + 1]]
            ids = self.item_ids[i]
            slot = np.searchsorted(ids, t)
            mine = (slot < len(ids)) & (ids[np.minimum(slot, len(ids) - 1)] == t)
            p, slot = p[mine], slot[mine]
            if not len(p):
                continue
            # for each hit j as a span's end: the distinct slots of the hits within span_len before it
            window = (p[None, :] <= p[:, None]) & (p[None, :] > p[:, None] - self.span_len[i])
            onehot = np.zeros((len(p), len(ids)), dtype=np.float64)
            onehot[np.arange(len(p)), slot] = 1.0
            weight = ((window.astype(np.float64) @ onehot) > 0) @ self.item_w[i]
            if weight.max() >= self.bar[i]:
                out[r] = True
        return out

    # -- counters ------------------------------------------------------------------------------
    def count(self, units: int, passed_units: int, segments: int, passed_segments: int) -> None:
        self.counts.update(
            {
                "units_seen": units,
                "units_passed": passed_units,
                "units_stopped": units - passed_units,
                "segments_seen": segments,
                "segments_passed": passed_segments,
                "segments_stopped": segments - passed_segments,
            }
        )

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
            "rule": self.rule,
            **({"span": self.span, "share": self.share} if self.rule == "span" else {}),
            **(
                {"dice": self.dice, "dice_code": self.dice_code, "synonyms": self.synonyms, "short": self.short}
                if self.rule == "dice"
                else {}
            ),
            "min_shared": self.min_shared,
            "terms": self.terms,
            "by_values": self.by_values,
            "eval_terms": len(self.term_id),
            "open_items": self.open_items,
            "background_documents": self.background[0],
            **{k: int(c[k]) for k in self.COUNTERS},
            "stopped_share": round(c["segments_stopped"] / seen, 4) if seen else 0.0,
        }

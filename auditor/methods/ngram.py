"""``ngram``: word n-gram containment of each eval item inside training records.

Each eval item's normalized tokens are cut into n-grams of ``n`` words (default 13, the GPT-3 /
lm-eval decontamination size). Items shorter than ``n`` use their full length as ``n`` (as NeMo
Curator does): their one n-gram is the whole item, so a finding means the item's whole token
sequence stands inside the training text. A training record's score for an eval item is the
fraction of the item's distinct n-grams that occur in the record.

**Decision** (docs/methods.md, "When an n-gram copy is conclusive"). A *copy* is ``score >= threshold``
or n-grams covering ``cover`` of the item's tokens (a light edit); it is conclusive when it is a copy of
*this* item — it holds half of what tells the item from any sibling eval item sharing n-grams with the
same text, and the item's values (:func:`~auditor.methods._edits.values_match`) — else suspected, saying
why (``suspected_because``). Any shared ``n``-gram of an item of ``n`` tokens or more is at least
suspected (lm-eval's janitor rule). Template text most eval items share is left out of them
(``template_share``, :func:`~auditor.text.tokens.shared_grams`).

**Short items.** Such a containment is conclusive from ``min_n`` tokens (8). Items of
``short_min_n`` (3) to ``min_n - 1`` tokens are checked the same way, but their findings are
*suspected* (``conclusive = False``, evidence ``tier = "suspected"``): on clean pairs of benchmarks,
3–7-token items and sentences stand inside unrelated training text 5–16 % of the time (2–8 % held out)
(``benchmarks/bench_short_items.py``; docs/methods.md, "Short items"). A training text that *is* the
item (nothing else in it) is an exact copy, conclusive as the ``exact`` tier says (``whole_text`` in the
evidence). Items of fewer than
``short_min_n`` tokens are not indexed and not covered (:meth:`NgramIndex.covered`): no text tier can
tell a copy of a two-word item from chance, so the audit counts them as unchecked (``incomplete``).

N-grams are hashed as 64-bit polynomial hashes of xxh64 token hashes, vectorized with numpy; the
index is a sorted array of ``(hash, eval item)`` pairs, so memory follows the eval set only.

>>> from auditor.records.record import Record
>>> ev = Record("bench", "q1", "b#0", {"query": "i want a noise cancelling usb microphone for my podcast"})
>>> tr = Record("train", "t1", "t:1", {"text": "User: I want a noise-cancelling USB microphone for my podcast, thanks"})
>>> f = NgramIndex(n=13, min_n=5).build([ev]).search([tr])[0]
>>> f.score, f.evidence["n"], f.conclusive
(1.0, 10, True)
>>> short = Record("bench", "q2", "b#1", {"query": "End the game with ID 37."})
>>> tr = Record("train", "t2", "t:2", {"text": 'api_list = [...]\\ntask_instruction = "End the game with ID 37."'})
>>> f = NgramIndex().build([short]).search([tr])[0]
>>> f.score, f.evidence["n"], f.conclusive, f.evidence["tier"]
(1.0, 6, False, 'suspected')
>>> a = Record("bench", "a", "b#2", {"query": "please tell me what is the area of a right triangle whose other two sides are 4 and 5"})
>>> tr = Record("train", "t3", "t:3", {"text": "Please tell me: what is the area of a right triangle whose other two sides are 5 and 6?"})
>>> f = NgramIndex().build([a]).search([tr])[0]
>>> f.conclusive, f.evidence["suspected_because"][:26]
(False, "the copy lacks the item's ")
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import ConfigError
from ..records.record import FIELDS, TEXT, Record
from ..text.batch import TokenBatch, hashes_and_words, token_batch
from ..text.kernel import distinct_runs, lookup
from ..text.normalize import has_digit, normalize, tokens
from ..text.tokens import covered_tokens, distinct, ngram_hashes, packed_ngram_hashes, shared_grams, token_hashes
from ._edits import values_match
from ._ngram_kernel import NgramScanner
from .base import Finding, Index, MethodConfig

#: the fewest tokens an item may have for a text tier to vouch for it (``short_min_n``'s default; the
#: ``exact`` tier's :meth:`~auditor.methods.exact.ExactIndex.covered` uses it too): on clean benchmark
#: pairs 18–60 % of 1–2-token items and sentences stand inside unrelated training text
#: (``benchmarks/bench_short_items.py``)
SHORT_MIN_N = 3
#: the view of the user's turns joined (chat adapters), scanned besides ``text`` where they are not contiguous
USER = "user"
#: the most sibling eval items (those sharing n-grams with the same training text) a copy is weighed against
SIBLINGS = 32
#: a copy of an item is proof of it against a sibling when the n-grams found cover this share of the
#: tokens in which the item differs from the sibling (its n-grams the sibling lacks)
SIBLING_COVER = 0.5
#: the n-gram size that finds template text shared by most eval items (``template_share``)
TEMPLATE_N = 8
#: the fewest eval items that must share an n-gram for it to be template text
TEMPLATE_MIN_ITEMS = 3


@dataclass
class NgramConfig(MethodConfig):
    n: int = 13
    #: an item's containment is conclusive from this many tokens
    min_n: int = 8
    #: items of ``short_min_n`` to ``min_n - 1`` tokens are checked by containment, findings suspected;
    #: shorter items are not covered (unchecked). ``short_min_n = min_n`` turns the suspected band off
    short_min_n: int = SHORT_MIN_N
    threshold: float = 0.5
    #: a copy is also conclusive when the n-grams found cover this share of the item's tokens (a lightly
    #: edited copy: one changed word loses every n-gram holding it, but only itself of the item's words)
    cover: float = 0.8
    #: an n-gram of :data:`TEMPLATE_N` tokens held by at least this share of the eval items (and by
    #: :data:`TEMPLATE_MIN_ITEMS` of them) is template text (a prompt every item is rendered in): left out
    #: of the items, which are searched for what is left. 0 turns it off
    template_share: float = 0.5
    #: ``fields``: every other string of a training record (:mod:`auditor.records.fields`)
    train_views: tuple[str, ...] = (TEXT, FIELDS)

    BOUNDS: ClassVar[dict[str, tuple[float, float]]] = {
        "n": (1, 64),
        "min_n": (1, 64),
        "short_min_n": (1, 64),
        "threshold": (0.0, 1.0),
        "cover": (0.0, 1.0),
        "template_share": (0.0, 1.0),
    }

    def check_numbers(self, method: str) -> None:
        """Bounds (see :class:`MethodConfig`), and ``short_min_n <= min_n`` (else :class:`ConfigError`).

        >>> NgramConfig(short_min_n=9).check_numbers("ngram")
        Traceback (most recent call last):
        auditor.errors.ConfigError: method 'ngram': short_min_n (9) must not exceed min_n (8)
        """
        super().check_numbers(method)
        if self.short_min_n > self.min_n:
            raise ConfigError(
                f"method '{method}': short_min_n ({self.short_min_n}) must not exceed min_n ({self.min_n})"
            )


class NgramIndex(Index[NgramConfig]):
    name = "ngram"
    Config = NgramConfig
    _kernel: NgramScanner | None = None  # built on the first search (:meth:`_scanner`)
    summary = (
        "word n-gram containment (13 by default, shorter for short items); score = share of the item's n-grams found"
    )

    def _build(self) -> None:
        cfg = self.config
        per_n: dict[int, tuple[list[np.ndarray], list[np.ndarray]]] = {}
        self.totals = np.zeros(len(self.eval_records), dtype=np.int64)
        self.item_n = np.zeros(len(self.eval_records), dtype=np.int64)
        all_th = self._eval_hashes()
        self.template = shared_grams(all_th, TEMPLATE_N, cfg.template_share, TEMPLATE_MIN_ITEMS)
        indexed = []  # template text left out
        for th in all_th:
            kept = self._kept(th) if len(self.template) else None
            indexed.append(th if kept is None else th[kept])
        n_of = np.minimum(cfg.n, np.fromiter(map(len, indexed), dtype=np.int64, count=len(indexed)))
        if short := int((n_of < cfg.short_min_n).sum()):
            self.not_indexed[f"fewer than short_min_n={cfg.short_min_n} tokens"] += short
        for n in np.unique(n_of[n_of >= cfg.short_min_n]).tolist():  # the items of each n at once
            at = np.flatnonzero(n_of == n)
            values, offsets = packed_ngram_hashes([indexed[pos] for pos in at], n)
            grams, bounds = distinct_runs(values, offsets[:-1], np.diff(offsets))  # each item's, once, sorted
            counts = np.diff(bounds)
            self.totals[at], self.item_n[at] = counts, n
            per_n[n] = ([grams], [np.repeat(at, counts)])
        self.tables: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for n, (hs, ps) in sorted(per_n.items()):
            h, p = np.concatenate(hs), np.concatenate(ps)
            order = np.lexsort((p, h))
            self.tables[n] = (h[order], p[order])
        self._derive(all_th)

    def _eval_hashes(self) -> list[np.ndarray]:
        """Each eval item's token hashes, from one token batch of their texts."""
        batch, at = token_batch([ev.view(self.config.eval_view) for ev in self.eval_records])
        return batch.text_token_hashes(at)

    def _derive(self, all_th: list[np.ndarray] | None = None) -> None:
        """State the tables imply (built and restored alike): per-item state built on first use, and
        how many items held template text (``all_th``: each item's token hashes, where known)."""
        self._items: dict[int, _Item] = {}
        #: the items that held template text (searched without it)
        self.templated: frozenset[int] = frozenset()
        if len(self.template):
            hashes = self._eval_hashes() if all_th is None else all_th
            self.templated = frozenset(pos for pos, th in enumerate(hashes) if self._kept(th) is not None)

    def _kept(self, th: np.ndarray) -> np.ndarray | None:
        """Which of an item's tokens (their hashes ``th``) lie in no template n-gram, or None when it
        holds none (or nothing but template: the item is searched whole)."""
        if not len(self.template) or len(th) < TEMPLATE_N:
            return None
        inside = np.isin(ngram_hashes(th, TEMPLATE_N), self.template)
        if not inside.any():
            return None
        kept = ~covered_tokens(inside, TEMPLATE_N, len(th))
        return kept if int(kept.sum()) >= self.config.short_min_n else None

    def _item_tokens(self, toks: list[str]) -> list[str]:
        """The tokens of an eval item the index holds: template text left out."""
        kept = self._kept(token_hashes(toks))
        return toks if kept is None else [t for t, k in zip(toks, kept.tolist()) if k]

    def _item(self, pos: int) -> _Item:
        """Eval item ``pos``'s n-grams in order and its values."""
        item = self._items.get(pos)
        if item is None:
            toks = self._item_tokens_at(pos)
            grams = ngram_hashes(token_hashes(toks), int(self.item_n[pos]))
            values = frozenset(filter(has_digit, toks))
            item = self._items[pos] = _Item(grams, distinct(grams), len(toks), values)
        return item

    def covered(self, records: Sequence[Record]) -> list[bool]:
        """Items of at least ``short_min_n`` tokens: a copy inside a training text is found (conclusive
        from ``min_n`` tokens, suspected below)."""
        batch, at = token_batch([r.view(self.config.eval_view) for r in records])
        return (batch.token_counts()[at] >= self.config.short_min_n).tolist()

    @property
    def _conclusive_n(self) -> int:
        """An item's n (its length, up to ``n``) from which its containment is conclusive."""
        return min(self.config.min_n, self.config.n)

    def stats(self) -> dict:
        """Base stats plus how many eval items only a suspected containment can check (``short_items``)."""
        short = int(((self.item_n > 0) & (self.item_n < self._conclusive_n)).sum())
        out = super().stats() | {"short_items": short}
        if self.templated:
            out["templated_items"] = len(self.templated)
        return out

    def notes(self) -> list[str]:
        """A note when eval items share template text, which the index left out of them."""
        if not self.templated:
            return []
        return [
            f"ngram: {len(self.templated)} of {len(self.eval_records)} eval items share template text "
            f"({TEMPLATE_N}-token runs held by {self.config.template_share:.0%} of the items or more), "
            "left out of them: each is searched for what is left"
        ]

    def state(self):
        arrays = {"totals": self.totals, "item_n": self.item_n, "template": self.template}
        for n, (h, p) in self.tables.items():
            arrays[f"h{n}"], arrays[f"p{n}"] = h, p
        return arrays, {"not_indexed": dict(self.not_indexed), "ns": sorted(self.tables)}

    def restore(self, eval_records, arrays, meta):
        self.eval_records = list(eval_records)
        self.not_indexed = Counter(meta.get("not_indexed", {}))
        self.totals, self.item_n = arrays["totals"], arrays["item_n"]
        self.tables = {int(n): (arrays[f"h{n}"], arrays[f"p{n}"]) for n in meta.get("ns", [])}
        self.template = arrays.get("template", np.empty(0, dtype=np.uint64))
        self._derive()
        return self

    def _scanner(self):
        """The batch kernel (:mod:`auditor.methods._ngram_kernel`), built once from the eval vocabulary and tables."""
        scanner = self._kernel
        if scanner is None or scanner.tables is not self.tables:
            batch = TokenBatch([ev.view(self.config.eval_view) for ev in self.eval_records])  # may run mid-scan
            scanner = self._kernel = NgramScanner(batch.distinct_tokens(), self.tables)
        return scanner

    def prepare_workers(self) -> None:
        """The kernel, built once here: each worker's copy, forked or unpickled, holds it."""
        if self.tables:
            self._scanner()

    def searched_views(self) -> tuple[str, ...]:
        """The train views, and the ``user`` view (the user's turns joined) with ``text``: see :meth:`search`."""
        views = tuple(self.config.train_views)
        return (*views, USER) if TEXT in views and USER not in views else views

    def search(self, batch: Sequence[Record]) -> list[Finding]:
        out: list[Finding] = []
        if not self.tables:
            return out
        views = self.config.train_views
        if len(views) == 1:  # the view's own string (what joining one view gives), no join per record
            texts = [tr.views.get(views[0]) or tr.view(TEXT) for tr in batch]
        else:
            texts = ["\n".join(tr.views[v] for v in views if tr.views.get(v)) or tr.view(TEXT) for tr in batch]
        # the user's turns joined (the ``user`` view), where they are not contiguous in the text: a query
        # split across two user turns with an assistant turn between is whole only there
        extra = [i for i, tr in enumerate(batch) if TEXT in views and _split_user(tr.views.get(USER, ""), texts[i])]
        scanned = texts + [batch[i].views[USER] for i in extra] if extra else texts
        pairs = self._pairs(scanned)
        best: dict[tuple[int, int], _Pair] = {}
        for pair in pairs:
            d = pair.text if pair.text < len(batch) else extra[pair.text - len(batch)]
            key = (d, pair.pos)
            if key not in best or pair.matched > best[key].matched:
                best[key] = pair
        lengths: dict[int, int] = {}  # token counts of the texts a short item was found in
        shapes = {key: self._shape(pair) for key, pair in best.items()}
        found_in: dict[int, list[_Pair]] = {}  # per training record, the items it shares n-grams with
        for (d, _), pair in best.items():
            found_in.setdefault(d, []).append(pair)
        memo: dict[tuple[int, int], np.ndarray] = {}  # each text's n-gram hashes, for its copies' spans
        for (d, pos), pair in sorted(best.items()):
            copy, coverage = shapes[(d, pos)]
            because = self._doubt(pair, found_in[d], scanned, memo) if copy else self._janitor(pair, coverage)
            if because is None:
                continue
            conclusive = copy and not because
            evidence: dict = {"user_turns": True} if pair.text >= len(batch) else {}
            if pos in self.templated and self._holds_whole(pos, scanned[pair.text]):
                conclusive, because = True, ""  # the item as it stands, template and all: a copy of it
                evidence["whole_item"] = True
            if coverage is not None:
                evidence["coverage"] = round(coverage, 4)
            f = self.finding(
                self.eval_records[pos],
                batch[d],
                round(min(pair.matched / self.totals[pos], 1.0), 6),
                n=int(self.item_n[pos]),
                matched_ngrams=pair.matched,
                eval_ngrams=int(self.totals[pos]),
                train_views=list(self.config.train_views),
                **evidence,
            )
            if conclusive and self.item_n[pos] < self._conclusive_n and "whole_item" not in evidence:
                # a short item: containment is no proof ...
                if d not in lengths:
                    lengths[d] = len(tokens(texts[d]))
                if lengths[d] == self.item_n[pos]:  # ... but the whole text being the item is
                    f.evidence["whole_text"] = True  # an exact copy (what the exact tier calls proof)
                else:
                    conclusive = False
            if not conclusive:
                f.conclusive = False
                f.evidence["tier"] = "suspected"
                if because:
                    f.evidence["suspected_because"] = because
            out.append(f)
        return out

    def _holds_whole(self, pos: int, text: str) -> bool:
        """Whether ``text`` holds eval item ``pos`` whole, its template text included (an item whose
        own part is short is then still proven by a verbatim copy)."""
        return f" {normalize(self.eval_records[pos].view(self.config.eval_view))} " in f" {normalize(text)} "

    def _pairs(self, scanned: Sequence[str]) -> list[_Pair]:
        """Per (scanned text, eval item) with an n-gram found: how many, and which (their hashes)."""
        found = self._scanner().hits(scanned)
        if not found:
            return []
        n_eval = len(self.eval_records)
        keys, hashes = [], []
        for n, docs, entries in found:
            h, p = self.tables[n]
            keys.append(docs * np.int64(n_eval) + p[entries])
            hashes.append(h[entries])
        key = np.concatenate(keys)
        order = np.argsort(key, kind="stable")
        key, hash_ = key[order], np.concatenate(hashes)[order]
        uniq, first, counts = np.unique(key, return_index=True, return_counts=True)
        return [
            _Pair(int(k // n_eval), int(k % n_eval), int(c), hash_[i : i + c])
            for k, i, c in zip(uniq.tolist(), first.tolist(), counts.tolist())
        ]

    def _shape(self, pair: _Pair) -> tuple[bool, float | None]:
        """``(copy, coverage)``: whether the n-grams found make a copy of the item (``threshold`` of its
        n-grams, or n-grams covering ``cover`` of its tokens: a lightly edited copy), and the share of
        its tokens they cover (None: every n-gram found)."""
        total = int(self.totals[pair.pos])
        if pair.matched >= total:
            return True, None
        item = self._item(pair.pos)
        found = np.isin(item.grams, pair.hashes)
        coverage = float(covered_tokens(found, int(self.item_n[pair.pos]), item.length).sum() / item.length)
        return pair.matched / total >= self.config.threshold or coverage >= self.config.cover, coverage

    def _doubt(self, pair: _Pair, others: list[_Pair], scanned: Sequence[str], memo: dict) -> str:
        """Why a copy of the item is no proof of *this* item ("" when it is):

        - a sibling eval item shares n-grams with the same text, and the n-grams found cover less than
          :data:`SIBLING_COVER` of the tokens in which the item differs from it (its n-grams the
          sibling lacks): items that differ in a word or a value, questions sharing a passage. Siblings
          are weighed in order of n-grams found, :data:`SIBLINGS` at most;
        - the copy (:meth:`_span`) lacks the item's values, holds others in their place or holds them
          in another order (:func:`~auditor.methods._edits.values_match`: numbers, ids, dates)."""
        item = self._item(pair.pos)
        n = int(self.item_n[pair.pos])
        found = np.isin(item.grams, pair.hashes)
        for other in sorted(others, key=lambda o: -o.matched)[:SIBLINGS]:
            if other.pos == pair.pos:
                continue
            differs = ~np.isin(item.grams, self._item(other.pos).distinct)  # n-grams the sibling lacks
            if not differs.any():
                continue
            part = covered_tokens(differs, n, item.length).sum()  # the tokens in which the item differs
            if covered_tokens(differs & found, n, item.length).sum() < SIBLING_COVER * part:
                ev = self.eval_records[other.pos]
                return (
                    f"the text holds too little of what tells this item from eval item {ev.dataset}#{ev.id}"
                    " (the n-grams found are mostly ones that item holds too)"
                )
        if item.values and not values_match(" ".join(self._item_tokens_at(pair.pos)), self._span(pair, scanned, memo)):
            shown = ", ".join(sorted(item.values)[:5])
            return f"the copy lacks the item's values ({shown}), holds others in their place, or in another order"
        return ""

    def _item_tokens_at(self, pos: int) -> list[str]:
        return self._item_tokens(tokens(self.eval_records[pos].view(self.config.eval_view)))

    def _span(self, pair: _Pair, scanned: Sequence[str], memo: dict) -> str:
        """The part of the training text the copy fills: from its first n-gram found to its last, widened
        by the item's tokens before the first and after the last n-gram found in the item (where a
        sibling's other value would stand); each text's n-grams hashed once (``memo``: by text and n)."""
        hashes, words = hashes_and_words(scanned[pair.text])
        n = int(self.item_n[pair.pos])
        if (grams := memo.get((pair.text, n))) is None:
            grams = memo[(pair.text, n)] = ngram_hashes(hashes, n)
        at = np.flatnonzero(np.frombuffer(lookup(grams.data, pair.hashes.tobytes()), dtype=np.int64))
        item = self._item(pair.pos)
        inside = np.flatnonzero(np.isin(item.grams, pair.hashes))
        if not len(at) or not len(inside):
            return words(0, len(hashes))
        start = max(0, int(at[0]) - int(inside[0]))
        end = min(len(hashes), int(at[-1]) + n + item.length - (int(inside[-1]) + n))
        return words(start, end)

    def _janitor(self, pair: _Pair, coverage: float | None) -> str | None:
        """Why a partial copy is suspected: an item of ``n`` tokens or more shares an ``n``-token run
        with the training text (lm-eval's janitor calls one shared 13-gram contamination); None: too
        little to report."""
        if self.item_n[pair.pos] < self.config.n:
            return None
        shown = f" covering {coverage:.0%} of it" if coverage is not None else ""
        return f"shares {self.config.n}-token runs with the item{shown}, too little to be a copy"


@dataclass(frozen=True)
class _Pair:
    """A scanned text and an eval item with n-grams in common (:meth:`NgramIndex._pairs`)."""

    text: int
    pos: int
    matched: int
    hashes: np.ndarray


@dataclass(frozen=True)
class _Item:
    """An eval item as the decision needs it: its n-grams in order and distinct (sorted), its token
    count and its values (tokens with a digit)."""

    grams: np.ndarray
    distinct: np.ndarray
    length: int
    values: frozenset[str]


def _split_user(user: str, text: str) -> bool:
    """True when the user's turns (``user``, joined by newlines) are not one contiguous piece of ``text``."""
    return "\n" in user and user not in text

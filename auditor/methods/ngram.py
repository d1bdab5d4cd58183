"""``ngram``: word n-gram containment of each eval item inside training records.

Each eval item's normalized tokens are cut into n-grams of ``n`` words (default 13, the GPT-3 /
lm-eval decontamination size). Items shorter than ``n`` use their full length as ``n`` (as NeMo
Curator does): their one n-gram is the whole item, so a finding means the item's whole token
sequence stands inside the training text. A training record's score for an eval item is the
fraction of the item's distinct n-grams that occur in the record; a finding needs
``score >= threshold``.

**Short items.** Such a containment is conclusive from ``min_n`` tokens (8). Items of
``short_min_n`` (3) to ``min_n - 1`` tokens are checked the same way, but their findings are
*suspected* (``conclusive = False``, evidence ``tier = "suspected"``): on clean pairs of benchmarks,
3–7-token items and sentences stand inside unrelated training text 5–16 % of the time (2–8 % held out)
(``benchmarks/bench_short_items.py``; docs/methods.md, "Short items"). A training text that *is* the
item (nothing else in it) is an exact copy, conclusive as the ``exact`` tier says (``whole_text`` in the
evidence). Items of fewer than
``short_min_n`` tokens are not indexed and not covered (:meth:`NgramIndex.covers`): no text tier can
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
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from ..errors import ConfigError
from ..records.record import FIELDS, TEXT, Record
from ..text.kernels import NgramScanner
from ..text.normalize import tokens
from ..text.tokens import ngram_hashes, token_hashes
from .base import Finding, Index, MethodConfig

if TYPE_CHECKING:
    from ..text.kernels import NgramScanner


#: the fewest tokens an item may have for a text tier to vouch for it (``short_min_n``'s default; the
#: ``exact`` tier's :meth:`~auditor.methods.exact.ExactIndex.covers` uses it too): on clean benchmark
#: pairs 18–60 % of 1–2-token items and sentences stand inside unrelated training text
#: (``benchmarks/bench_short_items.py``)
SHORT_MIN_N = 3
#: the view of the user's turns joined (chat adapters), scanned besides ``text`` where they are not contiguous
USER = "user"


@dataclass
class NgramConfig(MethodConfig):
    n: int = 13
    #: an item's containment is conclusive from this many tokens
    min_n: int = 8
    #: items of ``short_min_n`` to ``min_n - 1`` tokens are checked by containment, findings suspected;
    #: shorter items are not covered (unchecked). ``short_min_n = min_n`` turns the suspected band off
    short_min_n: int = SHORT_MIN_N
    threshold: float = 0.5
    #: ``fields``: every other string of a training record (:mod:`auditor.records.fields`)
    train_views: tuple[str, ...] = (TEXT, FIELDS)

    BOUNDS: ClassVar[dict[str, tuple[float, float]]] = {
        "n": (1, 64),
        "min_n": (1, 64),
        "short_min_n": (1, 64),
        "threshold": (0.0, 1.0),
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
        for pos, ev in enumerate(self.eval_records):
            toks = tokens(ev.view(cfg.eval_view))
            n = min(cfg.n, len(toks))
            if n < cfg.short_min_n:
                self.not_indexed[f"fewer than short_min_n={cfg.short_min_n} tokens"] += 1
                continue
            grams = np.unique(ngram_hashes(token_hashes(toks), n))
            self.totals[pos] = len(grams)
            self.item_n[pos] = n
            hs, ps = per_n.setdefault(n, ([], []))
            hs.append(grams)
            ps.append(np.full(len(grams), pos, dtype=np.int64))
        self.tables: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for n, (hs, ps) in sorted(per_n.items()):
            h = np.concatenate(hs)
            p = np.concatenate(ps)
            order = np.lexsort((p, h))
            self.tables[n] = (h[order], p[order])

    def covers(self, record: Record) -> bool:
        """Items of at least ``short_min_n`` tokens: a copy inside a training text is found (conclusive
        from ``min_n`` tokens, suspected below)."""
        return len(tokens(record.view(self.config.eval_view))) >= self.config.short_min_n

    @property
    def _conclusive_n(self) -> int:
        """An item's n (its length, up to ``n``) from which its containment is conclusive."""
        return min(self.config.min_n, self.config.n)

    def stats(self) -> dict:
        """Base stats plus how many eval items only a suspected containment can check (``short_items``)."""
        short = int(((self.item_n > 0) & (self.item_n < self._conclusive_n)).sum())
        return super().stats() | {"short_items": short}

    def state(self):
        arrays = {"totals": self.totals, "item_n": self.item_n}
        for n, (h, p) in self.tables.items():
            arrays[f"h{n}"], arrays[f"p{n}"] = h, p
        return arrays, {"not_indexed": dict(self.not_indexed), "ns": sorted(self.tables)}

    def restore(self, eval_records, arrays, meta):
        self.eval_records = list(eval_records)
        self.not_indexed = Counter(meta.get("not_indexed", {}))
        self.totals, self.item_n = arrays["totals"], arrays["item_n"]
        self.tables = {int(n): (arrays[f"h{n}"], arrays[f"p{n}"]) for n in meta.get("ns", [])}
        return self

    def _scanner(self):
        """The batch kernel (:mod:`auditor.text.kernels`), built once from the eval vocabulary and tables."""
        scanner = self._kernel
        if scanner is None or scanner.tables is not self.tables:
            vocab = (t for ev in self.eval_records for t in tokens(ev.view(self.config.eval_view)))
            scanner = self._kernel = NgramScanner(vocab, self.tables)
        return scanner

    def __getstate__(self):  # engines ship the index to workers; the kernel is rebuilt there
        state = dict(self.__dict__)
        state.pop("_kernel", None)
        return state

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
        best: dict[tuple[int, int], tuple[int, bool]] = {}
        for d, pos, matched in self._scanner().matches(scanned, len(self.eval_records)):
            key = (d, pos) if d < len(batch) else (extra[d - len(batch)], pos)
            if matched > best.get(key, (0, False))[0]:
                best[key] = (matched, d >= len(batch))
        lengths: dict[int, int] = {}  # token counts of the texts a short item was found in
        for (d, pos), (matched, in_user) in sorted(best.items()):
            score = matched / self.totals[pos]
            if score >= self.config.threshold:
                where = {"user_turns": True} if in_user else {}
                f = self.finding(
                    self.eval_records[pos],
                    batch[d],
                    round(min(score, 1.0), 6),
                    n=int(self.item_n[pos]),
                    matched_ngrams=matched,
                    eval_ngrams=int(self.totals[pos]),
                    train_views=list(self.config.train_views),
                    **where,
                )
                if self.item_n[pos] < self._conclusive_n:  # a short item: containment is no proof ...
                    if d not in lengths:
                        lengths[d] = len(tokens(texts[d]))
                    if lengths[d] == self.item_n[pos]:  # ... but the whole text being the item is
                        f.evidence["whole_text"] = True  # an exact copy (what the exact tier calls proof)
                    else:
                        f.conclusive = False
                        f.evidence["tier"] = "suspected"
                out.append(f)
        return out


def _split_user(user: str, text: str) -> bool:
    """True when the user's turns (``user``, joined by newlines) are not one contiguous piece of ``text``."""
    return "\n" in user and user not in text

"""``ngram``: word n-gram containment of each eval item inside training records.

Each eval item's normalized tokens are cut into n-grams of ``n`` words (default 13, the GPT-3 /
lm-eval decontamination size). Items shorter than ``n`` use their full length as ``n`` (as NeMo
Curator does), down to ``min_n``; shorter items are not indexed by this method (the exact tier still
checks them, and the report counts them). A training record's score for an eval item is the
fraction of the item's distinct n-grams that occur in the record; a finding needs
``score >= threshold``.

N-grams are hashed as 64-bit polynomial hashes of xxh64 token hashes, vectorized with numpy; the
index is a sorted array of ``(hash, eval item)`` pairs, so memory follows the eval set only.

>>> from auditor.records.record import Record
>>> ev = Record("bench", "q1", "b#0", {"query": "i want a noise cancelling usb microphone for my podcast"})
>>> tr = Record("train", "t1", "t:1", {"text": "User: I want a noise-cancelling USB microphone for my podcast, thanks"})
>>> f = NgramIndex(n=13, min_n=5).build([ev]).search([tr])[0]
>>> f.score, f.evidence["n"]
(1.0, 10)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from ..records.record import TEXT, Record
from ..text.kernels import NgramScanner
from ..text.normalize import tokens
from ..text.tokens import ngram_hashes, token_hashes
from .base import Finding, Index, MethodConfig

if TYPE_CHECKING:
    from ..text.kernels import NgramScanner


@dataclass
class NgramConfig(MethodConfig):
    n: int = 13
    min_n: int = 8
    threshold: float = 0.5
    train_views: tuple[str, ...] = (TEXT,)

    BOUNDS: ClassVar[dict[str, tuple[float, float]]] = {"n": (1, 64), "min_n": (1, 64), "threshold": (0.0, 1.0)}


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
            if n < cfg.min_n:
                self.not_indexed[f"fewer than min_n={cfg.min_n} tokens"] += 1
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
        return len(tokens(record.view(self.config.eval_view))) >= self.config.min_n

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
        extra = [i for i, tr in enumerate(batch) if TEXT in views and _split_user(tr.views.get("user", ""), texts[i])]
        scanned = texts + [batch[i].views["user"] for i in extra] if extra else texts
        best: dict[tuple[int, int], tuple[int, bool]] = {}
        for d, pos, matched in self._scanner().matches(scanned, len(self.eval_records)):
            key = (d, pos) if d < len(batch) else (extra[d - len(batch)], pos)
            if matched > best.get(key, (0, False))[0]:
                best[key] = (matched, d >= len(batch))
        for (d, pos), (matched, in_user) in sorted(best.items()):
            score = matched / self.totals[pos]
            if score >= self.config.threshold:
                where = {"user_turns": True} if in_user else {}
                out.append(
                    self.finding(
                        self.eval_records[pos],
                        batch[d],
                        round(min(score, 1.0), 6),
                        n=int(self.item_n[pos]),
                        matched_ngrams=matched,
                        eval_ngrams=int(self.totals[pos]),
                        train_views=list(self.config.train_views),
                        **where,
                    )
                )
        return out


def _split_user(user: str, text: str) -> bool:
    """True when the user's turns (``user``, joined by newlines) are not one contiguous piece of ``text``."""
    return "\n" in user and user not in text

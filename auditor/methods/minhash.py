"""``minhash``: near-duplicates by MinHash-LSH, every candidate verified before it is reported.

Each eval item's normalized text (:mod:`auditor.text.normalize`, shared with the exact tier) is cut into
shingles (word ``shingle_size``-grams by default, character grams with ``shingle="char"``), hashed to
64 bits, and sketched into a ``num_perm`` MinHash signature with datasketch's permutation scheme
(:mod:`auditor.methods._minhash_sketch`, vectorized). Signatures are cut into bands of rows chosen for
``lsh_threshold`` by datasketch's optimiser; a training view that shares a band key with an eval item
is a *candidate*. Every candidate is then **verified** on the exact shingle sets:

``mode="jaccard"`` (default)
    score = |eval ∩ train| / |eval ∪ train| of the training view's shingles (by default the
    record's ``query`` view, i.e. the task of a trajectory; ``text`` when a record has none).
``mode="containment"``
    for a short eval item inside a long training record: the record is sketched in sliding windows
    of about the item's length (``window_blocks`` blocks, stride one block), and the score is
    |eval ∩ train| / |eval|, over the whole record (``text`` view by default).

A finding needs ``score >= threshold``; candidates below it are counted as ``rejected`` in
:meth:`MinHashIndex.stats` and never reported, except in the *suspected band* (``suspected_threshold``
to ``threshold``, mode ``jaccard``), where a record that keeps the item's values in order
(:func:`auditor.methods._edits.all_values_kept`) is a suspected finding, a rewording around the same slots
(``suspected_band``). A second channel compares word sets (``word_set_threshold``), whatever the edits'
positions; its matches are suspected where a word or value was replaced (:mod:`auditor.methods._edits`),
and any match is suspected where the record lacks the item's values (:func:`~auditor.methods._edits.values_match`:
a sibling item around other numbers, ids or dates is no copy of it). Items with fewer than ``min_shingles``
distinct shingles (10: about 12 words) are not indexed, and the report counts them: on items that
short one changed word flips the meaning (WebShop "wireless bluetooth speaker" / "... soundbar" has
Jaccard 0.67), so the exact and ngram tiers judge them.

>>> from auditor.records.record import Record
>>> ev = Record("bench", "q1", "b#0", {"query": "Book the cheapest flight from Boston to Denver next Friday morning please"})
>>> tr = Record("train", "t1", "t:1", {"query": "book the CHEAPEST flight from Boston to Denver next Friday morning, please thanks"})
>>> ix = MinHashIndex().build([ev])
>>> f = ix.search([tr])[0]
>>> round(f.score, 3), f.evidence["measure"], ix.stats()["candidates"]
(0.909, 'jaccard', 1)

Raises :class:`~auditor.errors.ConfigError` for bad parameters.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from rapidfuzz import fuzz

from ..errors import ConfigError, IndexFileError
from ..records.record import FIELDS, QUERY, TEXT, Record
from ..text.batch import token_batch
from ..text.normalize import normalize, tokens
from ..text.tokens import distinct, token_hashes
from . import _minhash_sketch as sk
from . import _shingles
from ._edits import all_values_kept, substituted, values_kept, values_match
from ._shingles import HashSet, distinct_packed, gathered, intersections, may_reach, packed, shingle_hashes
from .base import Finding, Index, MethodConfig

MODES = ("jaccard", "containment")
SHINGLES = ("word", "char")
#: block sizes of containment windows (~15% apart), so that few window classes cover every item length
_LADDER = np.unique(np.round(1.15 ** np.arange(0, 60)).astype(np.int64))
#: candidate pairs verified at once by :func:`intersections` (bounds its memory: ~16 bytes a word)
_VERIFY_CHUNK = 65536


@dataclass
class MinHashConfig(MethodConfig):
    threshold: float = 0.6
    lsh_threshold: float | None = None  # None: threshold - 0.2 (jaccard) or 0.5 x threshold (containment)
    num_perm: int = 128
    seed: int = 1
    scheme: str = "affine32"
    shingle: str = "word"
    shingle_size: int = 3
    min_shingles: int = 10
    mode: str = "jaccard"
    window_blocks: int = 8
    #: ``fields``: every other string of a training record (:mod:`auditor.records.fields`), windowed
    #: like a long query (a near-copy in an Alpaca ``output`` or a tool description is found)
    train_views: tuple[str, ...] = (QUERY, FIELDS)
    #: off: the score is a Jaccard over the whole view, so a boilerplate line inside the eval item is part of
    #: what must match; masking it on the training side only would lower the score of a true near-duplicate
    mask_boilerplate: bool = False
    #: second channel (mode "jaccard"): word-set (unigram) Jaccard, whatever the edits' positions
    word_set_threshold: float = 0.8  # 0 turns the channel off
    word_set_min_words: int = 8  # items with fewer distinct words are left to the other channels and tiers
    #: 25 bands x 5 rows: a pair at word-set Jaccard 0.8 is missed with probability 5e-5 (0.6, 18 x 7: 1.4 %)
    word_set_lsh_threshold: float = 0.5
    #: a shingle Jaccard in [suspected_threshold, threshold) is a *suspected* finding where the record keeps
    #: the item's values (at least ``suspected_min_values`` words with a digit; 90 % of them, in order): a
    #: rewording around the same slots (BFCL v4 live_parallel_10-6-0 / v1 parallel_function_57). 0: off
    suspected_threshold: float = 0.5
    suspected_min_values: int = 3

    BOUNDS: ClassVar[dict[str, tuple[float, float]]] = {
        "num_perm": (2, 4096),
        "seed": (0, 2**32 - 1),
        "shingle_size": (1, 64),
        "window_blocks": (1, 4096),
        "threshold": (0.0, 1.0),
        "lsh_threshold": (0.0, 1.0),
    }


class MinHashIndex(Index[MinHashConfig]):
    name = "minhash"
    Config = MinHashConfig
    _classes: list[tuple[int, int]] | None = None  # window classes of the eval lengths (lazy)
    summary = (
        "MinHash-LSH near-duplicates (word 3-gram shingles), every candidate verified by exact Jaccard or containment"
    )

    def __init__(self, config: MinHashConfig | None = None, **params: Any):
        super().__init__(config, **params)
        cfg = self.config
        for name in ("threshold", "num_perm", "seed", "shingle_size", "min_shingles", "window_blocks"):
            if not isinstance(getattr(cfg, name), (int, float)) or isinstance(getattr(cfg, name), bool):
                raise ConfigError(f"method 'minhash': {name} must be a number, got {getattr(cfg, name)!r}")
        if cfg.mode not in MODES:
            raise ConfigError(f"method 'minhash': mode must be one of {', '.join(MODES)}, got '{cfg.mode}'")
        if cfg.shingle not in SHINGLES:
            raise ConfigError(f"method 'minhash': shingle must be one of {', '.join(SHINGLES)}, got '{cfg.shingle}'")
        if not 0.0 < cfg.threshold <= 1.0:
            raise ConfigError(f"method 'minhash': threshold must be in (0, 1], got {cfg.threshold}")
        if cfg.shingle_size < 1 or cfg.window_blocks < 1:
            raise ConfigError("method 'minhash': shingle_size and window_blocks must be at least 1")
        self.perms = sk.permutations(cfg.num_perm, cfg.seed, cfg.scheme)
        lt = cfg.lsh_threshold
        if lt is None:
            lt = max(0.1, cfg.threshold - 0.2) if cfg.mode == "jaccard" else max(0.1, 0.5 * cfg.threshold)
        self.lsh_threshold = float(lt)
        self.bands, self.rows = sk.lsh_params(self.lsh_threshold, cfg.num_perm)
        if not 0.0 <= cfg.word_set_threshold <= 1.0:
            raise ConfigError(f"method 'minhash': word_set_threshold must be in [0, 1], got {cfg.word_set_threshold}")
        self.word_sets = cfg.mode == "jaccard" and cfg.word_set_threshold > 0
        self.wbands, self.wrows = sk.lsh_params(cfg.word_set_lsh_threshold, cfg.num_perm) if self.word_sets else (0, 0)
        self.counts: Counter = Counter()

    # -- build ---------------------------------------------------------------------------------
    def _build(self) -> None:
        cfg = self.config
        texts = [ev.view(cfg.eval_view) for ev in self.eval_records]
        batch, at = token_batch(texts)  # the eval texts normalized and hashed at once, each item's slice taken
        if cfg.shingle == "word":
            shingles = batch.text_ngram_hashes(at, cfg.shingle_size)
        else:
            shingles = [shingle_hashes(t, cfg.shingle, cfg.shingle_size) for t in texts]
        short = f"fewer than min_shingles={cfg.min_shingles} {cfg.shingle} {cfg.shingle_size}-grams"
        values, offsets = packed(shingles)
        indexed, (self.eval_sh, self.eval_off) = _shingles.sets_of_at_least(values, offsets, max(1, cfg.min_shingles))
        if unindexed := int((~indexed).sum()):
            self.not_indexed[short] += unindexed
        keep = np.flatnonzero(indexed).tolist()
        self.keys, self.pos = self._lsh_table(self.eval_sh, self.eval_off, keep, self.bands, self.rows)
        self.item_len = np.where(indexed, np.diff(offsets), 0).astype(np.int64)
        self._build_word_sets(batch.text_token_hashes(at))
        self._classes, self._unions = None, dict[str, HashSet]()

    def _build_word_sets(self, words: list[np.ndarray]) -> None:
        """The word-set channel: distinct-word hashes and LSH keys of items with enough words (``words``:
        each item's token hashes)."""
        cfg = self.config
        values, offsets = packed(words if self.word_sets else [np.empty(0, np.uint64)] * len(words))
        indexed, (self.word_sh, self.word_off) = _shingles.sets_of_at_least(values, offsets, cfg.word_set_min_words)
        keep = np.flatnonzero(indexed).tolist()
        self.wkeys, self.wpos = self._lsh_table(self.word_sh, self.word_off, keep, self.wbands, self.wrows)

    def _lsh_table(
        self, hashes: np.ndarray, offsets: np.ndarray, keep: list[int], bands: int, rows: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The LSH table of one channel: band keys of the items ``keep`` (MinHash signatures of their
        hash sets ``hashes[offsets[i]:offsets[i + 1]]``), sorted, with each key's item position."""
        keep_arr = np.array(keep, dtype=np.int64)
        if len(keep_arr):
            sigs = sk.signatures(sk.fold(hashes, self.config.scheme), offsets[keep_arr], self.perms)
            keys = sk.band_keys(sigs, bands, rows).ravel()
            band_pos = np.repeat(keep_arr, bands)
        else:
            keys, band_pos = np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64)
        order = np.argsort(keys, kind="stable")
        return keys[order], band_pos[order]

    def state(self):
        arrays = {
            "eval_sh": self.eval_sh,
            "eval_off": self.eval_off,
            "keys": self.keys,
            "pos": self.pos,
            "item_len": self.item_len,
            "word_sh": self.word_sh,
            "word_off": self.word_off,
            "wkeys": self.wkeys,
            "wpos": self.wpos,
        }
        meta = {"not_indexed": dict(self.not_indexed), "bands": self.bands, "rows": self.rows}
        return arrays, {**meta, "word_bands": self.wbands, "word_rows": self.wrows}

    def covered(self, records: Sequence[Record]) -> list[bool]:
        return [self._covers(r.view(self.config.eval_view)) for r in records]

    def _covers(self, text: str) -> bool:
        cfg = self.config
        if self.word_sets and len(set(tokens(text))) >= cfg.word_set_min_words:
            return True
        return len(distinct(shingle_hashes(text, cfg.shingle, cfg.shingle_size))) >= max(1, cfg.min_shingles)

    def restore(self, eval_records, arrays, meta):
        self.eval_records = list(eval_records)
        self.not_indexed = Counter(meta.get("not_indexed", {}))
        if (meta.get("bands"), meta.get("rows")) != (self.bands, self.rows):
            raise IndexFileError(
                f"minhash index has {meta.get('bands')} bands x {meta.get('rows')} rows, "
                f"expected {self.bands} x {self.rows}; delete it to rebuild"
            )
        if (meta.get("word_bands", self.wbands), meta.get("word_rows", self.wrows)) != (self.wbands, self.wrows):
            raise IndexFileError(
                f"minhash index has word-set LSH {meta.get('word_bands')} bands x {meta.get('word_rows')} rows, "
                f"expected {self.wbands} x {self.wrows}; delete it to rebuild"
            )
        for name in ("eval_sh", "eval_off", "keys", "pos", "item_len", "word_sh", "word_off", "wkeys", "wpos"):
            if name not in arrays:
                raise IndexFileError(f"minhash index lacks '{name}' (an older format); delete it to rebuild")
            setattr(self, name, arrays[name])
        self._classes, self._unions = None, {}
        if len(self.item_len) != len(self.eval_records) or len(self.eval_off) != len(self.eval_records) + 1:
            raise IndexFileError("minhash index does not match the eval records; delete it to rebuild")
        return self

    # -- search --------------------------------------------------------------------------------
    def reads(self, record: Record) -> bool:
        """Text in one of its views, else in ``text`` (what :meth:`_units` falls back on)."""
        return any(record.views.get(v) for v in self.config.train_views) or record.has_view(TEXT)

    def _units(self, batch: Sequence[Record]) -> list[tuple[int, str, np.ndarray, np.ndarray]]:
        """(record position in batch, view name, positional shingle hashes, token hashes) for each view
        to search. Word shingles come from the token hashes of the scan's shared
        :class:`~auditor.text.batch.TokenBatch` (each text normalized once for the exact, n-gram and
        MinHash tiers); character shingles from ``normalize`` of each text (token hashes then empty)."""
        cfg = self.config
        views: list[tuple[int, str, str]] = []
        for i, tr in enumerate(batch):
            seen = set()
            names = [v for v in cfg.train_views if tr.views.get(v)] or [TEXT]
            for v in names:
                text = tr.view(v)
                if not text or text in seen:
                    continue
                seen.add(text)
                views.append((i, v, text))
        if cfg.shingle == "word":
            tb, positions = token_batch([text for _, _, text in views])
            words = tb.text_token_hashes(positions)
            shingles = tb.text_ngram_hashes(positions, cfg.shingle_size)
        else:
            shingles = [shingle_hashes(text, cfg.shingle, cfg.shingle_size) for _, _, text in views]
            words = [np.empty(0, dtype=np.uint64)] * len(views)
        return [(i, v, h, th) for (i, v, _), h, th in zip(views, shingles, words) if len(h)]

    def _union(self, name: str) -> HashSet:
        """The hashes of every eval set of a channel (``eval_sh``, ``word_sh``) as one set, made once."""
        if name not in self._unions:
            self._unions[name] = HashSet(getattr(self, name))
        return self._unions[name]

    def _window_classes(self) -> list[tuple[int, int]]:
        if self._classes is None:
            lens = self.item_len[self.item_len > 0]
            classes = set()
            for k in np.unique(lens).tolist():
                nb = min(self.config.window_blocks, k)
                block = int(_LADDER[min(len(_LADDER) - 1, np.searchsorted(_LADDER, k / nb))])
                classes.add((block, nb))
            self._classes = sorted(classes)
        return self._classes

    def _lookup(self, keys: np.ndarray, owner: np.ndarray, words: bool = False) -> np.ndarray:
        """Unique (owner, eval position) pairs for query band keys (one owner per key row)."""
        index_keys, index_pos = (self.wkeys, self.wpos) if words else (self.keys, self.pos)
        flat = keys.ravel()
        rows = np.repeat(owner, keys.shape[1])
        left = np.searchsorted(index_keys, flat, "left")
        right = np.searchsorted(index_keys, flat, "right")
        hit = right > left
        if not hit.any():
            return np.empty((0, 2), dtype=np.int64)
        left, right, rows = left[hit], right[hit], rows[hit]
        n = right - left
        idx = np.repeat(left - np.concatenate(([0], np.cumsum(n)[:-1])), n) + np.arange(n.sum())
        code = distinct(np.repeat(rows, n) * (len(self.eval_records) + 1) + index_pos[idx])
        return np.stack([code // (len(self.eval_records) + 1), code % (len(self.eval_records) + 1)], axis=1)

    def search(self, batch: Sequence[Record]) -> list[Finding]:
        if not len(self.keys) and not len(self.wkeys):
            return []
        cfg = self.config
        units = self._units(batch)
        if not units:
            return []
        hashes, offsets = packed([h for _, _, h, _ in units])
        folded = sk.fold(hashes, cfg.scheme)  # each unit's shingles, as the scheme hashes them
        if cfg.mode == "jaccard":  # only views that may reach the lowest score reported are sketched
            low = min(cfg.threshold, cfg.suspected_threshold) if cfg.suspected_threshold > 0 else cfg.threshold
            fit, sets = _shingles.sized_sets(hashes, offsets, self.eval_off, low)  # the units that fit, their sets
            sel = fit[may_reach(*sets, self._union("eval_sh"), low)[fit]]
            uniq, offs = distinct_packed(folded, offsets, sel)
            sigs = sk.signatures(uniq.astype(folded.dtype, copy=False), offs[:-1], self.perms)
            pairs = self._lookup(sk.band_keys(sigs, self.bands, self.rows), sel)
            return self._verify(batch, units, sets, pairs, self._word_pairs(batch, units) if len(self.wkeys) else ())
        else:
            found = []  # one record view at a time: its windows can be many
            for u in range(len(units)):
                f = folded[offsets[u] : offsets[u + 1]]
                sigs = sk.multi_window_signatures(f, self.perms, self._window_classes())
                keys = distinct(sk.band_keys(sigs, self.bands, self.rows).ravel())[:, None]  # band index is mixed in
                found.append(self._lookup(keys, np.full(len(keys), u, dtype=np.int64)))
            pairs = np.concatenate(found)
        return self._verify(batch, units, distinct_packed(hashes, offsets), pairs)  # each unit's distinct shingles

    def _word_pairs(self, batch, units) -> list[tuple[int, int, float, int, int, int]]:
        """Word-set candidates verified: ``(unit, eval position, jaccard, shared, eval words, train words)``."""
        cfg = self.config
        words = packed([th if len(th) else token_hashes(tokens(batch[i].view(v))) for i, v, _, th in units])
        _, (tsh, toff) = _shingles.sized_sets(*words, self.word_off, cfg.word_set_threshold)  # the rest: empty
        reach = may_reach(tsh, toff, self._union("word_sh"), cfg.word_set_threshold)  # the rest pair with no item
        ok = np.flatnonzero((toff[1:] > toff[:-1]) & reach)
        if not len(ok):
            return []
        uniq, offs = gathered(tsh, toff, ok)
        sigs = sk.signatures(sk.fold(uniq, cfg.scheme), offs[:-1], self.perms)
        pairs = self._lookup(sk.band_keys(sigs, self.wbands, self.wrows), ok, words=True)
        self.counts["word_candidates"] += len(pairs)
        out = []
        for lo in range(0, len(pairs), _VERIFY_CHUNK):
            u, p = pairs[lo : lo + _VERIFY_CHUNK, 0], pairs[lo : lo + _VERIFY_CHUNK, 1]
            ne, nt = self.word_off[p + 1] - self.word_off[p], toff[u + 1] - toff[u]
            inter = intersections(self.word_sh, self.word_off[p], ne, tsh, toff[u], nt)
            score = inter / (ne + nt - inter)
            hit = score >= cfg.word_set_threshold
            self.counts["word_rejected"] += int((~hit).sum())
            rows = zip(u[hit].tolist(), p[hit].tolist(), score[hit].tolist(), inter[hit].tolist(), ne[hit].tolist(), nt[hit].tolist())  # fmt: skip
            out += list(rows)
        return out

    def _verify(self, batch, units, sets, pairs: np.ndarray, word_pairs=()) -> list[Finding]:
        """Findings of the candidate ``pairs`` (unit, eval position); ``sets``: each unit's distinct shingles, packed."""
        cfg, (train_sh, train_off) = self.config, sets
        out: list[Finding] = []
        best: dict[tuple[int, int], tuple[float, dict]] = {}
        for u, p in pairs.tolist():
            self.counts["candidates"] += 1
            tset = train_sh[train_off[u] : train_off[u + 1]]
            eset = self.eval_sh[self.eval_off[p] : self.eval_off[p + 1]]
            inter = len(np.intersect1d(eset, tset, assume_unique=True))
            if cfg.mode == "jaccard":
                score = inter / (len(eset) + len(tset) - inter)
            else:
                score = inter / len(eset)
            i, view = units[u][0], units[u][1]
            tier = None
            if score < cfg.threshold:
                if not self._reworded(score, p, batch[i].view(view)):
                    self.counts["rejected"] += 1
                    continue
                tier = "suspected"
                self.counts["suspected_band"] += 1
            else:
                self.counts["verified"] += 1
            ev = {
                "measure": cfg.mode,
                "shared_shingles": inter,
                "eval_shingles": int(len(eset)),
                "train_shingles": int(len(tset)),
                "train_view": view,
                "shingle": f"{cfg.shingle}{cfg.shingle_size}",
                **({"tier": tier} if tier else {}),
            }
            key = (i, p)
            if key not in best or score > best[key][0]:
                best[key] = (score, ev)
        for u, p, score, inter, ne, nt in word_pairs:  # only where the shingle channel found nothing
            i, view = units[u][0], units[u][1]
            ev = {"measure": "word_set", "shared_words": inter, "eval_words": ne, "train_words": nt, "train_view": view}
            held = best.get((i, p))
            if held is None or held[1].get("tier") or (held[1]["measure"] == "word_set" and score > held[0]):
                best[(i, p)] = (score, ev)
        for (i, p), (score, ev) in sorted(best.items()):
            if cfg.mode == "jaccard":
                ev["char_ratio"] = round(
                    fuzz.ratio(
                        normalize(self.eval_records[p].view(cfg.eval_view)), normalize(batch[i].view(ev["train_view"]))
                    )
                    / 100,
                    4,
                )
            f = self.finding(self.eval_records[p], batch[i], round(min(score, 1.0), 6), **ev)
            eval_text, train_text = self.eval_records[p].view(cfg.eval_view), batch[i].view(ev["train_view"])
            if ev.get("tier") == "suspected":
                f.conclusive = False
            elif not values_match(eval_text, train_text) or (
                ev["measure"] == "word_set"
                and (not values_kept(eval_text, train_text) or substituted(eval_text, train_text))
            ):
                # the same words around other values (another order id, size, date, colour): a sibling, not a copy
                f.conclusive = False
                f.evidence["tier"] = "suspected"
            out.append(f)
        return out

    def _reworded(self, score: float, p: int, train_text: str) -> bool:
        """A shingle Jaccard below ``threshold`` in the suspected band, the record keeping the values of
        eval item ``p`` in order (:func:`~auditor.methods._edits.all_values_kept`)."""
        cfg = self.config
        if cfg.mode != "jaccard" or not 0 < cfg.suspected_threshold <= score:
            return False
        return all_values_kept(self.eval_records[p].view(cfg.eval_view), train_text, cfg.suspected_min_values)

    def take_counts(self) -> Counter:
        taken, self.counts = self.counts, Counter()
        return taken

    def add_counts(self, counts: Counter) -> None:
        self.counts.update(counts)

    def stats(self) -> dict[str, Any]:
        s = super().stats()
        s.update(
            {
                "bands": self.bands,
                "rows": self.rows,
                "lsh_threshold": self.lsh_threshold,
                "candidates": self.counts["candidates"],
                "verified": self.counts["verified"],
                "rejected": self.counts["rejected"],
                "suspected_band": self.counts["suspected_band"],
                "word_set_candidates": self.counts["word_candidates"],
                "word_set_rejected": self.counts["word_rejected"],
            }
        )
        return s

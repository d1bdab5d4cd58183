"""``embedding``: the paraphrase tier, sentence-embedding similarity with evidence beyond a cosine
(docs/methods.md#paraphrase-tier-embedding).

Eval items are cut into segments (:mod:`.segment`), embedded (:mod:`.model`, offline) and put in a
FAISS index (:mod:`.vsearch`). A training record's views are cut the same way (one *unit* per view, plus
one per window; a record with none of its ``train_views`` by its ``fields`` view), pass the lexical gate
(:mod:`.gate`), and its ``top_k`` nearest eval items are scored (:mod:`.evidence`, :mod:`.align`) and
decided (:mod:`.decision`): a *conclusive* finding, a *suspected* one (kept for review) or nothing. The
method runs only when a check names it; the model is loaded in :meth:`build`, never at construction;
embeddings are cached in ``cache_dir`` (default ``<index dir>/embeddings``; memory only without one).

>>> from auditor.records.record import Record
>>> ev = [Record("bench", "0", "b#0", {"query": "What is the capital city of France?"}),
...       Record("bench", "1", "b#1", {"query": "How many legs does a spider have?"})]
>>> tr = Record("train", "t", "t:1", {"text": "Which city is the capital of France?"})
>>> [f.eval_id for f in EmbeddingIndex(cache_dir="none").build(ev).search([tr])]   # doctest: +SKIP
['0']

Errors: :class:`~auditor.errors.MissingDependencyError` (``pip install 'auditor[embed]'``),
:class:`~auditor.errors.ConfigError` (bad parameters, a model that cannot be loaded offline).
"""

from __future__ import annotations

import copy
import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import ConfigError
from ...records.record import FIELDS, Record
from ...text.normalize import normalize
from ..base import Finding, Index, MethodConfig, SharedModel
from .align import TokenAligner
from .cache import EmbeddingCache
from .config import EmbeddingConfig
from .decision import CONCLUSIVE, Decision
from .evidence import Parts, lexical, same_signature, values_agree
from .gate import LexicalGate, keep_units
from .model import Encoder, embedding_dim, load_encoder_model
from .reach import ModelReach
from .segment import segments
from .tfidf import TfIdf
from .vsearch import VectorIndex


class EmbeddingIndex(Index[EmbeddingConfig]):
    name = "embedding"
    Config = EmbeddingConfig
    requires = {"sentence_transformers": "embed", "faiss": "embed"}
    vindex: VectorIndex | None = None  # the FAISS index of the eval segments, once built
    worker_model: Any = None  # what the copies shipped to workers run instead of the model (SharedModel.lend)
    in_default = False  # model-based and slower: runs when named (--method embedding)
    summary = (
        "[run when named] paraphrase tier: MiniLM embeddings + FAISS for candidates; decided by cosine + "
        "token alignment (BERTScore-style) + margin, with slot values agreeing for a conclusive finding; "
        "a lower band is kept as suspected findings for review"
    )

    def __init__(self, config: MethodConfig | None = None, **params: Any):
        super().__init__(config, **params)
        self.config.check_numbers(self.name)  # also a config given as is, before any model is loaded
        self.rule: Decision = self.config.decision
        self.gate: LexicalGate | None = None  # fitted with the index when gate = "lexical"
        self.encoder: Any = None
        self.backend = self.device = ""  # resolved when the model is loaded (build)
        self._built_counts: Counter = Counter()  # the encoder's counters after the build

    def cache_root(self) -> str | None:
        """The embedding cache's folder: ``cache_dir``, else ``<index dir>/embeddings``; None: in memory.

        >>> EmbeddingIndex(cache_dir="/tmp/emb").cache_root(), EmbeddingIndex().cache_root()
        ('/tmp/emb', None)
        """
        c = self.config.encoder.cache_dir
        if c.lower() == "none":
            return None
        if c:
            return c
        return os.path.join(self.index_dir, "embeddings") if self.index_dir else None

    def _encoder(self):
        if self.encoder is None:
            c = self.config.encoder
            model, mid, self.backend, self.device = load_encoder_model(c.model, c.backend, c.device, c.model_cache)
            dim = int(embedding_dim(model))
            root = self.cache_root()
            cache = EmbeddingCache.load(root, mid, dim) if root else EmbeddingCache(dim, mid)
            self.encoder = Encoder(model, cache, batch_size=c.batch_size)
        return self.encoder

    _COUNTERS = ("encoded", "cache_hits", "calls", "seconds")

    def _encoder_counts(self) -> Counter:
        e = self.encoder
        return Counter({k: getattr(e, k) for k in self._COUNTERS}) if e is not None else Counter()

    def take_counts(self) -> Counter:
        """The encoder's and the gate's counters since the build, handed over and reset to the build's."""
        out: Counter = Counter()
        if self.gate is not None:
            out.update({f"gate_{k}": v for k, v in self.gate.take_counts().items()})
        if self.encoder is None:
            return out
        built, now = self._built_counts, self._encoder_counts()
        for k in self._COUNTERS:
            setattr(self.encoder, k, built[k])
        out.update({k: now[k] - built[k] for k in self._COUNTERS})
        return out

    def add_counts(self, counts: Counter) -> None:
        if self.gate is not None:
            self.gate.add_counts({k: counts[f"gate_{k}"] for k in LexicalGate.COUNTERS})
        if self.encoder is not None:
            for k in self._COUNTERS:
                setattr(self.encoder, k, getattr(self.encoder, k) + counts[k])

    def shared_models(self) -> list[SharedModel]:
        """The built encoder, for an engine to host (the Ray engine's actor pool)."""
        if self.encoder is None:
            return []
        c, e = self.config.encoder, self.encoder
        return [SharedModel(e.cache.model, c.model, self.backend, c.device, c.model_cache, e.dim, self, self._lend)]

    def _lend(self, stand_in: Any) -> None:
        self.worker_model = stand_in

    def __getstate__(self) -> dict[str, Any]:
        """With :attr:`worker_model` set, the copy's encoder and aligner run it; a torch model on a GPU
        is not shipped but loaded again where the copy lands, on the device it sees (a worker without a
        GPU runs it on its CPU); everything else (an ONNX model reopens from its folder) goes as is."""
        state = super().__getstate__()
        stand_in = state.pop("worker_model", None)
        reload = stand_in is None and self.backend == "torch" and self.device not in ("", "cpu")
        if self.encoder is not None and (stand_in is not None or reload):
            for key in ("encoder", "aligner"):
                if state.get(key) is not None:
                    state[key] = copy.copy(state[key])
                    state[key].model = stand_in
            state["_reload_model"] = reload
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        reload = state.pop("_reload_model", False)
        self.__dict__.update(state)
        if reload:
            c = self.config.encoder
            model, mid, self.backend, self.device = load_encoder_model(c.model, "torch", "auto", c.model_cache)
            if mid != self.encoder.cache.model:
                raise ConfigError(f"method 'embedding': a worker loaded model {mid}, not {self.encoder.cache.model}")
            self.encoder.model = model
            if getattr(self, "aligner", None) is not None:
                self.aligner.model = model

    def save_cache(self, at_least: int = 1) -> None:
        """Persist new embeddings when ``at_least`` are unsaved (after build, every ``save_every`` new
        texts during a scan, and at the check's end)."""
        root = self.cache_root()
        if root and self.encoder is not None and self.encoder.cache.unsaved >= max(1, at_least):
            self.encoder.cache.save(root)

    def _build(self) -> None:
        enc = self._encoder()
        self.seg_text: list[str] = []
        self.seg_label: list[str] = []
        self.seg_kind: list[str] = []
        owner: list[int] = []
        texts: list[str] = []
        for pos, ev in enumerate(self.eval_records):
            text = ev.view(self.config.eval_view)
            texts.append(text)
            segs = segments(text, self.config.encoder.max_words)
            if not segs:
                self.not_indexed["empty text"] += 1
            for s in segs:
                self.seg_text.append(s.text)
                self.seg_label.append(s.label())
                self.seg_kind.append(s.kind)
                owner.append(pos)
        self.seg_owner = np.array(owner, dtype=np.int64)
        first: dict[str, int] = {}  # eval items with one normalized text are one item (group = first position)
        self.group = [first.setdefault(normalize(t), pos) for pos, t in enumerate(texts)]
        self.item_segs: list[list[int]] = [[] for _ in self.eval_records]
        for i, pos in enumerate(owner):
            self.item_segs[pos].append(i)
        self.vectors = enc.encode(self.seg_text)
        self.vindex = VectorIndex(self.vectors, self.config.search.approximate, self.config.search.approx_min)
        self.max_segs = max((len(x) for x in self.item_segs), default=1) or 1
        self.nearest_other = self._nearest_other(self.vectors)
        self.tfidf = TfIdf(texts)

        self.aligner = TokenAligner(enc.model, batch_size=self.config.encoder.batch_size)
        self.aligner.fit_idf(texts)
        if self.config.gate.rule == "lexical":
            g = self.config.gate
            self.gate = LexicalGate(g.dice, g.dice_code, g.synonyms, g.short).fit(
                self.seg_text, [any(self.seg_kind[x] == "doc" for x in self.item_segs[o]) for o in self.seg_owner]
            )
            self.gate.reach = ModelReach.of(enc.model)  # segments judged as far as the model reads them
        self.save_cache()
        self._built_counts = self._encoder_counts()

    def _built(self) -> VectorIndex:
        """The FAISS index of the eval segments (RuntimeError before :meth:`build`)."""
        if self.vindex is None:
            raise RuntimeError("method 'embedding': search before build()")
        return self.vindex

    def _nearest_other(self, vecs: np.ndarray) -> np.ndarray:
        """Per eval segment: its best cosine to a segment of another eval item (-1 when none)."""
        out = np.full(len(vecs), -1.0, dtype=np.float32)
        if not len(vecs):
            return out
        sims, ids = self._built().search(vecs, min(len(vecs), 2 * self.max_segs + 1))
        for row, pos in enumerate(self.seg_owner.tolist()):
            for s, i in zip(sims[row].tolist(), ids[row].tolist()):
                if i >= 0 and self.group[int(self.seg_owner[i])] != self.group[pos]:
                    out[row] = s
                    break
        return out

    def searched_views(self) -> tuple[str, ...]:
        """The train views, and ``fields`` for a record that has none of them (:meth:`train_views_of`)."""
        views = tuple(self.config.train_views)
        return views if FIELDS in views else (*views, FIELDS)

    def train_views_of(self, tr: Record) -> tuple[str, ...]:
        """``train_views``; for a record with no text in any of them (read whole, of no known schema),
        its ``fields`` view: every string it holds (:mod:`auditor.records.fields`)."""
        views = tuple(self.config.train_views)
        if not any(tr.views.get(v) for v in views) and tr.views.get(FIELDS):
            return (FIELDS,)
        return views

    def reads(self, record: Record) -> bool:
        return any(record.views.get(v) for v in self.train_views_of(record))

    def train_units(self, tr: Record, views: Sequence[str] | None = None) -> list[tuple[str, list]]:
        """The record's units: per view (``views``, default :meth:`train_views_of`), its whole/last/doc
        segments together, and each window alone."""
        seen: set[str] = set()
        units: list[tuple[str, list]] = []
        for v in views or self.train_views_of(tr):
            start = len(units)
            head: list = []
            for s in segments(tr.views.get(v) or "", self.config.encoder.max_words):
                if s.text in seen:
                    continue
                seen.add(s.text)
                if s.kind == "window":
                    units.append((v, [s]))
                else:
                    head.append(s)
            if head:
                units.insert(start, (v, head))
        return units

    def _pair(self, unit_vecs: np.ndarray, unit_kinds: list[str], pos: int) -> tuple[float, int, int]:
        """(segment cosine, unit segment, eval segment) of a unit against eval item ``pos``."""
        segs = self.item_segs[pos]
        m = unit_vecs @ self.vectors[segs].T
        best = np.unravel_index(int(np.argmax(m)), m.shape)
        j, k = int(best[0]), int(best[1])
        cos = float(m[j, k])
        ekinds = [self.seg_kind[i] for i in segs]
        if "doc" in unit_kinds and "doc" in ekinds and "whole" in unit_kinds and "whole" in ekinds:
            ww = m[unit_kinds.index("whole"), ekinds.index("whole")]
            dd = m[unit_kinds.index("doc"), ekinds.index("doc")]
            cos = float((ww + dd) / 2)
            j, k = unit_kinds.index("doc"), ekinds.index("doc")
        return cos, j, segs[k]

    def _candidates(self, units, vecs: np.ndarray):
        """Score each unit's nearest eval items: yields ``(unit, pos, parts, score, eval seg, unit seg,
        rank, code)``; the margin is taken over other *groups* (eval items of one text are one item)."""
        k = min(len(self.seg_text), (self.config.search.top_k + 1) * self.max_segs)
        sims, ids = self._built().search(vecs, k)
        search = self.config.search
        row = 0
        keep: list[tuple] = []
        for u, (_tr, _view, segs, head) in enumerate(units):
            n = len(segs)
            cand = sorted({int(self.seg_owner[i]) for i in ids[row : row + n].ravel().tolist() if i >= 0})
            uvecs, ukinds = vecs[row : row + n], [s.kind for s in segs]
            row += n
            if not cand:
                continue
            tvec = self.tfidf.vector(head.text)  # the unit's first segment, read or not
            scored = []
            for pos in cand:
                cos, j, i = self._pair(uvecs, ukinds, pos)
                lex = self.tfidf.cosine(tvec, pos)
                scored.append((cos + search.w_lexical * lex, pos, cos, lex, j, i))
            scored.sort(key=lambda x: (-x[0], x[1]))
            for rank, (sim, pos, cos, lex, j, i) in enumerate(scored[: search.top_k]):
                if cos < search.min_cosine:
                    continue
                g = self.group[pos]
                margin = sim - max((x[0] for x in scored if self.group[x[1]] != g), default=0.0)
                if search.require_best and margin <= 0:
                    continue
                is_code = "doc" in ukinds or any(self.seg_kind[x] == "doc" for x in self.item_segs[pos])
                keep.append((u, pos, i, segs[j], rank, is_code, cos, lex, margin, uvecs[j]))
        # token alignment for the kept candidates only, their texts embedded token-wise in one batch
        self.aligner.vectors([t for x in keep for t in (self.seg_text[x[2]], x[3].text)])
        for u, pos, i, tseg, rank, is_code, cos, lex, margin, uvec in keep:
            etext = self.seg_text[i]
            overlap, entities, conflict = lexical(etext, tseg.text)
            mutual = int(float(uvec @ self.vectors[i]) >= float(self.nearest_other[i]))
            # code rephrasings rename identifiers: no entity conflict there
            parts = Parts(cos, float(lex), float(margin), mutual, overlap, entities, 0 if is_code else conflict)
            parts.align_recall, parts.align_precision, parts.align_f1 = self.aligner.score(
                *self.aligner.vectors([etext, tseg.text])
            )
            parts.values = values_agree(etext, tseg.text)
            yield u, pos, parts, self.rule.score(parts), i, tseg, rank, is_code

    def notes(self) -> list[str]:
        """What the lexical gate stopped, in words (the report's notes)."""
        return [self.gate.sentence()] if self.gate is not None and self.gate.counts["units_seen"] else []

    def search(self, batch: Sequence[Record]) -> list[Finding]:
        return self.search_scored(batch, decide=True)

    def search_scored(self, batch: Sequence[Record], decide: bool = True) -> list[Finding]:
        """Findings for ``batch``; with ``decide=False`` every scored candidate (for ``auditor calibrate``)."""
        if not len(self.seg_text):
            return []
        enc = self._encoder()
        units = [(tr, view, segs, segs[0]) for tr in batch for view, segs in self.train_units(tr)]
        if self.gate is not None:  # units it stops get no finding; the others go on unchanged
            asked = [(tr.views[v], [s.text for s in g], g[0].kind == "window") for tr, v, g, _ in units]
            code = [any(s.kind == "doc" for s in g) for _, _, g, _ in units]
            keep = keep_units(self.gate, asked, self.config.encoder.max_words, code)
            units = [u for u, k in zip(units, keep) if k]
        texts = [s.text for _, _, segs, _ in units for s in segs]
        if not texts:
            return []
        vecs = enc.encode(texts)
        out: list[Finding] = []
        for u, pos, parts, score, i, tseg, rank, is_code in self._candidates(units, vecs):
            tr, view, _, _ = units[u]
            signature = is_code and same_signature(self.seg_text[i], tseg.text)
            tier = self.rule.classify(parts, is_code, signature)
            if decide and tier is None:
                continue
            where = {"tier": tier, "eval_segment": self.seg_label[i], "train_segment": tseg.label()}
            where.update(train_view=view, rank=rank, code=is_code)
            f = self.finding(self.eval_records[pos], tr, round(score, 6), **parts.as_dict(), **where)
            f.conclusive = tier == CONCLUSIVE
            out.append(f)
        self.save_cache(self.config.encoder.save_every)
        return out

    def stats(self) -> dict[str, Any]:
        self.save_cache()
        out = super().stats()
        if self.vindex is not None:
            out["search"] = self.vindex.describe()
            out["eval_segments"] = len(self.seg_text)
        out["decision"] = self.rule.describe()
        out["gate"] = self.gate.describe() if self.gate is not None else {"mode": "none"}
        if self.encoder is not None:
            out["encoding"] = {
                "backend": self.backend,
                "device": self.device,
                "model_id": self.encoder.cache.model,
                **self.encoder.throughput(),
            }
        return out

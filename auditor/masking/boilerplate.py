"""Boilerplate masking: text shared by a large share of the training records is not evidence.

System prompts, tool schemas and policy text recur in most records of an agent training set. An eval
item that quotes a policy sentence would otherwise "occur" in every training record. Before a check
scans its training sets, :func:`auditor.masking.masker.prepare` reads a sample of them (the first ``sample`` records) and
:func:`detect` finds

* **lines** whose normalized text occurs in at least ``share`` of the sampled records, and
* word **n-grams** (``n`` = 13, the ngram tier's size) that do, in what remains after line masking.

During the scan, every text-comparing index (``mask_boilerplate = true``, the default of
:class:`~auditor.methods.base.MethodConfig`; ``calls``, ``entities`` default to false) sees training
records whose views have those lines removed and those n-grams replaced by ``[masked]`` (a break, so
no new n-gram forms across the gap).

**Masking never hides eval-item text.** A benchmark item copied into most records (a few-shot block in
the system prompt, one task repeated) is contamination, not boilerplate, so what would be masked is
checked against every eval item, per item and per occurrence, not only as whole lines:

* a line equal to an eval item's text is never touched;
* no word inside an occurrence of any eval item's word ``protect_n``-gram (8, the ngram tier's
  ``min_n``) is masked, whether a boilerplate n-gram covers it or an n-gram straddles the item's edge;
* a shared line holding such an occurrence (``spared_lines`` in the report), or a word of one that
  straddles line breaks (in that text only), is masked word by word around the eval item's words, not
  removed; ``spared_ngrams`` counts the boilerplate n-grams that overlap an eval item (eval words kept).

So the exact and ngram tiers find what they would find unmasked; masking only keeps shared text that
is not eval text from being evidence (and from diluting the minhash and embedding tiers' scores). The check's ``boilerplate`` entry in ``report.json`` says what was masked and how much. Turn it off per method
with ``mask_boilerplate = false`` in ``[methods.NAME]``. Reading the sample raises what reading the
dataset raises (:class:`~auditor.errors.InputError` for bad input); nothing else is raised here.

>>> from auditor.records.record import Record
>>> recs = [Record("t", str(i), f"t:{i}", {"text": f"You are a helpful agent.\\nTask {i}: book seat {i}"})
...         for i in range(20)]
>>> bp = detect(recs, [], BoilerplateConfig(min_records=10))
>>> bp.mask_record(recs[3], ("text",)).views["text"]
'Task 3: book seat 3'
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..records.record import TEXT, Record
from ..text.batch import TokenBatch
from ..text.normalize import normalize, text_hash, tokens
from .batch import _GUARDED, _PLAIN, _REMOVED, _SHARED, MASK, BatchMask, _spans


@dataclass
class BoilerplateConfig:
    #: a line / n-gram is boilerplate when it occurs in at least this share of the sampled records
    share: float = 0.5
    #: training records sampled (the first ones of the check's training sets, split evenly)
    sample: int = 2000
    #: with fewer sampled records nothing is masked (too little to tell boilerplate from content)
    min_records: int = 10
    #: n-gram size (words) for n-gram masking
    n: int = 13
    #: tokens per record looked at when counting n-grams
    max_tokens: int = 20000
    #: text sharing a word n-gram of this size with an eval item is never masked (the ngram tier's min_n)
    protect_n: int = 8

    def __post_init__(self) -> None:
        if not 1 <= self.protect_n <= self.n:
            raise ConfigError(f"boilerplate protect_n must be between 1 and n={self.n}, not {self.protect_n!r}")


@dataclass
class MaskCounts:
    """Records masked, characters masked and characters scanned by masking (one worker's, one unit's)."""

    records: int = 0
    chars: int = 0
    scanned: int = 0

    def add(self, other: MaskCounts) -> None:
        self.records += other.records
        self.chars += other.chars
        self.scanned += other.scanned


@dataclass
class Boilerplate:
    config: BoilerplateConfig
    lines: set[int] = field(default_factory=set)
    #: shared lines holding eval-item text: masked word by word, the eval item's words kept
    spared: set[int] = field(default_factory=set)
    ngrams: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))
    protected: set[int] = field(default_factory=set)
    #: sorted hashes of the eval items' word ``protect_n``-grams (text containing one is never masked)
    eval_grams: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))
    sampled: int = 0
    spared_ngrams: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)
    masked_records: int = 0
    masked_chars: int = 0
    scanned_chars: int = 0

    def mask_text(self, text: str) -> str:
        """``text`` without boilerplate lines, boilerplate n-grams replaced by ``[masked]``.

        Eval-item text is kept: lines equal to an eval item are untouched, and so is every word
        inside an occurrence of an eval item's ``protect_n``-gram, even one straddling line breaks (a
        shared line holding a word of one is masked word by word around it instead of removed)."""
        if not text:
            return text
        lines = text.split("\n")
        norms = [normalize(line) for line in lines]
        states = [self._line_state(text_hash(norm)) if norm else _PLAIN for norm in norms]
        if _REMOVED in states and len(self.eval_grams):
            states = _spare_straddled(norms, states, self.config.protect_n, self.eval_grams)
        keep = [i for i, s in enumerate(states) if s != _REMOVED]
        lines, norms, states = [lines[i] for i in keep], [norms[i] for i in keep], [states[i] for i in keep]
        if lines and (len(self.ngrams) or _SHARED in states):
            lines = self._mask_words(lines, norms, states)
        return "\n".join(lines)

    def _line_state(self, h: int) -> int:
        if h in self.protected:
            return _GUARDED
        return _REMOVED if h in self.lines else _SHARED if h in self.spared else _PLAIN

    def _mask_words(self, lines: list[str], norms: list[str], states: list[int]) -> list[str]:
        """``lines`` with masked words (``norms``: each line's ``normalize()``, so its tokens)."""
        from ..text.tokens import ngram_hashes, token_hashes

        toks_per_line = [norm.split() for norm in norms]  # tokens(line), without normalizing twice
        flat = [t for ts in toks_per_line for t in ts]
        covered = np.zeros(len(flat), dtype=bool)
        offset = 0
        for ts, state in zip(toks_per_line, states):
            if state == _SHARED:
                covered[offset : offset + len(ts)] = True
            offset += len(ts)
        n = self.config.n
        th = token_hashes(flat)
        if len(self.ngrams) and len(flat) >= n:
            for start in np.flatnonzero(np.isin(ngram_hashes(th, n), self.ngrams)):
                covered[start : start + n] = True
        if not covered.any():
            return lines
        # never mask a word of a line equal to an eval item, nor one inside an eval item's k-gram
        offset = 0
        for ts, state in zip(toks_per_line, states):
            if state == _GUARDED:
                covered[offset : offset + len(ts)] = False
            offset += len(ts)
        k = self.config.protect_n
        for start in np.flatnonzero(_eval_gram_starts(th, k, self.eval_grams)):
            covered[start : start + k] = False
        out, offset = [], 0
        for line, ts in zip(lines, toks_per_line):
            cov = covered[offset : offset + len(ts)]
            offset += len(ts)
            if not cov.any():
                out.append(line)
                continue
            words = [MASK if c else t for t, c in zip(ts, cov)]
            out.append(" ".join(w for i, w in enumerate(words) if not (w == MASK and i and words[i - 1] == MASK)))
        return out

    def mask_texts(self, texts: Sequence[str]) -> list[str]:
        """``[self.mask_text(t) for t in texts]``, computed for the whole batch at once.

        Every line of every text goes into one :class:`~auditor.text.batch.TokenBatch` (normalized
        and hashed in place); each line's state (removed, guarded, shared) and each kept word's
        coverage come from numpy over the batch's token hashes, n-gram windows running over a text's
        kept lines as :meth:`mask_text`'s do (never across two texts). A text with no line removed
        and no word covered is returned as is (the same object); only texts with something masked
        are rebuilt, line by line.

        >>> item = "book a one way flight from boston to denver for two adults next friday"
        >>> recs = [Record("t", str(i), f"t:{i}", {"text": f"Be brief.\\nExample: {item}\\nTask {i}"})
        ...         for i in range(20)]
        >>> bp = detect(recs, [item], BoilerplateConfig(min_records=10))
        >>> texts = ["Be brief.\\nTask 7", "nothing shared\\r\\n", "", "Example: " + item]
        >>> bp.mask_texts(texts) == [bp.mask_text(t) for t in texts]
        True
        >>> bp.mask_texts(texts)[:2]
        ['Be brief.\\nTask 7', 'nothing shared\\r\\n']
        """
        return BatchMask(self, texts).texts()

    def mask_records(
        self, records: Sequence[Record], views: Iterable[str], counts: MaskCounts | None = None
    ) -> list[Record]:
        """``[self.mask_record(r, views) for r in records]``, each view masked as one batch
        (:meth:`mask_texts`); the same records, copies and counts (into ``counts`` where given, else
        into this boilerplate's totals)."""
        out = list(records)
        tally = MaskCounts()
        new_views: dict[int, dict[str, str]] = {}
        for v in views:
            texts = [r.view(v) if v == TEXT else r.views.get(v) or "" for r in records]
            for i, (text, masked) in enumerate(zip(texts, self.mask_texts(texts))):
                if not text:
                    continue
                tally.scanned += len(text)
                if masked != text:
                    tally.chars += max(0, len(text) - len(masked.replace(MASK, "")))
                    new_views.setdefault(i, dict(records[i].views))[v] = masked
        for i, views_i in new_views.items():
            tally.records += 1
            out[i] = dataclasses.replace(records[i], views=views_i)
        if counts is None:
            self.add_counts(tally)
        else:
            counts.add(tally)
        return out

    def add_counts(self, counts: MaskCounts) -> None:
        """Add records and characters masked elsewhere (a scan worker's, :class:`MaskCounts`) to the totals."""
        self.masked_records += counts.records
        self.masked_chars += counts.chars
        self.scanned_chars += counts.scanned

    def mask_record(self, record: Record, views: Iterable[str]) -> Record:
        """A copy of ``record`` whose ``views`` are masked (other views unchanged); counts chars."""
        new_views = dict(record.views)
        changed = False
        for v in views:
            text = record.view(v) if v == TEXT else record.views.get(v)
            if not text:
                continue
            masked = self.mask_text(text)
            self.scanned_chars += len(text)
            if masked != text:
                self.masked_chars += max(0, len(text) - len(masked.replace(MASK, "")))
                new_views[v] = masked
                changed = True
        if not changed:
            return record
        self.masked_records += 1
        return dataclasses.replace(record, views=new_views)

    def report(self) -> dict[str, Any]:
        return {
            "enabled": True,
            "sampled_records": self.sampled,
            "share": self.config.share,
            "lines": len(self.lines),
            "ngrams": int(len(self.ngrams)),
            "n": self.config.n,
            "spared_lines": len(self.spared),
            "spared_ngrams": self.spared_ngrams,
            "examples": self.examples,
            "masked_records": self.masked_records,
            "masked_chars": self.masked_chars,
            "scanned_chars": self.scanned_chars,
            "masked_share": round(self.masked_chars / self.scanned_chars, 6) if self.scanned_chars else 0.0,
        }


def eval_gram_hashes(eval_texts: Iterable[str], k: int) -> np.ndarray:
    """Sorted distinct hashes of every word ``k``-gram of ``eval_texts`` (as the ngram tier hashes them)."""
    from ..text.tokens import ngram_hashes, token_hashes

    grams = [ngram_hashes(token_hashes(tokens(t)), k) for t in eval_texts if t]
    return np.unique(np.concatenate(grams)) if grams else np.empty(0, dtype=np.uint64)


def _eval_gram_starts(th: np.ndarray, k: int, eval_grams: np.ndarray) -> np.ndarray:
    """Whether each word k-gram of the token hashes ``th`` is one of the eval items' (a bool per start)."""
    from ..text.tokens import ngram_hashes

    if not len(eval_grams):
        return np.zeros(max(0, len(th) - k + 1), dtype=bool)
    grams = ngram_hashes(th, k)
    # membership in the sorted distinct eval_grams by binary search (np.isin sorted both arrays anew
    # on every call: ~27 s of the calling process's CPU for a 2,000-record sample)
    pos = np.minimum(np.searchsorted(eval_grams, grams), len(eval_grams) - 1)
    return eval_grams[pos] == grams


def _spare_straddled(norms: list[str], states: list[int], k: int, eval_grams: np.ndarray) -> list[int]:
    """``states`` with every removed line that holds a word of an eval ``k``-gram occurring in the
    whole text (``norms``: its lines, normalized) shared instead: masked word by word around the
    eval words. An occurrence straddling line breaks is held by no line alone (issue: ToolRL's row 42)."""
    from ..text.tokens import token_hashes

    toks = [norm.split() for norm in norms]
    th = token_hashes([t for ts in toks for t in ts])
    inside = _spans(np.flatnonzero(_eval_gram_starts(th, k, eval_grams)), k, len(th))
    line_of = np.repeat(np.arange(len(toks)), [len(ts) for ts in toks])
    hit = set(line_of[inside].tolist())
    return [_SHARED if s == _REMOVED and i in hit else s for i, s in enumerate(states)]


def detect(
    sample: Sequence[Record],
    eval_texts: Iterable[str],
    config: BoilerplateConfig | None = None,
    memo: dict[str, Any] | None = None,
) -> Boilerplate:
    """Boilerplate lines and n-grams of ``sample`` (see the module doc); ``eval_texts`` are protected.

    >>> item = "book a one way flight from boston to denver for two adults next friday"
    >>> recs = [Record("t", str(i), f"t:{i}", {"text": f"Example: {item}\\nTask {i}"}) for i in range(20)]
    >>> bp = detect(recs, [item], BoilerplateConfig(min_records=10))
    >>> bp.mask_record(recs[3], ("text",)).views["text"], len(bp.spared)
    ('[masked] book a one way flight from boston to denver for two adults next friday\\n[masked] 3', 1)
    """
    from ..text.tokens import token_hashes

    cfg = config or BoilerplateConfig()
    eval_texts = [t for t in eval_texts if t]
    bp = Boilerplate(
        cfg,
        sampled=len(sample),
        protected={text_hash(normalize(t)) for t in eval_texts},
        eval_grams=eval_gram_hashes(eval_texts, cfg.protect_n),
    )
    if len(sample) < cfg.min_records:
        return bp
    need = max(2, int(np.ceil(cfg.share * len(sample))))
    memo = {} if memo is None else memo  # what depends on the sample alone, for the next check's call
    if "lines" not in memo:
        memo["lines"] = _line_counts(sample)
    line_df, first_text = memo["lines"]
    common = {h for h, c in line_df.items() if c >= need} - bp.protected
    bp.spared = {
        h for h in common if _eval_gram_starts(token_hashes(tokens(first_text[h])), cfg.protect_n, bp.eval_grams).any()
    }
    bp.lines = common - bp.spared
    for kind, chosen in (("line", bp.lines), ("spared_line", bp.spared)):
        bp.examples += [
            {"kind": kind, "text": first_text[h][:160], "share": round(c / len(sample), 4)}
            for h, c in line_df.most_common()
            if h in chosen
        ][:5]
    if bp.lines or bp.spared:
        rests = bp.mask_texts([r.whole_text() for r in sample])
        grams = _common_ngrams(*_leading_token_hashes(TokenBatch(rests), cfg.max_tokens), cfg.n, need)
    else:  # no shared line to drop or mask: the texts are unchanged, the same for every check
        if "grams" not in memo:
            raw = TokenBatch([r.whole_text() for r in sample])
            memo["grams"] = _common_ngrams(*_leading_token_hashes(raw, cfg.max_tokens), cfg.n, need)
        grams = memo["grams"]
    census = None if grams is None else grams.census(cfg.protect_n, bp.eval_grams)
    if census is not None:
        bp.ngrams, bp.spared_ngrams = census
    if len(bp.ngrams):
        bp.examples.append({"kind": "ngrams", "count": int(len(bp.ngrams))})
    return bp


def _leading_token_hashes(batch: TokenBatch, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The token hashes of the first ``limit`` tokens of each text of ``batch``, concatenated, and
    how many each text gave: ``token_hashes(tokens(t)[:limit])`` for every text, in one array.

    >>> from auditor.text.tokens import token_hashes
    >>> th, lens = _leading_token_hashes(TokenBatch(["a b c", "", "d e"]), 2)
    >>> lens.tolist(), th.tolist() == token_hashes(["a", "b", "d", "e"]).tolist()
    ([2, 0, 2], True)
    """
    starts = batch.token_starts[:-1]
    lens = np.minimum(np.diff(batch.token_starts) - 1, limit)  # each text's tokens, its separator left out
    offsets = np.zeros(len(lens), dtype=np.int64)
    np.cumsum(lens[:-1], out=offsets[1:])
    take = np.repeat(starts - offsets, lens) + np.arange(int(lens.sum()))
    return batch.token_hashes()[take], lens


def _line_counts(sample: Sequence[Record]) -> tuple[Counter, dict[int, str]]:
    """How many records of ``sample`` hold each normalized line of 10 characters or more (by
    ``text_hash``), and the first raw text of each."""
    line_df: Counter = Counter()
    first_text: dict[int, str] = {}
    per_record = [r.whole_text().split("\n") for r in sample]
    lines = TokenBatch([line for rec_lines in per_record for line in rec_lines])  # normalized at once
    hashes, lengths = iter(lines.whole_hashes()), iter(lines.char_lengths().tolist())
    for rec_lines in per_record:
        seen = set()
        for line, h, length in zip(rec_lines, hashes, lengths):
            if length < 10:  # len(normalize(line))
                continue
            seen.add(h)  # text_hash(normalize(line))
            first_text.setdefault(h, line.strip())
        line_df.update(seen)
    return line_df, first_text


@dataclass
class _CommonNgrams:
    """The word ``n``-grams in at least ``need`` records of a sample (:func:`_common_ngrams`), with
    what :meth:`census` needs to tell which of them hold an eval ``k``-gram."""

    common: np.ndarray  # sorted
    th: np.ndarray  # token hashes of every record, one after the other
    rec: np.ndarray  # the record of each token
    hashes: np.ndarray  # every window's n-gram hash
    inside: np.ndarray  # windows within one record
    n: int

    def census(self, k: int, eval_grams: np.ndarray) -> tuple[np.ndarray, int]:
        """The common n-grams and how many of them hold an eval ``k``-gram."""
        from ..text.tokens import ngram_hashes

        if not len(eval_grams) or not len(self.common):
            return self.common, 0
        kgrams = ngram_hashes(self.th, k)
        pos = np.minimum(np.searchsorted(eval_grams, kgrams), len(eval_grams) - 1)
        hitk = (eval_grams[pos] == kgrams) & (self.rec[: len(kgrams)] == self.rec[k - 1 :])
        cs = np.concatenate(([0], np.cumsum(hitk)))
        starts = np.arange(len(self.hashes))
        tainted = self.hashes[self.inside & ((cs[starts + self.n - k + 1] - cs[starts]) > 0)]
        return self.common, int(np.isin(self.common, tainted).sum())


def _common_ngrams(th: np.ndarray, lens: np.ndarray, n: int, need: int) -> _CommonNgrams | None:
    """The word ``n``-grams in at least ``need`` of the records (token hashes ``th`` of every record
    one after the other, ``lens[i]`` of record ``i``); None when no record has an n-gram.

    One pass over all records at once: windows are hashed over the concatenated tokens and those
    that cross a record boundary dropped, so each record counts each of its n-grams once, as if
    counted record by record.
    """
    from ..text.tokens import ngram_hashes

    if not len(lens) or int(lens.sum()) < n:
        return None
    th = th.astype(np.uint64, copy=False)
    rec = np.repeat(np.arange(len(lens)), lens)
    hashes = ngram_hashes(th, n)
    inside = rec[: len(hashes)] == rec[n - 1 :]
    if not inside.any():
        return None
    keys, owners = hashes[inside], rec[: len(hashes)][inside]
    # by n-gram, then record: owners already ascend, and a stable sort keeps their order per n-gram
    order = np.argsort(keys, kind="stable")
    keys, owners = keys[order], owners[order]
    first = np.ones(len(keys), dtype=bool)
    first[1:] = (keys[1:] != keys[:-1]) | (owners[1:] != owners[:-1])
    distinct = keys[first]  # sorted: one entry per (n-gram, record)
    runs = np.flatnonzero(np.concatenate(([True], distinct[1:] != distinct[:-1])))
    counts = np.diff(np.append(runs, len(distinct)))  # records holding each n-gram
    return _CommonNgrams(distinct[runs][counts >= need], th, rec, hashes, inside, n)


def detect_sample(
    train_datasets: Sequence[Any], text_sets: Sequence[Iterable[str]], config: BoilerplateConfig | None = None
) -> list[Boilerplate]:
    """Read the sample of ``train_datasets`` once and detect its boilerplate for each of
    ``text_sets`` (the protected eval texts of each check that reads these datasets).

    A picklable task: the engine runs it in a worker (:meth:`auditor.engines.base.Engine.offload`),
    so the calling process does not read or census the sample. Raises what reading raises."""
    cfg = config or BoilerplateConfig()
    per = max(1, cfg.sample // max(1, len(train_datasets)))
    sample = [r for ds in train_datasets for r in islice(ds.records(), per)]
    memo: dict[str, Any] = {}  # line counts and n-grams of the sample, counted once for every check
    return [detect(sample, texts, cfg, memo) for texts in text_sets]

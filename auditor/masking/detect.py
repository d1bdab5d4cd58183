"""Boilerplate detection: the lines and word n-grams a large share of a sample of training records
share (:func:`detect`), found once for every check reading those records (:func:`detect_sample`, a
task an engine may run in a worker); what is then masked, and how eval text is kept, is
:class:`~auditor.masking.boilerplate.Boilerplate`.

Reading the sample raises what reading the dataset raises (:class:`~auditor.errors.InputError` for bad
input); nothing else is raised here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

import numpy as np

from ..records.record import Record
from ..text.batch import TokenBatch
from ..text.lines import plain_line_spans, slow_line_spans, span_chars, span_hashes
from ..text.normalize import tokens
from ..text.tokens import ngram_hashes, ngram_hashes_at, token_hashes
from .base import BoilerplateConfig, eval_gram_hashes, eval_gram_starts
from .boilerplate import Boilerplate


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
    cfg = config or BoilerplateConfig()
    protect = TokenBatch([t for t in eval_texts if t])  # the eval texts normalized once, for both
    bp = Boilerplate(
        cfg,
        sampled=len(sample),
        protected=set(protect.whole_hashes()),  # text_hash(normalize(t)) of each
        eval_grams=eval_gram_hashes(protect, cfg.protect_n),
    )
    if len(sample) < cfg.min_records:
        return bp
    need = max(2, int(np.ceil(cfg.share * len(sample))))
    memo = {} if memo is None else memo  # what depends on the sample alone, for the next check's call
    if "lines" not in memo:
        memo["raw"] = TokenBatch([r.whole_text() for r in sample])  # the sample as it stands, normalized once
        memo["lines"] = _line_counts(memo["raw"])
    line_df, first_text = memo["lines"]
    common = {h for h, c in line_df.items() if c >= need} - bp.protected
    bp.spared = {
        h for h in common if eval_gram_starts(token_hashes(tokens(first_text[h])), cfg.protect_n, bp.eval_grams).any()
    }
    bp.lines = common - bp.spared
    place = {h: i for i, h in enumerate(line_df)}  # lines in order of first appearance
    for kind, chosen in (("line", bp.lines), ("spared_line", bp.spared)):
        # the five most shared, the longest (most telling) first among equals, then the first seen
        top = sorted(chosen, key=lambda h: (-line_df[h], -len(first_text[h]), place[h]))[:5]
        bp.examples += [
            {"kind": kind, "text": first_text[h][:160], "share": round(line_df[h] / len(sample), 4)} for h in top
        ]
    if bp.lines or bp.spared:
        rests = bp.mask_texts([r.whole_text() for r in sample])
        grams = _common_ngrams(*_leading_token_hashes(TokenBatch(rests), cfg.max_tokens), cfg.n, need)
    else:  # no shared line to drop or mask: the texts are unchanged, the same for every check
        if "grams" not in memo:
            # the batch let go once its leading hashes are taken: nothing else reads it, and the
            # census's arrays take its place (the task's peak RSS 162 -> ~125 MB on 100 MB of text)
            memo["grams"] = _common_ngrams(*_leading_token_hashes(memo.pop("raw"), cfg.max_tokens), cfg.n, need)
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
    whole = np.diff(batch.token_starts) - 1  # each text's tokens, its separator left out
    if not len(whole) or int(whole.max()) <= limit:  # every token but the separators (no index array)
        kept = np.ones(int(batch.token_starts[-1]), dtype=bool)
        kept[batch.token_starts[1:] - 1] = False
        return batch.token_hashes()[kept], whole
    lens = np.minimum(whole, limit)
    offsets = np.zeros(len(lens), dtype=np.int64)
    np.cumsum(lens[:-1], out=offsets[1:])
    take = np.repeat(starts - offsets, lens) + np.arange(int(lens.sum()))
    return batch.token_hashes()[take], lens


def _line_counts(batch: TokenBatch) -> tuple[Counter, dict[int, str]]:
    """How many texts of ``batch`` (a sample's records' whole texts) hold each normalized line of 10
    characters or more (by ``text_hash``), and the first raw text (stripped) of each line two records
    or more hold (a line of one record is never boilerplate: :func:`detect` needs two at least). The
    lines of texts that normalize line by line are read from the batch's buffer
    (:mod:`auditor.text.lines`), the others' normalized one by one.

    >>> texts = [f"Answer briefly, please.\\n{t}\\nanswer briefly please" for t in ["what is the time in paris", "short"]]
    >>> counts, first = _line_counts(TokenBatch(texts))
    >>> sorted(counts.values()), list(first.values())
    ([1, 2], ['Answer briefly, please.'])
    """
    texts = batch.texts
    slow = set(batch.slow)
    owner, number, found, others = [], [], [], []
    for spans in (
        plain_line_spans(batch, [k for k in range(len(texts)) if k not in slow]),
        slow_line_spans(batch, sorted(slow)),
    ):
        long = np.flatnonzero(span_chars(batch, spans.start, spans.end) >= 10)  # len(normalize(line))
        owner.append(spans.text[long])
        number.append(spans.number[long])
        found.append(span_hashes(batch, spans.start[long], spans.end[long]))
        others += spans.missed
    others.sort()
    if others:  # lines normalized one by one
        where = [(k, i) for k in others for i in range(1, texts[k].count("\n") + 2)]
        lines = TokenBatch([line for k in others for line in texts[k].split("\n")])
        at = np.flatnonzero(lines.char_lengths() >= 10)
        pairs = np.array(where, dtype=np.int64).reshape(-1, 2)[at]
        owner.append(pairs[:, 0])
        number.append(pairs[:, 1])
        found.append(np.array(lines.whole_hashes(), dtype=np.uint64)[at])
    first_line = np.concatenate(([0], np.cumsum([t.count("\n") + 1 for t in texts])))
    owner_all, number_all, hashes = np.concatenate(owner), np.concatenate(number), np.concatenate(found)
    place = first_line[owner_all] + number_all - 1  # each line's place in the sample, lines in order
    # by hash, then place: the lines' order (so their records') within a hash
    order = np.lexsort((place, hashes))
    hashes, owner_all, place, number_all = hashes[order], owner_all[order], place[order], number_all[order]
    new_hash = np.concatenate(([True], hashes[1:] != hashes[:-1])) if len(hashes) else np.zeros(0, dtype=bool)
    new_pair = new_hash.copy()
    new_pair[1:] |= owner_all[1:] != owner_all[:-1]
    runs = np.flatnonzero(new_hash)
    counts = np.add.reduceat(new_pair.astype(np.int64), runs) if len(runs) else np.zeros(0, dtype=np.int64)
    by_place = np.argsort(place[runs], kind="stable")  # lines in order of first appearance
    line_df = Counter(dict(zip(hashes[runs][by_place].tolist(), counts[by_place].tolist())))
    first_text = {
        int(hashes[r]): texts[int(owner_all[r])].split("\n")[int(number_all[r]) - 1].strip() for r in runs[counts >= 2]
    }
    return line_df, first_text


@dataclass
class _CommonNgrams:
    """The word ``n``-grams in at least ``need`` records of a sample (:func:`_common_ngrams`), with
    what :meth:`census` needs to tell which of them hold an eval ``k``-gram."""

    common: np.ndarray  # sorted
    th: np.ndarray  # token hashes of every record, one after the other
    rec: np.ndarray  # the record of each token
    n: int

    def census(self, k: int, eval_grams: np.ndarray) -> tuple[np.ndarray, int]:
        """The common n-grams and how many of them hold an eval ``k``-gram."""
        if not len(eval_grams) or not len(self.common):
            return self.common, 0
        hashes = ngram_hashes(self.th, self.n)  # every window's n-gram hash
        inside = self.rec[: len(hashes)] == self.rec[self.n - 1 :]  # windows within one record
        kgrams = ngram_hashes(self.th, k)
        pos = np.minimum(np.searchsorted(eval_grams, kgrams), len(eval_grams) - 1)
        hitk = (eval_grams[pos] == kgrams) & (self.rec[: len(kgrams)] == self.rec[k - 1 :])
        cs = np.concatenate(([0], np.cumsum(hitk)))
        held = cs[self.n - k + 1 : self.n - k + 1 + len(hashes)] > cs[: len(hashes)]  # a window holds a hit k-gram
        tainted = hashes[inside & held]
        return self.common, int(np.isin(self.common, tainted).sum())


def _common_ngrams(th: np.ndarray, lens: np.ndarray, n: int, need: int) -> _CommonNgrams | None:
    """The word ``n``-grams in at least ``need`` of the records (token hashes ``th`` of every record
    one after the other, ``lens[i]`` of record ``i``); None when no record has an n-gram.

    One pass over all records at once: windows are hashed over the concatenated tokens and those
    that cross a record boundary dropped, so each record counts each of its n-grams once, as if
    counted record by record. Only windows whose every token may occur ``need`` times are hashed (an
    n-gram in ``need`` records has each of its tokens there: :func:`_may_occur` keeps every such
    token); in prose nearly no window is made of common words alone.
    """
    if not len(lens) or int(lens.sum()) < n:
        return None
    th = th.astype(np.uint64, copy=False)
    rec = np.repeat(np.arange(len(lens), dtype=np.int32), lens)  # 32 bits: half the memory of the default
    count = len(th) - n + 1
    inside = rec[:count] == rec[n - 1 :]
    if not inside.any():
        return None
    # rare tokens before each token, in 32 bits: only counts n tokens apart are compared, which a wrap
    # past 2**32 would leave unequal where they differ
    rare = np.zeros(len(th) + 1, dtype=np.int32)
    np.cumsum(~_may_occur(th, need, mask=True), dtype=np.int32, out=rare[1:])
    starts = np.flatnonzero(inside & (rare[n : n + count] == rare[:count]))  # windows of common tokens only
    keys, owners = ngram_hashes_at(th, n, starts), rec[starts]
    # an n-gram in ``need`` records occurs ``need`` times: the others (nearly all) are dropped, and
    # only the windows of those left are sorted by n-gram and record
    ordered = np.sort(_may_occur(keys, need))
    firsts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    frequent = ordered[firsts[np.diff(np.append(firsts, len(ordered))) >= need]]
    if not len(frequent):
        return _CommonNgrams(frequent, th, rec, n)
    keys_at = np.minimum(np.searchsorted(frequent, keys), len(frequent) - 1)
    keep = frequent[keys_at] == keys
    keys, owners = keys[keep], owners[keep]
    # by n-gram, then record: owners already ascend, and a stable sort keeps their order per n-gram
    order = np.argsort(keys, kind="stable")
    keys, owners = keys[order], owners[order]
    first = np.ones(len(keys), dtype=bool)
    first[1:] = (keys[1:] != keys[:-1]) | (owners[1:] != owners[:-1])
    distinct = keys[first]  # sorted: one entry per (n-gram, record)
    runs = np.flatnonzero(np.concatenate(([True], distinct[1:] != distinct[:-1])))
    counts = np.diff(np.append(runs, len(distinct)))  # records holding each n-gram
    return _CommonNgrams(distinct[runs][counts >= need], th, rec, n)


def _may_occur(keys: np.ndarray, need: int, mask: bool = False) -> np.ndarray:
    """The ``keys`` whose bucket (the top bits of the key) holds ``need`` keys or more (with ``mask``,
    which keys those are): every key that occurs ``need`` times or more is kept (its bucket holds at
    least its own copies), nearly all others dropped in one counting pass, so that few are sorted.

    >>> keys = np.array([1, 2 << 60, 1, 3 << 61, 1], dtype=np.uint64)
    >>> _may_occur(keys, 3).tolist(), _may_occur(keys, 3, mask=True).tolist()
    ([1, 1, 1], [True, False, True, False, True])
    """
    # buckets enough that one holds ~need / 8 keys on average: few keys of a bucket as full as ``need``
    # are there by chance; few enough to count in cache
    bits = min(24, max(10, (8 * len(keys) // max(1, need)).bit_length()))
    bucket = (keys >> np.uint64(64 - bits)).astype(np.intp)
    kept = np.bincount(bucket, minlength=1 << bits)[bucket] >= need
    return kept if mask else keys[kept]


def _first(records: Iterable[Record], count: int, chars: int) -> list[Record]:
    """The first ``count`` of ``records``, fewer where their text (``whole_text``) reaches ``chars``
    characters first: the record that reaches it is the last one taken.

    >>> recs = [Record("t", str(i), f"t:{i}", {"text": "x" * 10}) for i in range(5)]
    >>> len(_first(recs, 4, 1000)), len(_first(recs, 4, 25)), len(_first(recs, 4, 1))
    (4, 3, 1)
    """
    out: list[Record] = []
    size = 0
    for r in islice(records, count):
        out.append(r)
        size += len(r.whole_text())
        if size >= chars:
            break
    return out


def detect_sample(
    train_datasets: Sequence[Any], text_sets: Sequence[Iterable[str]], config: BoilerplateConfig | None = None
) -> list[Boilerplate]:
    """Read the sample of ``train_datasets`` once and detect its boilerplate for each of
    ``text_sets`` (the protected eval texts of each check that reads these datasets).

    A picklable task: the engine runs it in a worker (:meth:`auditor.engines.base.Engine.offload`),
    so the calling process does not read or census the sample. Raises what reading raises."""
    cfg = config or BoilerplateConfig()
    per = max(1, cfg.sample // max(1, len(train_datasets)))
    chars = max(1, cfg.sample_chars // max(1, len(train_datasets)))
    sample = [r for ds in train_datasets for r in _first(ds.records(), per, chars)]
    memo: dict[str, Any] = {}  # line counts and n-grams of the sample, counted once for every check
    return [detect(sample, texts, cfg, memo) for texts in text_sets]

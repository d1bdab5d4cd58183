"""The plain reference paths the scan's fast paths are compared with (issue 36: speed never costs a finding).

Each function here does what a fast path of the package does, the plain way: one text at a time,
with the regular expressions and per-text calls that the fast path replaces.

* :func:`split_camel_runs` / :func:`has_camel_run`: the candidate runs found with the regular
  expression :data:`auditor.text.camel._CAMEL_CANDIDATE` (the package finds them with
  ``bytes.find`` on case classes);
* :func:`percent_decode`: each run of ``%XX`` escapes found by the regular expression
  :data:`auditor.text.evasion._PERCENT` (the package splits the text on ``%``);
* :func:`words_of`: the words of a located string found by the regular expression
  :data:`auditor.text.locate._WORD`, case-folded and hashed one by one (the package classifies code
  points with numpy, case-folds the whole string once and has the kernel hash its words);
* :func:`normalize` / :func:`tokens`: no ASCII fast path (``is_plain``), every text through
  ``undo_evasion``, then :func:`fold_chars` (each stage gathering the text's characters anew; the package
  carries one set of them through the stages) and the Unicode path's space classes, camel runs split by
  :func:`split_camel_runs`;
* :func:`joined`: a :class:`~auditor.text.batch.TokenBatch` buffer built from :func:`normalize` of each
  text (the package translates plain ASCII for the whole batch in bytes);
* :func:`batch_units`: the exact tier's units (the whole text, each non-blank line) hashed from
  :func:`normalize` of each (the package reads the lines of plain texts from the batch's buffer);
* :func:`minhash_units`: MinHash shingles and word sets from :func:`tokens` of each text (the package
  reads them from the scan's shared token batch);
* ``minhash`` sketching every view (the package sketches only views with enough shingles and words in
  the eval items to reach a reported Jaccard, :func:`auditor.methods._shingles.may_reach`, and few
  enough for the largest eval item to reach it, :func:`auditor.methods._shingles.sized_sets`);
* :func:`code_calls` / :func:`balanced_end`: the Python calls written in a text found by the regular
  expression :data:`auditor.records.toolcalls._CODE_CALL` and their parentheses matched one character at
  a time (the package finds them from each ``(`` back, and the parentheses with a pattern);
  the n-gram tables: every window of a batch looked up (the package looks up only those whose hash's top
  bits some n-gram of the table has, :meth:`auditor.methods._ngram_kernel.NgramScanner._bitmap`);
  :func:`shared_grams`: each eval item's n-grams hashed and made distinct one item at a time (the
  package hashes them over the items' tokens joined and sorts them in one kernel call);
  :func:`python_call_args`: every such call parsed (the package parses only those whose first argument
  is a keyword one, :data:`auditor.records.toolcalls._KEYWORD_FIRST`);
* :func:`fields_view`: every string's lines split and remembered, and every string looked at as JSON
  (the package splits a string only when a later one is looked at, and looks at JSON-shaped ones only);
* :func:`id_candidate` / :func:`text_candidate`: each id or text name's other spellings found by
  case-folding every key of every record (the package works them out once per set of keys);
* JSON Lines read by the standard library's ``json`` alone (the package parses a line with msgspec,
  :func:`auditor.io.jsonread._loads_fast`, and leaves the lines it refuses to ``json``);
* :func:`shared_runs`: the report's shared word runs found from every run of both texts as a set
  (the package looks up only the training text's runs that start with a word starting one of the eval
  item's, :func:`auditor.report.proof.shared_runs`);
* the ``entities`` tier without its Aho-Corasick prefilter: every training text through every regex (the
  package extracts only texts holding one of the eval identifiers' spellings).

:func:`reference_paths` swaps all of them in for a test (every ``auditor`` module's binding of the
replaced functions), so a whole audit can run on the reference paths and be compared with the default.
"""

from __future__ import annotations

import re
import sys
import types
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import xxhash

from auditor.adapters import _fields
from auditor.io import jsonread
from auditor.methods import _exact_kernel, _ngram_kernel, _shingles, entities, minhash
from auditor.records import fields, toolcalls
from auditor.records.record import FIELDS, TEXT
from auditor.report import proof
from auditor.text import batch, camel, evasion, locate
from auditor.text import normalize as norm
from auditor.text import tokens as tokens_mod
from auditor.text.tokens import token_hashes


def _split_token(m: re.Match) -> str:
    run = m.group(0)
    return " ".join(camel._SPLIT.split(run)) if camel._words_run_together(run) else run


def split_camel_runs(text: str) -> str:
    if not camel.may_have_camel_run(text.encode("ascii", "replace")):
        return text
    return camel._CAMEL_CANDIDATE.sub(_split_token, text)


def has_camel_run(text: str) -> bool:
    return any(camel._words_run_together(m.group(0)) for m in camel._CAMEL_CANDIDATE.finditer(text))


def _unquote(m: re.Match) -> str:
    raw = m.group(0)
    data = bytes.fromhex(raw.replace("%", ""))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(chr(b) if b < 0x80 else raw[3 * i : 3 * i + 3] for i, b in enumerate(data))


def percent_decode(text: str) -> str:
    for _ in range(3):
        if "%" not in text:
            break
        decoded = evasion._PERCENT.sub(_unquote, text)
        if decoded == text:
            break
        text = decoded
    return text


def words_of(s: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, int]]:
    spans = [m.span() for m in locate._WORD.finditer(s)]
    by_hash: dict[int, int] = {}
    hashes = (xxhash.xxh64_intdigest(s[a:b].casefold().encode("utf-8", "surrogatepass")) for a, b in spans)
    ids = [by_hash.setdefault(h, k) for k, h in enumerate(hashes)]  # a word's first index
    starts = np.array([a for a, _ in spans], dtype=np.int64)
    ends = np.array([b for _, b in spans], dtype=np.int64)
    return starts, ends, np.array(ids, dtype=np.int64), by_hash


def fold_chars(text: str) -> str:
    """``normalize``'s stages after ``undo_evasion``, each gathering the text's characters anew."""
    t = norm._tables()
    text = split_camel_runs(text)
    if text.isascii():
        return text.lower()
    for c in set(text) & t.confusable.keys():
        text = text.replace(c, t.confusable[c])
    text = unicodedata.normalize("NFKC", text).casefold()
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    text = evasion.drop_ignorables(text, t.ignorable)
    for c in set(text) & t.confusable_lower.keys():
        text = text.replace(c, t.confusable_lower[c])
    return evasion.strip_latin_marks(text)


def normalize(text: str) -> str:
    if not text:
        return ""
    text = fold_chars(norm.undo_evasion(text))
    for c in set(text):
        if not c.isalnum() and norm._is_space_class(c):
            text = text.replace(c, " ")
    return " ".join(text.split())


def tokens(text: str) -> list[str]:
    return normalize(text).split()


def joined(
    texts: list[str],
    slow: list[int] | None = None,
    splits: list | None = None,
    kept: dict | None = None,
    local: set | None = None,
) -> bytes:
    """Every text normalized by ``normalize`` (``slow``, which the fast path reads, is not needed; no
    camel-cased run is noted in ``splits`` nor piece ``kept`` or ``local``: the reference units do not
    read them)."""
    return batch._SEPARATOR.join([normalize(t).encode("utf-8") for t in texts] + [b""])


def batch_units(tb: batch.TokenBatch, lines: bool, keys: np.ndarray | None = None) -> list[list[tuple[str, int]]]:
    """Every unit, ``keys`` or not (a search's keys only leave out lines that match nothing)."""
    units = [[("whole", norm.text_hash(normalize(t)))] for t in tb.texts]
    if lines:
        for k, text in enumerate(tb.texts):
            if "\n" in text:
                for i, line in enumerate(text.split("\n"), start=1):
                    if line.strip():
                        units[k].append((f"line {i}", norm.text_hash(normalize(line))))
    return units


def code_calls(text: str, keyword_first: bool = False) -> Iterator[tuple[int, str]]:
    for m in toolcalls._CODE_CALL.finditer(text):
        if not keyword_first or toolcalls._KEYWORD_FIRST.match(text, m.end() - 1):
            yield m.start(), m.group(1)


def balanced_end(text: str, open_at: int, stop: int) -> int | None:
    depth = 0
    for i in range(open_at, min(len(text), stop)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def shared_grams(all_hashes, n: int, share: float, min_items: int) -> np.ndarray:
    if share <= 0:
        return np.empty(0, dtype=np.uint64)
    per_item = [np.unique(tokens_mod.ngram_hashes(th, n)) for th in all_hashes if len(th) >= n]
    if len(per_item) < min_items:
        return np.empty(0, dtype=np.uint64)
    grams, counts = np.unique(np.concatenate(per_item), return_counts=True)
    return grams[counts >= max(min_items, share * len(all_hashes))]


def python_call_args(text: str, start: int) -> dict | None:
    # every call parsed: no keyword-first precheck, parentheses matched one character at a time
    return toolcalls._call_keywords(text, start, balanced_end(text, text.index("(", start), start + 5000))


def fields_view(views, raw, known=()) -> str:
    if raw is None:
        return ""
    texts = [t for name, t in views.items() if name != FIELDS and t]
    whole = {*texts, *known}
    lines = set(whole).union(*(t.split("\n") for t in texts))

    def searched(s: str) -> bool:
        return s in whole or all(line in lines for line in s.split("\n"))

    out = []
    for s in fields.texts(raw, searched):
        if not searched(s):
            lines.update(s.split("\n"))
            out.append(s)
    return "\n".join(out)


def _folded(obj: dict, name: str) -> list[str]:
    """The keys of ``obj`` equal to ``name`` regardless of case (none when one is exactly ``name``)."""
    if name in obj:
        return []
    return [k for k in obj if isinstance(k, str) and k.casefold() == name.casefold()]


def id_candidate(obj: dict):
    for c in _fields.ID_CANDIDATES:
        if isinstance(obj.get(c), (str, int)):
            return obj[c]
    for c in _fields.ID_CANDIDATES:
        keys = [k for k in _folded(obj, c) if isinstance(obj[k], (str, int))]
        if len(keys) == 1:
            return obj[keys[0]]
    return None


def text_candidate(obj: dict) -> str | None:
    for c in _fields.TEXT_CANDIDATES:
        if _fields._usable(obj.get(c)):
            return c
    for c in _fields.TEXT_CANDIDATES:
        keys = [k for k in _folded(obj, c) if _fields._usable(obj[k])]
        if len(keys) > 1:
            raise _fields.AmbiguousField(c, keys)
        if keys:
            return keys[0]
    return None


def minhash_units(self: minhash.MinHashIndex, records) -> list[tuple[int, str, np.ndarray, np.ndarray]]:
    cfg = self.config
    out = []
    for i, tr in enumerate(records):
        seen = set()
        for v in [v for v in cfg.train_views if tr.views.get(v)] or [TEXT]:
            text = tr.view(v)
            if not text or text in seen:
                continue
            seen.add(text)
            h = _shingles.shingle_hashes(text, cfg.shingle, cfg.shingle_size)  # through tokens() below
            if len(h):
                out.append((i, v, h, token_hashes(tokens(text))))
    return out


def shared_runs(a: str, b: str, k: int = proof.RUNS[0], fallback: bool = True) -> tuple[list, list]:
    ta, tb = proof._tokens(a), proof._tokens(b)
    for size in [k, *(r for r in proof.RUNS if r < k)] if fallback else [k]:
        n = max(1, min(size, len(ta)))
        wa, wb = [t[2] for t in ta], [t[2] for t in tb]
        shared = {tuple(wa[i : i + n]) for i in range(len(wa) - n + 1)} & {
            tuple(wb[i : i + n]) for i in range(len(wb) - n + 1)
        }
        if shared or not fallback:
            hits = []
            for words in (wa, wb):
                hit = [False] * len(words)
                for i in range(len(words) - n + 1):
                    if tuple(words[i : i + n]) in shared:
                        hit[i : i + n] = [True] * n
                hits.append(hit)
            return proof._runs(ta, hits[0]), proof._runs(tb, hits[1])
    return [], []


@contextmanager
def reference_paths(monkeypatch) -> Iterator[None]:
    """Every ``auditor`` module's binding of a fast function replaced by its reference here (the
    token batch remembered by the scan is dropped before and after)."""
    swaps = {
        camel.split_camel_runs: split_camel_runs,
        camel.has_camel_run: has_camel_run,
        evasion.percent_decode: percent_decode,
        locate._words_of: words_of,
        norm.normalize: normalize,
        norm.tokens: tokens,
        batch._joined: joined,
        _exact_kernel._batch_units: batch_units,
        toolcalls.code_calls: code_calls,
        fields.fields_view: fields_view,
        _fields.id_candidate: id_candidate,
        _fields._text_candidate: text_candidate,
        toolcalls.balanced_end: balanced_end,
        proof.shared_runs: shared_runs,
    }
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith("auditor"):
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, types.FunctionType) and value in swaps:
                monkeypatch.setattr(module, attr, swaps[value])
    monkeypatch.setattr(minhash.MinHashIndex, "_units", minhash_units)
    monkeypatch.setattr(entities, "ahocorasick_rs", None)
    monkeypatch.setattr(jsonread, "_fast_loads", None)
    monkeypatch.setattr(
        minhash, "may_reach", lambda values, offsets, union, share: np.ones(len(offsets) - 1, dtype=bool)
    )
    monkeypatch.setattr(
        _shingles,
        "sized_sets",
        lambda values, offsets, eval_offsets, share: (
            np.arange(len(offsets) - 1),
            _shingles.distinct_packed(values, offsets),
        ),
    )
    # every window of a batch looked up in the n-gram tables (no bitmap of their hashes' top bits)
    monkeypatch.setattr(
        _ngram_kernel.NgramScanner, "_bitmap", lambda self, n: np.ones(1 << _ngram_kernel.BITMAP_BITS, dtype=bool)
    )
    batch.forget_batch()
    try:
        yield
    finally:
        batch.forget_batch()

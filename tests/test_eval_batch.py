"""Eval items are normalized together, in one token batch per use (the index's fingerprint and table,
the exact tier's line keys, the n-gram kernel's vocabulary, which items a tier covers, the sameness
rule), with the results normalizing them one by one gives: on every bundled eval set and on
generated strings that normalization treats apart (camel-cased runs, typography, markup, escapes,
lone surrogates, empty and blank texts).
"""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.datasets import registry
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.datasets.sameness import most_shared
from auditor.methods import create
from auditor.methods._exact_kernel import text_keys
from auditor.methods.ngram import SHORT_MIN_N
from auditor.records.record import QUERY, Record
from auditor.store.indexes import fingerprint_records
from auditor.text.normalize import NORMALIZATION_VERSION, normalize, text_hash, tokens


def _fingerprint(records: list[Record], view: str) -> str:
    """:func:`fingerprint_records` as it was written, one normalization per record."""
    h = hashlib.sha256(f"normalization {NORMALIZATION_VERSION}\x01".encode())
    for r in records:
        h.update(f"{r.dataset}\x00{r.id}\x00{normalize(r.view(view))}\x01".encode())
    return h.hexdigest()


def _most_shared(records: list[Record]) -> tuple[str, int, int, list[Record]]:
    keys = [normalize(r.view(QUERY)) for r in records]
    if not keys:
        return "", 0, 0, []
    text, count = Counter(keys).most_common(1)[0]
    return text, count, len(keys), [r for k, r in zip(keys, records) if k == text]


def _same_as_one_by_one(records: list[Record]) -> None:
    views = [r.view(QUERY) for r in records]
    assert fingerprint_records(records, QUERY) == _fingerprint(records, QUERY)
    assert most_shared(records) == _most_shared(records)
    exact, ngram = create("exact").build(records), create("ngram").build(records)
    table: dict[int, list[int]] = {}
    for pos, v in enumerate(views):
        if len(normalize(v)) >= exact.config.min_chars:
            table.setdefault(text_hash(normalize(v)), []).append(pos)
    assert exact.table == table
    assert sum(exact.not_indexed.values()) == len(views) - sum(map(len, table.values()))
    indexed = sorted(p for ps in table.values() for p in ps)
    keys, want = exact._line_keys(), text_keys([normalize(views[p]).encode("utf-8") for p in indexed])
    assert keys.width == want.width and keys.hashes == want.hashes
    for name in ("keys", "heads", "pair_heads", "pair_lengths", "pair_tails"):
        assert getattr(keys, name).tolist() == getattr(want, name).tolist(), name
    assert exact.covered(records) == [
        len(normalize(v)) >= exact.config.min_chars and len(tokens(v)) >= SHORT_MIN_N for v in views
    ]
    assert ngram.covered(records) == [len(tokens(v)) >= ngram.config.short_min_n for v in views]
    if ngram.tables:
        assert list(ngram._scanner().vocab) == [t.encode() for t in dict.fromkeys(t for v in views for t in tokens(v))]


@pytest.mark.parametrize("name", registry.names())
def test_every_bundled_eval_set_is_normalized_together_as_item_by_item(name):
    _same_as_one_by_one(list(Dataset(DatasetSpec("e", [name], role="eval")).records()))


_PIECES = st.sampled_from(
    ["Book a flight", "BookAFlightToParis", "it\u2019s", "<b>Bo</b>ok", "a%20b", "caf\u00e9", "&amp;", "\ud800", "-\n"]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.one_of(_PIECES, st.text(max_size=12)), max_size=6).map(" ".join), max_size=12))
def test_generated_items_are_normalized_together_as_item_by_item(texts):
    _same_as_one_by_one([Record("g", str(i), f"g.jsonl:{i}", {QUERY: t} if t else {}) for i, t in enumerate(texts)])

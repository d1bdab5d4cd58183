"""Issue 25 item 4: light-edit near-duplicates to 0.98, and rewordings that keep the item's slots.

Real inputs only: the frozen held-out light-edit set ``tests/data/heldout/light_edits.jsonl`` (made by
``python -m benchmarks.bench_near_dups --freeze`` before the methods were changed; BFCL v4 live_* items and
WebShop goals, neither of them fitted on) and the bundled BFCL v4 / v1 questions. The figures and
the fit sets are printed by ``python -m benchmarks.bench_near_dups``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.errors import IndexFileError
from auditor.methods.minhash import MinHashIndex
from auditor.records.record import Record

LIGHT_EDITS = Path(__file__).parent / "data" / "heldout" / "light_edits.jsonl"


def _audit(tmp_path: Path, items: list[str], edits: list[str]):
    ev, tr = tmp_path / "eval.jsonl", tmp_path / "train.jsonl"
    ev.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n" for i, t in enumerate(items)))
    chats = [{"messages": [{"role": "user", "content": e}, {"role": "assistant", "content": "ok"}]} for e in edits]
    tr.write_text("".join(json.dumps(c) + "\n" for c in chats))
    cfg = AuditConfig(
        datasets={
            "e": DatasetSpec("e", [str(ev)], role="eval", format="jsonl", text_field="text", id_field="id"),
            "t": DatasetSpec("t", [str(tr)], role="train", format="chat"),
        },
        checks=[CheckSpec("nd", train=["t"], eval=["e"])],
        findings_store="memory",
        index_dir=None,
    )
    return run_audit(cfg)


@pytest.mark.parametrize("source", ["bfcl-v4-live", "webshop-3000-12087"])
def test_held_out_light_edits_are_found_conclusively_and_negatives_are_not(tmp_path, source):
    lines = [json.loads(x) for x in LIGHT_EDITS.read_text(encoding="utf-8").splitlines()]
    items = [x["text"] for x in lines if x["source"] == source and "eval" in x]
    rows = [x for x in lines if x["source"] == source and "kind" in x]
    rep = _audit(tmp_path, items, [r["text"] for r in rows])
    conclusive = {(f["train_ordinal"], int(f["eval_id"])) for f in rep.findings if f["conclusive"]}
    planted = [(j, r["item"]) for j, r in enumerate(rows) if r["kind"] == "planted"]
    recall = sum(p in conclusive for p in planted) / len(planted)
    assert len(planted) > 200 if source.startswith("bfcl") else len(planted) > 150
    assert recall >= 0.98, recall  # was 0.963 (BFCL v4 live) and 0.947 (WebShop) before issue 25
    negatives = {j for j, r in enumerate(rows) if r["kind"] == "negative"}
    assert not {j for j, _ in conclusive} & negatives


@pytest.mark.parametrize(
    ("item", "edit", "conclusive"),
    [
        # punctuation dropped inside a value: the same words, no substitution (BFCL v1, a fit-set plant)
        (
            "How can I instantiate a dummy server with SSL encryption for testing purposes, using the IP address "
            "`192.168.1.10` and port `8080`, and a pre-configured SSL context named `testSSLContext`?",
            "Please help. How I instantiate a dummy server with SSL encryption for testing purposes using the IP "
            "address `192168.1.10` and port `8080`, a pre-configured SSL context `testSSLContext`? named",
            True,
        ),
        # a value dropped, the other kept: the item with a word missing
        (
            "I want to find a movie playing in Chicago on 2024-03-19 and buy 3 tickets for it.",
            "i want to find a movie in playing chicago on 2024-03-19 and buy tickets for it. Please help.",
            True,
        ),
        # the item's only value dropped: any threshold fits the rest (another item of the same template)
        (
            "What are the names of the employees from the 'employees' table who have a salary greater than 50000?",
            "Thanks a lot! are What the names of the employees from 'employees' table who have a salary greater than",
            False,
        ),
        # the same values in other places: other coefficients (BFCL v4 parallel_62 / v1 parallel_function_184)
        (
            "Can you help me find the roots of two quadratic equations? The first equation is 3x^2 + 4x + 2 = 0, "
            "where 'a' is the coefficient of x^2, 'b' is the coefficient of x, and 'c' is the constant term. The "
            "second equation is 5x^2 - 7x + 3 = 0, where 'a' is the coefficient of x^2, 'b' is the coefficient of "
            "x, and 'c' is the constant term.",
            "Can you help me find the roots of two different quadratic equations? The first equation is 3x^2 + 7x "
            "+ 2 = 0, where 'a' is the coefficient of x^2 (3), 'b' is the coefficient of x (7), and 'c' is the "
            "constant term (2). The second equation is 5x^2 - 4x + 1 = 0, where 'a' is the coefficient of x^2 "
            "(5), 'b' is the coefficient of x (-4), and 'c' is the constant term (1).",
            False,
        ),
    ],
)
def test_word_set_matches_are_conclusive_only_when_the_values_stand_where_they_were(tmp_path, item, edit, conclusive):
    rep = _audit(tmp_path, [item], [edit])
    found = [f for f in rep.findings if f["method"] == "minhash"]
    assert len(found) == 1 and found[0]["evidence"]["measure"] == "word_set"
    assert found[0]["conclusive"] is conclusive


def _bfcl(spec: str, item_id: str) -> Record:
    return next(r for r in Dataset(DatasetSpec(spec, [spec], role="eval")).records() if r.id == item_id)


def test_bfcl_v4_rewording_of_a_v1_item_is_suspected_in_both_directions():
    v4, v1 = _bfcl("bfcl", "live_parallel_10-6-0"), _bfcl("bfcl-v1", "parallel_function_57")
    for ev, tr in ((v4, v1), (v1, v4)):
        train = Record("t", tr.id, tr.source, {"query": tr.view("query")}, ordinal=0)
        ix = MinHashIndex().build([ev])
        (f,) = ix.search([train])
        assert 0.5 <= f.score < 0.6 and not f.conclusive and f.evidence["tier"] == "suspected"
        assert ix.stats()["suspected_band"] == 1
        assert MinHashIndex(suspected_threshold=0).build([ev]).search([train]) == []
    # the same words around another date: not the item's slots, no finding
    other = v1.view("query").replace("May 5, 2022", "May 7, 2022")
    assert MinHashIndex().build([v4]).search([Record("t", "x", "x", {"query": other}, ordinal=0)]) == []


def test_an_index_with_other_word_set_bands_is_refused_on_restore():
    ev = [Record("e", "0", "e:0", {"query": "book a table for two at nopa in san francisco tonight at 8 pm"})]
    arrays, meta = MinHashIndex().build(ev).state()
    old = MinHashIndex(word_set_lsh_threshold=0.6)
    with pytest.raises(IndexFileError, match="word-set LSH 25 bands x 5 rows, expected 18 x 7"):
        old.restore(ev, arrays, meta)

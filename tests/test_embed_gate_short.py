"""The lexical gate's short texts (``gate_short``, 8 by default): a training unit whose
whole text holds at most that many distinct content stems passes whatever it shares, because a
rewording of a short item can share none of its words; only a unit's whole text (not the last line or a
window of a long one); and an eval item without content stems no longer opens the gate to every text.

Real inputs only: MMLU sociology questions and llm-decontaminator's line-aligned rephrasings of them
(``../shared/data``, Apache-2.0), BFCL v4 live user requests (``../shared/data``, Apache-2.0) and this
repository's own documentation as unrelated text; the real MiniLM model for the end-to-end check.
"""

from __future__ import annotations

import csv
import json

import pytest
from helpers import REPO, shared_file

from auditor.errors import ConfigError
from auditor.methods.embedding import GATE_DICE, GATE_SHORT, GATE_SYNONYMS, EmbeddingIndex
from auditor.methods.embedding.gate import LexicalGate, keep_units
from auditor.methods.embedding.segment import segments
from auditor.records.record import Record

REPHRASE = "llm-decontaminator/data/rephrase"


@pytest.fixture(scope="module")
def sociology() -> tuple[list[str], list[str]]:
    """(the 201 MMLU sociology questions, their line-aligned English rephrasings)."""
    with open(shared_file(f"{REPHRASE}/sociology_test.csv"), newline="", encoding="utf-8") as f:
        items = [row[0] for row in csv.reader(f) if row]
    with open(
        shared_file(f"{REPHRASE}/sociology_test_rephrase_english_filtered_question.jsonl"), encoding="utf-8"
    ) as f:
        reph = [json.loads(line)["text"] for line in f]
    assert len(items) == len(reph) == 201  # line-aligned
    return items, reph


def doc_paragraphs(n: int = 12) -> list[str]:
    """Unrelated real text: paragraphs of this repository's documentation of 40–150 words (one segment
    each, no windows)."""
    text = (REPO / "docs" / "scale.md").read_text(encoding="utf-8")
    return [p for p in text.split("\n\n") if 40 <= len(p.split()) <= 150][:n]


def gate(items: list[str], short: int = GATE_SHORT) -> LexicalGate:
    """The method's dice gate (threshold, synonyms) with ``short`` as given."""
    return LexicalGate(dice=GATE_DICE, synonyms=GATE_SYNONYMS, short=short).fit(items)


def test_a_short_rewording_that_shares_no_word_passes_as_a_whole_text(sociology):
    items, reph = sociology
    drug = items.index("Patterns of drug use in Britain reveal that:")
    text = reph[drug]  # "The trend of substance abuse in the UK shows that: "
    own = gate([items[drug]])
    assert own.dice_scores_of([text])[0] == 0.0  # not one stem, nor a neighbour, in common
    assert own.too_short([text]).tolist() == [True]
    assert own.passes([text], whole=[True]).tolist() == [True]
    assert own.passes([text]).tolist() == [False]  # not a whole text: judged on what it shares
    assert gate([items[drug]], short=0).passes([text], whole=[True]).tolist() == [False]
    assert own.take_counts()["short_passed"] == 1


def test_short_only_ever_adds_whole_texts_and_long_texts_are_judged_as_before(sociology):
    items, reph = sociology
    on, off = gate(items), gate(items, short=0)
    texts = [t for t in reph if t.strip()] + doc_paragraphs()
    whole = [True] * len(texts)
    with_short, without = on.passes(texts, whole=whole), off.passes(texts, whole=whole)
    short = on.too_short(texts)
    assert (with_short == (without | short)).all()  # exactly the short ones are added
    assert short.sum() >= 20 and (short & ~without).sum() >= 1  # some rephrasings pass only this way
    assert not short[-len(doc_paragraphs()) :].any() and not with_short[-len(doc_paragraphs()) :].any()


def test_only_a_units_whole_text_passes_for_being_short(sociology):
    items, reph = sociology
    drug = items.index("Patterns of drug use in Britain reveal that:")
    on = gate([items[drug]])  # its own item only: it shares nothing with it
    short_line = reph[drug].strip()
    long_doc = doc_paragraphs(1)[0] + "\n" + short_line  # a long text whose last line is short
    last = [s.text for s in segments(long_doc)]
    assert last[-1] == short_line  # the 'last' segment
    units = [
        (short_line, [short_line], False),  # a unit's whole text: passes
        (long_doc, last, False),  # whole text long, its last line short: judged as before
        (long_doc, [short_line], True),  # a window is never a whole text
    ]
    assert keep_units(on, units) == [True, False, False]
    assert on.take_counts()["short_passed"] == 1


def test_an_item_without_content_stems_no_longer_opens_the_gate():
    """BFCL v4 live requests include "Who are you?", "help me", "e": without ``short`` such an item opens
    the gate to every text; with it, the gate stays closed to long unrelated text while short
    rewordings of such items pass."""
    path = shared_file("gorilla/berkeley-function-call-leaderboard/bfcl_eval/data/BFCL_v4_live_irrelevance.json")
    with open(path, encoding="utf-8") as f:
        items = [next(m["content"] for m in json.loads(line)["question"][0] if m["role"] == "user") for line in f]
    texts = [s.text for t in items for s in segments(t)]
    closed, open_ = gate(texts), gate(texts, short=0)
    assert closed.describe()["open_items"] == open_.describe()["open_items"] >= 10
    docs = doc_paragraphs()
    assert open_.passes(docs, whole=[True] * len(docs)).all()
    assert not closed.passes(docs, whole=[True] * len(docs)).any()
    asks = ["Could you tell me who you are?", "I need some assistance"]
    assert closed.passes(asks, whole=[True, True]).all()


def test_gate_short_is_checked_and_described():
    with pytest.raises(ConfigError, match="gate_short must be in 0..64"):
        LexicalGate(short=65)
    with pytest.raises(ConfigError, match="gate_short"):
        EmbeddingIndex(gate_short=-1)
    assert EmbeddingIndex().config.gate_short == GATE_SHORT == 8
    assert EmbeddingIndex().params() != EmbeddingIndex(gate_short=0).params()
    assert gate(["Patterns of drug use in Britain reveal that:"]).describe()["short"] == GATE_SHORT


def test_the_gated_tier_finds_a_short_rewording_sharing_no_word(sociology):
    """End to end with the real model: the ungated tier pairs the rephrasing with its item; the default
    gate passes it (short) and finds the same pair; with ``gate_short = 0`` it is stopped and lost."""
    items, reph = sociology
    drug = items.index("Patterns of drug use in Britain reveal that:")
    # its item and the first 40 items that share too little with it to pass it (others could pass it)
    alone = [i for i, q in enumerate(items) if i != drug and gate([q]).dice_scores_of([reph[drug]])[0] < GATE_DICE]
    keep = sorted([drug, *alone[:40]])
    ev = [
        Record("mmlu", str(i), f"sociology_test.csv:{i + 1}", {"query": items[i]}, ordinal=n)
        for n, i in enumerate(keep)
    ]
    tr = [Record("reph", "drug", "rephrase:66", {"text": reph[drug]}, ordinal=0)]

    def pairs(**params):
        index = EmbeddingIndex(cache_dir="none", **params).build(ev)
        return {(f.train_id, f.eval_id) for f in index.search(tr)}, index

    want, _ = pairs(gate="none")
    got, gated = pairs()  # the default: gate = "lexical"
    lost, stopped = pairs(gate_short=0)
    assert ("drug", str(drug)) in want and got == want
    assert lost == set() and stopped.stats()["gate"]["units_stopped"] == 1
    assert gated.stats()["gate"]["short_passed"] == 1

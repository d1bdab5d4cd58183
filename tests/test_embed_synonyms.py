"""The lexical gate's synonyms (``gate_synonyms``, 0.7 by default): a training stem that
neighbours an eval item's stem in the bundled table counts as that stem. The table is the bundled
model's own vocabulary; a real rewording that replaces an item's words with near-synonyms scores
higher with them; the score is the definition computed by hand; a bad bar or a damaged table is one
clear error.
"""

from __future__ import annotations

import csv
import json
import re

import numpy as np
import pytest
from helpers import mmlu_questions, shared_file, stb_heldout_case

from auditor.errors import ConfigError, IndexFileError
from auditor.methods.embedding import GATE_DICE, GATE_SYNONYMS, EmbeddingIndex
from auditor.methods.embedding.gate import STOP_WORDS, LexicalGate, _distinct_stems, stem
from auditor.methods.embedding.model import bundled_model_path
from auditor.methods.embedding.segment import segments
from auditor.methods.embedding.synonyms import load_synonyms, min_cosine, neighbours
from auditor.text.batch import TokenBatch


def stems(text: str) -> set[str]:
    d, ix = _distinct_stems(TokenBatch([text]))
    return {d[k] for k in ix.tolist()}


def test_the_table_is_the_models_own_vocabulary():
    """Every stem in the table is the stem of a whole word of the bundled model's vocabulary (no
    benchmark text went into it), pairs are symmetric, never a stop word or the stem itself, and at
    least the table's lowest cosine."""
    vocab = next(bundled_model_path().rglob("vocab.txt")).read_text(encoding="utf-8").split("\n")
    known = {stem(w) for w in vocab if re.fullmatch(r"[a-z]{3,}", w)}
    table = load_synonyms()
    assert len(table) > 1000 and min_cosine() == 0.7
    for s, near in table.items():
        assert s in known and s not in STOP_WORDS
        for t, c in near.items():
            assert t in known and t != s and t not in STOP_WORDS and 0.7 <= c <= 1
            assert table[t][s] == c


def test_neighbours_by_bar():
    vocab = {"highwa": 0, "city": 1, "the": 2}
    loose = neighbours(vocab, 0.7, lambda s: 0.0 if s in STOP_WORDS else 1.0)
    strict = neighbours(vocab, 0.85, lambda s: 1.0)
    assert 0 in loose["freewa"] and 1 in loose["urban"] and 1 in strict["urban"]  # city ~ urban at 0.86
    assert "expres" in loose and "expres" not in strict  # highway ~ expressway at 0.75
    assert set(strict) <= set(loose)
    assert not any(2 in ids for ids in loose.values())  # "the" has no neighbours


def sociology_pair() -> tuple[str, str]:
    """MMLU sociology question 54 and llm-decontaminator's English rephrasing of it (real)."""
    folder = "llm-decontaminator/data/rephrase/"
    with open(shared_file(folder + "sociology_test.csv"), newline="", encoding="utf-8") as f:
        original = list(csv.reader(f))[53][0]
    lines = open(shared_file(folder + "sociology_test_rephrase_english_filtered_question.jsonl"), encoding="utf-8")
    rephrased = json.loads(list(lines)[53])["text"]
    return original, rephrased


def test_a_rewording_with_near_synonyms_scores_higher():
    """ "A new highway extends from a major city though an area used for farmland" reworded as "a new
    expressway ... from a significant urban area through territory utilized as agricultural land": the
    plain rule scores it below the shipped threshold, the synonyms above it; unrelated real questions
    stay below it; synonyms never lower a score."""
    original, rephrased = sociology_pair()
    assert "highway" in original and "expressway" in rephrased
    items = [original] + [r.view("text") for r in mmlu_questions(40)]
    plain = LexicalGate(dice=GATE_DICE, synonyms=0, short=0).fit(items)
    soft = LexicalGate(dice=GATE_DICE, synonyms=GATE_SYNONYMS, short=0).fit(items)
    assert plain.dice_scores_of([rephrased])[0] < GATE_DICE <= soft.dice_scores_of([rephrased])[0]
    assert soft.passes([rephrased]).tolist() == [True] and plain.passes([rephrased]).tolist() == [False]
    probe = [r.view("text") for r in mmlu_questions(60, start=100)[40:]] + [rephrased]
    assert (soft.dice_scores_of(probe) >= plain.dice_scores_of(probe) - 1e-12).all()
    assert soft.describe()["synonyms"] == GATE_SYNONYMS and plain.describe()["synonyms"] == 0.0


def test_synonym_score_is_the_definition_computed_by_hand():
    """2 · Σ over the item's stems of its weight × its credit in the text / (text weight + item weight),
    best item; the credit: 1 when the text holds the stem, else the sum over the text's stems that
    neighbour it at >= the bar of each one's own weight over the item stem's (each at most 1), capped at 1."""
    items, train = stb_heldout_case()
    texts = [s.text for r in items for s in segments(r.view("query"))]
    gate = LexicalGate(synonyms=GATE_SYNONYMS, short=0).fit(texts)
    table = load_synonyms()
    probe = [t.view("text") for t in train[:10]] + [r.view("text") for r in mmlu_questions(6)]
    probe.append("Find a freeway motel near the urban centre for two grownups")
    got = gate.dice_scores_of(probe)
    w = gate.weight
    item_stems = [{s for s in stems(t) if w(s) > 0} for t in texts]
    for text, score in zip(probe, got.tolist()):
        mine = {s for s in stems(text) if w(s) > 0}
        mass = sum(w(s) for s in mine)
        best = 0.0
        for its in item_stems:
            shared = 0.0
            for s in its:
                if s in mine:
                    credit = 1.0
                else:
                    near = [t for t in mine if table.get(s, {}).get(t, 0) >= GATE_SYNONYMS]
                    credit = min(1.0, sum(min(1.0, w(t) / w(s)) for t in near))
                shared += w(s) * credit
            best = max(best, 2 * shared / (mass + sum(w(s) for s in its)))
        assert score == pytest.approx(best, rel=1e-9), text
    assert got[-1] > LexicalGate(synonyms=0, short=0).fit(texts).dice_scores_of(probe[-1:])[0]


def test_bad_bar_and_damaged_table(tmp_path):
    with pytest.raises(ConfigError, match="gate_synonyms must be 0 \\(off\\) or in 0.7..1"):
        LexicalGate(synonyms=0.5)
    with pytest.raises(ConfigError, match="gate_synonyms"):
        EmbeddingIndex(gate_synonyms=0.5)
    with pytest.raises(ConfigError, match="gate_synonyms"):
        EmbeddingIndex(gate_synonyms=1.5)
    assert EmbeddingIndex(gate_synonyms=0).config.gate_synonyms == 0
    assert EmbeddingIndex().params() != EmbeddingIndex(gate_synonyms=0).params()
    bad = tmp_path / "syn.json"
    bad.write_text('{"format": "auditor-gate-synonyms", "synonyms": []}')
    with pytest.raises(IndexFileError, match="not a gate synonyms file") as e:
        neighbours({"city": 0}, 0.8, lambda s: 1.0, path=bad)
    assert "\n" not in str(e.value)
    assert np.isfinite(LexicalGate(synonyms=1.0).fit(["a new highway"]).dice_scores_of(["x"])).all()


@pytest.mark.slow
def test_the_script_rebuilds_the_table_byte_for_byte(tmp_path):
    """``scripts/build_gate_synonyms.py`` reproduces the bundled table from the bundled model alone: the
    same header and pairs, each cosine within one rounding step (0.01). A cosine within float noise of a
    rounding boundary (``hairy``/``shave``: 0.715) rounds either way with the BLAS kernel of the machine;
    a pair only one table holds must sit within that step of the threshold (``MIN_COSINE``)."""
    import importlib.util

    from helpers import REPO

    from auditor.methods.embedding.synonyms import MIN_COSINE, SYNONYMS

    spec = importlib.util.spec_from_file_location("build_gate_synonyms", REPO / "scripts" / "build_gate_synonyms.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out = tmp_path / "gate_synonyms.json"
    script.main(out)
    built, bundled = json.loads(out.read_text()), json.loads(SYNONYMS.read_text())
    assert {k: v for k, v in built.items() if k != "synonyms"} == {k: v for k, v in bundled.items() if k != "synonyms"}
    pairs = [{(s, t): c for s, near in doc["synonyms"].items() for t, c in near.items()} for doc in (built, bundled)]
    assert len(pairs[0]) > 1000 and len(set(pairs[0]) ^ set(pairs[1])) <= len(pairs[1]) // 1000
    for a, b in (pairs, pairs[::-1]):
        for pair, c in a.items():
            assert abs(c - b.get(pair, MIN_COSINE)) <= 0.01 + 1e-9, (pair, c, b.get(pair))

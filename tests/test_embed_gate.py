"""The embedding tier's lexical gate (``gate = "lexical"``, the default): a training unit reaches the
MiniLM encoder only if one of its segments shares enough of some eval segment's words (weighted Dice).
On real eval items, their frozen held-out paraphrases pass and unrelated real text is stopped; a passed
unit's findings are exactly the ungated tier's; the decisions are counted in the check's
``method_stats`` (once, from engine workers too) and said in words in the report and the CLI's summary;
``--embed-gate none`` / ``gate = "none"`` turns it off and changes the index key.
"""

from __future__ import annotations

import json
import pickle

import pytest
from helpers import mmlu_questions, stb_heldout_case

from auditor.datasets.dataset import DatasetSpec
from auditor.errors import ConfigError, IndexFileError
from auditor.methods.embedding import GATE_DICE, EmbeddingIndex
from auditor.methods.embedding.gate import NOTE, LexicalGate, keep_units, load_background, stem
from auditor.methods.embedding.segment import segments
from auditor.records.record import Record


@pytest.fixture(scope="module")
def stb_case():
    return stb_heldout_case()


def unrelated() -> list[Record]:
    return mmlu_questions(start=100)


def eval_texts(items) -> list[str]:
    return [s.text for r in items for s in segments(r.view("query"))]


def gate_for(items) -> LexicalGate:
    """The gate ``gate = "lexical"`` builds (the shipped defaults: dice 0.2, synonyms 0.7, short 8)."""
    return LexicalGate().fit(eval_texts(items))


def plain_dice_for(items) -> LexicalGate:
    """The dice rule at the shipped threshold without synonyms or short texts: each stem counts as itself only."""
    return LexicalGate(synonyms=0, short=0).fit(eval_texts(items))


def test_defaults_are_the_methods():
    """The gate's own defaults are the ones the method ships (one configuration, no other rule)."""
    gate, c = LexicalGate(), EmbeddingIndex().config
    assert c.gate.rule == "lexical"  # on by default
    assert (gate.dice, gate.dice_code, gate.synonyms, gate.short) == (
        c.gate.dice,
        c.gate.dice_code,
        c.gate.synonyms,
        c.gate.short,
    )
    assert (gate.dice, gate.synonyms, gate.short) == (0.2, 0.7, 8)


def test_a_window_is_decided_on_its_own_words():
    gate = LexicalGate().fit(["Book a room at the Sheraton Hotel in New York for 2 adults"])
    filler = " ".join(r.view("text") for r in unrelated()[:30]).split()  # real sociology questions
    hit = "Reserve a Sheraton room in New York for two adults."
    doc = " ".join([*filler[:300], hit, *filler[300:]])
    units = [
        (doc, [doc], False),  # the whole text, read from its start: sociology
        (doc, [" ".join(filler[:160])], True),
        (doc, [" ".join([*filler[290:300], hit, *filler[300:310]])], True),  # the window around the rewording
    ]
    assert keep_units(gate, units) == [False, False, True]
    counts = gate.take_counts()
    assert counts["units_seen"] == 3 and counts["units_stopped"] == 2 and counts["segments_passed"] == 1


def test_dice_rule_passes_real_paraphrases_and_stops_diluted_text(stb_case):
    """The dice rule (the default) on real items: every frozen held-out paraphrase passes; most real
    unrelated questions are stopped (more than by the count rule); the same paraphrase words scattered
    through ~600 words of real unrelated text (several windows long) pass the count rule but not this one
    (the text's own weight dilutes them); a higher threshold passes a subset."""
    items, train = stb_case
    gate = gate_for(items)
    paraphrases = [t.view("text") for t in train if t.id.startswith("paraphrase:")]
    assert len(paraphrases) == 30 and gate.passes(paraphrases).all()
    questions = [r.view("text") for r in unrelated()]
    assert 1 - gate.passes(questions).mean() >= 0.75  # 50 of these 60 at the shipped threshold
    filler = " ".join(questions[:48])  # ~530 words
    scattered = [
        " ".join(w[: len(w) // 2]) + f" {filler} " + " ".join(w[len(w) // 2 :])
        for w in (p.split() for p in paraphrases)
    ]
    assert not gate.passes(scattered).any()  # every paraphrase word is there, diluted
    strict = LexicalGate(dice=0.3).fit(eval_texts(items))
    for batch in (paraphrases, questions):
        assert not (strict.passes(batch) & ~gate.passes(batch)).any()
    assert gate.describe()["dice"] == GATE_DICE and gate.describe()["open_items"] == 0


def test_dice_score_is_the_weighted_dice_of_distinct_stems(stb_case):
    """The vectorized score equals the definition computed by hand: 2 · weight of the distinct stems a
    text shares with an item / (the text's stem weight + the item's), best item."""
    import numpy as np

    from auditor.methods.embedding.gate import _distinct_stems
    from auditor.text.batch import TokenBatch

    items, train = stb_case
    texts = eval_texts(items)
    gate = plain_dice_for(items)
    probe = [t.view("text") for t in train[:8]] + [r.view("text") for r in unrelated()[:4]]
    probe.append("List the continents, a fun fact for each continent and the cities of each.")  # one stem, two tokens
    got = gate.dice_scores_of(probe)
    assert isinstance(got, np.ndarray) and len(got) == len(probe)

    def stems(text: str) -> set[str]:
        b = TokenBatch([text])
        d, ix = _distinct_stems(b)
        return {d[k] for k in ix.tolist()}

    item_stems = [stems(t) for t in texts]
    for text, score in zip(probe, got.tolist()):
        mine = stems(text)
        mass = sum(gate.weight(s) for s in mine)
        want = max(
            2 * sum(gate.weight(s) for s in mine & its) / (mass + sum(gate.weight(s) for s in its))
            for its in item_stems
        )
        assert score == pytest.approx(want, rel=1e-9)
    assert got.max() > 0.3 and got.min() < GATE_DICE  # a paraphrase scores high, an unrelated question low


def test_dice_rule_holds_code_to_the_code_bar(stb_case):
    """Code (a training unit with a ``doc`` segment, or a code eval item) is decided against the
    decision's lower code thresholds, so the gate holds it to ``dice_code``: a text scoring between
    the two bars passes as code or against a code item, and is stopped otherwise."""
    import numpy as np

    items, _ = stb_case
    texts = eval_texts(items)
    plain = plain_dice_for(items)  # the gates below count no synonyms either
    question = next(q for q in (r.view("text") for r in unrelated()) if plain.dice_scores_of([q])[0] > 0.02)
    score = float(plain.dice_scores_of([question])[0])
    gate = LexicalGate(dice=score + 0.01, dice_code=score - 0.01, synonyms=0, short=0).fit(texts)
    assert keep_units(gate, [(question, [question], False)] * 2, code=[False, True]) == [False, True]
    best = int(np.argmax([LexicalGate(synonyms=0, short=0).fit([t]).dice_scores_of([question])[0] for t in texts]))
    as_code = LexicalGate(dice=score + 0.01, dice_code=score - 0.01, synonyms=0, short=0).fit(
        texts, [i == best for i in range(len(texts))]
    )
    assert as_code.passes([question]).tolist() == [True] and gate.passes([question]).tolist() == [False]
    assert gate.describe()["dice_code"] == pytest.approx(score - 0.01)


def test_dice_rule_decides_each_segment_as_far_as_the_model_reads_it():
    # short = 0: the filler's five content stems would make its whole texts pass for being short
    gate = LexicalGate(short=0).fit(["Book a room at the Sheraton Hotel in New York for 2 adults"])
    filler = " ".join(["the agent called an api and waited for the response"] * 30)  # 300 words
    hit = "Reserve a Sheraton hotel room in New York for 2 adults."
    units = [
        (f"{hit} {filler}", [f"{hit} {filler}"], False),  # whole: read from its start, the rewording is there
        (f"{filler} {hit}", [f"{filler} {hit}"], False),  # whole: past the model's reach, no last line
        (f"{filler}\n{hit}", [f"{filler}\n{hit}", hit], False),  # its last line is the rewording
        (filler, [" ".join(filler.split()[:160])], True),
    ]
    assert keep_units(gate, units, max_words=20) == [True, False, True, False]
    counts = gate.take_counts()
    assert counts["units_passed"] == 2 and counts["segments_seen"] == 5 and counts["segments_passed"] == 3


def test_stems_and_background():
    assert stem("reservations") == stem("reserved") == "reserv" and stem("B737") == "B737"
    docs, df = load_background()
    assert docs > 10_000 and df["the"] > docs // 3 and min(df.values()) >= 3


def test_damaged_background_is_one_line(tmp_path):
    bad = tmp_path / "bg.json"
    bad.write_text('{"format": "something else"}')
    with pytest.raises(IndexFileError, match="not a gate background file") as e:
        load_background(bad)
    assert "\n" not in str(e.value)


def test_gate_parameters_checked_without_loading_a_model():
    with pytest.raises(ConfigError, match="gate must be one of"):
        EmbeddingIndex(gate="bm25")
    with pytest.raises(ConfigError, match="gate_dice"):
        EmbeddingIndex(gate_dice=0)
    with pytest.raises(ConfigError, match="gate_dice"):
        LexicalGate(dice=1.5)
    for gone in ("gate_rule", "gate_by", "gate_terms", "prefilter"):  # the rules and modes that were removed
        with pytest.raises(ConfigError, match=f"unexpected keyword argument '{gone}'") as e:
            EmbeddingIndex(**{gone: "x"})
        assert "\n" not in str(e.value)
    on, off = EmbeddingIndex(), EmbeddingIndex(gate="none")
    assert on.config.gate.rule == "lexical"  # on by default
    assert on.params() != off.params() != EmbeddingIndex(gate_dice=GATE_DICE + 0.01).params()


pytest.importorskip("sentence_transformers", reason="the 'embed' extra is not installed")


def keys(findings):
    return sorted(
        (f.eval_id, f.train_id, f.evidence["tier"], f.score, f.evidence["train_segment"], f.evidence["eval_segment"])
        for f in findings
    )


def test_gated_findings_are_the_ungated_findings_of_passed_units(stb_case):
    items, train = stb_case
    batch = train + unrelated()
    plain = EmbeddingIndex(cache_dir="none", gate="none").build(items)
    gated = EmbeddingIndex(cache_dir="none", gate="lexical").build(items)
    want, got = plain.search(batch), gated.search(batch)
    passed = {
        (t.id, v, s.label())
        for t in batch
        for (v, segs), ok in zip(
            plain.train_units(t),
            keep_units(
                gate_for(items),
                [(t.views[v], [s.text for s in g], g[0].kind == "window") for v, g in plain.train_units(t)],
                plain.config.encoder.max_words,
            ),
        )
        if ok
        for s in segs
    }
    assert len([f for f in want if f.train_id.startswith("paraphrase:")]) >= 20
    assert keys(got) == keys(
        [f for f in want if (f.train_id, f.evidence["train_view"], f.evidence["train_segment"]) in passed]
    )
    right = [f for f in want if f.train_id == f"paraphrase:{f.eval_id}"]
    assert {f.train_id for f in right} <= {f.train_id for f in got}  # no right finding lost here
    st = gated.stats()["gate"]
    units = sum(len(gated.train_units(t)) for t in batch)
    assert st["mode"] == "lexical" and st["units_seen"] == units
    assert st["units_passed"] + st["units_stopped"] == units and st["units_stopped"] >= 10
    # most of the 60 unrelated MMLU questions hold at most gate_short content stems: they pass as short
    assert st["short_passed"] >= 30
    assert plain.stats()["gate"] == {"mode": "none"} and plain.notes() == []
    assert gated.stats()["encoding"]["encoded"] < plain.stats()["encoding"]["encoded"]
    (note,) = gated.notes()
    assert note.startswith(NOTE) and f"{st['segments_stopped']:,} of {st['segments_seen']:,} training segments" in note


def test_gate_counts_from_workers_are_added_once(stb_case):
    items, train = stb_case
    index = EmbeddingIndex(cache_dir="none", gate="lexical").build(items)
    worker = pickle.loads(pickle.dumps(index))  # what an engine worker receives
    worker.search(train[:10] + unrelated()[:10])
    counts = worker.take_counts()
    assert counts["gate_units_seen"] == 20 and counts["gate_units_passed"] >= 10
    assert worker.take_counts()["gate_units_seen"] == 0  # handed over and reset
    index.add_counts(counts)
    st = index.stats()["gate"]
    assert st["units_seen"] == 20 and st["segments_stopped"] == counts["gate_segments_stopped"]


def write_case(folder, items, train):
    """The case as files: eval.jsonl (the items' queries) and train.jsonl (the held-out rows, then the
    unrelated questions), each line ``{"id", "text"}``."""
    ev, tr = folder / "eval.jsonl", folder / "train.jsonl"
    ev.write_text("".join(json.dumps({"id": r.id, "text": r.view("query")}) + "\n" for r in items))
    tr.write_text(
        "".join(json.dumps({"id": f"t{i}", "text": r.view("text")}) + "\n" for i, r in enumerate(train + unrelated()))
    )
    return ev, tr


@pytest.mark.timeout(300)
def test_cli_flag_turns_the_gate_off_and_method_stats_count_it(tmp_path, stb_case):
    from click.testing import CliRunner

    from auditor.cli import main

    items, train = stb_case
    ev, tr = write_case(tmp_path, items, train)
    stats = {}
    for flag in ("lexical", "none"):
        out = tmp_path / f"report-{flag}"
        args = ["audit", "--train", str(tr), "--eval", str(ev), "--text-field", "text", "--id-field", "id"]
        args += [
            "--method",
            "embedding",
            "--embed-gate",
            flag,
            "--report-dir",
            str(out),
            "--index-dir",
            str(tmp_path / "ix"),
        ]
        res = CliRunner().invoke(main, args)
        assert res.exit_code in (0, 1), res.output
        doc = json.loads((out / "report.json").read_text())
        stats[flag] = doc["checks"][0]["method_stats"][0]
        said = [line for line in res.output.splitlines() if line.startswith(NOTE)]  # the summary, in words
        assert len(said) == (flag == "lexical") and (NOTE in (out / "report.md").read_text()) == (flag == "lexical")
        assert (NOTE in (out / "report.html").read_text()) == (flag == "lexical")
    assert stats["none"]["gate"] == {"mode": "none"} and stats["none"]["params"]["gate"] == "none"
    st = stats["lexical"]["gate"]
    assert st["units_seen"] == len(train) + 60 and st["units_stopped"] >= 10 and st["short_passed"] >= 30


@pytest.mark.timeout(300)
def test_gate_in_engine_workers_gives_the_serial_findings_and_counts_once(tmp_path, stb_case):
    from auditor.audit.config import AuditConfig, CheckSpec
    from auditor.audit.run import run_audit

    items, train = stb_case
    ev, tr = write_case(tmp_path, items, train)

    def run(workers: int):
        cfg = AuditConfig(
            datasets={
                "ev": DatasetSpec("ev", [str(ev)], role="eval", text_field="text", id_field="id"),
                "tr": DatasetSpec("tr", [str(tr)], role="train", text_field="text", id_field="id"),
            },
            checks=[CheckSpec("para", train=["tr"], eval=["ev"], methods=["embedding"])],
            method_params={
                "embedding": {"cache_dir": "none", "backend": "onnx-int8", "device": "cpu", "gate": "lexical"}
            },
            index_dir=None,
            findings_store="memory",
            batch_size=8,
            split_bytes=4_000,
            workers=workers,
        )
        doc = run_audit(cfg).to_dict()
        return doc["findings"], doc["checks"][0]["method_stats"][0]["gate"]

    (serial, one), (parallel, two) = run(1), run(2)
    assert parallel == serial and len(serial) >= 20
    assert one == two and one["units_seen"] == len(train) + 60 and one["units_stopped"] >= 10
    assert one["short_passed"] >= 30

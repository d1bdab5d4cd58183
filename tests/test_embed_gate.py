"""The embedding tier's lexical gate (``gate = "lexical"``; off by default): a training unit reaches the
MiniLM encoder only if it shares enough of some eval item's words (the dice rule, the gate's default
rule) or rare words and values (the count and span rules). On real eval items,
their frozen held-out paraphrases pass and unrelated real text is stopped; a passed unit's findings are
exactly the ungated tier's; the decisions are counted in the check's ``method_stats`` (once, from
engine workers too); ``--embed-gate none`` / ``gate = "none"`` turns it off and changes the index key.
"""

from __future__ import annotations

import json
import pickle

import pytest
from helpers import mmlu_questions, stb_heldout_case

from auditor.datasets.dataset import DatasetSpec
from auditor.embed.gate import LexicalGate, load_background, stem
from auditor.embed.gate_select import keep_segments, keep_units
from auditor.embed.segment import segments
from auditor.errors import ConfigError, IndexFileError
from auditor.methods.embedding import (
    GATE_BY_VALUES,
    GATE_DICE,
    GATE_DICE_CODE,
    GATE_MIN_SHARED,
    GATE_SYNONYMS,
    GATE_TERMS,
    EmbeddingIndex,
)
from auditor.records.record import Record


@pytest.fixture(scope="module")
def stb_case():
    return stb_heldout_case()


def unrelated() -> list[Record]:
    return mmlu_questions(start=100)


def eval_texts(items) -> list[str]:
    return [s.text for r in items for s in segments(r.view("query"))]


def gate_for(items) -> LexicalGate:
    """The gate ``gate = "lexical"`` builds by default (the dice rule, with synonyms)."""
    return LexicalGate(
        GATE_MIN_SHARED,
        GATE_TERMS,
        GATE_BY_VALUES,
        rule="dice",
        dice=GATE_DICE,
        dice_code=GATE_DICE_CODE,
        synonyms=GATE_SYNONYMS,
    ).fit(eval_texts(items))


def plain_dice_for(items) -> LexicalGate:
    """The dice rule at the shipped threshold without synonyms: each stem counts as itself only."""
    return LexicalGate(rule="dice", dice=GATE_DICE).fit(eval_texts(items))


def count_gate_for(items) -> LexicalGate:
    return LexicalGate(GATE_MIN_SHARED, GATE_TERMS, GATE_BY_VALUES, rule="count").fit(eval_texts(items))


def test_real_paraphrases_pass_and_unrelated_questions_are_stopped(stb_case):
    items, train = stb_case
    gate = count_gate_for(items)
    paraphrases = [t.view("text") for t in train if t.id.startswith("paraphrase:")]
    assert len(paraphrases) == 30
    assert gate.passes(paraphrases).all()
    stopped = 1 - gate.passes([r.view("text") for r in unrelated()]).mean()
    assert stopped >= 0.5, stopped  # 40 of these 60 sociology questions (shipped setting)
    # an item's terms are its rare words and values, never a stop word
    terms = [t for i in range(len(items)) for t in gate.item_terms(i)]
    assert terms and not {"the", "for", "please", "want"} & set(terms)
    assert gate.describe()["open_items"] == 0 and gate.describe()["eval_terms"] == len(set(terms))


def test_shared_batch_and_own_batch_decide_alike(stb_case):
    from auditor.text.batch import forget_batch, token_batch

    items, train = stb_case
    gate = gate_for(items)
    texts = [t.view("text") for t in train] + [r.view("text") for r in unrelated()]
    own = gate.passes(texts)
    forget_batch()
    batch, _ = token_batch(texts)  # what the exact and n-gram tiers built for these texts
    assert gate.passes(texts, shared=True).tolist() == own.tolist()
    assert ("gate", gate.serial) in batch.memo  # decided on that batch
    forget_batch()


def test_a_window_is_decided_on_its_own_words():
    gate = LexicalGate(2, 6).fit(["Book a room at the Sheraton Hotel in New York for 2 adults"])
    filler = " ".join(["the agent called an api and waited for the response"] * 30)
    doc = f"{filler} Reserve a Sheraton room in New York. {filler}"
    units = [
        (doc, [doc], False),
        (doc, [" ".join(doc.split()[:160])], True),
        (doc, [" ".join(doc.split()[150:310])], True),
    ]
    assert keep_units(gate, units) == [True, False, True]
    counts = gate.take_counts()
    assert counts["units_seen"] == 3 and counts["units_stopped"] == 1 and counts["segments_passed"] == 2
    assert keep_units(gate, [("apple pie", ["apple pie"], False), ("pie", ["pie"], True)]) == [False, False]


def test_span_rule_on_real_paraphrases_wants_the_terms_together(stb_case):
    """The span rule (``gate_rule = "span"``) on real held-out paraphrases inside real unrelated text
    (MMLU sociology questions): the same words scattered over that text (first half at its start,
    second half ~600 words later) all pass the count rule but far fewer pass the span rule; it stops
    more of the unrelated questions than the count rule; a lower share passes a superset."""
    items, train = stb_case
    texts = [s.text for r in items for s in segments(r.view("query"))]
    strict = LexicalGate(terms=8, by_values=False, rule="span", span=2, share=0.5).fit(texts)
    loose = LexicalGate(terms=8, by_values=False, rule="span", span=2, share=0.25).fit(texts)
    count = count_gate_for(items)
    paraphrases = [t.view("text") for t in train if t.id.startswith("paraphrase:")]
    filler = " ".join(r.view("text") for r in unrelated()[:12])  # ~300 words of real sociology questions
    inside = [f"{filler} {p} {filler}" for p in paraphrases]
    scattered = [
        " ".join(w[: len(w) // 2]) + f" {filler} {filler} " + " ".join(w[len(w) // 2 :])
        for w in (p.split() for p in paraphrases)
    ]
    assert count.passes(scattered).all()  # the count rule sees the terms anywhere
    together, apart = strict.passes(inside), strict.passes(scattered)
    assert together.sum() >= 20 and apart.sum() <= together.sum() - 5, (together.sum(), apart.sum())
    questions = [r.view("text") for r in unrelated()]
    assert strict.passes(questions).sum() <= count.passes(questions).sum() < len(questions)
    for batch in (paraphrases, inside, scattered, questions):
        assert not (strict.passes(batch) & ~loose.passes(batch)).any()
    assert strict.describe()["rule"] == "span" and count.describe()["rule"] == "count"
    with pytest.raises(ConfigError, match="gate_rule"):
        LexicalGate(rule="window")
    with pytest.raises(ConfigError, match="gate_rule must be one of"):
        EmbeddingIndex(gate="lexical", gate_rule="window")


def test_dice_rule_passes_real_paraphrases_and_stops_diluted_text(stb_case):
    """The dice rule (the default) on real items: every frozen held-out paraphrase passes; most real
    unrelated questions are stopped (more than by the count rule); the same paraphrase words scattered
    through ~600 words of real unrelated text (several windows long) pass the count rule but not this one
    (the text's own weight dilutes them); a higher threshold passes a subset."""
    items, train = stb_case
    gate, count = gate_for(items), count_gate_for(items)
    paraphrases = [t.view("text") for t in train if t.id.startswith("paraphrase:")]
    assert gate.passes(paraphrases).all()
    questions = [r.view("text") for r in unrelated()]
    assert gate.passes(questions).sum() < count.passes(questions).sum()
    assert 1 - gate.passes(questions).mean() >= 0.75  # 50 of these 60 at the shipped threshold
    filler = " ".join(questions[:48])  # ~530 words
    scattered = [
        " ".join(w[: len(w) // 2]) + f" {filler} " + " ".join(w[len(w) // 2 :])
        for w in (p.split() for p in paraphrases)
    ]
    assert count.passes(scattered).all() and not gate.passes(scattered).any()
    strict = LexicalGate(rule="dice", dice=0.3).fit(eval_texts(items))
    for batch in (paraphrases, questions):
        assert not (strict.passes(batch) & ~gate.passes(batch)).any()
    assert gate.describe()["rule"] == "dice" and gate.describe()["dice"] == GATE_DICE


def test_dice_score_is_the_weighted_dice_of_distinct_stems(stb_case):
    """The vectorized score equals the definition computed by hand: 2 · weight of the distinct stems a
    text shares with an item / (the text's stem weight + the item's), best item."""
    import numpy as np

    from auditor.embed.gate import _distinct_stems
    from auditor.text.batch import TokenBatch

    items, train = stb_case
    texts = eval_texts(items)
    gate = plain_dice_for(items)
    probe = [t.view("text") for t in train[:8]] + [r.view("text") for r in unrelated()[:4]]
    probe.append("List the continents, a fun fact for each continent and the cities of each.")  # one stem, two tokens
    batch = TokenBatch(probe)
    distinct, index = _distinct_stems(batch)
    text_of = np.repeat(np.arange(len(probe)), np.diff(batch.token_starts))
    got = gate.dice_scores(len(probe), distinct, index, text_of)

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


def test_cover_and_common_ask_more_of_a_pair_as_defined(stb_case):
    """``cover`` and ``common`` (off by default; measured by bench_gate_ceiling) only ever stop more, and
    decide each text as their definitions computed by hand say: some item with dice >= the bar whose
    weight the text holds at least ``cover`` of / with which it shares at least ``common`` distinct
    content stems (all of a shorter item's)."""
    from auditor.embed.gate import _distinct_stems
    from auditor.text.batch import TokenBatch

    items, train = stb_case
    texts = eval_texts(items)
    probe = [t.view("text") for t in train] + [r.view("text") for r in unrelated()]

    def stems(text: str) -> set[str]:
        d, ix = _distinct_stems(TokenBatch([text]))
        return {d[k] for k in ix.tolist()}

    bar = 0.12  # the plain rule's own fitted threshold (these knobs are measured without synonyms)
    base = LexicalGate(rule="dice", dice=bar).fit(texts)
    item_stems = [{s for s in stems(t) if base.weight(s) > 0} for t in texts]
    for extra in ({"cover": 0.3}, {"common": 2}):
        gate = LexicalGate(rule="dice", dice=bar, **extra).fit(texts)
        got = gate.passes(probe)
        assert not (got & ~base.passes(probe)).any() and got.sum() < base.passes(probe).sum()
        for text, ok in zip(probe, got.tolist()):
            mine = {s for s in stems(text) if gate.weight(s) > 0}
            mass = sum(gate.weight(s) for s in mine)
            want = False
            for its in item_stems:
                both = mine & its
                shared, item = sum(gate.weight(s) for s in both), sum(gate.weight(s) for s in its)
                if 2 * shared / (mass + item) < bar - 1e-9:
                    continue
                if shared >= extra.get("cover", 0) * item - 1e-9 and len(both) >= min(extra.get("common", 1), len(its)):
                    want = True
                    break
            assert ok == want, (extra, text)
    for bad in ({"cover": 1.5}, {"common": 0}):
        with pytest.raises(ConfigError, match="gate_co"):
            LexicalGate(rule="dice", **bad)


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
    gate = LexicalGate(rule="dice", dice=score + 0.01, dice_code=score - 0.01).fit(texts)
    assert keep_units(gate, [(question, [question], False)] * 2, code=[False, True]) == [False, True]
    best = int(np.argmax([LexicalGate(rule="dice").fit([t]).dice_scores_of([question])[0] for t in texts]))
    as_code = LexicalGate(rule="dice", dice=score + 0.01, dice_code=score - 0.01).fit(
        texts, [i == best for i in range(len(texts))]
    )
    assert as_code.passes([question]).tolist() == [True] and gate.passes([question]).tolist() == [False]
    assert gate.describe()["dice_code"] == pytest.approx(score - 0.01)


def test_dice_rule_decides_each_segment_as_far_as_the_model_reads_it():
    gate = LexicalGate(rule="dice").fit(["Book a room at the Sheraton Hotel in New York for 2 adults"])
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


def stopped_passage(gate: LexicalGate) -> str:
    """Twenty-four real unrelated questions the gate stops, as one passage (longer than the model reads)."""
    return " ".join([q for q in (r.view("text") for r in unrelated()) if not gate.passes([q])[0]][:24])


def test_by_segment_only_the_segments_that_pass_are_read(stb_case):
    """``gate_by = "segment"``: a unit's segments the dice rule stops are not read — a real unrelated
    passage whose last line rewords an item is read as its last line only — except a code unit's,
    whose whole text and code prose are scored together (all or none); other rules decide units."""
    items, train = stb_case
    gate = gate_for(items)
    para = next(t.view("text") for t in train if t.id.startswith("paraphrase:"))
    passage = stopped_passage(gate)
    head = (f"{passage}\n{para}", [f"{passage}\n{para}", para], False)
    assert len(passage.split()) > 160 and gate.passes([passage, para]).tolist() == [False, True]
    assert keep_units(gate, [head]) == [True]  # as a unit: both segments would be encoded
    gate.take_counts()
    assert keep_segments(gate, [head, (passage, [passage], True)]) == [[False, True], [False]]
    counts = gate.take_counts()
    assert (counts["units_passed"], counts["segments_seen"], counts["segments_passed"]) == (1, 3, 1)
    code = ("def f(): pass", [passage, para], False)
    assert keep_segments(gate, [code], code=[True]) == [[True, True]]
    gate.take_counts()
    assert keep_segments(count_gate_for(items), [head]) == [[True, True]]


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
    with pytest.raises(ConfigError, match="gate_min_shared"):
        EmbeddingIndex(gate_min_shared=0)
    with pytest.raises(ConfigError, match="gate_terms"):
        EmbeddingIndex(gate_terms=0)
    with pytest.raises(ConfigError, match="gate_dice"):
        EmbeddingIndex(gate_dice=0)
    with pytest.raises(ConfigError, match="gate_dice"):
        LexicalGate(rule="dice", dice=1.5)
    with pytest.raises(ConfigError, match="gate_by must be one of unit, segment"):
        EmbeddingIndex(gate="lexical", gate_by="record")
    assert EmbeddingIndex(gate="lexical").config.gate_rule == "dice"
    on, off = EmbeddingIndex(gate="lexical"), EmbeddingIndex()
    assert off.config.gate == "none"  # off by default (docs/methods.md says why)
    assert on.params() != off.params() != EmbeddingIndex(gate="lexical", gate_terms=GATE_TERMS + 1).params()


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
                plain.config.max_words,
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
    assert plain.stats()["gate"] == {"mode": "none"}
    assert gated.stats()["encoding"]["encoded"] < plain.stats()["encoding"]["encoded"]


def test_by_segment_reads_less_and_keeps_every_right_finding(stb_case):
    """Through ``search``, on real paraphrases, negatives and unrelated questions, and paraphrases put
    as the last line under an unrelated passage: by segment the encoder reads fewer texts than by unit,
    every right finding of the ungated tier is kept, and the unit's lexical score is still its whole
    text's (the findings of units read whole are the unit gate's, score for score)."""
    items, train = stb_case
    passage = stopped_passage(gate_for(items))
    tail = [
        Record("tail", f"tail:{t.id}", "built", {"text": f"{passage}\n{t.view('text')}"}, ordinal=500 + n)
        for n, t in enumerate(t for t in train if t.id.startswith("paraphrase:"))
    ]
    batch = train + unrelated() + tail
    plain = EmbeddingIndex(cache_dir="none", gate="none").build(items)
    unit = EmbeddingIndex(cache_dir="none", gate="lexical").build(items)
    seg = EmbeddingIndex(cache_dir="none", gate="lexical", gate_by="segment").build(items)
    want, by_unit, by_seg = plain.search(batch), unit.search(batch), seg.search(batch)

    def right(fs):
        return {
            (f.train_id, f.eval_id)
            for f in fs
            if f.train_id in (f"paraphrase:{f.eval_id}", f"tail:paraphrase:{f.eval_id}")
        }

    assert len(right(want)) >= 40 and right(want) <= right(by_seg)
    read_whole = {t.id for t in train + unrelated()}  # one-segment units: read alike both ways
    assert keys([f for f in by_seg if f.train_id in read_whole]) == keys(
        [f for f in by_unit if f.train_id in read_whole]
    )
    assert seg.stats()["encoding"]["encoded"] < unit.stats()["encoding"]["encoded"]
    st = seg.stats()["gate"]
    assert st["by"] == "segment" and st["segments_passed"] < unit.stats()["gate"]["segments_passed"]


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

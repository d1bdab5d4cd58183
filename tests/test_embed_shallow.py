"""The shallow prefilter (``prefilter = "shallow"``): the bundled MiniLM cut to its first layer and
exported to int8 ONNX like the full encoder; it agrees with the torch model cut the same way, holds a
pair to its bar by kind (text, code, one side code), and with it on (alone or after the lexical gate)
real eval items and their held-out paraphrases give exactly the findings they give without it, while
unrelated real questions stop before MiniLM, counted in the check's stats.

The one-layer model is built once into the model cache (the method's ``model_cache``, default
``~/.cache/auditor/models``, as in a real run; ~20 s the first time).
"""

from __future__ import annotations

import copy
import json
import pickle

import numpy as np
import pytest

pytest.importorskip("sentence_transformers", reason="the 'embed' extra is not installed")
pytest.importorskip("onnxruntime", reason="the 'embed' extra (onnxruntime) is not installed")
pytest.importorskip("onnxscript", reason="the 'embed' extra (onnxscript) is not installed")

from helpers import mmlu_questions, shared_file, stb_heldout_case  # noqa: E402

from auditor.embed.model import bundled_model_path, load_encoder_model, load_model, source_id  # noqa: E402
from auditor.embed.onnx import build_onnx_encoder  # noqa: E402
from auditor.embed.prefilter import Prefilter  # noqa: E402
from auditor.embed.shallow import load_shallow_encoder  # noqa: E402
from auditor.errors import ConfigError  # noqa: E402
from auditor.methods.embedding import (  # noqa: E402
    SHALLOW_THRESHOLD,
    SHALLOW_THRESHOLD_CODE,
    SHALLOW_THRESHOLD_MIXED,
    EmbeddingIndex,
)
from auditor.records.record import Record  # noqa: E402


@pytest.fixture(scope="session")
def shallow():
    return load_shallow_encoder()


@pytest.fixture(scope="session")
def stb_case():
    return stb_heldout_case()


def keys(findings):
    return sorted(
        (f.eval_id, f.train_id, f.evidence["tier"], f.score, f.evidence["train_segment"], f.evidence["eval_segment"])
        for f in findings
    )


def humaneval(n: int = 20) -> list[Record]:
    """The first ``n`` HumanEval prompts (code: a signature and a docstring)."""
    path = shared_file("llm-decontaminator/data/test/HumanEval.jsonl")
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()[:n]]
    return [
        Record("he", str(i), f"HumanEval.jsonl:{i + 1}", {"query": r["text"]}, ordinal=i) for i, r in enumerate(rows)
    ]


def test_shallow_encoder_is_the_first_layer_of_the_model(shallow, stb_case):
    items, train = stb_case
    doc = shallow.model.doc
    assert shallow.kind == "shallow" and shallow.layers == 1 and doc["layers"] == 1 and doc["variant"] == "int8"
    assert shallow.model.folder.name.endswith("-onnx-int8-l1")
    full, full_id, _, _ = load_encoder_model("bundled", "onnx-int8", "cpu")
    assert shallow.model.identity not in full_id  # another model file, so never mixed in a cache
    # against the torch model cut by hand to its first layer, on real queries and paraphrases
    cut = copy.deepcopy(load_model())
    cut[0].auto_model.encoder.layer = cut[0].auto_model.encoder.layer[:1]
    texts = [r.view("query") for r in items[:30]] + [t.view("text") for t in train[:30]]
    want = cut.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    got = shallow.encode(texts)
    assert got.dtype == np.float32 and got.shape == (len(texts), 384)
    cos = (want * got).sum(axis=1)
    assert cos.min() >= 0.97, cos.min()
    # and it is not the full model
    six = full.encode(texts, normalize_embeddings=True)
    assert float((six * got).sum(axis=1).mean()) < 0.9
    # crossing a process boundary, it reopens from its folder
    clone = pickle.loads(pickle.dumps(shallow))
    assert np.array_equal(clone.encode(texts[:3]), got[:3])


def test_a_model_is_not_cut_past_its_layers(tmp_path):
    where = str(bundled_model_path())
    with pytest.raises(ConfigError, match="cannot keep its first 7 layers"):
        build_onnx_encoder(where, source_id(where), "int8", tmp_path, load_model, layers=7)
    with pytest.raises(ConfigError, match="layers must be 0"):
        build_onnx_encoder(where, source_id(where), "int8", tmp_path, load_model, layers=-1)
    assert list(tmp_path.iterdir()) == []  # nothing half-built is left


def test_prefilter_holds_each_kind_of_pair_to_its_bar(shallow, stb_case):
    items, train = stb_case
    code_items = humaneval()
    evals = [r.view("query") for r in items[:20]] + [r.view("query") for r in code_items]
    flags = [False] * 20 + [True] * len(code_items)
    units = [[t.view("text")] for t in train[:20]] + [[q.view("text")] for q in mmlu_questions(20)]
    units += [[r.view("query")] for r in humaneval(30)[20:]]  # code units (other HumanEval prompts)
    code = [False] * 40 + [True] * 10
    bar, bar_code, bar_mixed = 0.8, 0.9, 0.7
    pre = Prefilter(shallow, bar, threshold_code=bar_code, threshold_mixed=bar_mixed).fit(evals, flags)
    got = pre.keep(units, code=code)
    # the rule computed by hand from the vectors: text-text, code-code and mixed pairs apart
    ev = shallow.encode(evals)
    want = []
    for u, c in zip(units, code):
        sims = shallow.encode(u) @ ev.T
        to_text, to_code = float(sims[:, :20].max()), float(sims[:, 20:].max())
        want.append(to_code >= bar_code or to_text >= bar_mixed if c else to_text >= bar or to_code >= bar_mixed)
    assert got == want
    assert 0 < sum(got[:40]) < 40 and 0 < sum(got[40:]) < 10  # the bars decide something here
    # -1 lets every mixed pair through; without code flags every pair is held to one bar
    lax = Prefilter(shallow, bar, threshold_code=bar_code, threshold_mixed=-1.0).fit(evals, flags)
    assert all(lax.keep(units, code=code))  # every unit has an item of the other kind
    only_text = Prefilter(shallow, bar, threshold_code=bar_code, threshold_mixed=-1.0).fit(evals[:20], flags[:20])
    assert only_text.keep(units[40:], code=code[40:]) == [True] * 10  # a code unit, text items only: mixed
    assert only_text.keep(units[:40]) == [bool(s >= bar) for s in only_text.scores(units[:40]).tolist()]
    one = Prefilter(shallow, bar).fit(evals)
    assert one.threshold_code == one.threshold_mixed == bar
    assert one.keep(units) == [bool(s >= bar) for s in one.scores(units).tolist()]
    st = pre.describe()
    assert st["model"] == "shallow" and st["units"] == len(units) and st["passed"] == sum(got)
    assert (st["threshold"], st["threshold_code"], st["threshold_mixed"]) == (bar, bar_code, bar_mixed)
    assert "-onnx-int8-l1-" in st["model_id"]
    with pytest.raises(ValueError, match="code flags"):
        Prefilter(shallow, bar).fit(evals, flags[:3])


@pytest.mark.parametrize("gate", ["none", "lexical"])
def test_shallow_prefilter_keeps_exactly_todays_findings_on_real_paraphrases(stb_case, gate):
    items, train = stb_case
    batch = train + mmlu_questions()
    kw = {"cache_dir": "none", "gate": gate, "gate_by": "segment"}
    plain = EmbeddingIndex(**kw, prefilter="none").build(items)
    fast = EmbeddingIndex(**kw, prefilter="shallow").build(items)
    want, got = plain.search(batch), fast.search(batch)
    assert len([f for f in want if f.train_id.startswith("paraphrase:")]) >= 20
    assert keys(got) == keys(want)
    st = fast.stats()["prefilter"]
    bars = (st["threshold"], st["threshold_code"], st["threshold_mixed"])
    assert st["model"] == "shallow" and bars == (SHALLOW_THRESHOLD, SHALLOW_THRESHOLD_CODE, SHALLOW_THRESHOLD_MIXED)
    units = sum(len(fast.train_units(t)) for t in batch)
    if gate == "none":
        assert st["units"] == units
    else:  # it sees only what the gate passed
        assert st["units"] == fast.stats()["gate"]["units_passed"] < units
    assert st["passed"] + st["filtered"] == st["units"] and st["filtered"] >= 10, st
    assert fast.stats()["encoding"]["encoded"] < plain.stats()["encoding"]["encoded"]


def test_shallow_prefilter_counts_from_workers_are_added_once(stb_case):
    items, train = stb_case
    index = EmbeddingIndex(cache_dir="none", prefilter="shallow").build(items)
    worker = pickle.loads(pickle.dumps(index))  # what an engine worker receives
    worker.search(train[:10] + mmlu_questions(10))
    counts = worker.take_counts()
    assert counts["prefilter_units"] == 20 and counts["prefilter_passed"] >= 10
    index.add_counts(counts)
    assert index.stats()["prefilter"]["units"] == 20


def test_shallow_parameters_checked_without_loading_a_model():
    with pytest.raises(ConfigError, match="prefilter_layers"):
        EmbeddingIndex(prefilter="shallow", prefilter_layers=0)
    with pytest.raises(ConfigError, match="prefilter_shallow_code"):
        EmbeddingIndex(prefilter="shallow", prefilter_shallow_code=1.5)
    with pytest.raises(ConfigError, match="prefilter_shallow "):
        EmbeddingIndex(prefilter_shallow=-2)
    assert EmbeddingIndex(prefilter="shallow").prefilter is None  # built with the index


@pytest.mark.timeout(300)
def test_cli_flag_puts_the_shallow_prefilter_after_the_gate(tmp_path, stb_case):
    from click.testing import CliRunner

    from auditor.cli import main

    items, train = stb_case
    ev, tr = tmp_path / "eval.jsonl", tmp_path / "train.jsonl"
    ev.write_text("".join(json.dumps({"id": r.id, "text": r.view("query")}) + "\n" for r in items))
    rows = train + mmlu_questions()
    tr.write_text("".join(json.dumps({"id": f"t{i}", "text": r.view("text")}) + "\n" for i, r in enumerate(rows)))
    docs = {}
    for flag in ("shallow", "none"):
        out = tmp_path / f"report-{flag}"
        args = ["audit", "--train", str(tr), "--eval", str(ev), "--text-field", "text", "--id-field", "id"]
        args += ["--method", "embedding", "--embed-gate", "lexical", "--embed-prefilter", flag]
        args += ["--report-dir", str(out), "--index-dir", str(tmp_path / "ix")]
        res = CliRunner().invoke(main, args)
        assert res.exit_code in (0, 1), res.output
        docs[flag] = json.loads((out / "report.json").read_text())
    plain, fast = (docs[k]["checks"][0]["method_stats"][0] for k in ("none", "shallow"))
    assert "prefilter" not in plain and plain["params"]["prefilter"] == "none"
    st = fast["prefilter"]
    assert fast["params"]["prefilter"] == "shallow" and st["model"] == "shallow"
    assert st["units"] == fast["gate"]["units_passed"] and st["filtered"] >= 10, st
    assert [f["train_id"] for f in docs["shallow"]["findings"]] == [f["train_id"] for f in docs["none"]["findings"]]

"""The ``embedding`` method: offline model, planted paraphrase vs same-template query, the cache,
FAISS against brute force, segments, calibration, parameters and errors.

The model is loaded once per session (``load_model`` memoizes it); every test uses small real inputs.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sentence_transformers", reason="the 'embed' extra is not installed")
pytest.importorskip("faiss", reason="the 'embed' extra is not installed")

from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.errors import ConfigError, IndexFileError, ManifestError, MissingDependencyError  # noqa: E402
from auditor.methods.embedding import EmbeddingIndex  # noqa: E402
from auditor.methods.embedding.cache import EmbeddingCache  # noqa: E402
from auditor.methods.embedding.config import GateConfig  # noqa: E402
from auditor.methods.embedding.model import Encoder, bundled_model_path, embedding_dim, load_model  # noqa: E402
from auditor.methods.embedding.segment import segments  # noqa: E402
from auditor.methods.embedding.vsearch import VectorIndex, brute_force  # noqa: E402
from auditor.records.record import Record

PLANTED = (
    "For our family holiday in Italy, could you list the FlixBus stops and look up trips from "
    "Rome to Venice on 2022-04-30 for six travellers?"
)
SAME_TEMPLATE = (
    "I'm planning a family vacation in Spain. Please give me a list of Renfe stations and search "
    "for available trains from Madrid to Seville on 2023-06-12 for 3 people."
)


class CountingModel:
    """The real model, with its ``encode`` calls and texts counted."""

    def __init__(self, model):
        self.model, self.calls, self.texts = model, 0, 0

    def encode(self, texts, **kw):
        self.calls += 1
        self.texts += len(texts)
        return self.model.encode(texts, **kw)

    def __getattr__(self, name):
        return getattr(self.model, name)


@pytest.fixture(scope="session")
def model():
    return load_model()


@pytest.fixture(scope="session")
def stb_records():
    ds = Dataset(DatasetSpec("stb", ["stabletoolbench:G1_instruction"], role="eval"))
    return list(ds.records())[:40]


def test_bundled_model_loads_offline_and_embeds(model, monkeypatch):
    import os

    assert (bundled_model_path() / "model.safetensors").exists()
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    enc = Encoder(model)
    v = enc.encode(
        [
            "Book a flight from Paris to Rome",
            "Reserve a plane ticket from Paris to Rome",
            "What is the boiling point of water?",
        ]
    )
    assert v.shape == (3, embedding_dim(model)) == (3, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.3


def test_planted_paraphrase_found_and_same_template_query_not(model, stb_records):
    target = next(r for r in stb_records if r.id == "3510")
    assert "Flixbus" in target.view("query")
    index = EmbeddingIndex(cache_dir="none").build(stb_records)
    train = [
        Record("train", "planted", "t.jsonl:1", {"text": PLANTED}, ordinal=0),
        Record("train", "template", "t.jsonl:2", {"text": SAME_TEMPLATE}, ordinal=1),
    ]
    findings = index.search(train)
    assert [(f.train_id, f.eval_id) for f in findings] == [("planted", "3510")]
    ev = findings[0].evidence
    assert {
        "cosine",
        "lexical",
        "margin",
        "mutual",
        "overlap",
        "entities",
        "conflict",
        "eval_segment",
        "train_segment",
    } <= set(ev)
    assert ev["margin"] > 0 and ev["eval_segment"] == "whole"
    assert ev["tier"] in ("conclusive", "suspected") and ev["align_f1"] > 0.7 and ev["values"] == 1.0
    # the same-template query is this item's nearest neighbour, but its entities conflict
    neg = index.search_scored(train[1:], decide=False)
    assert neg[0].eval_id == "3510" and neg[0].evidence["margin"] > 0
    assert neg[0].evidence["conflict"] == 1 and neg[0].evidence["entities"] == 0.0
    assert neg[0].evidence["tier"] is None and neg[0].score < findings[0].score


def test_cache_hits_avoid_reencoding(model, tmp_path):
    counting = CountingModel(model)
    enc = Encoder(counting, EmbeddingCache(embedding_dim(model), "m"))
    texts = ["Find hotels in Lisbon", "find hotels in LISBON!", "Weather in Oslo tomorrow"]
    first = enc.encode(texts)
    assert (counting.calls, counting.texts) == (1, 2)  # the two Lisbon texts normalize alike
    again = enc.encode(texts[::-1])
    assert (counting.calls, counting.texts) == (1, 2)
    assert np.array_equal(again, first[::-1])
    folder = enc.cache.save(tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == ["cache.json", "keys.npy", "vectors.npy"]
    fresh = CountingModel(model)
    enc2 = Encoder(fresh, EmbeddingCache.load(tmp_path, "m", embedding_dim(model)))
    assert np.array_equal(enc2.encode(texts), first) and fresh.calls == 0
    # a tampered cache is refused, not silently used
    (folder / "vectors.npy").write_bytes((folder / "vectors.npy").read_bytes()[:-8])
    with pytest.raises(IndexFileError, match="checksum"):
        EmbeddingCache.load(tmp_path, "m", embedding_dim(model))


def test_index_reuses_persisted_cache_between_runs(model, stb_records, tmp_path):
    records = stb_records[:10]
    first = EmbeddingIndex(cache_dir=str(tmp_path)).build(records)
    assert first.encoder.encoded > 0
    second = EmbeddingIndex(cache_dir=str(tmp_path))
    second.build(records)
    assert second.encoder.encoded == 0 and second.encoder.cache_hits >= len(records)
    assert second.stats()["encoding"]["model_calls"] == 0


def test_faiss_search_equals_brute_force(model, stb_records):
    vecs = Encoder(model).encode([r.view("query") for r in stb_records])
    queries = vecs[::3] * 0.9 + vecs[1::3][: len(vecs[::3])].mean(axis=0) * 0.1
    index = VectorIndex(vecs, approximate="exact")
    sims, ids = index.search(queries, 5)
    bsims, bids = brute_force(vecs, queries, 5)
    assert np.array_equal(ids, bids)
    assert np.allclose(sims, bsims, atol=1e-5)
    hnsw = VectorIndex(vecs, approximate="hnsw")
    assert hnsw.describe()["index"] == "hnsw" and 0.9 <= hnsw.describe()["recall_at_10"] <= 1.0


def test_segments_of_passage_items_and_code():
    item = (
        '"The far-reaching, the boundless future will be the era of American greatness." ' * 12
        + "\nJohn L. O'Sullivan, 1839\nBy what means did the United States take possession of the Oregon Territory?"
    )
    segs = segments(item, max_words=60)
    kinds = [s.kind for s in segs]
    assert kinds[:2] == ["whole", "last"] and "window" in kinds
    assert segs[1].text.startswith("By what means")
    c_code = (
        "#include <stdio.h>\n// Check whether two numbers are closer than a threshold\n"
        "int hasCloseElements(float* numbers, int n, float threshold) {\n  return 0;\n}\n"
    )
    doc = [s for s in segments(c_code) if s.kind == "doc"][0]
    assert doc.text.startswith("has Close Elements Check whether two numbers")


def test_long_item_matches_on_its_question_segment(model):
    passage = "The charter granted every inhabitant liberty of conscience and the free exercise of worship. " * 8
    ev = [
        Record("bench", str(i), f"b#{i}", {"query": passage + "\n" + q}, ordinal=i)
        for i, q in enumerate(
            [
                "Which colony became known for religious toleration as a result of this charter?",
                "Which economic consequence followed from the charter described above?",
            ]
        )
    ]
    tr = [
        Record(
            "train",
            "0",
            "t:1",
            {"text": "As a result of this charter, which colony became known for tolerating religions?"},
        )
    ]
    findings = EmbeddingIndex(cache_dir="none").build(ev).search(tr)
    assert [(f.eval_id, f.evidence["eval_segment"]) for f in findings] == [("0", "last@1")]


def test_parameters_checked_without_loading_the_model():
    with pytest.raises(ConfigError, match="top_k"):
        EmbeddingIndex(top_k=0)
    with pytest.raises(ConfigError, match="approximate"):
        EmbeddingIndex(approximate="annoy")
    with pytest.raises(ConfigError, match="parameters"):
        EmbeddingIndex(nonsense=1)
    with pytest.raises(ConfigError, match="suspected threshold"):
        EmbeddingIndex(conclusive=1.0, suspected=1.2)
    with pytest.raises(ConfigError, match="parameters"):
        EmbeddingIndex(self_calibrate=False)  # removed: the decision no longer depends on the eval set's siblings
    assert EmbeddingIndex(conclusive=1.9).encoder is None


def test_nested_config_takes_the_flat_names_and_nested_tables(tmp_path):
    """The config is nested (encoder, search, decision, gate); the flat names of manifests, ``--param``
    and Detector kwargs still set it, a ``[methods.embedding.gate]`` table too, and the report's params
    stay flat."""
    flat = EmbeddingIndex(gate="none", gate_dice=0.3, top_k=3, conclusive=1.9, max_words=100).config
    assert (flat.gate.rule, flat.gate.dice, flat.search.top_k, flat.decision.conclusive) == ("none", 0.3, 3, 1.9)
    assert flat.encoder.max_words == flat.max_words == 100  # a flat name reads through
    params = EmbeddingIndex(gate="none", gate_dice=0.3).params()
    assert params["gate"] == "none" and params["gate_dice"] == 0.3 and "encoder" not in params
    assert EmbeddingIndex(**params).config == EmbeddingIndex(gate="none", gate_dice=0.3).config
    manifest = tmp_path / "split.toml"
    manifest.write_text(
        '[datasets.e]\npath = "webshop:0:10"\nrole = "eval"\n[datasets.t]\npath = "webshop:10:20"\nrole = "train"\n'
        '[[checks]]\nname = "c"\ntrain = ["t"]\neval = ["e"]\nmethods = ["embedding"]\n'
        "[methods.embedding]\ntop_k = 3\n[methods.embedding.gate]\ndice = 0.25\nshort = 0\n",
        encoding="utf-8",
    )
    from auditor.audit.manifest import load_manifest
    from auditor.cli._common import _embedding_param

    config = load_manifest(manifest)
    nested = EmbeddingIndex(**config.method_params["embedding"]).config
    assert (nested.search.top_k, nested.gate.dice, nested.gate.short, nested.gate.rule) == (3, 0.25, 0, "lexical")
    _embedding_param(config, "embed_gate", "gate", "none")  # --embed-gate none over the table
    assert EmbeddingIndex(**config.method_params["embedding"]).config.gate == GateConfig("none", 0.25, short=0)
    manifest.write_text(manifest.read_text(encoding="utf-8").replace("short = 0", "shrot = 0"), encoding="utf-8")
    with pytest.raises(ManifestError, match="unexpected keyword argument 'gate.shrot'") as e:
        load_manifest(manifest)
    assert "\n" not in str(e.value)


def test_missing_extra_names_it():
    class NeedsAbsent(EmbeddingIndex):
        name = ""
        requires = {"auditor_absent_module_xyz": "embed"}

    with pytest.raises(MissingDependencyError, match=r"auditor\[embed\]"):
        NeedsAbsent()


def test_model_path_that_cannot_load_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot be loaded offline"):
        load_model(str(tmp_path))


def test_calibrate_auto_and_labelled_pairs(model, stb_records, tmp_path):
    from auditor.audit.calibrate import calibrate

    result = calibrate(stb_records[:20], thresholds=[1.0, 2.0])
    assert result.positives == 10 and result.negatives == 10
    low, high = result.rows
    assert low.recall >= high.recall and high.precision >= low.precision
    assert low.tp > 0
    pairs = tmp_path / "pairs.jsonl"
    q = next(r for r in stb_records if r.id == "3510").view("query")
    pairs.write_text(
        "\n".join(
            json.dumps(x)
            for x in [{"eval": q, "train": PLANTED, "label": 1}, {"eval": q, "train": SAME_TEMPLATE, "label": 0}]
        )
        + "\n"
    )
    rows = calibrate([], pairs_file=str(pairs), thresholds=[1.6]).rows
    assert (rows[0].tp, rows[0].fp, rows[0].fn) == (1, 0, 0)
    pairs.write_text('{"eval": "x", "label": 1}\n')
    from auditor.errors import InputError

    with pytest.raises(InputError, match="line 1"):
        calibrate([], pairs_file=str(pairs))


def test_audit_with_embedding_reports_evidence_and_throughput(model, tmp_path):
    from click.testing import CliRunner

    from auditor import methods
    from auditor.cli import main

    assert "embedding" in methods.available() and "embedding" not in methods.default_methods()
    ev = tmp_path / "eval.jsonl"
    tr = tmp_path / "train.jsonl"
    ev.write_text(
        "\n".join(
            json.dumps({"id": i, "question": q})
            for i, q in enumerate(
                [
                    "What is the capital city of Australia?",
                    "How many bones are in the adult human body?",
                    "Which planet in the solar system has the most moons?",
                ]
            )
        )
        + "\n"
    )
    tr.write_text(
        "\n".join(
            json.dumps({"text": t})
            for t in [
                "Name the city that serves as Australia's capital.",
                "Give me a recipe for banana bread with walnuts.",
            ]
        )
        + "\n"
    )
    out = tmp_path / "rep"
    res = CliRunner().invoke(
        main, ["audit", "--train", str(tr), "--eval", str(ev), "--method", "embedding", "--report-dir", str(out)]
    )
    # a free rewording of a 7-word question: below the conclusive bar, kept as a suspected finding
    assert res.exit_code == 0, res.output
    report = json.loads((out / "report.json").read_text())
    assert [(f["eval_id"], f["train_id"], f["method"]) for f in report["findings"]] == [("0", "0", "embedding")]
    assert report["findings"][0]["evidence"]["margin"] > 0 and report["findings"][0]["evidence"]["tier"] == "suspected"
    assert report["checks"][0]["suspected"] == 1
    enc = report["run"]["encoding"][0]
    assert enc["method"] == "embedding" and enc["encoded"] == 5 and enc["sentences_per_s"] > 0


@pytest.mark.slow
def test_calibrate_cli(model, tmp_path):
    from click.testing import CliRunner

    from auditor.cli import main

    res = CliRunner().invoke(main, ["calibrate", "--eval", "tau2-airline", "--param", "top_k=3", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output[res.output.index("{") :])
    assert doc["positives"] == 25 and len(doc["rows"]) == 31
    assert doc["decision"]["conclusive"] >= doc["decision"]["suspected"] and "align_f1" in doc["decision"]["rule"]
    assert doc["at_decision"]["tp"] + doc["at_decision"]["fn"] == 25
    bad = CliRunner().invoke(main, ["calibrate", "--eval", "tau2-airline", "--param", "nonsense"])
    assert bad.exit_code == 2 and "KEY=VALUE" in bad.output


WEBSHOP_FALSE_PAIRS = [  # (eval ordinal, train ordinal): other products of the same template, once reported
    (0, 825),  # "a long clip-in hair extension which is natural looking" / "a high quality hair extension"
]


def test_webshop_template_goals_decided_without_self_calibration(model, tmp_path):
    """WebShop goals are one template ("i need a … "): a bare cosine flags most of them. The decision
    (token alignment, margin, slot values; no per-eval-set calibration) keeps the conclusive findings
    to copies and rewordings: the exact/n-gram tiers' items, at most ``max_extra`` more, and known
    different-product pairs are never conclusive."""
    from auditor import methods

    max_extra = 5  # measured: rewordings of the same goal ("an ac adapter with output protection", "anti perspirant")
    ev = list(Dataset(DatasetSpec("ws-eval", ["webshop:0:200"], role="eval")).records())
    tr = list(Dataset(DatasetSpec("ws-train", ["webshop:500:1500"], role="train")).records())
    lexical = set()
    for name in ("exact", "ngram"):
        lexical |= {f.eval_ordinal for f in methods.create(name).build(ev).search(tr)}
    assert lexical, "the sample holds an exact duplicate (eval 74, the pink ottoman)"
    index = EmbeddingIndex(cache_dir=str(tmp_path)).build(ev)
    findings = index.search(tr)
    decision = index.stats()["decision"]
    assert "align_f1" in decision["rule"] and decision["conclusive"] > decision["suspected"]
    found = {f.eval_ordinal for f in findings if f.conclusive}
    assert lexical <= found
    assert len(found - lexical) <= max_extra, sorted(found - lexical)
    pairs = {(f.eval_ordinal, f.train_ordinal) for f in findings if f.conclusive}
    assert not pairs & set(WEBSHOP_FALSE_PAIRS)
    f = next(f for f in findings if f.eval_ordinal == 74)
    assert f.evidence["cosine"] >= 0.98 and f.evidence["tier"] == "conclusive"

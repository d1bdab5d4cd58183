"""The embedding tier's static prefilter (``prefilter = "static"``): a model2vec model distilled from
the bundled MiniLM, cached like the ONNX encoder and refused when damaged; with it on, real eval items
and their held-out paraphrases give exactly the findings they give without it, and unrelated real
texts are stopped before the MiniLM encoder, with the counts in the check's stats.

The static model is built once into the model cache (the method's ``model_cache``, default
``~/.cache/auditor/models``, as in a real run; ~1–1.5 min the first time); only the build test uses a
temporary cache (marked slow).
"""

from __future__ import annotations

import json
import pickle
import shutil

import numpy as np
import pytest

pytest.importorskip("sentence_transformers", reason="the 'embed' extra is not installed")
pytest.importorskip("model2vec", reason="the 'embed' extra (model2vec) is not installed")

from helpers import mmlu_questions, stb_heldout_case  # noqa: E402

from auditor.datasets.dataset import DatasetSpec  # noqa: E402
from auditor.embed.model import bundled_model_path, source_id  # noqa: E402
from auditor.embed.prefilter import (  # noqa: E402
    Prefilter,
    StaticEncoder,
    build_static_model,
    load_static_encoder,
    static_folder,
)
from auditor.errors import ConfigError, IndexFileError, MissingDependencyError  # noqa: E402
from auditor.methods.embedding import PREFILTER_THRESHOLD, EmbeddingIndex  # noqa: E402
from auditor.records.record import Record  # noqa: E402


@pytest.fixture(scope="session")
def static():
    return load_static_encoder()


@pytest.fixture(scope="session")
def stb_case():
    return stb_heldout_case()


def unrelated() -> list[Record]:
    return mmlu_questions()


def keys(findings):
    return sorted(
        (f.eval_id, f.train_id, f.evidence["tier"], f.score, f.evidence["train_segment"], f.evidence["eval_segment"])
        for f in findings
    )


def test_static_model_encodes_and_ranks_real_paraphrases(static, stb_case):
    items, train = stb_case
    assert static.dim == 256 and static.doc["params"]["pca_dims"] == 256
    pre = Prefilter(static, PREFILTER_THRESHOLD).fit([r.view("query") for r in items])
    paraphrases = [t for t in train if t.id.startswith("paraphrase:")]
    scores = pre.scores([[t.view("text")] for t in paraphrases])
    assert scores.min() >= PREFILTER_THRESHOLD, scores.min()
    vecs = static.encode([t.view("text") for t in paraphrases])
    assert vecs.dtype == np.float32 and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    # a paraphrase's static nearest item is mostly its own
    own = [next(i for i, r in enumerate(items) if r.id == t.id.split(":", 1)[1]) for t in paraphrases]
    ev = static.encode([r.view("query") for r in items])
    assert ((vecs @ ev.T).argmax(1) == np.array(own)).mean() >= 0.8
    # crossing a process boundary, it reopens from its folder
    clone = pickle.loads(pickle.dumps(static))
    assert np.array_equal(clone.encode(["a flight to Rome"]), static.encode(["a flight to Rome"]))


def test_prefilter_keeps_exactly_todays_findings_on_real_paraphrases(stb_case):
    items, train = stb_case
    batch = train + unrelated()
    plain = EmbeddingIndex(cache_dir="none", prefilter="none").build(items)
    fast = EmbeddingIndex(cache_dir="none", prefilter="static").build(items)
    want, got = plain.search(batch), fast.search(batch)
    assert len([f for f in want if f.train_id.startswith("paraphrase:")]) >= 20
    assert keys(got) == keys(want)
    assert "prefilter" not in plain.stats()
    st = fast.stats()["prefilter"]
    units = sum(len(fast.train_units(t)) for t in batch)
    assert st["model"] == "static" and st["threshold"] == PREFILTER_THRESHOLD
    assert st["units"] == units and st["passed"] + st["filtered"] == units
    # every paraphrase passes; most unrelated questions are stopped before the MiniLM encoder
    assert st["passed"] >= len([t for t in train if t.id.startswith("paraphrase:")])
    assert st["filtered"] >= 30, st
    assert fast.stats()["encoding"]["encoded"] < plain.stats()["encoding"]["encoded"]


def test_prefilter_counts_from_workers_are_added_once(stb_case):
    items, train = stb_case
    index = EmbeddingIndex(cache_dir="none", prefilter="static").build(items)
    worker = pickle.loads(pickle.dumps(index))  # what an engine worker receives
    worker.search(train[:10] + unrelated()[:10])
    counts = worker.take_counts()
    assert counts["prefilter_units"] == 20 and counts["prefilter_passed"] >= 10
    assert worker.take_counts()["prefilter_units"] == 0  # handed over and reset
    index.add_counts(counts)
    st = index.stats()["prefilter"]
    assert st["units"] == 20 and st["passed"] == counts["prefilter_passed"]


def test_prefilter_parameters_checked_without_loading_a_model():
    with pytest.raises(ConfigError, match="prefilter must be one of"):
        EmbeddingIndex(prefilter="bm25")
    with pytest.raises(ConfigError, match="prefilter_threshold"):
        EmbeddingIndex(prefilter_threshold=1.5)
    assert EmbeddingIndex().prefilter is None and EmbeddingIndex().config.prefilter == "none"  # off by default


def test_missing_prefilter_extra_is_named_when_the_method_is_configured(monkeypatch):
    import auditor.embed.prefilter as prefilter_mod

    monkeypatch.setattr(prefilter_mod, "RUNTIME", ("auditor_absent_module_xyz",))
    with pytest.raises(MissingDependencyError, match=r"auditor\[prefilter\]"):
        EmbeddingIndex(prefilter="static")
    EmbeddingIndex(prefilter="none")  # off: not needed


def test_damaged_static_model_is_refused_with_one_line(static, stb_case, tmp_path):
    folder = tmp_path / static.folder.name
    shutil.copytree(static.folder, folder)
    StaticEncoder(folder)  # an intact copy opens
    with open(folder / "model.safetensors", "r+b") as f:
        f.seek(4096)
        f.write(b"\x00" * 64)
    with pytest.raises(IndexFileError, match="model.safetensors: checksum mismatch") as e:
        StaticEncoder(folder)
    assert "\n" not in str(e.value)
    # through the method: the model cache holds the damaged folder (the ONNX encoder is cached too)
    cache = static.folder.parent
    for sibling in cache.iterdir():
        if sibling.name.endswith("-onnx-int8"):
            shutil.copytree(sibling, tmp_path / sibling.name)
    with pytest.raises(IndexFileError, match="checksum mismatch"):
        EmbeddingIndex(cache_dir="none", prefilter="static", model_cache=str(tmp_path)).build(stb_case[0][:3])
    (folder / "static.json").write_text("{")
    with pytest.raises(IndexFileError, match="unreadable"):
        StaticEncoder(folder)
    doc = json.loads((static.folder / "static.json").read_text())
    (folder / "static.json").write_text(json.dumps({**doc, "source": "another-model"}))
    with pytest.raises(IndexFileError, match="of source"):
        StaticEncoder(folder)


@pytest.mark.slow
def test_static_model_builds_in_an_empty_cache_and_reloads(tmp_path, static):
    where = str(bundled_model_path())
    folder = build_static_model(where, source_id(where), tmp_path)
    assert folder == static_folder(tmp_path, source_id(where)) and folder.name == static.folder.name
    doc = json.loads((folder / "static.json").read_text())
    assert doc["format"] == "auditor-static-encoder" and doc["model2vec"] and doc["distill_seconds"] > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [folder.name]  # no temporary folder left
    stamp = (folder / "static.json").stat().st_mtime_ns
    assert build_static_model(where, source_id(where), tmp_path) == folder  # reloaded, not rebuilt
    assert (folder / "static.json").stat().st_mtime_ns == stamp
    texts = ["book a flight to Paris", "What is the capital city of France?"]
    assert np.allclose(StaticEncoder(folder).encode(texts), static.encode(texts), atol=1e-5)


def _audit_config(tmp_path, stb_case, prefilter: str, **kw):
    from auditor.audit.config import AuditConfig, CheckSpec

    items, train = stb_case
    ev, tr = tmp_path / "eval.jsonl", tmp_path / "train.jsonl"
    if not tr.exists():
        with open(ev, "w") as f:
            for r in items:
                f.write(json.dumps({"id": r.id, "text": r.view("query")}) + "\n")
        with open(tr, "w") as f:  # paraphrases and negatives interleaved with unrelated questions
            for i, r in enumerate(train + unrelated()):
                f.write(json.dumps({"id": f"t{i}", "text": r.view("text")}) + "\n")
    params = {"cache_dir": "none", "backend": "onnx-int8", "device": "cpu", "prefilter": prefilter}
    return AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", [str(ev)], role="eval", text_field="text", id_field="id"),
            "tr": DatasetSpec("tr", [str(tr)], role="train", text_field="text", id_field="id"),
        },
        checks=[CheckSpec("para", train=["tr"], eval=["ev"], methods=["embedding"])],
        method_params={"embedding": params},
        **{"index_dir": None, "findings_store": "memory", "batch_size": 8, "split_bytes": 4_000, **kw},
    )


def _prefilter_run(report) -> tuple[list, dict]:
    doc = report.to_dict()
    stats = doc["checks"][0]["method_stats"][0]
    return doc["findings"], stats.get("prefilter", {})


@pytest.mark.timeout(300)
def test_prefilter_on_engine_workers_reports_the_same_findings_and_counts_once(tmp_path, stb_case):
    from auditor.audit.run import run_audit

    plain, none = _prefilter_run(run_audit(_audit_config(tmp_path, stb_case, "none", workers=1)))
    serial, one = _prefilter_run(run_audit(_audit_config(tmp_path, stb_case, "static", workers=1)))
    parallel, two = _prefilter_run(run_audit(_audit_config(tmp_path, stb_case, "static", workers=2)))
    assert none == {} and len(plain) >= 20
    assert serial == plain and parallel == plain
    assert one == {**two, "seconds": one["seconds"], "texts_per_s": one["texts_per_s"]}
    assert one["units"] == len(stb_case[1]) + 60 and one["filtered"] >= 30


@pytest.fixture
def local_ray():
    """A local Ray with 3 CPUs (as tests/test_ray_embed.py starts it), shut down after the test when
    this fixture started it."""
    ray = pytest.importorskip("ray", reason="the [ray] extra is not installed")
    if ray.is_initialized():
        yield ray
        return
    ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.timeout(300)
def test_prefilter_in_ray_tasks_sends_only_passed_units_to_the_actor_pool(tmp_path, stb_case, local_ray):
    from auditor.audit.run import run_audit

    before = run_audit(_audit_config(tmp_path, stb_case, "none", workers=1))
    ray_cfg = _audit_config(
        tmp_path, stb_case, "static", engine="ray", workers=2, engine_options={"ray": {"embed_actors": 1}}
    )
    after = run_audit(ray_cfg)
    (plain, _), (pooled, st) = _prefilter_run(before), _prefilter_run(after)
    assert pooled == plain
    assert st["units"] == len(stb_case[1]) + 60 and st["filtered"] >= 30
    # the stopped units never reached the actor: MiniLM encoded that many texts fewer
    assert before.run.encoding[0]["encoded"] - after.run.encoding[0]["encoded"] == st["filtered"]

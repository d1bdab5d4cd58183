"""The Ray engine's embedding actor pool (``embed_actors``): the encoder loaded once per actor, the
scan's tasks sending it their texts.

Real Ray (started locally here, 3 CPUs: one actor and two task slots), the real int8 encoder, the
frozen StableToolBench held-out paraphrases and negatives as training data (cut into several work
units) against their own eval items and others from StableToolBench. Whatever runs the encoder — the
tasks, a pool actor, the local engine — report.json is the same, and the actors are gone after the
scan. Which device an actor gets is decided from the cluster's real resources (no GPU here; the GPU
branch of the choice is checked on the resources dict a GPU node reports).
"""

from __future__ import annotations

import csv
import json
import os

import pytest

pytest.importorskip("sentence_transformers", reason="the 'embed' extra is not installed")
pytest.importorskip("onnxruntime", reason="the 'embed' extra (onnxruntime) is not installed")
ray = pytest.importorskip("ray", reason="the [ray] extra is not installed")

from auditor.audit.config import AuditConfig, CheckSpec  # noqa: E402
from auditor.audit.run import run_audit  # noqa: E402
from auditor.datasets.dataset import Dataset, DatasetSpec  # noqa: E402
from auditor.engines.base import ScanJob, ScanStats, get_engine  # noqa: E402
from auditor.engines.ray_embed import EmbedPool, place_actors  # noqa: E402
from auditor.errors import ConfigError, IndexFileError, ScanError  # noqa: E402
from auditor.methods.embedding import EmbeddingIndex  # noqa: E402

HELDOUT = "tests/data/heldout/stabletoolbench.tsv"
SPLIT = 2_000  # bytes per work unit: the 10 KB training file becomes 5 units


@pytest.fixture(scope="module")
def ray_pool_cluster():
    """A local Ray with 3 CPUs (shared with other test modules when one already runs)."""
    if ray.is_initialized():
        yield ray
        return
    ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """eval.jsonl: the held-out rows' own items and 40 other StableToolBench queries; train.jsonl: the
    first 30 paraphrases and 30 same-topic negatives, interleaved."""
    with open(HELDOUT, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    paraphrases = [r for r in rows if r["kind"] == "paraphrase"][:30]
    negatives = [r for r in rows if r["kind"] == "negative"][:30]
    ev = list(Dataset(DatasetSpec("stb", ["stabletoolbench:G1_instruction"], role="eval")).records())
    by_id = {r.id: r for r in ev}
    own = [by_id[r["item_id"]] for r in paraphrases]
    others = [r for r in ev if r.id not in {o.id for o in own}][:40]
    d = tmp_path_factory.mktemp("rayembed")
    with open(d / "eval.jsonl", "w") as f:
        for r in own + others:
            f.write(json.dumps({"id": r.id, "text": r.view("query")}) + "\n")
    with open(d / "train.jsonl", "w") as f:
        for i, (p, n) in enumerate(zip(paraphrases, negatives)):
            f.write(json.dumps({"id": f"p{i}", "text": p["text"]}) + "\n")
            f.write(json.dumps({"id": f"n{i}", "text": n["text"]}) + "\n")
    assert len(Dataset(DatasetSpec("tr", [str(d / "train.jsonl")])).plan(SPLIT)) >= 4
    return d


def _config(files, **kw) -> AuditConfig:
    return AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", [str(files / "eval.jsonl")], role="eval", text_field="text", id_field="id"),
            "tr": DatasetSpec("tr", [str(files / "train.jsonl")], role="train", text_field="text", id_field="id"),
        },
        checks=[CheckSpec("para", train=["tr"], eval=["ev"], methods=["embedding"])],
        method_params={"embedding": {"cache_dir": "none", "backend": "onnx-int8", "device": "cpu"}},
        **{"index_dir": None, "findings_store": "memory", "batch_size": 8, "split_bytes": SPLIT, **kw},
    )


def _comparable(report) -> str:
    doc = report.to_dict()
    run = doc.pop("run")
    assert run["scan"]["records"] == 60
    for check in doc["checks"]:  # the encoder's timings and throughput differ run to run
        for ms in check.get("method_stats", []):
            for key in ("encode_seconds", "sentences_per_s"):
                ms.get("encoding", {}).pop(key)
    return json.dumps(doc, sort_keys=True, indent=1)


def _pool_actors() -> list[str]:
    return [a["name"] for a in ray.util.list_named_actors(all_namespaces=True) if "auditor-embed" in a["name"]]


@pytest.mark.timeout(300)
def test_pooled_scan_reports_as_in_task_and_local_and_leaves_no_actor(files, ray_pool_cluster, monkeypatch):
    import auditor.audit.run as audit_mod

    engines = []
    real = audit_mod.get_engine

    def keep(name, **kw):
        engines.append(real(name, **kw))
        return engines[-1]

    monkeypatch.setattr(audit_mod, "get_engine", keep)
    local = run_audit(_config(files, workers=1))
    in_task = run_audit(_config(files, engine="ray", workers=2, engine_options={"ray": {"embed_actors": 0}}))
    pooled = run_audit(_config(files, engine="ray", workers=2, engine_options={"ray": {"embed_actors": 1}}))
    findings = local.to_dict()["findings"]
    assert len(findings) >= 20 and any(f["conclusive"] for f in findings)  # the paraphrases are found
    assert _comparable(pooled) == _comparable(in_task) == _comparable(local)
    assert [f["score"] for f in pooled.to_dict()["findings"]] == [f["score"] for f in findings]
    assert engines[1].embed_pool == {}  # embed_actors = 0: the tasks ran the encoder
    pool = engines[2].embed_pool
    assert pool["actors"] == pool["model_loads"] == 1
    gate = pooled.to_dict()["checks"][0]["method_stats"][0]["gate"]  # the default: the lexical gate
    assert gate["segments_stopped"] >= 1 and gate["segments_passed"] >= 50
    # every segment the gate passed went to the actor ...
    assert pool["texts"] == gate["segments_passed"] and pool["calls"] >= 5, (pool, gate)
    assert pool["token_texts"] >= 20  # ... and token alignment's second pass too
    assert pooled.run.encoding[0]["encoded"] > 60  # the eval side and the training texts, counted once
    assert _pool_actors() == []  # killed at the end of the scan


def _job(files) -> tuple[ScanJob, Dataset]:
    ev = list(Dataset(_config(files).datasets["ev"]).records())
    index = EmbeddingIndex(cache_dir="none", backend="onnx-int8", device="cpu").build(ev)
    return ScanJob.of([index], batch_size=8), Dataset(_config(files).datasets["tr"])


@pytest.mark.timeout(240)
def test_an_embedding_actor_that_dies_is_an_error_not_a_hang(files, ray_pool_cluster):
    job, train = _job(files)
    engine = get_engine("ray", workers=1, split_bytes=SPLIT, embed_actors=1, retries=0)
    scan = engine.scan(job, train, ScanStats())
    next(scan)  # the first unit's finding: the pool is up
    (name,) = _pool_actors()
    ray.kill(ray.get_actor(name, namespace=ray.get_runtime_context().namespace), no_restart=True)
    with pytest.raises(ScanError, match="embedding actor died"):
        list(scan)
    assert _pool_actors() == []


def test_cpu_actors_that_would_take_every_cpu_are_refused(files, ray_pool_cluster):
    job, _ = _job(files)
    cpus = int(ray.cluster_resources()["CPU"])
    with pytest.raises(ConfigError, match="would hold every CPU"):
        EmbedPool.start(job, cpus)
    assert _pool_actors() == []


def test_actor_placement_from_the_cluster_resources(ray_pool_cluster):
    here = ray.cluster_resources()
    assert "GPU" not in here  # this machine: the CPU branch
    assert place_actors(here, "torch", "auto", None).actors == 0  # auto without a GPU: in the tasks
    assert place_actors(here, "onnx-int8", "auto", 1) == place_actors(here, "torch", "auto", 1)
    cpu = place_actors(here, "onnx-int8", "auto", 1)
    assert (cpu.actors, cpu.device, cpu.num_gpus, cpu.num_cpus) == (1, "cpu", 0.0, 1.0)
    gpu_node = {**here, "GPU": 2.0, "accelerator_type:H100": 1.0}  # what a node with two GPUs adds
    auto = place_actors(gpu_node, "torch", "auto", None)
    assert (auto.actors, auto.device, auto.num_gpus, auto.num_cpus) == (2, "cuda", 1.0, 0.0)
    assert place_actors(gpu_node, "torch", "auto", 3).num_gpus == round(2 / 3, 4)  # shared GPUs
    assert place_actors(gpu_node, "torch", "cpu", None).actors == 0  # device = "cpu" is obeyed
    assert place_actors(gpu_node, "onnx-int8", "auto", None).actors == 0  # int8 runs on CPUs: no GPU actor
    assert place_actors(gpu_node, "torch", "auto", 0).actors == 0


def test_embed_actors_is_checked(ray_pool_cluster):
    for bad in (-1, True, "2"):
        with pytest.raises(ConfigError, match="embed_actors must be a non-negative integer"):
            get_engine("ray", workers=1, embed_actors=bad)
    assert os.environ.get("HF_HUB_OFFLINE", "1") == "1"


@pytest.mark.timeout(240)
def test_embed_actors_from_the_cli(files, ray_pool_cluster, tmp_path):
    from click.testing import CliRunner

    from auditor.cli import main

    def audit(*extra: str) -> dict:
        out = tmp_path / f"r{len(extra)}"
        args = ["audit", "--train", str(files / "train.jsonl"), "--eval", str(files / "eval.jsonl")]
        args += ["--text-field", "text", "--id-field", "id", "--method", "embedding", "--report-dir", str(out)]
        args += ["--embed-cache", "none", "--engine", "ray", "--workers", "1", *extra]
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 1, res.output  # the paraphrases leak: the check fails
        return json.loads((out / "report.json").read_text())

    pooled, in_task = audit("--embed-actors", "1"), audit()
    assert pooled["findings"] == in_task["findings"] and len(pooled["findings"]) >= 20
    assert _pool_actors() == []
    bad = CliRunner().invoke(main, ["audit", "--train", "x", "--eval", "y", "--embed-actors", "-1"])
    assert bad.exit_code == 2 and "--embed-actors" in bad.output


@pytest.mark.slow  # builds the fp32 export the first time (~30 s), then reads it from the model cache
def test_actors_that_load_another_encoder_than_the_index_are_refused(files, ray_pool_cluster):
    """The index was built on int8; actors told to load the fp32 export (another model id) refuse to
    serve it, and the pool is gone."""
    job, _ = _job(files)
    (index,) = job.searchers()
    index.backend = "onnx"
    with pytest.raises(ConfigError, match="an embedding actor loaded encoder .*-onnx-fp32-.*, not the index's"):
        EmbedPool.start(job, 1)
    assert _pool_actors() == []


def test_an_actor_whose_model_cannot_be_loaded_fails_the_start_with_its_error(files, ray_pool_cluster, tmp_path):
    """A node whose model cache holds a damaged copy of the encoder: the actor's load error, not a hang."""
    import shutil

    job, _ = _job(files)
    (index,) = job.searchers()
    folder = index.encoder.model.folder
    shutil.copytree(folder, tmp_path / folder.name)
    with open(tmp_path / folder.name / "model.onnx", "r+b") as f:
        f.seek(1000)
        f.write(b"\0" * 16)
    index.config.encoder.model_cache = str(tmp_path)
    with pytest.raises(IndexFileError, match="model.onnx: checksum mismatch"):
        EmbedPool.start(job, 1)
    assert _pool_actors() == []


@pytest.mark.slow  # the actor imports torch (~10 s)
@pytest.mark.timeout(300)
def test_a_torch_index_through_cpu_actors_finds_what_the_tasks_find(files, ray_pool_cluster):
    """The torch encoder (what GPU actors run, here on the CPU): token vectors come back from torch
    tensors; the same findings and scores as in the tasks."""
    ev = list(Dataset(_config(files).datasets["ev"]).records())
    # the gate off: every text reaches the actors (the gated pool is tested above)
    index = EmbeddingIndex(cache_dir="none", backend="torch", device="cpu", gate="none").build(ev)
    train = Dataset(_config(files).datasets["tr"])
    runs = []
    for actors in (0, 1):
        engine = get_engine("ray", workers=1, split_bytes=SPLIT, embed_actors=actors)
        found = list(engine.scan(ScanJob.of([index], batch_size=8), train, ScanStats()))
        runs.append(sorted((f.train_id, f.eval_id, f.score, f.conclusive) for f in found))
        if actors:
            assert engine.embed_pool["texts"] >= 60 and engine.embed_pool["token_texts"] >= 20
    assert runs[0] == runs[1] and len(runs[0]) >= 20
    assert _pool_actors() == []


def test_embed_actors_in_a_manifest(tmp_path):
    from auditor.audit.manifest import load_manifest
    from auditor.errors import ManifestError

    split = open("examples/split.toml", encoding="utf-8").read()
    for value, want in (("2", 2), ("0", 0), ("-1", None)):
        path = tmp_path / f"m{value}.toml"
        path.write_text(f"engine = 'ray'\nembed_actors = {value}\n{split}")
        if want is None:
            with pytest.raises(ManifestError, match="embed_actors must be an integer from 0"):
                load_manifest(str(path))
        else:
            assert load_manifest(str(path)).engine_options == {"ray": {"embed_actors": want}}

"""The ONNX encoders (``backend = "onnx-int8"`` / ``"onnx"``): built locally from the bundled MiniLM,
agreeing with today's torch encoder on real text, standing in for it in token alignment, keyed apart
in the embedding cache, refused when damaged; device and backend selection.

The int8 model is built once into the model cache (the method's ``model_cache``, default
``~/.cache/auditor/models``, as in a real run) and reused by later sessions.
"""

from __future__ import annotations

import json
import pickle
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("sentence_transformers", reason="the 'embed' extra is not installed")
pytest.importorskip("onnxruntime", reason="the 'embed' extra (onnxruntime) is not installed")
pytest.importorskip("onnxscript", reason="the 'embed' extra (onnxscript) is not installed")

from auditor.cli import main  # noqa: E402
from auditor.datasets.dataset import Dataset, DatasetSpec  # noqa: E402
from auditor.errors import ConfigError, IndexFileError  # noqa: E402
from auditor.methods.embedding import EmbeddingIndex  # noqa: E402
from auditor.methods.embedding.align import TokenAligner  # noqa: E402
from auditor.methods.embedding.cache import EmbeddingCache  # noqa: E402
from auditor.methods.embedding.model import load_encoder_model, load_model, select_backend, select_device  # noqa: E402
from auditor.methods.embedding.onnx import OnnxSentenceModel, default_model_cache  # noqa: E402
from auditor.records.record import Record  # noqa: E402

HELDOUT = "tests/data/heldout/stabletoolbench.tsv"


@pytest.fixture(scope="session")
def int8():
    model, mid, backend, device = load_encoder_model("bundled", "onnx-int8", "cpu")
    assert (backend, device) == ("onnx-int8", "cpu")
    return model, mid


@pytest.fixture(scope="session")
def torch_model():
    return load_model()


@pytest.fixture(scope="session")
def stb_case():
    """The first 20 frozen StableToolBench paraphrases, their own eval items and 100 other queries."""
    import csv

    ev = list(Dataset(DatasetSpec("stb", ["stabletoolbench:G1_instruction"], role="eval")).records())
    by_id = {r.id: r for r in ev}
    with open(HELDOUT, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t") if r["kind"] == "paraphrase"][:20]
    own = [by_id[r["item_id"]] for r in rows]
    others = [r for r in ev if r.id not in {o.id for o in own}][:100]
    return [r["text"] for r in rows], own + others


def test_int8_vectors_agree_with_torch_on_real_text(int8, torch_model, stb_case):
    model, _ = int8
    paraphrases, items = stb_case
    texts = paraphrases + [r.view("query") for r in items]
    ref = torch_model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    got = model.encode(texts, batch_size=64, normalize_embeddings=True)
    assert got.shape == ref.shape == (len(texts), 384) and got.dtype == np.float32
    cos = (got * ref).sum(axis=1)
    assert cos.min() >= 0.97 and cos.mean() >= 0.99, (cos.min(), cos.mean())
    # each paraphrase's nearest eval item: the same under both encoders (and its own item)
    p_ref, p_got = ref[: len(paraphrases)], got[: len(paraphrases)]
    e_ref, e_got = ref[len(paraphrases) :], got[len(paraphrases) :]
    top_ref, top_got = (p_ref @ e_ref.T).argmax(1), (p_got @ e_got.T).argmax(1)
    assert (top_ref == top_got).mean() >= 0.95
    assert (top_got == np.arange(len(paraphrases))).mean() >= 0.9
    # batching by length does not change a text's vector
    one = model.encode(texts[:5], batch_size=1, normalize_embeddings=True)
    assert np.allclose(one, got[:5], atol=1e-5)


def test_token_alignment_runs_on_the_onnx_model(int8, torch_model):
    model, _ = int8
    texts = ["What is the area of a circle with radius 10?", "Compute the circumference of a circle, radius 10."]
    hf = torch_model.tokenizer(texts, truncation=True, max_length=256)["input_ids"]
    assert model.max_seq_length == torch_model.max_seq_length == 256
    a_onnx, a_torch = TokenAligner(model), TokenAligner(torch_model)
    assert [e.ids for e in a_onnx.tok.encode_batch(texts)] == [e.ids for e in a_torch.tok.encode_batch(texts)] == hf
    assert a_onnx.skip == a_torch.skip >= set(torch_model.tokenizer.all_special_ids)
    a_onnx.fit_idf(texts)
    a_torch.fit_idf(texts)
    v_onnx, v_torch = a_onnx.vectors(texts), a_torch.vectors(texts)
    for x, y in zip(v_onnx, v_torch):
        assert x.ids.tolist() == y.ids.tolist()
        assert (x.vecs * y.vecs).sum(axis=1).min() >= 0.95
    f_onnx, f_torch = a_onnx.score(*v_onnx)[2], a_torch.score(*v_torch)[2]
    assert abs(f_onnx - f_torch) < 0.02


def test_embedding_index_on_onnx_finds_the_paraphrase_and_reports_its_encoder(stb_case):
    paraphrases, items = stb_case
    index = EmbeddingIndex(backend="onnx-int8", device="cpu", cache_dir="none").build(items[:40])
    tr = [Record("train", str(i), f"t:{i + 1}", {"text": t}, ordinal=i) for i, t in enumerate(paraphrases[:10])]
    found = {(f.train_ordinal, f.eval_id) for f in index.search(tr)}
    assert sum((i, items[i].id) in found for i in range(10)) >= 8
    enc = index.stats()["encoding"]
    assert enc["backend"] == "onnx-int8" and enc["device"] == "cpu" and "-onnx-int8-" in enc["model_id"]


def test_encoders_are_keyed_apart_and_a_cache_of_another_encoder_is_refused(int8, torch_model, tmp_path):
    from auditor.methods.embedding.model import model_id, resolve_model

    _, mid8 = int8
    mid_torch = model_id(torch_model, resolve_model("bundled"))
    assert mid8 != mid_torch and mid8.startswith(mid_torch.rsplit("-", 1)[0])
    cache = EmbeddingCache(384, mid_torch)
    cache.add(np.array([1], dtype=np.uint64), np.ones((1, 384), dtype=np.float32) / np.sqrt(384))
    folder = cache.save(tmp_path)
    assert len(EmbeddingCache.load(tmp_path, mid8, 384)) == 0  # another encoder: its own (empty) cache
    shutil.copytree(folder, EmbeddingCache.folder_for(tmp_path, mid8))  # torch vectors put where int8's go
    with pytest.raises(IndexFileError, match="expected"):
        EmbeddingCache.load(tmp_path, mid8, 384)
    # and the method's parameters (so a persisted index's key) name the backend
    assert EmbeddingIndex(backend="torch").params() != EmbeddingIndex(backend="onnx-int8").params()


def test_damaged_onnx_model_is_refused_and_copies_rebuild_in_a_worker(int8, tmp_path):
    model, _ = int8
    clone = pickle.loads(pickle.dumps(model))  # what a worker process receives
    assert np.allclose(clone.encode(["a flight to Rome"]), model.encode(["a flight to Rome"]))
    bad = tmp_path / model.folder.name
    shutil.copytree(model.folder, bad)
    with open(bad / "model.onnx", "r+b") as f:
        f.seek(4096)
        f.write(b"\x00" * 64)
    with pytest.raises(IndexFileError, match="checksum mismatch"):
        OnnxSentenceModel(bad)
    (bad / "encoder.json").write_text("{")
    with pytest.raises(IndexFileError, match="unreadable"):
        OnnxSentenceModel(bad)


def test_device_and_backend_selection():
    import torch

    assert select_device("cpu") == "cpu"
    assert select_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="sees no such device"):
            select_device("cuda:0")
    with pytest.raises(ConfigError, match="must be"):
        select_device("tpu")
    assert select_backend("auto", "cuda") == "torch"  # on a GPU, today's encoder
    assert select_backend("auto", "cpu") == "onnx-int8"  # (the exporter is installed: this module runs)
    assert select_backend("onnx", "cuda") == "onnx"
    with pytest.raises(ConfigError, match="backend must be"):
        EmbeddingIndex(backend="tensorrt")


def test_a_gpu_torch_index_reloads_its_model_on_the_workers_device(stb_case):
    """An index built with the torch model on a GPU is shipped without the model; the worker loads
    it on the device it sees (here the CPU) and answers as the original does."""
    paraphrases, items = stb_case
    index = EmbeddingIndex(backend="torch", device="cpu", cache_dir="none").build(items[:30])
    tr = [Record("train", str(i), f"t:{i + 1}", {"text": t}, ordinal=i) for i, t in enumerate(paraphrases[:5])]
    want = [(f.train_ordinal, f.eval_id, f.score) for f in index.search(tr)]
    index.device = "cuda"  # as built on a GPU: the model is not pickled, the worker reloads it
    blob = pickle.dumps(index)
    assert len(blob) < 20_000_000  # the 90 MB model did not travel
    worker = pickle.loads(blob)
    assert worker.device == select_device("auto") and worker.encoder.model is worker.aligner.model
    worker.aligner.memo.clear()
    worker.encoder.cache = EmbeddingCache(384, worker.encoder.cache.model)  # encode again, on the reloaded model
    got = [(f.train_ordinal, f.eval_id, f.score) for f in worker.search(tr)]
    assert [g[:2] for g in got] == [w[:2] for w in want]
    assert np.allclose([g[2] for g in got], [w[2] for w in want], atol=1e-4)


def test_workers_encoder_counts_reach_the_report_once(stb_case):
    paraphrases, items = stb_case
    index = EmbeddingIndex(backend="onnx-int8", device="cpu", cache_dir="none").build(items[:20])
    built = index.encoder.encoded
    assert built >= 20
    tr = [Record("train", str(i), f"t:{i + 1}", {"text": t}, ordinal=i) for i, t in enumerate(paraphrases[:6])]
    worker = pickle.loads(pickle.dumps(index))  # a worker's copy searches, hands its counters back
    worker.search(tr)
    index.add_counts(worker.take_counts())
    assert index.encoder.encoded == built + 6 and worker.encoder.encoded == built
    index.search(tr[:3])  # in the calling process (its cache lacks the worker's vectors): taken and added back once
    assert index.encoder.encoded == built + 9
    index.add_counts(index.take_counts())
    assert index.stats()["encoding"]["encoded"] == built + 9


def test_model_cache_from_the_cli(int8, tmp_path, monkeypatch):
    """``--model-cache`` / ``$AUDITOR_MODEL_CACHE`` decide where the built encoder is read from: a
    copy of the user's built int8 encoder in the given folder is the one the run loads (and reports)."""
    built = sorted(default_model_cache().glob("*-onnx-int8"))  # the int8 fixture built it there
    cache = tmp_path / "models"
    shutil.copytree(built[0], cache / built[0].name)
    ev, tr = tmp_path / "eval.jsonl", tmp_path / "train.jsonl"
    ev.write_text(json.dumps({"id": 0, "question": "What is the capital city of Australia?"}) + "\n")
    tr.write_text(json.dumps({"text": "Name the city that serves as Australia's capital."}) + "\n")
    monkeypatch.setenv("AUDITOR_MODEL_CACHE", str(cache))
    args = ["audit", "--train", str(tr), "--eval", str(ev), "--method", "embedding", "--index-dir", str(tmp_path / "i")]
    res = CliRunner().invoke(main, [*args, "--report-dir", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "r" / "report.json").read_text())
    assert str(cache) in json.dumps(doc["checks"][0])  # the method ran with the folder from the environment

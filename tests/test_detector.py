"""auditor.Detector: built once from eval sets, the same findings as ``auditor audit`` on the same data."""

from __future__ import annotations

import json
import pickle
import random
from concurrent.futures import ThreadPoolExecutor

import pytest

import auditor
from auditor import AuditConfig, CheckSpec, Dataset, DatasetSpec, Detector, run_audit
from auditor.audit.config import OutputOptions


def _key(f):
    d = f if isinstance(f, dict) else f.to_dict()
    return (d["eval_id"], d["train_id"], d["method"], d["conclusive"])


@pytest.fixture(scope="module")
def stb():
    return list(Dataset(DatasetSpec("stabletoolbench", ["stabletoolbench"], role="eval")).records())


@pytest.fixture(scope="module")
def detector():
    return Detector("stabletoolbench")


def planted_rows(stb, n=300, leaks=20, seed=0):
    """Alpaca-style training rows with some StableToolBench queries planted, whole or inside other text."""
    rng = random.Random(seed)
    rows = [
        {
            "id": f"t{i}",
            "instruction": f"Write a short poem about topic number {i} and the sea.",
            "output": "Waves " * (i % 7 + 3),
        }
        for i in range(n)
    ]
    for j, ev in enumerate(rng.sample(stb, leaks)):
        q = ev.view("query")
        row = {
            "id": f"leak{j}",
            "instruction": "Answer the user.",
            "input": q if j % 2 else f"Please help: {q} Thanks!",
            "output": "ok",
        }
        rows.insert(rng.randrange(len(rows)), row)
    return rows


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def audit_findings(train_path, methods):
    report = run_audit(
        AuditConfig(
            datasets={
                "stabletoolbench": DatasetSpec("stabletoolbench", ["stabletoolbench"], role="eval"),
                "train": DatasetSpec("train", [str(train_path)], role="train"),
            },
            checks=[CheckSpec("c", train=["train"], eval=["stabletoolbench"], methods=methods)],
            findings_store="memory",
            output=OutputOptions(keep_per_item=1000),
        )
    )
    return report.findings


def test_the_detector_finds_what_the_audit_finds_with_the_same_evidence(tmp_path, stb, detector):
    rows = planted_rows(stb)
    cli = audit_findings(write_jsonl(tmp_path / "train.jsonl", rows), detector.method_names)
    mine = detector.search(rows)
    assert {_key(f) for f in cli} == {_key(f) for f in mine}
    assert {f["eval_id"] for f in cli if f["conclusive"]} and all(f.train_id.startswith("leak") for f in mine)
    # the same evidence (field, span, score, hashes), not only the same pairs
    same = ("eval_id", "train_id", "method", "score", "conclusive", "evidence", "eval_hash", "train_hash")
    strip = lambda d: {k: d[k] for k in same}  # noqa: E731
    assert sorted(map(json.dumps, (strip(f) for f in cli))) == sorted(
        map(json.dumps, (strip(dict(f.to_dict())) for f in mine))
    )


def test_contains_filter_and_clean(stb, detector):
    rows = planted_rows(stb, n=50, leaks=6, seed=1)
    kept = list(detector.filter(rows, batch_size=7))
    assert [r["id"] for r in kept] == [r["id"] for r in rows if not r["id"].startswith("leak")]
    assert detector.clean(rows)[0] == kept
    assert detector.contains(stb[3].view("query")) and not detector.contains("nothing to see here")
    assert detector.contains(auditor.Record("mine", "x", "mine:1", {"query": stb[5].view("query")}))
    assert all(f.check == "detector" for f in detector.clean(rows)[1])


def test_eval_items_given_as_a_list_and_a_mapping():
    text = "Book a table for two at an Italian place tonight near the station"
    d = Detector({"mine": [{"id": "q1", "question": text}, "another question entirely, long enough to index"]})
    (f,) = [f for f in d.search([f"User: {text}."]) if f.conclusive][:1]
    assert (f.eval_dataset, f.eval_id, f.train_ordinal) == ("mine", "q1", 0)


def test_save_load_is_the_index_format_and_pickles_small(tmp_path, stb, detector):
    rows = planted_rows(stb, n=40, leaks=8, seed=2)
    want = {_key(f) for f in detector.search(rows)}
    folder = detector.save(tmp_path / "det")
    assert (folder / "detector.json").exists() and (folder / "eval.jsonl").exists()
    assert {p.name for p in (folder / "indexes").iterdir()} and all(
        (p / "index.json").exists() for p in (folder / "indexes").iterdir()
    )
    loaded = Detector.load(folder)
    assert {_key(f) for f in loaded.search(rows)} == want
    ngram = next(ix for ix in loaded.indexes if ix.name == "ngram")
    assert any(isinstance(a, __import__("numpy").memmap) for a in (ngram.totals, *ngram.tables[min(ngram.tables)]))
    shipped = pickle.dumps(loaded)
    assert len(shipped) <= 1_000_000
    assert {_key(f) for f in pickle.loads(shipped).search(rows)} == want
    assert {_key(f) for f in pickle.loads(pickle.dumps(detector)).search(rows)} == want


def test_a_modified_saved_detector_is_refused(tmp_path, detector):
    folder = detector.save(tmp_path / "det")
    data = (folder / "eval.jsonl").read_bytes()
    (folder / "eval.jsonl").write_bytes(data.replace(b"a", b"b", 1))
    with pytest.raises(auditor.IndexFileError):
        Detector.load(folder)


def test_reads_from_threads_give_the_same_findings(stb, detector):
    batches = [planted_rows(stb, n=30, leaks=4, seed=s) for s in range(6)]
    want = [{_key(f) for f in detector.search(b)} for b in batches]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda b: {_key(f) for f in detector.search(b)}, batches))
    assert got == want


def test_boilerplate_from_masks_as_the_audit_does(tmp_path, stb):
    """Masking matters to a tier that compares whole records with it on (minhash with
    ``mask_boilerplate = true``, embedding): a shared system prompt dilutes the similarity of a
    record holding an eval query. The audit masks it; so does a detector given the training data;
    one without it finds fewer. (Masking never hides eval text: exact and ngram find the same.)"""
    template = (
        "You are a careful assistant working for the travel desk of a large company. Always answer politely, "
        "cite the tool you used, never invent a price, and keep every answer under one hundred words unless asked."
    )
    rows = [
        {
            "id": f"t{i}",
            "instruction": template,
            "input": stb[i].view("query") if i < 10 else f"What is {i} plus {i * 3}?",
        }
        for i in range(200)
    ]
    path = write_jsonl(tmp_path / "train.jsonl", rows)
    params = {"minhash": {"mask_boilerplate": True}}
    report = run_audit(
        AuditConfig(
            datasets={
                "stabletoolbench": DatasetSpec("stabletoolbench", ["stabletoolbench"], role="eval"),
                "train": DatasetSpec("train", [str(path)], role="train"),
            },
            checks=[CheckSpec("c", train=["train"], eval=["stabletoolbench"], methods=["minhash"])],
            method_params=params,
            findings_store="memory",
            output=OutputOptions(keep_per_item=1000),
        )
    )
    cli = {_key(f) for f in report.findings}
    assert len(cli) == 10 and report.checks[0].boilerplate["lines"] == 1
    masked = Detector("stabletoolbench", ["minhash"], params, boilerplate_from=str(path))
    assert {_key(f) for f in masked.search(rows)} == cli
    assert len({_key(f) for f in Detector("stabletoolbench", ["minhash"], params).search(rows)}) < len(cli)


def test_a_batch_of_rows_numbered_by_the_pipeline_keeps_their_positions():
    """Rows without an id are named by their position in the whole dataset, as ``auditor audit``
    names the lines of a file, not by their place in the batch."""
    text = "Book a table for two at an Italian place tonight near the station"
    d = Detector([text], methods=["exact"])
    cells = d.findings_batch({"text": ["x", text]}, [500, 501])["auditor_findings"]
    assert json.loads(cells[0]) == [] and [(f["train_id"], f["train_ordinal"]) for f in json.loads(cells[1])] == [
        ("501", 501)
    ]
    assert [(f.train_id, f.train_ordinal) for f in d.search(["x", text], start=10)] == [("11", 11)]


def test_a_shipped_detector_refuses_a_folder_saved_over_since(tmp_path):
    first = Detector.load(
        Detector(["Book a table for two at an Italian place tonight"], methods=["exact"]).save(tmp_path / "d")
    )
    shipped = pickle.dumps(first)
    Detector(["Another eval item entirely, long enough to count"], methods=["exact"]).save(tmp_path / "d")
    assert pickle.dumps(Detector.load(tmp_path / "d")) != shipped  # a cache keyed on the pickle sees the change
    with pytest.raises(auditor.IndexFileError, match="changed"):
        pickle.loads(shipped)


def test_index_dir_reuses_the_indexes_auditor_audit_persisted(tmp_path, stb):
    rows = planted_rows(stb, n=30, leaks=5, seed=5)
    path = write_jsonl(tmp_path / "train.jsonl", rows)
    index_dir = tmp_path / "indexes"
    report = run_audit(
        AuditConfig(
            datasets={
                "stabletoolbench": DatasetSpec("stabletoolbench", ["stabletoolbench"], role="eval"),
                "train": DatasetSpec("train", [str(path)], role="train"),
            },
            checks=[CheckSpec("c", train=["train"], eval=["stabletoolbench"], methods=["ngram", "minhash"])],
            findings_store="memory",
            index_dir=str(index_dir),
        )
    )

    def persisted():
        return {
            p.name: (p / "index.json").stat().st_mtime_ns for p in index_dir.iterdir() if not p.name.startswith(".")
        }

    before = persisted()
    d = Detector("stabletoolbench", ["ngram", "minhash"], index_dir=str(index_dir))
    assert len(before) == 2 and persisted() == before  # reused, not rebuilt and written again
    assert {_key(f) for f in d.search(rows)} == {_key(f) for f in report.findings}


def test_save_replaces_a_detector_folder_whole_and_refuses_another_folder(tmp_path):
    d = Detector(["Book a table for two at an Italian place tonight"], methods=["exact", "ngram"])
    folder = d.save(tmp_path / "d")
    Detector(["Another eval item entirely, long enough to count"], methods=["ngram"]).save(folder)
    assert len(list((folder / "indexes").iterdir())) == 1  # no index of the old one left behind
    assert Detector.load(folder).method_names == ["ngram"]
    assert [p.name for p in tmp_path.iterdir()] == ["d"]  # no temporary folder left
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("not a detector")
    with pytest.raises(auditor.OutputError):
        d.save(other)
    assert (other / "notes.txt").exists()

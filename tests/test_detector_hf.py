"""Hugging Face ``datasets``: ``Dataset.filter`` / ``.map`` with a detector, ``num_proc=2``, give what
``auditor audit`` gives on the same file."""

from __future__ import annotations

import json

import pytest

from auditor import Dataset, DatasetSpec, Detector
from tests.test_detector import _key, audit_findings, planted_rows, write_jsonl

datasets = pytest.importorskip("datasets")


def test_dataset_filter_and_map_with_num_proc_2_match_the_audit(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    stb = list(Dataset(DatasetSpec("stabletoolbench", ["stabletoolbench"], role="eval")).records())
    rows = planted_rows(stb)
    path = write_jsonl(tmp_path / "train.jsonl", rows)
    cli = audit_findings(path, None)
    detector = Detector.load(Detector("stabletoolbench").save(tmp_path / "detector"))
    ds = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path / "hf"))

    kept = ds.filter(detector.keep_batch, batched=True, num_proc=2)
    removed = {f["train_id"] for f in cli if f["conclusive"]}
    assert removed and sorted(kept["id"]) == sorted(r["id"] for r in rows if r["id"] not in removed)

    found = ds.map(detector.findings_batch, batched=True, with_indices=True, num_proc=2)
    mine = [f for cell in found["auditor_findings"] for f in json.loads(cell)]
    assert {_key(f) for f in mine} == {_key(f) for f in cli}
    assert all(ds[f["train_ordinal"]]["id"] == f["train_id"] for f in mine)

    one_by_one = ds.filter(detector.keep)
    assert one_by_one["id"] == kept["id"]

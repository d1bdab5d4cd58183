"""Provenance entries scan their derived datasets on the engine: the entry is the same in-process, on
two local worker processes over byte ranges, and on Ray (real StepTool data against StableToolBench)."""

from __future__ import annotations

import json

import pytest
from helpers import shared_file

from auditor.audit.attribution import ProvenanceSpec, run_provenance
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.engines.base import ScanStats, get_engine

SPLIT = 20_000  # bytes per unit: the 214 KB StepTool file becomes ~11 byte ranges


@pytest.fixture(scope="module")
def derived(tmp_path_factory):
    """StepTool's RFT example flattened to ShareGPT JSON Lines (as tests/test_provenance.py does),
    once with its query ids and once without ids (positional ids, renumbered across byte ranges),
    with a bad line every 5 records in the second (on_error = "skip")."""
    doc = json.loads(shared_file("steptool/data_train/rft/rft_data_example.json").read_text(encoding="utf-8"))
    d = tmp_path_factory.mktemp("prov")
    with_ids, without = [], []
    for qid, entry in doc.items():
        for inst in entry["instances"]:
            with_ids.append(json.dumps({"id": qid, "conversations": inst["conversations"]}))
            without.append(json.dumps({"conversations": inst["conversations"]}))
            if len(with_ids) % 5 == 0:
                without.append('{"conversations": [')
    (d / "rft.jsonl").write_text("\n".join(with_ids) + "\n", encoding="utf-8")
    (d / "noid.jsonl").write_text("\n".join(without) + "\n", encoding="utf-8")
    return d


def _entry(derived, engine):
    specs = [
        DatasetSpec("stb", ["stabletoolbench"], role="eval", split_label="test"),
        DatasetSpec("rft", [str(derived / "rft.jsonl")]),
        DatasetSpec("noid", [str(derived / "noid.jsonl")], on_error="skip"),
    ]
    spec = ProvenanceSpec("steptool", derived=["rft", "noid"], sources=["stb"], methods=["exact", "ngram"])
    stats = ScanStats()
    out = run_provenance(spec, {s.name: Dataset(s) for s in specs}, engine=engine, index_dir=None, stats=stats)
    return out, stats


def test_provenance_entry_is_the_same_on_every_engine(derived):
    serial, serial_stats = _entry(derived, None)  # the local engine in this process, one unit per file
    assert serial_stats.units == 2 and serial_stats.records == 44
    assert serial["records_total"] == 44 and serial["skipped"] == 4 and serial["verdict"] == "fail"
    assert serial["by_how"] == {"both": 4, "content": 4, "unattributed": 36}
    noid = [r for r in serial["records"] if r["derived_dataset"] == "noid"]
    bad = {5, 11, 17, 23}  # positions of the bad lines: a positional id is the record's place in the file
    assert [r["derived_id"] for r in noid] == [str(i) for i in range(26) if i not in bad]
    hits = [r for r in noid if r["how"] == "content"]
    assert {r["source_id"] for r in hits} == {"12961"}
    assert [int(r["derived_source"].rsplit(":", 1)[1]) for r in noid][-1] == 26  # line in the file: 22 + 4 bad
    local = get_engine("local", workers=2, min_parallel_bytes=0, split_bytes=SPLIT)
    two, two_stats = _entry(derived, local)
    assert two_stats.units > 10 and local.workers_used == 2  # byte ranges, read by worker processes
    assert two == serial
    ray = pytest.importorskip("ray", reason="the [ray] extra is not installed")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        on_ray, ray_stats = _entry(derived, get_engine("ray", workers=2, split_bytes=SPLIT))
    finally:
        if started:
            ray.shutdown()
    assert ray_stats.units == two_stats.units
    assert on_ray == serial

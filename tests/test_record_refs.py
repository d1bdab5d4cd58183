"""Ids that identify: reports name a record by dataset, id and (for a dataset of several files) its
file; a selection's fingerprint is of the selected records, the file's is kept as ``files_sha256``."""

from __future__ import annotations

import json

from click.testing import CliRunner
from helpers import shared_file

from auditor.cli import main
from auditor.datasets.dataset import Dataset, DatasetSpec


def test_selection_fingerprints_are_of_the_selected_records():
    a = Dataset(DatasetSpec("a", ["webshop:0:500"], role="eval"))
    b = Dataset(DatasetSpec("b", ["webshop:500:"], role="eval"))
    assert a.records_sha256() is None  # nothing read yet: no fingerprint claimed
    for ds in (a, b):
        list(ds.records())
    da, db = a.describe(), b.describe()
    assert da["files_sha256"] == db["files_sha256"]  # one file
    assert da["sha256"] != db["sha256"]  # two selections
    again = Dataset(DatasetSpec("a2", ["webshop:0:500"], role="eval"))
    list(again.records())
    assert again.describe()["sha256"] == da["sha256"]  # stable


def test_refinetoolbench_ids_are_named_with_their_file(tmp_path):
    rtb = shared_file("tool-mvr/data/RefineToolBench/I1.json").parent
    ds = Dataset(DatasetSpec("rtb", [str(rtb / "I*.json")], role="eval"))
    records = list(ds.records())
    assert ds.stats.ids_in_several_files == 3  # I2 repeats I1's ids 0-2 (I3's carry a group)
    refs = {ds.ref(r.id, r.source) for r in records}
    assert len(refs) == len(records) and "rtb 0 (I3.json)" in refs
    manifest = tmp_path / "split.toml"
    manifest.write_text(
        f'[datasets.stb]\npath = "stabletoolbench"\nrole = "eval"\nsplit_label = "test"\n'
        f'[datasets.rtb]\npath = "{rtb}/I*.json"\nrole = "train"\n'
        '[[checks]]\nname = "c"\ntrain = ["rtb"]\neval = ["stb"]\nmethods = ["exact", "ngram"]\n'
        '[[provenance]]\nname = "p"\nderived = ["rtb"]\nsources = ["stb"]\nmethods = ["exact", "ngram"]\n'
    )
    res = CliRunner().invoke(main, ["verify", str(manifest), "--report-dir", str(tmp_path / "r")])
    assert res.exit_code == 1, res.output
    doc = json.loads((tmp_path / "r" / "report.json").read_text())
    assert {f["train_ref"] for f in doc["findings"]} >= {"rtb 0 (I3.json)", "rtb 1 (I3.json)", "rtb 2 (I3.json)"}
    rows = doc["provenance"][0]["records"]
    assert len({r["derived_ref"] for r in rows}) == len(rows)  # every derived record named apart
    md = (tmp_path / "r" / "report.md").read_text()
    assert "rtb 2 (I3.json)" in md
    assert doc["datasets"]["rtb"]["files_sha256"] != doc["datasets"]["rtb"]["sha256"]

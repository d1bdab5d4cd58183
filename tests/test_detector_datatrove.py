"""The datatrove filter step in datatrove's local executor, 2 tasks: the documents ``auditor audit``
keeps, the findings it reports."""

from __future__ import annotations

import gzip
import json

import pytest

from auditor import Dataset, DatasetSpec, Detector
from tests.test_detector import _key, audit_findings, planted_rows, write_jsonl

pytest.importorskip("datatrove")

from datatrove.executor import LocalPipelineExecutor  # noqa: E402
from datatrove.pipeline.readers import JsonlReader  # noqa: E402
from datatrove.pipeline.writers import JsonlWriter  # noqa: E402

from auditor.integrations.datatrove import DecontaminationFilter  # noqa: E402


def _written(folder):
    out = []
    for path in sorted(folder.glob("*.jsonl*")):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as f:
            out.extend(json.loads(line) for line in f)
    return out


@pytest.mark.parametrize("drop", [True, False])
def test_the_step_in_the_local_executor_with_2_tasks_matches_the_audit(tmp_path, drop):
    stb = list(Dataset(DatasetSpec("stabletoolbench", ["stabletoolbench"], role="eval")).records())
    rows = [{"text": r.pop("instruction"), **r} for r in planted_rows(stb, n=200, leaks=12, seed=4)]
    data = tmp_path / "data"
    data.mkdir()
    write_jsonl(data / "a.jsonl", rows[:100])
    write_jsonl(data / "b.jsonl", rows[100:])
    cli = audit_findings(data / "*.jsonl", None)
    detector = Detector.load(Detector("stabletoolbench").save(tmp_path / "detector"))
    LocalPipelineExecutor(
        pipeline=[
            JsonlReader(str(data)),
            DecontaminationFilter(detector, drop=drop, findings_folder=str(tmp_path / "findings")),
            JsonlWriter(str(tmp_path / "clean")),
        ],
        tasks=2,
        logging_dir=str(tmp_path / "logs"),
    ).run()
    found = _written(tmp_path / "findings")
    assert {_key(f) for f in found} == {_key(f) for f in cli}
    kept = _written(tmp_path / "clean")
    removed = {f["train_id"] for f in cli if f["conclusive"]}
    assert removed
    if drop:
        assert sorted(d["id"] for d in kept) == sorted(r["id"] for r in rows if r["id"] not in removed)
    else:
        assert len(kept) == len(rows)
        tagged = {d["id"] for d in kept if d["metadata"]["auditor_findings"]}
        assert tagged == {f["train_id"] for f in cli}

"""Cleaned output round-trips, per format: ``--write-clean`` writes each file back in its own format
under its own name, an emptied file reads as 0 records, and ``auditor verify DIR/split.toml`` (the
manifest it writes) passes.

Each case audits a real file (bundled, or a public release in ../shared/data) against an eval set
made of some of that file's own queries, so records are removed from every format.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from helpers import shared_file

from auditor.cli import main
from auditor.datasets.dataset import Dataset, DatasetSpec

CAFT = [
    {
        "task_id": f"webshop-{i}",
        "environment": "webshop",
        "turns": [
            {"role": "user", "content": text},
            {
                "role": "assistant",
                "content": "",
                "tool_call": {"name": "search", "arguments": {"q": text[:20]}},
                "annotation": {"label": "incorrect", "critique": "Too vague.", "corrected_action": "search[red mug]"},
            },
        ],
    }
    for i, text in enumerate(
        [
            "find a red ceramic coffee mug that holds at least twelve ounces and costs under ten dollars",
            "i need a pair of waterproof hiking boots in size ten with good ankle support for rough trails",
            "look for a stainless steel water bottle that keeps drinks cold for a full day of travelling",
        ]
    )
]

#: case → (training paths: bundled name or path under ../shared/data, format written, eval items taken)
CASES = {
    "webshop-goals": (["webshop:500:700"], "webshop-goals", 3),
    "tau2-tasks": (["tau2-retail:train"], "tau2-tasks", 2),
    "toolbench-queries": (["stabletoolbench:G1_tool"], "toolbench-queries", 3),
    "refinetoolbench": (
        ["tool-mvr/data/RefineToolBench/I1.json", "tool-mvr/data/RefineToolBench/I3.json"],
        "refinetoolbench",
        4,
    ),
    "chat-array": (["tool-mvr/data/training_data/selected_Toolbench_V.json"], "chat", 2),
    "chat-sharegpt": (["llama-factory/data/glaive_toolcall_en_demo.json"], "chat", 2),
    "chat-jsonl": (["toolbench_v.jsonl"], "chat", 2),
    "steptool-nested": (["steptool/data_train/rft/rft_data_example.json"], "chat", 2),
    "toolbench-answers-trees": (
        [
            "stabletoolbench/data_example/answer/virtual_chatgpt_dfs/G1_instruction/588_DFS_woFilter_w2.json",
            "stabletoolbench/data_example/answer/virtual_chatgpt_cot/G1_instruction/608_CoT@1.json",
        ],
        "toolbench-answers",
        1,
    ),
    "toolbench-answers-converted": (
        ["stabletoolbench/data_example/model_predictions_converted/virtual_chatgpt_cot/G1_instruction.json"],
        "toolbench-answers",
        1,
    ),
    "caft": (["caft.jsonl"], "caft", 1),
    "csv-tsv": (["steptool/data_train/toolllama/step_grained_for_ppo_example.csv"], "csv", 2),
    "json-array": (["generic.json"], "json", 2),
    "json-object": (["generic_object.json"], "json", 2),
    "jsonl-gz": (["generic.jsonl.gz"], "jsonl", 2),
    "parquet": (["generic.parquet"], "parquet", 2),
}


def _generic(tmp_path: Path, name: str) -> str:
    """Generic files made of WebShop goals (ids, text and another column), in each generic format."""
    goals = [r.view("query") for r in Dataset(DatasetSpec("g", ["webshop:3000:3010"])).records()]
    rows = [{"id": f"g{i}", "text": g, "n": i} for i, g in enumerate(goals)]
    p = tmp_path / "data" / name
    p.parent.mkdir()
    if name == "generic.json":
        p.write_text(json.dumps(rows))
    elif name == "generic_object.json":
        p.write_text(json.dumps({r["id"]: {"text": r["text"], "n": r["n"]} for r in rows}))
    elif name == "generic.jsonl.gz":
        with gzip.open(p, "wt") as f:
            f.write("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), p)
    return str(p)


def _train_paths(case: str, tmp_path: Path) -> list[str]:
    paths = CASES[case][0]
    if case == "caft":
        p = tmp_path / "data" / "caft.jsonl"
        p.parent.mkdir()
        p.write_text("".join(json.dumps(x) + "\n" for x in CAFT))
        return [str(p)]
    if paths[0].startswith("generic"):
        return [_generic(tmp_path, paths[0])]
    if case == "chat-jsonl":  # the ToolBench-V records as JSON Lines
        p = tmp_path / "data" / "toolbench_v.jsonl"
        p.parent.mkdir()
        rows = json.loads(shared_file("tool-mvr/data/training_data/selected_Toolbench_V.json").read_text())
        p.write_text("".join(json.dumps(x) + "\n" for x in rows))
        return [str(p)]
    if ":" in paths[0] or paths[0] in ("stabletoolbench",):
        return paths
    return [str(shared_file(p)) for p in paths]


@pytest.mark.parametrize("case", sorted(CASES))
def test_write_clean_round_trips_and_reverifies(case, tmp_path):
    paths, fmt, take = CASES[case]
    train_paths = _train_paths(case, tmp_path)
    original = Dataset(DatasetSpec("train", train_paths))
    records = list(original.records())
    # the eval set: the queries of the first record of each file (and a few more) → removed
    picked, seen_files = [], set()
    for r in records:
        f = r.source.rsplit("#", 1)[0].rsplit(":", 1)[0]
        if f not in seen_files or len(picked) < take:
            seen_files.add(f)
            picked.append(r)
    eval_file = tmp_path / "eval.jsonl"
    eval_file.write_text(
        "".join(json.dumps({"id": f"e{i}", "text": r.view("query")}) + "\n" for i, r in enumerate(picked))
    )
    manifest = tmp_path / "split.toml"
    train_toml = json.dumps(train_paths)
    manifest.write_text(
        f'write_clean = "clean"\n[datasets.ev]\npath = "{eval_file}"\nrole = "eval"\n'
        f'[datasets.train]\npath = {train_toml}\nrole = "train"\n'
        '[[checks]]\nname = "c"\ntrain = ["train"]\neval = ["ev"]\nmethods = ["exact", "ngram"]\n'
    )
    res = CliRunner().invoke(main, ["verify", str(manifest), "--report-dir", str(tmp_path / "r1")])
    assert res.exit_code == 1, res.output
    summary = json.loads((tmp_path / "r1" / "report.json").read_text())["clean"]
    cleaned = summary["datasets"]["train"]
    removed = {json.loads(x)["source"] for x in (tmp_path / "clean" / "removed.jsonl").read_text().splitlines()}
    assert cleaned["removed"] == len(removed) >= len(picked)
    assert cleaned["kept"] + cleaned["removed"] == len(records)
    sources = {f.name for f in original.files}
    for entry in cleaned["files"]:
        written = Path(entry["written"])
        assert entry["format"] == fmt and written.name in sources  # its own format and name
        assert written.parent.parent == tmp_path / "clean"
        again = list(Dataset(DatasetSpec("w", [str(written)], format=fmt)).records())
        assert len(again) == entry["records"]  # an emptied file reads as 0 records
    kept = sorted(r.view("text") for r in records if r.source not in removed)
    read_back = sorted(
        r.view("text") for e in cleaned["files"] for r in Dataset(DatasetSpec("w", [e["written"]])).records()
    )
    assert read_back == kept  # the same records, detected from content again
    assert (tmp_path / "clean" / "split.toml").exists() and summary["manifest"].endswith("split.toml")
    res = CliRunner().invoke(main, ["verify", summary["manifest"]])
    assert res.exit_code == 0, res.output
    again = json.loads((tmp_path / "clean" / "report" / "report.json").read_text())
    assert again["verdict"] == "pass" and again["datasets"]["train"]["records"] == cleaned["kept"]


def test_emptied_refinetoolbench_file_is_an_empty_dataset(tmp_path):
    """Issue 13: the emptied I3 came back as `I3.json.jsonl` and then 'no records in the file'."""
    i3 = shared_file("tool-mvr/data/RefineToolBench/I3.json")
    out = tmp_path / "clean"
    res = CliRunner().invoke(
        main,
        ["audit", "--eval", "stabletoolbench", "--train", str(i3), "--method", "exact", "--method", "ngram"]
        + ["--write-clean", str(out), "--report-dir", str(tmp_path / "r")],
    )
    assert res.exit_code == 1, res.output
    written = out / "I3" / "I3.json"
    assert json.loads(written.read_text()) == []
    res = CliRunner().invoke(
        main, ["audit", "--eval", "stabletoolbench", "--train", str(written), "--report-dir", str(tmp_path / "r2")]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "r2" / "report.json").read_text())
    assert doc["datasets"]["I3"]["records"] == 0 and doc["verdict"] == "pass"


def test_blank_files_stay_errors_unless_allowed(tmp_path):
    blank = tmp_path / "t.jsonl"
    blank.write_text("")
    with pytest.raises(Exception, match="no records in the file"):
        list(Dataset(DatasetSpec("t", [str(blank)])).records())
    assert list(Dataset(DatasetSpec("t", [str(blank)], allow_empty=True)).records()) == []

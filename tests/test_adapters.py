"""Every foundation adapter on its real file from ../shared/data, and format detection."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import shared_file

from auditor.adapters import detect
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.errors import ConfigError, InputError

STB = "stabletoolbench/solvable_queries/test_instruction"
STB_COUNTS = {
    "G1_instruction": 163,
    "G1_category": 153,
    "G1_tool": 158,
    "G2_instruction": 106,
    "G2_category": 124,
    "G3_instruction": 61,
}


def read(path, **kw):
    ds = Dataset(DatasetSpec(name="d", paths=[str(path)], **kw))
    return ds, list(ds.records())


@pytest.mark.parametrize("group,count", sorted(STB_COUNTS.items()))
def test_toolbench_queries_each_stabletoolbench_file(group, count):
    path = shared_file(f"{STB}/{group}.json")
    assert detect(path).name == "toolbench-queries"
    ds, recs = read(path)
    assert len(recs) == count
    ids = json.loads(shared_file(f"stabletoolbench/solvable_queries/test_query_ids/{group}.json").read_text())
    assert [r.id for r in recs] == list(ids)
    assert all(r.split == group and r.meta["group"] == group[:2] for r in recs)
    assert all(r.view("query") for r in recs)


def test_all_765_stabletoolbench_queries_via_glob():
    shared_file(f"{STB}/G1_instruction.json")
    from helpers import SHARED

    ds, recs = read(SHARED / STB / "*.json")
    assert len(recs) == 765 and ds.stats.read == 765
    first = next(r for r in recs if r.id == "588")
    assert first.view("query").startswith("I'm a football enthusiast")
    assert first.meta["relevant_apis"][0] == ["TheClique", "Transfermarkt search"]
    assert first.source.endswith("G1_instruction.json#0")


def test_chat_toolbench_v_extracts_task_between_task_and_begin():
    path = shared_file("tool-mvr/data/training_data/selected_Toolbench_V.json")
    assert detect(path).name == "chat"
    _, recs = read(path)
    assert [r.id for r in recs] == ["G1@33737", "G2@23833", "G1@2271"]
    q = recs[0].view("query")
    assert q.startswith("I am a Sunday School teacher") and "Begin!" not in q and "Task:" not in q
    assert recs[0].meta["group"] == "G1" and recs[0].meta["ref_ids"] == ["33737"]
    assert "You are an AutoGPT" in recs[0].view("system")
    assert len(recs[0].view("text")) > len(q) * 5


def test_chat_toolbench_r_reflection_ids():
    _, recs = read(shared_file("tool-mvr/data/training_data/selected_Toolbench_R.json"))
    assert [(r.meta["group"], r.meta["ref_ids"]) for r in recs] == [
        ("G1", ["46112"]),
        ("G2", ["42932"]),
        ("G3", ["2526"]),
    ]


@pytest.mark.parametrize("domain,train,test", [("airline", 30, 20), ("retail", 74, 40)])
def test_tau2_tasks_with_split(domain, train, test):
    path = shared_file(f"tau2-bench/data/tau2/domains/{domain}/tasks.json")
    assert detect(path).name == "tau2-tasks"
    _, recs = read(path)
    assert len(recs) == train + test
    assert sum(r.split == "train" for r in recs) == train
    assert sum(r.split == "test" for r in recs) == test
    _, test_recs = read(path, split="test")
    split_doc = json.loads(path.with_name("split_tasks.json").read_text())
    assert [r.id for r in test_recs] == [
        t for t in (r["id"] for r in json.loads(path.read_text())) if t in split_doc["test"]
    ]


def test_tau2_query_is_user_scenario():
    _, recs = read(shared_file("tau2-bench/data/tau2/domains/airline/tasks.json"))
    assert "You want to cancel reservation EHGLP3" in recs[0].view("query")
    assert "emma_kim_9957" in recs[0].view("query")


def test_tau2_release_without_split_file_has_no_split():
    _, recs = read(shared_file("tau2-bench/release_2025-06-10_37199f3/data/tau2/domains/airline/tasks.json"))
    assert len(recs) == 50 and all(r.split is None for r in recs)


def test_webshop_goals_and_range_split():
    path = shared_file("webshop/baseline_models/data/human_goals.json")
    assert detect(path).name == "webshop-goals"
    ds, recs = read(path, split="100:200")
    assert [r.id for r in recs] == [str(i) for i in range(100, 200)]
    assert ds.stats.read == 12087 and ds.stats.filtered == 12087 - 100


def test_generic_json_with_text_field():
    path = shared_file("tool-mvr/data/RefineToolBench/I1.json")
    _, recs = read(path, format="json", text_field="query")
    assert len(recs) == 3
    assert recs[0].view("query").startswith("Fetch 10 latest premium anime wallpapers")
    assert recs[0].meta.get("positional_id") is True and recs[0].id == "0"


def test_generic_dotted_paths_jsonl(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text("\n".join(json.dumps({"meta": {"uid": f"u{i}"}, "conv": {"prompt": f"text {i}"}}) for i in range(3)))
    _, recs = read(p, text_field="conv.prompt", id_field="meta.uid")
    assert [(r.id, r.view("query"), r.source) for r in recs][1] == ("u1", "text 1", f"{p}:2")


def test_csv_tsv_steptool_with_text_field():
    path = shared_file("steptool/data_train/eto/dpo_data_example.csv")
    assert detect(path).name == "trl"  # prompt / chosen / rejected: TRL preference data (tests/test_readers.py)
    _, recs = read(path, text_field="prompt")
    assert len(recs) == 20
    assert all(r.view("query") for r in recs)


def test_parquet_from_real_queries(tmp_path):
    src = json.loads(shared_file(f"{STB}/G3_instruction.json").read_text())
    table = pa.table({"qid": [str(r["query_id"]) for r in src], "q": [r["query"] for r in src]})
    p = tmp_path / "g3.parquet"
    pq.write_table(table, p)
    _, recs = read(p, text_field="q", id_field="qid")
    assert len(recs) == 61 and recs[0].id == str(src[0]["query_id"]) and recs[0].view("query") == src[0]["query"]


def test_gzip_jsonl_same_records(tmp_path):
    import gzip

    src = json.loads(shared_file(f"{STB}/G3_instruction.json").read_text())
    lines = "\n".join(json.dumps({"id": r["query_id"], "text": r["query"]}) for r in src)
    (tmp_path / "a.jsonl").write_text(lines)
    with gzip.open(tmp_path / "b.jsonl.gz", "wt") as f:
        f.write(lines)
    a = [(r.id, r.view("query")) for r in read(tmp_path / "a.jsonl")[1]]
    b = [(r.id, r.view("query")) for r in read(tmp_path / "b.jsonl.gz")[1]]
    assert a == b and len(a) == 61


def test_bad_jsonl_line_names_file_and_line(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"text": "ok fine"}\n{"text": broken\n')
    with pytest.raises(InputError) as e:
        read(p)
    assert str(e.value).startswith(f"{p}:line 2: invalid JSON")


def test_bad_jsonl_line_skipped_and_counted_for_train(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"text": "ok fine"}\n{"text": broken\n{"text": 3}\n')
    ds, recs = read(p, on_error="skip")
    assert len(recs) == 1
    assert ds.stats.read == 3 and ds.stats.skipped == 2
    assert sum(ds.stats.skip_reasons.values()) == 2


def test_skip_allowed_for_eval_and_bad_records_listed(tmp_path):
    p = tmp_path / "ev.jsonl"
    p.write_text('{"text": "ok fine"}\n{"text": broken\n{"text": 3}\n')
    ds = Dataset(DatasetSpec(name="e", paths=[str(p)], role="eval", on_error="skip"))
    assert [r.view("text") for r in ds.records()] == ["ok fine"]
    assert [s for s, _ in ds.stats.skipped_items] == [f"{p}:2", f"{p}:3"]
    with pytest.raises(ConfigError):
        DatasetSpec(name="e", paths=["x"], role="eval", on_error="ignore")


def test_unknown_split_label_is_an_error():
    path = shared_file("tau2-bench/data/tau2/domains/airline/tasks.json")
    with pytest.raises(ConfigError, match="matches no record"):
        read(path, split="dev")

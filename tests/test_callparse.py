"""Tool calls from anywhere: calls_field in generic formats, Python-style call strings (ast, never
evaluated), positional/keyword binding with a schema, BFCL ground truth, API-Bank requests."""

from __future__ import annotations

import json

from helpers import shared_file

from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.methods.calls import CallsIndex
from auditor.records.callparse import calls_from_value
from auditor.records.pycalls import Schemas, parse_call_string
from auditor.records.toolcalls import calls_view

DOCS = [{"name": "get_weather", "parameters": {"type": "dict", "properties": {"city": {}, "days": {}}}}]


def _records(tmp_path, name, rows, role, **kw):
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = Dataset(DatasetSpec(name=name.split(".")[0], paths=[str(p)], role=role, **kw))
    return list(ds.records())


def test_positional_call_string_matches_keyword_call_with_the_schema_at_hand(tmp_path):
    ev = _records(
        tmp_path,
        "eval.jsonl",
        [
            {
                "id": "e1",
                "question": "Weather in Paris for 3 days?",
                "call": {"name": "get_weather", "arguments": {"days": 3, "city": "Paris"}},
            }
        ],
        "eval",
        calls_field="call",
    )
    with_schema = _records(
        tmp_path,
        "train.jsonl",
        [{"question": "What's the forecast?", "function": DOCS, "answer": "get_weather('Paris', 3)"}],
        "train",
        calls_field="answer",
    )
    assert with_schema[0].view("calls") == ev[0].view("calls") == 'get_weather({"city":"Paris","days":3})'
    assert "calls_unbound" not in with_schema[0].meta
    found = CallsIndex().build(ev).search(with_schema)
    assert [f.evidence["kind"] for f in found] == ["sequence"]
    # without a schema the positional arguments stay unbound, are counted, and match nothing
    without = _records(
        tmp_path,
        "train2.jsonl",
        [{"question": "x", "answer": "get_weather('Paris', 3)"}],
        "train",
        calls_field="answer",
    )
    assert without[0].view("calls") == 'get_weather({"_0":"Paris","_1":3})'
    assert without[0].meta["calls_unbound"] == 1
    assert CallsIndex().build(ev).search(without) == []
    assert CallsIndex().build(without).stats()["eval_items_with_unbound_calls"] == 1


def test_apibench_positional_code_equals_keyword_api_call():
    """APIBench writes torch.hub.load positionally in `code` and with keywords in `api_call`; the
    documented torch.hub.load signature binds them to one canonical call."""
    path = shared_file("gorilla/data/apibench/torchhub_train.json")
    row = json.loads(path.open().readline())
    assert "load('intel-isl/MiDaS', 'DPT_Hybrid'" in row["code"]
    from_code = calls_view(calls_from_value(row["code"]))
    assert from_code.split("\n")[0] == calls_view(calls_from_value(row["api_call"]))


def test_bfcl_ground_truth_and_multi_turn_call_strings():
    simple = next(iter(Dataset(DatasetSpec(name="b", paths=["bfcl:simple_python"], role="eval")).records()))
    assert simple.view("calls") == 'calculate_triangle_area({"base":10,"height":5})'
    multi = next(iter(Dataset(DatasetSpec(name="b", paths=["bfcl:multi_turn_base"], role="eval")).records()))
    lines = multi.view("calls").split("\n")
    assert lines[0] == 'cd({"folder":"document"})'
    # "sort('final_report.pdf')" is positional: bound by the GorillaFileSystem docs
    assert any(line.startswith("sort(") and '"file_name":"final_report.pdf"' in line for line in lines)
    assert "calls_unbound" not in multi.meta


def test_api_bank_request_and_bracketed_lists():
    steps = calls_from_value("API-Request: [ToolSearcher(keywords='healthcare provider'), Other(a=1)]")
    assert [s["name"] for s in steps] == ["ToolSearcher", "Other"]
    assert calls_view(steps).split("\n")[0] == 'toolsearcher({"keywords":"healthcare provider"})'


def test_call_strings_are_parsed_never_evaluated(tmp_path):
    marker = tmp_path / "pwned"
    steps = parse_call_string(f"__import__('os').system('touch {marker}')")
    assert not marker.exists()
    # read as text: the inner call is a call named __import__; the outer callee is no plain name
    assert [s["name"] for s in steps] == ["__import__"]
    s = Schemas()
    s.add("f", ["a"])
    assert parse_call_string("f(open('/etc/passwd').read())", s)[0]["args"] == {"a": "open('/etc/passwd').read()"}

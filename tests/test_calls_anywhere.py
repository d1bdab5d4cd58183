"""Calls from anything that looks like a call (issue 22, item 5).

On real data: APIBench TorchHub (../shared/data/gorilla, Apache-2.0), whose 19 MEAL-V2 ``api_call``
strings are not valid Python (a positional argument after a keyword); Seal-Tools (bundled,
tests/data/foreign/seal-tools) with ``calling: [{api, parameters}]``; LLaMA-Factory's Glaive and
reasoning tool-use demos (../shared/data/llama-factory). The other common shapes — ``{name,
arguments}`` with arguments as JSON text, OpenAI ``tool_calls``, Anthropic ``tool_use`` blocks,
Hermes / Qwen ``<tool_call>`` tags — are Seal-Tools' own calls rewritten in each shape, which must give
the same canonical calls. A ``calls_field`` that gives no call in a whole dataset is an error.
"""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import REPO, shared_file

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.cli import main
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.errors import ConfigError
from auditor.records.callparse import calls_from_value
from auditor.records.pycalls import Schemas
from auditor.records.toolcalls import calls_in_text, calls_view

SEAL = REPO / "tests" / "data" / "foreign" / "seal-tools"


def _seal(name: str) -> list[dict]:
    with gzip.open(SEAL / name, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_torchhub_every_eval_call_gives_a_calls_view_and_is_found_in_training(tmp_path):
    ev = shared_file("gorilla/data/apibench/torchhub_eval.json")
    tr = shared_file("gorilla/data/apibench/torchhub_train.json")
    raw = [json.loads(line) for line in ev.read_text(encoding="utf-8").splitlines() if line.strip()]
    rejected = []
    for r in raw:
        try:
            ast.parse(r["api_call"])
        except SyntaxError:
            rejected.append(r["api_call"])
    assert len(raw) == 186 and len(rejected) == 19  # what Python's parser refuses
    records = list(Dataset(DatasetSpec("th", [str(ev)], role="eval")).records())
    assert all(r.view("calls") for r in records)
    meal = [r for r in records if "meal_v2" in r.view("calls")]
    # the stray positional stays unbound (counted), never dropped or bound over a keyword
    assert meal and all(r.meta.get("calls_unbound") == 1 and '"_0":"meal_v2"' in r.view("calls") for r in meal)
    config = AuditConfig(
        datasets={"ev": DatasetSpec("ev", [str(ev)], role="eval"), "tr": DatasetSpec("tr", [str(tr)], role="train")},
        checks=[CheckSpec("c", train=["tr"], eval=["ev"], methods=["calls"])],
        findings_store="memory",
        index_dir=str(tmp_path / "idx"),
    )
    report = run_audit(config).to_dict()
    assert report["checks"][0]["items_by_method"]["calls"] == 186


def test_seal_tools_calling_field_is_indexed(tmp_path):
    """``--calls-field calling``: all 1,354 test items carry calls (0 indexed before)."""
    config = AuditConfig(
        datasets={
            "ev": DatasetSpec(
                "ev",
                [str(SEAL / "test_in_domain.jsonl.gz"), str(SEAL / "test_out_domain.jsonl.gz")],
                role="eval",
                calls_field="calling",
            ),
            "tr": DatasetSpec("tr", [str(SEAL / "finetune_test_in_domain.json.gz")], role="train"),
        },
        checks=[CheckSpec("c", train=["tr"], eval=["ev"], methods=["calls"])],
        findings_store="memory",
        index_dir=str(tmp_path / "idx"),
    )
    calls = next(m for m in run_audit(config).to_dict()["checks"][0]["method_stats"] if m["method"] == "calls")
    assert calls["eval_items"] == 1354 and calls["eval_not_indexed"] == 0


def _shapes(call: dict) -> dict[str, object]:
    """One Seal-Tools call ``{api, parameters, responses}`` written in each common shape."""
    name, args = call["api"], call["parameters"]
    return {
        "name + JSON-text arguments": {"name": name, "arguments": json.dumps(args)},
        "OpenAI message tool_calls": {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}],
        },
        "Anthropic tool_use block": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "t1", "name": name, "input": args},
            ],
        },
        "Hermes / Qwen tag": f"<tool_call>\n{json.dumps({'name': name, 'arguments': args})}\n</tool_call>",
        "Python literal text": repr([call]),
    }


def test_every_common_shape_gives_the_same_canonical_calls():
    items = _seal("test_out_domain.jsonl.gz")
    checked = 0
    for item in items[:200]:
        for call in item["calling"]:
            want = calls_view(calls_from_value([call]))
            assert want.startswith(call["api"].lower() + "(")
            for shape, value in _shapes(call).items():
                assert calls_view(calls_from_value(value)) == want, shape
            checked += 1
    assert checked > 200


def test_tool_definitions_and_tool_results_are_not_calls():
    """A record's tool schemas, and a tool result holding objects with a ``name``, give no call."""
    glaive = json.loads(shared_file("llama-factory/data/glaive_toolcall_en_demo.json").read_text(encoding="utf-8"))
    tools = json.loads(glaive[0]["tools"])
    assert tools and all("parameters" in t for t in tools)
    assert calls_from_value(tools) == []  # {name, parameters: JSON schema}: a definition
    assert calls_from_value({"tools": tools, "messages": []}) == []
    result = {"role": "tool", "content": json.dumps({"results": [{"name": "Hotel Lutetia", "price": 410}]})}
    assert calls_from_value([result]) == []
    prose = {"role": "user", "content": "Can you call get_weather(city='Paris') for me?"}
    assert calls_from_value([prose]) == []  # a message's prose is not read for calls


def test_llama_factory_demos_with_the_messages_as_calls_field():
    """Glaive ``function_call`` turns (JSON text) and reasoning-demo ``tool_call`` content parts: every
    call is read, observations are not."""
    base = "llama-factory/data/"
    glaive = json.loads(shared_file(base + "glaive_toolcall_en_demo.json").read_text(encoding="utf-8"))
    turns = sum(1 for g in glaive for t in g["conversations"] if t["from"] == "function_call")
    found = sum(len(calls_view(calls_from_value(g["conversations"])).splitlines()) for g in glaive)
    assert turns == found == 211
    reason = shared_file(base + "reason_tool_use_demo_50.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in reason if line.strip()]
    parts = sum(1 for r in rows for m in r["messages"] for c in m["content"] if c["type"] == "tool_call")
    assert parts == sum(len(calls_view(calls_from_value(r["messages"])).splitlines()) for r in rows) == 68


def test_a_positional_taking_a_keyword_parameter_stays_unbound():
    s = Schemas({"f": ["a", "b"]})
    assert calls_view(calls_from_value("f(1, b=2)", s)) == 'f({"a":1,"b":2})'
    assert calls_view(calls_from_value("f(1, a=2)", s)) == 'f({"_0":1,"a":2})'  # Python would reject it


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_calls_field_with_no_call_in_the_whole_dataset_is_an_error(tmp_path):
    """Seal-Tools' ``query`` as the calls field: one line, exit 2, naming the field, the count, the
    first record and what it holds."""
    ev = _write_jsonl(tmp_path / "seal.jsonl", _seal("test_out_domain.jsonl.gz")[:50])
    with pytest.raises(ConfigError) as e:
        list(Dataset(DatasetSpec("seal", [str(ev)], role="eval", calls_field="query")).records())
    msg = str(e.value)
    assert "calls field 'query' gave no tool call in any of its 50 records" in msg
    assert f"{ev}:1 holds a string: " in msg
    res = CliRunner().invoke(
        main,
        [
            "audit",
            "--eval",
            str(ev),
            "--calls-field",
            "query",
            "--train",
            "webshop:0:5",
            "--report-dir",
            str(tmp_path / "r"),
        ],
    )
    assert res.exit_code == 2
    assert "calls field 'query' gave no tool call" in res.output and "Traceback" not in res.output
    assert len([line for line in res.output.splitlines() if line.strip()]) == 1
    # the same file with its real calls field reads
    assert all(
        r.view("calls") for r in Dataset(DatasetSpec("seal", [str(ev)], role="eval", calls_field="calling")).records()
    )


def test_a_dataset_where_only_some_records_hold_calls_is_not_an_error(tmp_path):
    rows = _seal("test_in_domain.jsonl.gz")[:20]
    for r in rows[1:]:
        r["calling"] = []
    ev = _write_jsonl(tmp_path / "some.jsonl", rows)
    records = list(Dataset(DatasetSpec("some", [str(ev)], role="eval", calls_field="calling")).records())
    assert [bool(r.view("calls")) for r in records].count(True) == 1


def test_hermes_tagged_calls_in_chat_training_records_are_found(tmp_path):
    """Seal-Tools' in-domain solutions written as a Hermes / Qwen chat (assistant turns of
    ``<tool_call>`` tags, a tool result after each): the ``calls`` tier finds every item, and the
    multi-call ones conclusively, against the eval side's ``calling`` field."""
    items = [r for r in _seal("test_in_domain.jsonl.gz") if len(r["calling"]) >= 2][:60]
    rows = []
    for r in items:
        messages = [{"role": "user", "content": "Please help."}]
        for c in r["calling"]:
            tag = json.dumps({"name": c["api"], "arguments": c["parameters"]})
            messages += [
                {"role": "assistant", "content": f"<tool_call>\n{tag}\n</tool_call>"},
                {"role": "tool", "content": json.dumps({"result": "ok"})},
            ]
        rows.append({"id": r["id"], "messages": [*messages, {"role": "assistant", "content": "Done."}]})
    train = _write_jsonl(tmp_path / "hermes.jsonl", rows)
    ev = _write_jsonl(tmp_path / "ev.jsonl", items)
    config = AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", [str(ev)], role="eval", calls_field="calling"),
            "tr": DatasetSpec("tr", [str(train)], role="train"),
        },
        checks=[CheckSpec("c", train=["tr"], eval=["ev"], methods=["calls"])],
        findings_store="memory",
        index_dir=str(tmp_path / "idx"),
    )
    report = run_audit(config).to_dict()
    found = {f["eval_id"] for f in report["findings"] if f["evidence"]["kind"] in ("sequence", "contained")}
    assert found == {r["id"] for r in items}
    conclusive = {f["eval_id"] for f in report["findings"] if f["conclusive"]}
    multi = {
        r["id"]
        for r in items
        if len({(c["api"], json.dumps(c["parameters"], sort_keys=True)) for c in r["calling"]}) >= 2
        and any(c["parameters"] for c in r["calling"])
    }
    assert multi and conclusive == multi


def test_seal_tools_finetune_answers_are_calls_and_match_the_test_calling(tmp_path):
    """The fine-tuning prompts' ``gpt`` turns are Python-literal call lists: every one gives a calls
    view, the ``calls`` tier finds all 700 in-domain items in them and no out-of-domain item."""
    prompts = SEAL / "finetune_test_in_domain.json.gz"
    records = list(Dataset(DatasetSpec("tr", [str(prompts)], role="train")).records())
    assert len(records) == 700 and all(r.view("calls") for r in records)
    config = AuditConfig(
        datasets={
            "ev": DatasetSpec(
                "ev",
                [str(SEAL / "test_in_domain.jsonl.gz"), str(SEAL / "test_out_domain.jsonl.gz")],
                role="eval",
                calls_field="calling",
            ),
            "tr": DatasetSpec("tr", [str(prompts)], role="train"),
        },
        checks=[CheckSpec("c", train=["tr"], eval=["ev"], methods=["calls"])],
        findings_store="memory",
        index_dir=str(tmp_path / "idx"),
    )
    findings = run_audit(config).to_dict()["findings"]
    assert {f["eval_id"] for f in findings} == {r["id"] for r in _seal("test_in_domain.jsonl.gz")}
    data_answer = '[{"name": "Alice", "age": 3}, {"name": "Bob", "age": 5}]'
    assert calls_in_text(data_answer) == []  # an answer listing objects with a name but no arguments
    named = [{"role": "assistant", "name": "helper", "content": "Sure, I can do that."}]
    assert calls_from_value(named) == []  # a message with a sender name is not a call

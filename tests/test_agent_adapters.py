"""Agent data adapters on the real public files in ../shared/data (plus a CAFT file written here)."""

from __future__ import annotations

import json

import pytest
from helpers import shared_file

from auditor.adapters import detect
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.errors import InputError
from auditor.records.toolcalls import canonical_call, split_calls


def _records(*paths, **kw):
    ds = Dataset(DatasetSpec("d", [str(p) for p in paths], **kw))
    return ds, list(ds.records())


def test_dfsdt_answer_tree_query_and_calls():
    path = shared_file("toolbench/data_example/answer/G1_answer/10_ChatGPT_DFS_woFilter_w2.json")
    assert detect(path).name == "toolbench-answers"
    _, recs = _records(path)
    assert len(recs) == 1
    r = recs[0]
    assert (r.id, r.meta["group"], r.split) == ("10", "G1", "G1_answer")
    assert r.view("query").startswith("Can you retrieve the contact details of the 'Gondrand' customs agency")
    assert split_calls(r.view("calls")) == [
        canonical_call("transitaires_for_transitaires", {}),
        canonical_call("transitaire_for_transitaires", '{\n  "is_id": "ACT_AGENCE_CALEDONIENNE_DE_TRANSIT"\n}'),
    ]
    assert "finish" not in r.view("calls")
    assert r.view("answer").startswith("The contact details of the 'Gondrand' customs agency")
    assert set(r.meta["tools"]) >= {"transitaire_for_transitaires", "transitaires_for_transitaires"}


def test_all_toolbench_answer_trees_and_stabletoolbench_examples():
    tb = shared_file("toolbench/data_example/answer")
    _, recs = _records(f"{tb}/G*_answer/*.json")
    assert len(recs) == 15
    assert sorted({r.meta["group"] for r in recs}) == ["G1", "G2", "G3"]
    assert all(r.view("calls") and r.view("query") for r in recs)
    stb = shared_file("stabletoolbench/data_example/answer")
    _, recs = _records(f"{stb}/*/G1_instruction/*.json")
    assert sorted(r.id for r in recs) == ["1073", "1073", "588", "588", "608", "608"]
    cot = [r for r in recs if r.source.split("#")[0].endswith("588_CoT@1.json")][0]
    # the CoT try: six calls, first one searches Messi
    assert split_calls(cot.view("calls"))[0] == canonical_call(
        "transfermarkt_search_for_theclique", {"name": "Lionel Messi"}
    )
    assert len(split_calls(cot.view("calls"))) == 6


def test_tooleval_converted_answers():
    path = shared_file(
        "stabletoolbench/toolbench/tooleval/results/default_evalset/gpt-3.5-turbo_CoT/G1_instruction.json"
    )
    assert detect(path).name == "toolbench-answers"
    _, recs = _records(path)
    assert len(recs) == 100 and len({r.id for r in recs}) == 100
    assert all(r.meta["group"] == "G1" and r.split == "G1_instruction" for r in recs)
    assert sum(bool(r.view("calls")) for r in recs) >= 95
    conv = shared_file(
        "stabletoolbench/data_example/model_predictions_converted/virtual_chatgpt_cot/G1_instruction.json"
    )
    _, recs = _records(conv)
    assert sorted(r.id for r in recs) == ["1073", "588", "608"]
    r = [r for r in recs if r.id == "1073"][0]
    assert split_calls(r.view("calls"))[0] == 'popularsitesforquery_for_keyword_analysis({"q":"birthday party ideas"})'


def test_refinetoolbench_cases():
    base = shared_file("tool-mvr/data/RefineToolBench")
    _, recs = _records(f"{base}/I*.json")
    assert [r.split for r in recs] == ["I1"] * 3 + ["I2"] * 3 + ["I3"] * 3
    assert recs[2].view("query") == "Convert a temperature of 100 degrees Kelvin to Fahrenheit."
    # erroneous call kept in the trace, corrected call in the calls/answer views; "100" and 100 agree
    assert (
        recs[2].view("answer")
        == 'temperature_from_to_number_for_unitconversion({"is_from":"kelvin","number":100,"to":"fahrenheit"})'
    )
    assert recs[2].meta["trace"][-1]["args"]["number"] == "100"
    i3 = recs[6]
    assert (i3.meta["group"], i3.meta["ref_ids"]) == ("G2", ["13487"])
    assert split_calls(i3.view("calls"))[-1].startswith("email_validation_for_disposable_email_checker(")
    assert i3.meta["trace"][-1]["name"] == "get_long_url_for_uptosite_link_shortener"
    assert "API selection error" in i3.view("critique")


def test_steptool_nested_sharegpt():
    path = shared_file("steptool/data_train/qwen2/gpt4_dfs_G123_for_sft_example.json")
    assert detect(path).name == "chat"
    _, recs = _records(path)
    doc = json.loads(path.read_text())
    assert len(recs) == sum(len(v["instances"]) for v in doc.values())
    assert sorted({r.id for r in recs}) == sorted(doc)
    r = recs[0]
    assert r.id == "10012" and r.meta["ref_ids"] == ["10012"]
    assert r.view("query").startswith("I'm looking for some great deals and discounts")
    assert split_calls(r.view("calls"))[0] == "getallcoupon_for_coupons({})"


def test_openai_tool_calling_transcripts():
    path = shared_file("tau-bench/historical_trajectories/gpt-4o-airline.json")
    _, recs = _records(path)
    assert len(recs) == 200
    r = recs[0]
    assert r.id == "0"
    calls = split_calls(r.view("calls"))
    assert calls[0] == 'get_user_details({"user_id":"mia_li_3668"})'
    assert any(c.startswith("book_reservation(") for c in calls)
    assert "Error: payment amount does not add up" in r.view("observations")
    assert r.meta["trace"][0]["observation"].startswith('{"name": {"first_name": "Mia"')
    assert r.view("system").startswith("# Airline Agent Policy")


def test_toolmvr_chat_python_calls():
    path = shared_file("tool-mvr/data/training_data/selected_Toolbench_R.json")
    _, recs = _records(path)
    r = recs[0]
    assert r.id == "G1@46112_reflection" and r.meta["mistake"] is True
    assert split_calls(r.view("calls"))[0] == 'industry_list_for_sitedomain({"alias":24680})'
    assert "wrong API was selected" in r.view("reflection")


CAFT_LINES = [
    {
        "task_id": "webshop-17",
        "environment": "webshop",
        "split": "train",
        "tools": [
            {
                "name": "search",
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
            },
            {
                "name": "click",
                "parameters": {"type": "object", "properties": {"asin": {"type": "string"}}, "required": ["asin"]},
            },
        ],
        "turns": [
            {"role": "user", "content": "Find a red ceramic mug under 10 dollars"},
            {
                "role": "assistant",
                "content": "I will search.",
                "tool_call": {"name": "search", "arguments": {"q": "red mug"}},
                "annotation": {"label": "correct"},
            },
            {"role": "tool", "content": "[B07XJ8C8F5] Red ceramic mug $8"},
            {
                "role": "assistant",
                "content": "",
                "tool_call": {"name": "click", "arguments": {"asin": "B000000000"}},
                "annotation": {
                    "label": "incorrect",
                    "critique": "The ASIN B000000000 was never shown.",
                    "corrected_action": {"name": "click", "arguments": {"asin": "B07XJ8C8F5"}},
                },
            },
        ],
    },
    {
        "task_id": "webshop-18",
        "environment": "webshop",
        "split": "test",
        "turns": [{"role": "user", "content": "Buy blue socks"}, {"role": "assistant", "content": "Done."}],
    },
]


def write_caft(tmp_path, lines=CAFT_LINES):
    path = tmp_path / "caft_example.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_caft_example_file(tmp_path):
    path = write_caft(tmp_path)
    assert detect(path).name == "caft"
    _, recs = _records(path)
    assert [r.id for r in recs] == ["webshop-17", "webshop-18"] and [r.split for r in recs] == ["train", "test"]
    r = recs[0]
    assert r.view("query") == "Find a red ceramic mug under 10 dollars"
    assert r.meta["incorrect_turns"] == [3] and r.meta["mistake"] is True
    assert r.view("critique") == "The ASIN B000000000 was never shown."
    assert r.meta["corrections"] == ['click({"asin":"B07XJ8C8F5"})']
    assert split_calls(r.view("calls")) == ['search({"q":"red mug"})', 'click({"asin":"B000000000"})']
    assert recs[1].meta["mistake"] is False


def test_caft_schema_errors_name_line(tmp_path):
    bad = [CAFT_LINES[0], {"task_id": "x", "turns": [{"role": "robot", "content": "hi"}]}]
    path = write_caft(tmp_path, bad)
    with pytest.raises(InputError, match=r"caft_example.jsonl:line 2: turn 0: 'role' must be one of"):
        _records(path)
    ds, recs = _records(path, on_error="skip")
    assert len(recs) == 1 and ds.stats.skipped == 1


def test_bad_agent_files_fail_with_file_and_problem(tmp_path):
    tree = tmp_path / "7_ChatGPT_DFS_woFilter_w2.json"
    tree.write_text(json.dumps({"win": True, "tree": {"size": 1, "tree": {"children": []}}, "forward_args": {}}))
    with pytest.raises(InputError, match=r"7_ChatGPT_DFS_woFilter_w2.json:item 0: answer file has no query"):
        _records(tree)
    refine = tmp_path / "I1.json"
    refine.write_text(
        json.dumps(
            [
                {
                    "query": "q",
                    "action": {"json_function_calling": {"api_name": "f", "parameters": {}}},
                    "answer": {"parameters": {}},
                }
            ]
        )
    )
    assert detect(refine).name == "refinetoolbench"
    with pytest.raises(
        InputError, match=r"I1.json:item 0: case lacks an erroneous 'action' or a corrected 'answer' call"
    ):
        _records(refine)

"""The named readers (issue 22 item 2): each chosen by sniffing, the right query per item on both sides
(the rule against an eval set of one text: tests/test_eval_sameness.py).

Real rows: tests/data/readers/ (LLaMA-Factory demo files, API-Bank, Glaive v2, ToolACE; Apache-2.0, each
folder with its NOTICE) and ../shared/data. Dolly (CC BY-SA 3.0), xLAM (CC BY 4.0) and LMSYS-Chat-1M (its
own licence, no redistribution) cannot be bundled here: their tests write records in the datasets'
published schema.
"""

from __future__ import annotations

import csv
import json
import re
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from helpers import REPO, shared_file

from auditor.adapters import detect, explain, registry
from auditor.cli import main
from auditor.datasets.dataset import Dataset
from auditor.datasets.sameness import require_distinct_items
from auditor.datasets.spec import DatasetSpec
from auditor.errors import InputError
from auditor.records.record import FIELDS, Record

DATA = REPO / "tests" / "data" / "readers"
LF = DATA / "llama-factory"
ICL = DATA / "api-bank" / "level-3-batch-inf-icl.json"
GLAIVE = DATA / "glaive" / "glaive_v2_rows.jsonl"
TOOLACE = DATA / "toolace" / "toolace_rows.json"
MT = DATA / "mt-bench"
NEW_READERS = ("alpaca", "dolly", "glaive", "llamafactory", "lmsys-chat", "mt-bench", "toolace", "trl", "xlam")


def read(path, role="eval", **kw) -> list[Record]:
    ds = Dataset(DatasetSpec(name="d", paths=[str(path)], role=role, **kw))
    return list(ds.records())


def both_sides(path, **kw) -> list[Record]:
    """The records of ``path`` as an eval set, after checking the training side reads the same views
    (besides its ``fields`` view: the strings no view holds, searched on the training side only)."""
    ev, tr = read(path, "eval", **kw), read(path, "train", **kw)
    assert [r.views for r in ev] == [{k: v for k, v in r.views.items() if k != FIELDS} for r in tr]
    return ev


def copy_alone(src, tmp_path):
    """``src`` in a folder without LLaMA-Factory's dataset_info.json (read by its own shape)."""
    dst = tmp_path / src.name
    shutil.copy(src, dst)
    return dst


def jsonl(tmp_path, name, rows):
    p = tmp_path / name
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return p


# -- detection -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path, name",
    [
        (LF / "alpaca_en_demo.json", "llamafactory"),  # dataset_info.json beside it names the file
        (LF / "dpo_en_demo.json", "llamafactory"),
        (LF / "glaive_toolcall_en_demo.json", "llamafactory"),
        (LF / "v1_sft_demo.jsonl", "chat"),  # no entry of dataset_info.json names it
        (ICL, "alpaca"),
        (GLAIVE, "glaive"),
        (TOOLACE, "toolace"),
        (MT / "mt_bench_question.jsonl", "mt-bench"),
        (MT / "arena_hard_question.jsonl", "mt-bench"),
    ],
)
def test_each_bundled_file_is_read_by_its_reader(path, name):
    adapter, why = explain(path)
    assert adapter.name == name, why
    assert name in why or name == "llamafactory"


@pytest.mark.parametrize(
    "name, reader",
    [("alpaca_en_demo.json", "alpaca"), ("dpo_en_demo.json", "trl"), ("glaive_toolcall_en_demo.json", "chat")],
)
def test_without_dataset_info_each_file_is_read_by_its_shape(tmp_path, name, reader):
    assert detect(copy_alone(LF / name, tmp_path)).name == reader


def test_tables_are_sniffed_by_their_first_row(tmp_path):
    items = json.loads(ICL.read_text())
    with open(tmp_path / "icl.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(items[0]))
        w.writeheader()
        w.writerows(items)
    pq.write_table(pa.Table.from_pylist(items), tmp_path / "icl.parquet")
    from_json = [r.views for r in read(ICL)]
    for name in ("icl.csv", "icl.parquet"):
        assert detect(tmp_path / name).name == "alpaca"
        assert [r.views for r in both_sides(tmp_path / name)] == from_json
    # the generic table readers still read a table no named reader knows
    assert detect(shared_file("steptool/data_train/toolllama/step_grained_for_ppo_example.csv")).name == "csv"


def test_steptool_preference_tsv_is_trl():
    path = shared_file("steptool/data_train/eto/dpo_data_example.csv")
    rows = list(csv.DictReader(open(path, newline=""), delimiter="\t"))
    recs = both_sides(path)
    assert detect(path).name == "trl" and len(recs) == len(rows) == 20
    assert [r.view("query") for r in recs] == [row["prompt"].strip() for row in rows]
    assert [r.view("answer") for r in recs] == [row["chosen"].strip() for row in rows]
    assert [r.view("rejected") for r in recs] == [row["rejected"].strip() for row in rows]


def test_text_field_still_names_the_item_on_a_named_reader():
    items = json.loads(ICL.read_text())
    assert [r.view("query") for r in read(ICL, text_field="output")] == [i["output"] for i in items]


# -- Alpaca -----------------------------------------------------------------------------------------------


def _alpaca_query(item):
    return "\n".join(p for p in (item["instruction"].strip(), item["input"].strip()) if p)


def test_alpaca_query_is_instruction_and_input(tmp_path):
    items = json.loads((LF / "alpaca_en_demo.json").read_text())
    assert sum(1 for i in items if i["input"].strip()) >= 10
    for path in (LF / "alpaca_en_demo.json", copy_alone(LF / "alpaca_en_demo.json", tmp_path)):
        recs = both_sides(path)
        assert [r.view("query") for r in recs] == [_alpaca_query(i) for i in items]
        assert [r.view("answer") for r in recs] == [i["output"].strip() for i in items]
        assert all(i["output"].strip()[:40] in r.view("text") for r, i in zip(recs, items))


def test_alpaca_system_and_history(tmp_path):
    items = json.loads((LF / "alpaca_en_demo.json").read_text())[:12]
    rows = [
        {**b, "system": "You are a careful assistant.", "history": [[a["instruction"], a["output"]]]}
        for a, b in zip(items, items[1:])
    ]
    recs = both_sides(jsonl(tmp_path, "hist.jsonl", rows))
    assert detect(tmp_path / "hist.jsonl").name == "alpaca"
    for r, row in zip(recs, rows):
        assert r.view("query") == _alpaca_query(row)  # the current turn, not the history
        assert r.view("system") == "You are a careful assistant."
        assert r.view("user") == row["history"][0][0].strip() + "\n" + _alpaca_query(row)
        assert row["history"][0][1].strip() in r.view("text")


def test_shared_instruction_eval_set_reads_distinct_items():
    items = json.loads(ICL.read_text())
    assert len({i["instruction"] for i in items}) == 1 and len(items) == 20
    recs = both_sides(ICL)
    assert len({r.view("query") for r in recs}) == 20
    # the one instruction is the file's template: each item is its input, the template kept beside it
    assert [r.view("query") for r in recs] == [i["input"].strip() for i in items]
    assert {r.view("instruction") for r in recs} == {items[0]["instruction"].strip()}
    assert all(items[0]["instruction"].strip() in r.view("text") for r in recs)
    require_distinct_items(recs)


# -- preference and prompt/completion (TRL) -----------------------------------------------------------------


def test_sharegpt_preference_by_shape_and_by_mapping(tmp_path):
    items = json.loads((LF / "dpo_en_demo.json").read_text())
    for path in (LF / "dpo_en_demo.json", copy_alone(LF / "dpo_en_demo.json", tmp_path)):
        recs = both_sides(path)
        assert len(recs) == len(items) == 12
        for r, i in zip(recs, items):
            humans = [m["value"].strip() for m in i["conversations"] if m["from"] == "human"]
            assert r.view("query").startswith(humans[0])
            assert r.view("answer") == i["chosen"]["value"].strip()
            assert r.view("rejected") == i["rejected"]["value"].strip()


def test_trl_conversational_and_plain(tmp_path):
    items = json.loads((LF / "dpo_en_demo.json").read_text())
    explicit, implicit, plain = [], [], []
    for i in items:
        prompt = [
            {"role": "user" if m["from"] == "human" else "assistant", "content": m["value"]} for m in i["conversations"]
        ]
        chosen = [{"role": "assistant", "content": i["chosen"]["value"]}]
        rejected = [{"role": "assistant", "content": i["rejected"]["value"]}]
        explicit.append({"prompt": prompt, "chosen": chosen, "rejected": rejected})
        implicit.append({"chosen": prompt + chosen, "rejected": prompt + rejected})
        plain.append({"prompt": prompt[-1]["content"], "completion": i["chosen"]["value"]})
    expect = ["\n".join(m["value"].strip() for m in i["conversations"] if m["from"] == "human") for i in items]
    for name, rows in (("explicit.jsonl", explicit), ("implicit.jsonl", implicit)):
        path = jsonl(tmp_path, name, rows)
        assert detect(path).name == "trl"
        recs = both_sides(path)
        assert [r.view("query") for r in recs] == expect
        assert [r.view("answer") for r in recs] == [i["chosen"]["value"].strip() for i in items]
        assert [r.view("rejected") for r in recs] == [i["rejected"]["value"].strip() for i in items]
    recs = both_sides(jsonl(tmp_path, "plain.jsonl", plain))
    assert [r.view("query") for r in recs] == [i["conversations"][-1]["value"].strip() for i in items]
    assert [r.view("answer") for r in recs] == [i["chosen"]["value"].strip() for i in items]


def test_hh_rlhf_plain_preference_prompt_is_the_shared_dialogue():
    path = REPO / "tests" / "data" / "foreign" / "hh-rlhf" / "harmless-base-test.jsonl.gz"
    if not path.exists():
        pytest.skip("tests/data/foreign (agent gauntlet's slices) is not in this checkout")
    import gzip

    rows = [json.loads(line) for line in gzip.open(path, "rt")]
    recs = both_sides(path)
    assert detect(path).name == "trl" and len(recs) == len(rows)
    for r, row in zip(recs, rows):
        head = row["chosen"][: row["chosen"].rfind("\n\nAssistant:")]
        assert r.view("query").endswith("Assistant:") and head.strip() in r.view("query")
        assert (r.view("query") + " " + r.view("answer")).split() == row["chosen"].split()


# -- chat-shaped: content parts, tool calls, Parquet, LMSYS -------------------------------------------------


def test_content_parts_with_value(tmp_path):
    rows = [json.loads(line) for line in (LF / "v1_sft_demo.jsonl").read_text().splitlines()]
    recs = both_sides(LF / "v1_sft_demo.jsonl")
    firsts = [next(m for m in r["messages"] if m["role"] == "user")["content"][0]["value"] for r in rows]
    assert [r.view("query") for r in recs] == [f.strip() for f in firsts]
    # a Parquet file with the same messages column reads the same
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "sft.parquet")
    assert detect(tmp_path / "sft.parquet").name == "chat"
    assert [r.views for r in both_sides(tmp_path / "sft.parquet")] == [r.views for r in recs]


def test_openai_tool_calls_and_glaive_read_the_same_call(tmp_path):
    glaive = both_sides(GLAIVE)[0]
    messages = [
        {"role": "system", "content": glaive.view("system")},
        {
            "role": "user",
            "content": "I have a text here and I am not sure what language it is. Can you help me identify it?",
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Of course, I can help with that. Please provide me with the text."}],
        },
        {"role": "user", "content": 'Here it is - "Je suis un étudiant"'},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_0",
                    "type": "function",
                    "function": {"name": "detect_language", "arguments": '{"text": "Je suis un étudiant"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_0", "content": '{"language": "French"}'},
        {"role": "assistant", "content": "The text you provided is in French."},
    ]
    rec = both_sides(jsonl(tmp_path, "openai.jsonl", [{"messages": messages}]))[0]
    for view in ("query", "system", "calls", "observations", "answer", "user"):
        assert rec.view(view) == glaive.view(view), view


def test_lmsys_chat_schema(tmp_path):
    rows = [
        {
            "conversation_id": "c0ffee",
            "model": "vicuna-13b",
            "conversation": [
                {"content": "How do I sort a list of tuples by the second item in Python?", "role": "user"},
                {"content": "Use sorted(items, key=lambda t: t[1]).", "role": "assistant"},
            ],
            "turn": 1,
            "language": "English",
            "openai_moderation": [{"categories": {}, "flagged": False}],
            "redacted": False,
        }
    ]
    path = jsonl(tmp_path, "lmsys.jsonl", rows)
    assert detect(path).name == "lmsys-chat"
    rec = both_sides(path)[0]
    assert rec.id == "c0ffee" and rec.view("query").startswith("How do I sort")
    assert rec.view("answer") == "Use sorted(items, key=lambda t: t[1])."


# -- Glaive, ToolACE, xLAM, Dolly ----------------------------------------------------------------------------


def test_glaive_v2_rows_and_v1_form(tmp_path):
    rows = [json.loads(line) for line in GLAIVE.read_text().splitlines()]
    recs = both_sides(GLAIVE)
    call, plain = recs
    assert (
        call.view("query") == "I have a text here and I am not sure what language it is. Can you help me identify it?"
    )
    assert call.view("calls") == 'detect_language({"text":"Je suis un étudiant"})'
    assert call.view("observations") == '{"language": "French"}'
    assert call.view("answer") == "The text you provided is in French."
    assert call.view("system").startswith("You are a helpful assistant with access to the following functions")
    assert "<|endoftext|>" not in call.view("text") and "SYSTEM:" not in call.view("text")
    assert plain.view("query") == "Assign this occupation to the appropriate category\nNurse"  # turns split on "\n\n"
    assert plain.view("user").endswith("What about an electrician?") and plain.view("answer") == "Skilled Trades"
    # v1 keeps the system prompt inside one `sample` string
    v1 = jsonl(tmp_path, "v1.jsonl", [{"sample": r["system"] + "\n\n\n" + r["chat"]} for r in rows])
    assert detect(v1).name == "glaive"
    assert [r.views for r in both_sides(v1)] == [r.views for r in recs]


def test_toolace_calls_and_tool_names_with_spaces():
    rec = both_sides(TOOLACE)[0]
    assert (
        rec.view("query")
        == "Hey, can you show me the list of football competitions that are currently televised in Peru?"
    )
    assert rec.view("calls").splitlines() == [
        "getcompetitions({})",
        'get manager placeholder image({"sport":"football"})',
    ]
    assert rec.view("system").startswith("You are an expert in composing functions.")
    assert len(rec.view("observations").splitlines()) == 2
    assert rec.view("user").splitlines()[1] == "How important are manager images in sports marketing and branding?"


def test_xlam_schema(tmp_path):
    # xlam-function-calling-60k's published schema: tools and answers are JSON strings
    tools = [
        {
            "name": "find_peak_element",
            "description": "Finds a peak element in a list of integers.",
            "parameters": {"nums": {"description": "The list of integers.", "type": "List[int]"}},
        }
    ]
    answers = [{"name": "find_peak_element", "arguments": {"nums": [44, 46, 48, 50, 52]}}]
    row = {
        "id": 8,
        "query": "Determine the peak of the sequence [44, 46, 48, 50, 52].",
        "tools": json.dumps(tools),
        "answers": json.dumps(answers),
    }
    path = jsonl(tmp_path, "xlam.jsonl", [row])
    assert detect(path).name == "xlam"
    rec = both_sides(path)[0]
    assert (rec.id, rec.view("query")) == ("8", row["query"])
    assert rec.view("calls") == 'find_peak_element({"nums":[44,46,48,50,52]})'


def test_dolly_schema(tmp_path):
    rows = [
        {
            "instruction": "When did Virgin Australia start operating?",
            "context": "Virgin Australia commenced services on 31 August 2000 as Virgin Blue.",
            "response": "Virgin Australia commenced services on 31 August 2000.",
            "category": "closed_qa",
        },
        {
            "instruction": "Which is a species of fish? Tope or Rope",
            "context": "",
            "response": "Tope",
            "category": "classification",
        },
    ]
    path = jsonl(tmp_path, "dolly.jsonl", rows)
    assert detect(path).name == "dolly"
    recs = both_sides(path)
    assert recs[0].view("query") == rows[0]["instruction"] + "\n" + rows[0]["context"]
    assert recs[1].view("query") == rows[1]["instruction"] and recs[1].view("answer") == "Tope"
    assert [r.split for r in recs] == ["closed_qa", "classification"]
    assert [r.id for r in read(path, split="closed_qa")] == ["0"]


def test_mt_bench_and_arena_hard_questions():
    rows = [json.loads(line) for line in (MT / "mt_bench_question.jsonl").read_text().splitlines()]
    recs = both_sides(MT / "mt_bench_question.jsonl")
    assert [r.view("query") for r in recs] == [row["turns"][0].strip() for row in rows]
    assert [r.view("user") for r in recs] == ["\n".join(t.strip() for t in row["turns"]) for row in rows]
    assert [(r.id, r.split) for r in recs] == [(str(row["question_id"]), row["category"]) for row in rows]
    with_ref = [(r, row) for r, row in zip(recs, rows) if row.get("reference")]
    assert with_ref and all(row["reference"][0].strip() in r.view("answer") for r, row in with_ref)
    rows = [json.loads(line) for line in (MT / "arena_hard_question.jsonl").read_text().splitlines()]
    recs = both_sides(MT / "arena_hard_question.jsonl")
    assert [r.view("query") for r in recs] == [row["turns"][0]["content"].strip() for row in rows]
    assert [r.id for r in recs] == [row["question_id"] for row in rows]
    require_distinct_items(recs)


# -- LLaMA-Factory dataset_info.json ---------------------------------------------------------------------------


def test_llamafactory_sharegpt_mapping_equals_the_chat_reader(tmp_path):
    by_mapping = both_sides(LF / "glaive_toolcall_en_demo.json")
    by_shape = both_sides(copy_alone(LF / "glaive_toolcall_en_demo.json", tmp_path))
    assert [r.views for r in by_mapping] == [r.views for r in by_shape]
    assert sum(1 for r in by_mapping if r.view("calls")) >= 10
    assert {r.meta["llamafactory"] for r in by_mapping} == {"glaive_toolcall_en_demo"}


def test_llamafactory_columns_and_tags(tmp_path):
    items = json.loads((LF / "alpaca_en_demo.json").read_text())[:15]
    (tmp_path / "data").mkdir()
    qa = [{"question": i["instruction"], "context": i["input"], "answer": i["output"]} for i in items]
    (tmp_path / "data" / "qa.json").write_text(json.dumps(qa))
    chats = [{"msgs": [{"r": "u", "c": i["instruction"]}, {"r": "a", "c": i["output"]}]} for i in items]
    (tmp_path / "data" / "chats.jsonl").write_text("".join(json.dumps(c) + "\n" for c in chats))
    info = {
        "my_qa": {
            "file_name": "data/qa.json",
            "columns": {"prompt": "question", "query": "context", "response": "answer"},
        },
        "my_chats": {
            "file_name": "data/chats.jsonl",
            "formatting": "sharegpt",
            "columns": {"messages": "msgs"},
            "tags": {"role_tag": "r", "content_tag": "c", "user_tag": "u", "assistant_tag": "a"},
        },
    }
    (tmp_path / "dataset_info.json").write_text(json.dumps(info))
    assert detect(tmp_path / "data" / "qa.json").name == "llamafactory"  # found one folder up
    recs = both_sides(tmp_path / "data" / "qa.json")
    assert [r.view("query") for r in recs] == [_alpaca_query(i) for i in items]
    assert [r.view("answer") for r in recs] == [i["output"].strip() for i in items]
    recs = both_sides(tmp_path / "data" / "chats.jsonl")
    assert [r.view("query") for r in recs] == [i["instruction"].strip() for i in items]
    assert [r.view("answer") for r in recs] == [i["output"].strip() for i in items]
    assert {r.meta["llamafactory"] for r in recs} == {"my_chats"}


def test_llamafactory_errors(tmp_path):
    assert detect(LF / "dataset_info.json").name == "json"  # a config, read as the JSON it is
    with pytest.raises(InputError) as e:
        read(LF / "dataset_info.json", format="llamafactory")
    assert "describes datasets and holds none" in str(e.value) and "alpaca_en_demo -> alpaca_en_demo.json" in str(
        e.value
    )
    alone = copy_alone(LF / "alpaca_en_demo.json", tmp_path)
    with pytest.raises(InputError, match="no dataset_info.json in this file's folder"):
        read(alone, format="llamafactory")


# -- writing back, the format list, the docs ---------------------------------------------------------------------


@pytest.mark.parametrize("src", [ICL, GLAIVE, TOOLACE, LF / "alpaca_en_demo.json"])
def test_cleaned_output_is_the_source_layout(tmp_path, src):
    adapter = detect(src)("d")
    writer = adapter.writer(src, tmp_path / src.name)
    for rec in adapter.read(src):
        writer.write(rec)
    writer.close()
    load = (
        (lambda p: [json.loads(x) for x in p.read_text().splitlines()])
        if src.suffix == ".jsonl"
        else (lambda p: json.loads(p.read_text()))
    )
    assert load(tmp_path / src.name) == load(src)


def _built_in() -> list[str]:
    """The registered formats the package defines (other tests register their own)."""
    return [name for name, cls in registry().items() if cls.__module__.startswith("auditor.adapters.")]


def test_formats_command_lists_the_new_readers():
    out = CliRunner().invoke(main, ["formats"]).output
    listed = {line.split()[0] for line in out.splitlines() if line.strip()}
    assert set(NEW_READERS) <= set(_built_in()) <= listed


def test_every_format_is_documented():
    text = (REPO / "docs" / "formats.md").read_text()
    missing = [name for name in _built_in() if not re.search(rf"`{re.escape(name)}`", text)]
    assert not missing, f"formats missing from docs/formats.md: {missing}"

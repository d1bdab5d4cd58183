"""The training side is searched whole (issue 22, item 1): a leak in any field of a training record,
in any common schema, is found and named by its field path; a record of no known schema is read
whole, never skipped; the schema is judged per record, never from an oversized first record.

Each case plants the first 50 bundled StableToolBench test queries verbatim in one field of 1,000
realistic training records of one schema (the rest hold filler requests), audits with the default
methods and asserts: the verdict is FAIL, at least 48/50 items are found conclusively, and the
findings name the field the queries were planted in. Before this change every case passed (exit 0)
or stopped with "no text field found".
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import shared_file
from test_false_pass import SYSTEM, filler, stb_config, stb_queries

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.cli import main
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.records.fields import field_counts, fields_view, path_kind, strings, texts
from auditor.records.record import Record
from auditor.text.locate import locate_field

N = 1000
EVERY = N // 50


def planted(i: int, queries: list[str]) -> tuple[str, bool]:
    """Record ``i``'s text: a StableToolBench query for every 20th record, else a filler request."""
    if i % EVERY == 7:
        return queries[i // EVERY], True
    return filler(i), False


def msgs(user: str, answer: str = "On it.") -> list[dict]:
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": user},
        {"role": "assistant", "content": answer},
    ]


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_flights",
            "description": "Search flights between two airports on a date.",
            "parameters": {"type": "object", "properties": {"origin": {"type": "string", "description": "IATA code"}}},
        },
    }
]


def openai_tools(i: int, text: str, leak: bool) -> dict:
    tools = json.loads(json.dumps(TOOLS))
    if leak:
        tools.append({"type": "function", "function": {"name": f"tool_{i}", "description": text, "parameters": {}}})
    return {"id": f"r{i}", "messages": msgs(filler(i)), "tools": tools}


def glaive_v2(i: int, text: str, leak: bool) -> dict:
    functions = json.dumps({"name": "get_weather", "description": "Get the weather", "parameters": {}}, indent=4)
    return {
        "system": f"SYSTEM: You are a helpful assistant with access to the following functions.\n{functions}",
        "chat": f"USER: {text}\n\n\nASSISTANT: Let me check that for you. <|endoftext|>\n\n\nFUNCTION RESPONSE: {{}}",
    }


#: schema → (record builder (i, text, planted) -> object, the field path (kind) the query is in)
SCHEMAS: dict[str, tuple[Callable[[int, str, bool], object], str]] = {
    "alpaca_input": (
        lambda i, t, p: {"instruction": "Help the user with this request.", "input": t, "output": "Sure."},
        "input",
    ),
    "alpaca_output": (
        lambda i, t, p: {"instruction": "Write a request a user might send.", "input": "", "output": t},
        "output",
    ),
    "alpaca_no_input": (lambda i, t, p: {"instruction": f"Task {i}: rephrase politely.", "output": t}, "output"),
    "prompt_completion": (lambda i, t, p: {"prompt": f"Write request {i}:", "completion": t}, "completion"),
    "qa_answer": (lambda i, t, p: {"question": f"What did user {i} ask?", "answer": t}, "answer"),
    "dolly_context": (
        lambda i, t, p: {
            "instruction": "Summarize the context.",
            "context": t,
            "response": "A request.",
            "category": "summarization",
        },
        "context",
    ),
    "dpo_chosen": (lambda i, t, p: {"prompt": f"Request {i}?", "chosen": t, "rejected": "I cannot help."}, "chosen"),
    "openai_tool_description": (openai_tools, "tools[].function.description"),
    "trl_preference_messages": (
        lambda i, t, p: {
            "chosen": msgs(t)[1:],
            "rejected": [{"role": "user", "content": t}, {"role": "assistant", "content": "No."}],
        },
        "chosen[].content",
    ),
    "lmsys_conversation": (
        lambda i, t, p: {
            "conversation_id": f"c{i}",
            "model": "vicuna-13b",
            "conversation": msgs(t)[1:],
            "turn": 1,
            "language": "English",
        },
        "conversation[].content",
    ),
    "glaive_v2": (glaive_v2, "chat"),
    "nested_data_messages": (lambda i, t, p: {"id": i, "data": {"messages": msgs(t)}}, "data.messages[].content"),
    "text_list": (lambda i, t, p: {"id": i, "text": [f"Turn one of record {i}.", t]}, "text[]"),
    "llama_factory_parts": (
        lambda i, t, p: {
            "messages": [
                {"role": "user", "content": [{"type": "text", "value": t}]},
                {"role": "assistant", "content": "On it."},
            ]
        },
        "messages[].content[].value",
    ),
}


def write_jsonl(path: Path, objs) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for obj in objs:
            f.write(json.dumps(obj, ensure_ascii=False) + "\n")
    return path


def records_of(build, queries) -> list:
    return [build(i, *planted(i, queries)) for i in range(N)]


def assert_found(report, field: str) -> None:
    check = report.checks[0]
    assert report.verdict == "fail", check
    assert check["contaminated_items"] >= 48, check
    named = {
        f["eval_id"]
        for f in report.findings
        if f["conclusive"] and f["method"] in ("exact", "ngram") and path_kind(f["evidence"].get("field", "")) == field
    }
    assert len(named) >= 48, sorted({f["evidence"].get("field") for f in report.findings})


@pytest.mark.parametrize("schema", list(SCHEMAS))
def test_query_planted_in_any_field_is_found_and_named(tmp_path, schema):
    build, field = SCHEMAS[schema]
    train = write_jsonl(tmp_path / "train.jsonl", records_of(build, stb_queries()))
    report = run_audit(stb_config(train, tmp_path))
    assert report.checks[0]["train_records"] == N  # none skipped
    assert_found(report, field)


def test_alpaca_csv_input_column(tmp_path):
    """As CSV, through the CLI: exit 1 (FAIL), not 0."""
    queries = stb_queries()
    train = tmp_path / "alpaca.csv"
    with train.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, ["instruction", "input", "output"])
        w.writeheader()
        for i in range(N):
            w.writerow(
                {"instruction": "Help the user with this request.", "input": planted(i, queries)[0], "output": "Sure."}
            )
    out = tmp_path / "r"
    result = CliRunner().invoke(
        main,
        [
            "audit",
            "--train",
            str(train),
            "--eval",
            "stabletoolbench",
            "--report-dir",
            str(out),
            "--index-dir",
            str(tmp_path / "i"),
        ],
    )
    assert result.exit_code == 1, result.output
    report = json.loads((out / "report.json").read_text())
    assert report["checks"][0]["contaminated_items"] >= 48
    assert {f["evidence"].get("field") for f in report["findings"] if f["method"] == "exact"} == {"input"}
    assert "field=input" in (out / "report.md").read_text()


def test_parquet_messages_column(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    queries = stb_queries()
    rows = [{"id": f"r{i}", "messages": msgs(planted(i, queries)[0])} for i in range(N)]
    train = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist(rows), train, row_group_size=300)
    report = run_audit(stb_config(train, tmp_path))
    assert report.checks[0]["train_records"] == N
    assert_found(report, "messages[].content")


def test_json_object_of_lists(tmp_path):
    """``{"data": [[message, ...], ...]}``: a JSON object that is not a map of records is one record,
    read whole (every message searched)."""
    queries = stb_queries()
    train = tmp_path / "train.json"
    train.write_text(json.dumps({"data": [msgs(planted(i, queries)[0]) for i in range(N)]}))
    report = run_audit(stb_config(train, tmp_path))
    assert_found(report, "data[][].content")


def test_toolalpaca_older_questions_layout(tmp_path):
    queries = stb_queries()
    apis = [
        {
            "Name": f"api_{k}",
            "Description": f"An API number {k} for tests.",
            "Documentation": json.dumps({"paths": {"/search": {"get": {"summary": "Search"}}}}),
            "Questions": [planted(k * 10 + j, queries)[0] for j in range(10)],
        }
        for k in range(N // 10)
    ]
    train = tmp_path / "train_data.json"
    train.write_text(json.dumps(apis))
    report = run_audit(stb_config(train, tmp_path))
    assert report.checks[0]["train_records"] == N // 10
    assert_found(report, "Questions[]")


def test_schema_changes_after_record_1000(tmp_path):
    """1,000 chat records (the file reads as chat), then Alpaca records holding the queries in ``input``."""
    queries = stb_queries()
    objs = [{"id": f"c{i}", "messages": msgs(filler(i))} for i in range(N)]
    objs += [{"instruction": "Help the user.", "input": planted(i, queries)[0], "output": "Sure."} for i in range(N)]
    train = write_jsonl(tmp_path / "train.jsonl", objs)
    report = run_audit(stb_config(train, tmp_path))
    assert report.checks[0]["train_records"] == 2 * N
    assert_found(report, "input")


def test_oversized_first_record_is_read_whole(tmp_path):
    """A 9 MB first record (beyond the sniff prefix: the generic reader, which reads ``text``): the
    other records' ``messages`` are searched all the same."""
    queries = stb_queries()
    big = {"id": "big", "text": "summary", "messages": msgs("x " * 4_500_000)}
    objs = [big] + [
        {"id": f"r{i}", "text": f"Conversation {i}", "messages": msgs(planted(i, queries)[0])} for i in range(N)
    ]
    train = write_jsonl(tmp_path / "train.jsonl", objs)
    assert train.stat().st_size > 9_000_000
    report = run_audit(stb_config(train, tmp_path))
    assert report.checks[0]["train_records"] == N + 1
    assert_found(report, "messages[].content")


def test_eval_side_keeps_its_strictness(tmp_path):
    """An eval record of no known schema is still an error, never read whole (an eval item is what
    its reader says it is)."""
    ev = write_jsonl(tmp_path / "ev.jsonl", [{"output": "Find flights to Paris next week for two adults"}])
    recs = Dataset(DatasetSpec("ev", [str(ev)], role="eval")).records()
    with pytest.raises(Exception, match="no text field found"):
        list(recs)
    tr = Dataset(DatasetSpec("tr", [str(ev)], role="train"))
    [rec] = list(tr.records())
    assert rec.views == {"fields": "Find flights to Paris next week for two adults"}
    assert rec.meta["read_whole"].startswith("no text field found")


def test_fields_view_leaves_out_what_other_views_hold():
    raw = {"id": "7", "messages": msgs("Book a table for two"), "tools": TOOLS + TOOLS, "n": 3, "ok": True}
    view = fields_view({"text": f"{SYSTEM}\nBook a table for two\nOn it."}, raw, ("7",))
    # message texts are in ``text``; the id is the record's; a schema repeated is kept once; roles,
    # names once; no numbers
    assert view.split("\n") == [
        "system",
        "user",
        "assistant",
        "function",
        "search_flights",
        "Search flights between two airports on a date.",
        "object",
        "string",
        "IATA code",
    ]
    assert list(texts(raw)) == [s for _, s in strings(raw)]
    counts = field_counts({"text": "Book a table for two"}, raw)
    assert counts["tools[].function.description"] == 1 and counts["messages[].content"] == 2


def test_locate_names_the_field():
    rec = Record("t", "1", "t:1", {}, raw={"a": "x", "b": [{"c": "Find me cheap FLIGHTS to Paris!"}]})
    assert locate_field(rec.raw, "find me cheap flights to paris") == "b[0].c"


def test_inspect_shows_searched_fields(tmp_path):
    train = write_jsonl(tmp_path / "t.jsonl", [openai_tools(i, "Look up a hotel in Rome", i == 0) for i in range(4)])
    result = CliRunner().invoke(main, ["inspect", str(train)])
    assert result.exit_code == 0, result.output
    assert "searched:" in result.output
    assert "  fields tools[].function.description: 5 strings" in result.output


# -- engines and masking -------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["local", pytest.param("ray", marks=pytest.mark.slow)])
def test_workers_read_whole_and_name_the_field(tmp_path, monkeypatch, engine):
    """The ``fields`` view is filled by the reader the workers run: 2 local workers (or Ray tasks) over
    several byte ranges find what the serial scan finds, field paths included."""
    if engine == "ray":
        pytest.importorskip("ray")
    import auditor.audit.run as audit_mod

    build, field = SCHEMAS["openai_tool_description"]
    train = write_jsonl(tmp_path / "train.jsonl", records_of(build, stb_queries()))
    serial = run_audit(stb_config(train, tmp_path))
    real_get_engine = audit_mod.get_engine
    extra = {"min_parallel_bytes": 0} if engine == "local" else {}
    monkeypatch.setattr(
        audit_mod,
        "get_engine",
        lambda name, **kw: real_get_engine(engine, **{**kw, **extra, "split_bytes": 100_000}),
    )
    parallel = run_audit(stb_config(train, tmp_path, workers=2))
    assert parallel.run["scan"]["units"] > 2
    assert parallel.findings == serial.findings
    assert_found(parallel, field)


def test_tool_schemas_in_every_record_are_boilerplate(tmp_path):
    """A tool schema repeated in every record's ``tools`` is masked like a system prompt: its lines are
    boilerplate of the ``fields`` view, and clean records give no finding."""
    objs = [openai_tools(i, filler(i), False) for i in range(N)]
    train = write_jsonl(tmp_path / "train.jsonl", objs)
    report = run_audit(stb_config(train, tmp_path))
    bp = report.checks[0]["boilerplate"]
    assert any("Search flights between two airports" in e.get("text", "") for e in bp["examples"]), bp
    assert report.verdict == "pass" and report.findings == []


# -- clean controls stay clean with the whole records searched ----------------------------------


def test_toolmvr_samples_stay_clean(tmp_path):
    files = [
        shared_file("tool-mvr/data/training_data/selected_Toolbench_V.json"),
        shared_file("tool-mvr/data/training_data/selected_Toolbench_R.json"),
    ]
    cfg = AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", ["stabletoolbench"], role="eval"),
            "tr": DatasetSpec("tr", [str(f) for f in files], role="train"),
        },
        checks=[CheckSpec("c", train=["tr"], eval=["ev"])],
        findings_store="memory",
        index_dir=str(tmp_path / "idx"),
    )
    report = run_audit(cfg)
    assert report.verdict == "pass"
    assert [f for f in report.findings if f["conclusive"]] == []


def test_webshop_halves_stay_clean(tmp_path):
    cfg = AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", ["webshop:0:100"], role="eval"),
            "tr": DatasetSpec("tr", ["webshop:100:200"], role="train"),
        },
        checks=[CheckSpec("c", train=["tr"], eval=["ev"])],
        findings_store="memory",
        index_dir=str(tmp_path / "idx"),
    )
    report = run_audit(cfg)
    assert report.verdict == "pass" and [f for f in report.findings if f["conclusive"]] == []


def test_a_records_findings_in_the_scan_carry_the_hash_of_the_views_each_tier_read():
    # inside the search stage a record's views are hashed once per record and views, for every tier
    from auditor.methods import create
    from auditor.methods._located import located_by_record
    from auditor.methods.base import content_hash

    queries = stb_queries()[:3]
    evals = [Record("stb", str(i), f"stb:{i}", {"query": q}) for i, q in enumerate(queries)]
    exact, ngram = create("exact").build(evals), create("ngram").build(evals)
    one = Record("t", "1", "t:1", {"text": f"{queries[0]}\n{SYSTEM}", "user": queries[0]}, raw={"text": queries[0]})
    two = Record("t", "2", "t:2", {"text": queries[0]}, raw={"text": queries[0]})
    with located_by_record():
        made = [(ix, tr, ix.finding(evals[0], tr, 1.0)) for tr in (one, two, one) for ix in (exact, ngram)]
    for ix, tr, f in made:
        assert f.train_hash == content_hash(*(tr.view(v) for v in ix.searched_views()))
    assert len({f.train_hash for _, _, f in made}) == 4  # each record with each tier's views

"""Content sniffing (JSON vs JSON Lines whatever the suffix), bounded reads, the message selector,
per-side fields on the CLI, and the no-text-field hint."""

from __future__ import annotations

import gzip
import json

import pytest
from click.testing import CliRunner
from helpers import shared_file

from auditor.adapters import detect
from auditor.cli import main
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.errors import ConfigError, InputError
from auditor.io.sniff import SNIFF_MAX_BYTES, sniff
from auditor.records.messages import MessageSelector

BFCL = "gorilla/berkeley-function-call-leaderboard/bfcl_eval/data/"


def _read(path, role="eval", **kw):
    ds = Dataset(DatasetSpec(name="d", paths=[str(path)], role=role, **kw))
    return list(ds.records()), ds


def test_json_lines_named_json_reads_every_line():
    path = shared_file(BFCL + "BFCL_v4_live_simple.json")
    assert sniff(path).kind == "lines"
    records, ds = _read(path)
    assert ds.stats.read == 258 and len(records) == 258
    assert records[0].id == "live_simple_0-0-0" and records[-1].id.startswith("live_simple_257")


def test_json_document_named_jsonl_is_a_document(tmp_path):
    p = tmp_path / "doc.jsonl"
    p.write_text(json.dumps([{"id": 1, "text": "a b c"}, {"id": 2, "text": "d e f"}], indent=2))
    assert sniff(p).kind == "array"
    records, _ = _read(p)
    assert [r.id for r in records] == ["1", "2"]


def test_single_object_jsonl_is_one_record(tmp_path):
    p = tmp_path / "one.jsonl"
    p.write_text('{"id": 7, "text": "only one"}\n')
    assert [r.id for r in _read(p)[0]] == ["7"]


def test_json_lines_with_a_bad_first_line_still_reported_by_line(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"id": 1, "text": "x"\n{"id": 2, "text": "y"}\n')
    with pytest.raises(InputError, match=r"bad.json:line 1"):
        _read(p)


def test_sniff_reads_a_bounded_prefix_of_a_huge_single_line(tmp_path):
    """Regression (issue 12): a single line far longer than the sniff prefix, gzipped. Detection
    must stop at SNIFF_MAX_BYTES; the reader then rejects the line without holding it."""
    p = tmp_path / "huge.jsonl.gz"
    chunk = gzip.compress(b"a" * (1 << 20), mtime=0)
    with open(p, "wb") as f:  # concatenated gzip members: 48 MiB of text on one line
        f.write(gzip.compress(b'{"text": "', mtime=0))
        for _ in range(48):
            f.write(chunk)
        f.write(gzip.compress(b'"}\n', mtime=0))
    found = sniff(p)
    assert found.prefix_bytes <= SNIFF_MAX_BYTES
    assert found.kind == "lines" and found.sample is None
    assert detect(p).name == "jsonl"
    with pytest.raises(InputError, match="max_record_chars"):
        _read(p, max_record_chars=1_000_000)


def test_first_user_selector_on_system_first_nested_messages(tmp_path):
    path = shared_file(BFCL + "BFCL_v4_live_multiple.json")
    # live items whose first message is a system prompt
    with open(path) as f:
        item = next(o for o in map(json.loads, f) if o["question"][0][0]["role"] == "system")
    p = tmp_path / "one.jsonl"
    p.write_text(json.dumps(item) + "\n")
    first_user = next(m["content"] for t in item["question"] for m in t if m["role"] == "user")
    for sel in (None, "first-user"):
        records, _ = _read(p, text_field="question", messages=sel, format="jsonl")
        assert records[0].view("query") == first_user
    system = item["question"][0][0]["content"]
    assert _read(p, text_field="question", messages="first-system", format="jsonl")[0][0].view("query") == system


def test_selector_grammar():
    turns = [[{"from": "human", "value": "a"}], [{"from": "gpt", "value": "b"}, {"from": "human", "value": "c"}]]
    assert MessageSelector.parse("last-user").select(turns) == "c"
    assert MessageSelector.parse("all-assistant").select(turns) == "b"
    assert MessageSelector.parse("all-tool").select(turns) is None
    with pytest.raises(ConfigError, match="message selector"):
        MessageSelector.parse("second-user")
    with pytest.raises(ConfigError, match="message selector"):
        DatasetSpec(name="d", paths=["x"], messages="users")


def test_no_text_field_names_the_fields_and_the_flag(tmp_path):
    p = tmp_path / "odd.jsonl"
    p.write_text('{"utterance": "hello", "label": 1}\n')
    with pytest.raises(InputError) as e:
        _read(p)
    assert "utterance, label" in str(e.value) and "--text-field" in str(e.value)


def test_per_side_text_fields_through_the_cli(tmp_path):
    train = tmp_path / "train.jsonl"
    ev = tmp_path / "eval.jsonl"
    q = "Find the area of a triangle with a base of 10 units and height of 5 units."
    train.write_text(json.dumps({"prompt": "You are helpful.", "question": q}) + "\n")
    ev.write_text(
        json.dumps({"id": "e1", "turns": [[{"role": "system", "content": "sys"}, {"role": "user", "content": q}]]})
        + "\n"
        + json.dumps({"id": "e2", "turns": [[{"role": "user", "content": "Something else entirely, unrelated."}]]})
        + "\n"
    )
    args = ["audit", "--train", str(train), "--eval", str(ev), "--report-dir", str(tmp_path / "r"), "--method", "exact"]
    # one --text-field for both sides cannot fit both files
    both = CliRunner().invoke(main, [*args, "--text-field", "question"])
    assert both.exit_code == 2 and "missing text field 'question'" in both.output
    res = CliRunner().invoke(
        main, [*args, "--train-text-field", "question", "--eval-text-field", "turns", "--eval-messages", "first-user"]
    )
    assert res.exit_code == 1, res.output
    assert "1 conclusive + 0 suspected of 2 eval items" in res.output


def test_message_selector_in_the_chat_format():
    path = shared_file("llama-factory/data/glaive_toolcall_en_demo.json")
    first = next(iter(Dataset(DatasetSpec(name="c", paths=[str(path)])).records()))
    last = next(iter(Dataset(DatasetSpec(name="c", paths=[str(path)], messages="last-user")).records()))
    turns = [t["value"] for t in first.raw["conversations"] if t["from"] == "human"]
    assert first.view("query") == turns[0] and last.view("query") == turns[-1] and len(turns) > 1


def test_manifest_takes_messages_and_calls_field(tmp_path):
    from auditor.audit.manifest import load_manifest

    (tmp_path / "e.jsonl").write_text(
        json.dumps({"id": "a", "q": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]}) + "\n"
    )
    (tmp_path / "t.jsonl").write_text(json.dumps({"text": "x", "a": "f(x=1)"}) + "\n")
    m = tmp_path / "m.toml"
    m.write_text(
        '[datasets.e]\npath = "e.jsonl"\nrole = "eval"\ntext_field = "q"\nmessages = "first-system"\n'
        '[datasets.t]\npath = "t.jsonl"\nrole = "train"\ncalls_field = "a"\n'
        '[[checks]]\nname = "c"\ntrain = ["t"]\neval = ["e"]\n'
    )
    config = load_manifest(str(m))
    ev = next(iter(Dataset(config.datasets["e"]).records()))
    tr = next(iter(Dataset(config.datasets["t"]).records()))
    assert ev.view("query") == "s" and tr.view("calls") == 'f({"x":1})'


def test_long_first_record_of_json_lines_named_json(tmp_path):
    """A JSON Lines record longer than the first read (64 KiB) is read on to its end, within the bound."""
    p = tmp_path / "long.json"
    rows = [{"id": i, "text": ("word " * 40_000) + str(i)} for i in range(3)]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    found = sniff(p)
    assert found.kind == "lines" and found.sample[0]["id"] == 0
    assert [r.id for r in _read(p)[0]] == ["0", "1", "2"]


def test_pretty_printed_documents(tmp_path):
    p = tmp_path / "pretty.json"
    p.write_text(json.dumps([{"id": "a", "text": "x y"}, {"id": "b", "text": "z w"}], indent=2))
    assert sniff(p).kind == "array" and sniff(p).sample == [{"id": "a", "text": "x y"}]
    q = tmp_path / "obj.json"
    q.write_text(json.dumps({"k1": {"text": "x"}, "k2": {"text": "y"}}, indent=2))
    assert sniff(q).kind == "object" and sniff(q).sample == {"k1": {"text": "x"}}

"""Provenance attribution on real files: StepTool and Tool-MVR against StableToolBench, tau2 trajectories."""

from __future__ import annotations

import json
import os
import re

import pytest
from click.testing import CliRunner
from helpers import shared_file

from auditor.audit.attribution import ProvenanceSpec, group_key, run_provenance
from auditor.audit.config import AuditConfig
from auditor.audit.manifest import load_manifest
from auditor.audit.run import audit_provenance, run_audit
from auditor.cli import main
from auditor.datasets import registry
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.errors import ConfigError, ManifestError
from auditor.io.ledger import LEDGER
from auditor.report.provenance_text import statement

TOOLMVR = "tool-mvr/data/training_data/selected_Toolbench_{}.json"
PATTERN = r"G(?P<group>\d)@(?P<id>\d+)"


# -- a minimal StepTool reader, kept apart on purpose -----------------------------------------------
# StepTool releases `{query_id: {cnt, instances[{id, conversations}]}}` (nested ShareGPT). Until the chat
# adapter reads that layout itself (issue 3), the test flattens it into ShareGPT JSONL records whose id
# is the ToolBench query id, which the chat adapter reads as it is.
def steptool_as_jsonl(rel: str, out):
    doc = json.loads(shared_file(rel).read_text(encoding="utf-8"))
    with open(out, "w", encoding="utf-8") as f:
        for qid, entry in doc.items():
            for inst in entry["instances"]:
                f.write(json.dumps({"id": qid, "conversations": inst["conversations"]}) + "\n")
    return out


def stb(split_label="test"):
    return DatasetSpec("stb", ["stabletoolbench"], role="eval", split_label=split_label)


def stb_query(qid: str) -> str:
    for r in Dataset(stb()).records():
        if r.id == qid:
            return r.view("query")
    raise LookupError(qid)


def run(spec, specs):
    return run_provenance(spec, {s.name: Dataset(s) for s in specs})


def test_steptool_rft_traces_query_12961_to_the_test_split(tmp_path):
    rft = steptool_as_jsonl("steptool/data_train/rft/rft_data_example.json", tmp_path / "rft.jsonl")
    out = run(
        ProvenanceSpec("steptool", derived=["rft"], sources=["stb"], methods=["exact", "ngram"]),
        [stb(), DatasetSpec("rft", [str(rft)])],
    )
    rows = out["records"]
    assert out["records_total"] == len(rows) == 22  # every instance listed, none dropped
    hit = [r for r in rows if r["derived_id"] == "12961"]
    assert len(hit) == 4
    for r in hit:
        assert (r["source_dataset"], r["source_id"], r["source_split"], r["how"]) == ("stb", "12961", "test", "both")
        assert "exact" in r["methods"] and "id" in r["methods"] and r["confidence"] == 1.0
        assert r["source_record"].endswith("G2_instruction.json#19")
    others = [r for r in rows if r["derived_id"] != "12961"]
    assert {r["derived_id"] for r in others} == {"87720", "20587", "24656"}
    assert all(r["how"] == "unattributed" and r["source_split"] is None for r in others)
    assert out["by_split"] == {"test": 4} and out["unattributed"] == 18 and out["source_items_by_split"] == {"test": 1}
    assert out["verdict"] == "fail" and out["held_out_records"] == 4
    text = statement(out)
    assert "4 (18.2%) to the held-out split 'test'" in text and "stb 12961" in text and "FAIL" in text


def test_steptool_allowance_turns_the_verdict(tmp_path):
    rft = steptool_as_jsonl("steptool/data_train/rft/rft_data_example.json", tmp_path / "rft.jsonl")
    specs = [stb(), DatasetSpec("rft", [str(rft)])]
    assert run(ProvenanceSpec("s", ["rft"], ["stb"], methods=["exact"], max_held_out=4), specs)["verdict"] == "pass"
    assert run(ProvenanceSpec("s", ["rft"], ["stb"], methods=["exact"], max_held_out=3), specs)["verdict"] == "fail"
    # the same data is clean when 'test' is not declared held out
    assert run(ProvenanceSpec("s", ["rft"], ["stb"], methods=["exact"], held_out=["dev"]), specs)["verdict"] == "pass"


def test_toolmvr_samples_none_in_the_test_split():
    files = [str(shared_file(TOOLMVR.format(v))) for v in ("V", "R")]
    out = run(
        ProvenanceSpec("toolmvr", ["tmvr"], ["stb"], id_pattern=PATTERN, methods=["exact", "ngram"]),
        [stb(), DatasetSpec("tmvr", files)],
    )
    ids = [r["derived_id"] for r in out["records"]]
    assert ids == [
        "G1@33737",
        "G2@23833",
        "G1@2271",
        "G1@46112_reflection",
        "G2@42932_reflection",
        "G3@2526_reflection",
    ]
    assert out["held_out_records"] == 0 and out["by_split"] == {} and out["unattributed"] == 6
    assert out["verdict"] == "pass"
    assert "none to the held-out split 'test'" in statement(out)


def _planted(tmp_path, rows):
    path = tmp_path / "planted.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": rid,
                    "messages": [
                        {"role": "system", "content": "You are AutoGPT."},
                        {"role": "user", "content": f"Now I will give you a task.\nTask:\n{text}\nBegin!\n"},
                        {"role": "assistant", "content": "Thought: call the API."},
                    ],
                }
            )
            + "\n"
            for rid, text in rows
        ),
        encoding="utf-8",
    )
    return str(path)


def test_planted_conflict_and_group_scoping(tmp_path):
    other = stb_query("588")  # a G1_instruction query
    planted = _planted(
        tmp_path,
        [
            ("G2@12961", other),  # id names 12961 (G2), text is 588's: conflict
            ("G2@12961", stb_query("12961")),  # id and content agree
            ("G1@12961", stb_query("12961")),  # wrong group: no id match, content only
            ("G2@12961", "Tell me a joke about APIs and the weather in Paris today."),  # id only
        ],
    )
    files = [str(shared_file(TOOLMVR.format("V"))), planted]
    out = run(
        ProvenanceSpec("planted", ["d"], ["stb"], id_pattern=PATTERN, methods=["exact", "ngram"]),
        [stb(), DatasetSpec("d", files)],
    )
    rows = out["records"][3:]
    conflict, agree, wrong_group, id_only = rows
    assert conflict["how"] == "conflicting"
    assert (conflict["source_id"], conflict["id_source_id"], conflict["id_source_split"]) == ("588", "12961", "test")
    assert conflict["held_out"] and conflict["confidence"] == 0.5
    assert agree["how"] == "both" and agree["source_id"] == "12961"
    assert (
        wrong_group["how"] == "content" and wrong_group["source_id"] == "12961" and "id" not in wrong_group["methods"]
    )
    assert id_only["how"] == "id" and id_only["source_id"] == "12961" and id_only["confidence"] == 0.6
    assert out["conflicts"] == 1 and out["by_how"] == {
        "both": 1,
        "content": 1,
        "id": 1,
        "conflicting": 1,
        "unattributed": 3,
    }
    assert "1 record carry an id naming one source item" in statement(out)


def _tau2_tasks(domain: str):
    path = registry.resolve(f"tau2-{domain}").paths[0]
    tasks = json.loads(open(path, encoding="utf-8").read())
    split = json.loads(open(path.replace("tasks.json", "split_tasks.json"), encoding="utf-8").read())
    return {str(t["id"]): t for t in tasks}, split


def test_tau2_trajectories_carry_task_ids(tmp_path):
    tasks, split = _tau2_tasks("airline")
    train_ids, test_id = split["train"][:3], split["test"][0]
    lines = []
    for tid in train_ids:  # user simulator prompted with the task's instructions, verbatim
        instr = tasks[tid]["user_scenario"]["instructions"]
        sim_prompt = "\n".join(
            instr[k]
            for k in ("reason_for_call", "known_info", "unknown_info", "task_instructions")
            if isinstance(instr.get(k), str)
        )
        lines.append(
            {
                "id": f"airline-task-{tid}-trial-0",
                "messages": [
                    {"role": "system", "content": sim_prompt},
                    {"role": "user", "content": "Hi, I need help with a reservation."},
                    {"role": "assistant", "content": "Sure, may I have your user id?"},
                ],
            }
        )
    # a held-out task, paraphrased by the simulator: only its id says where it comes from
    lines.append(
        {
            "id": f"airline-task-{test_id}-trial-0",
            "messages": [
                {"role": "user", "content": "Hello there, something is off with my booking."},
                {"role": "assistant", "content": "I can look into that for you."},
            ],
        }
    )
    lines.append(
        {
            "id": "retail-task-3-trial-0",
            "messages": [  # scoped to the retail source
                {"role": "user", "content": "I want to return an item I bought last week."}
            ],
        }
    )
    traj = tmp_path / "traj.jsonl"
    traj.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    spec = ProvenanceSpec(
        "tau2",
        ["traj"],
        ["airline", "retail"],
        id_pattern=r"(?P<source>\w+)-task-(?P<id>\d+)-",
        methods=["exact", "ngram"],
    )
    specs = [
        DatasetSpec("airline", ["tau2-airline"], role="eval"),
        DatasetSpec("retail", ["tau2-retail"], role="eval"),
        DatasetSpec("traj", [str(traj)]),
    ]
    out = run(spec, specs)
    rows = out["records"]
    assert [(r["source_dataset"], r["source_id"], r["source_split"]) for r in rows] == [
        *[("airline", t, "train") for t in train_ids],
        ("airline", test_id, "test"),
        ("retail", "3", split_of("retail", "3")),
    ]
    assert [r["how"] for r in rows[:3]] == ["both"] * 3
    assert rows[3]["how"] == "id" and rows[3]["held_out"] and rows[3]["confidence"] == 0.6
    assert out["verdict"] == "fail" and out["by_split"]["test"] >= 1
    assert out["source_split_sizes"] == {"test": 60, "train": 104}


def split_of(domain: str, tid: str) -> str:
    _, split = _tau2_tasks(domain)
    return "test" if tid in split["test"] else "train"


def test_group_key_and_bad_specs():
    assert group_key("G1") == group_key("1") == group_key("g1") == "1" and group_key(None) is None
    assert ProvenanceSpec("p", ["a"], ["b"], max_held_out=0.2).allowance(22) == 4
    assert ProvenanceSpec("p", ["a"], ["b"], max_held_out=3).allowance(22) == 3
    with pytest.raises(ConfigError, match="named group 'id'"):
        ProvenanceSpec("p", ["a"], ["b"], id_pattern=r"G(\d)@(\d+)")
    with pytest.raises(ConfigError, match="invalid id_pattern"):
        ProvenanceSpec("p", ["a"], ["b"], id_pattern=r"G(?P<id>")
    specs = {s.name: Dataset(s) for s in [stb(), DatasetSpec("g", ["webshop:0:2"])]}
    with pytest.raises(ConfigError, match="cannot attribute content"):
        run_provenance(ProvenanceSpec("p", ["g"], ["stb"], methods=["id"]), specs)
    with pytest.raises(ConfigError, match="unknown dataset 'nope'"):
        run_provenance(ProvenanceSpec("p", ["nope"], ["stb"]), specs)


MANIFEST = """
report_dir = "rep"

[datasets.stb]
path = "stabletoolbench"
role = "eval"
split_label = "test"

[datasets.rft]
path = "rft.jsonl"
role = "train"

[[provenance]]
name = "steptool-rft"
derived = ["rft"]
sources = ["stb"]
id_pattern = '(?P<id>\\d+)'
methods = ["exact", "ngram"]
"""


def test_provenance_only_manifest_cli_statement_and_report(tmp_path):
    steptool_as_jsonl("steptool/data_train/rft/rft_data_example.json", tmp_path / "rft.jsonl")
    manifest = tmp_path / "split.toml"
    manifest.write_text(MANIFEST, encoding="utf-8")
    config = load_manifest(manifest)
    assert config.checks == [] and [p.name for p in config.provenance] == ["steptool-rft"]
    runner = CliRunner()
    res = runner.invoke(main, ["provenance", str(manifest), "--statement"])
    assert res.exit_code == 1, res.output
    assert re.search(r"Of the 22 records of rft, 0 trace .* 4 \(18\.2%\) to the held-out split 'test'", res.output)
    assert sorted(os.listdir(tmp_path / "rep")) == [LEDGER, "provenance.json", "provenance.md"]  # its own names
    assert "report: " in res.output and "provenance.json" in res.output and "provenance.md" in res.output
    doc = json.loads((tmp_path / "rep" / "provenance.json").read_text())
    entry = doc["provenance"][0]
    for key in ("name", "derived", "by_split", "unattributed", "conflicts", "verdict", "records"):
        assert key in entry
    assert set(entry["records"][0]) >= {
        "derived_dataset",
        "derived_id",
        "source_dataset",
        "source_id",
        "source_split",
        "how",
        "score",
    }
    assert doc["verdict"] == "fail" and doc["checks"] == [] and "stb" in doc["datasets"]
    md = (tmp_path / "rep" / "provenance.md").read_text()
    assert "## Provenance" in md and "| test (held out) | 4 | 18.2% |" in md and "█" in md
    again = runner.invoke(main, ["provenance", str(tmp_path / "rep" / "provenance.json"), "--statement"])
    assert again.exit_code == 1 and again.output.strip() == statement(entry)
    verify = runner.invoke(main, ["verify", str(manifest)])  # verify runs provenance too
    assert verify.exit_code == 1 and "provenance steptool-rft: fail (4/22" in verify.output
    # verify and provenance share the manifest's report folder and never write over each other
    names = sorted(os.listdir(tmp_path / "rep"))
    assert names == sorted(
        [LEDGER, "provenance.json", "provenance.md", "report.json", "report.md", "report.html", "junit.xml"]
    )
    # (the ledger changes: it names the provenance files provenance writes again)
    verify_files = {n: (tmp_path / "rep" / n).read_bytes() for n in names if not n.startswith(("provenance", LEDGER))}
    assert runner.invoke(main, ["provenance", str(manifest)]).exit_code == 1  # provenance after verify
    assert {n: (tmp_path / "rep" / n).read_bytes() for n in verify_files} == verify_files
    assert json.loads(verify_files["report.json"])["verdict"] == "fail"


def test_checks_and_provenance_together(tmp_path):
    rft = steptool_as_jsonl("steptool/data_train/rft/rft_data_example.json", tmp_path / "rft.jsonl")
    from auditor.audit.config import CheckSpec

    config = AuditConfig(
        datasets={"stb": stb(), "rft": DatasetSpec("rft", [str(rft)])},
        checks=[CheckSpec("leak", train=["rft"], eval=["stb"], methods=["exact"])],
        provenance=[ProvenanceSpec("prov", ["rft"], ["stb"], methods=["exact"])],
    )
    report = run_audit(config)
    assert report.checks[0]["contaminated_items"] == 1
    assert report.provenance[0]["held_out_records"] == 4 and report.verdict == "fail"
    only = audit_provenance(config)
    assert only.checks == [] and only.provenance[0]["by_split"] == {"test": 4}


@pytest.mark.parametrize(
    "body, message",
    [
        ('[[provenance]]\nname = "p"\nderived = ["rft"]\nsources = ["stb"]\ncolour = "red"\n', "unknown key 'colour'"),
        ('[[provenance]]\nname = "p"\nderived = ["rft"]\n', "missing 'sources'"),
        ('[[provenance]]\nname = "p"\nderived = ["rft"]\nsources = ["nope"]\n', "unknown dataset 'nope'"),
        (
            '[[provenance]]\nname = "p"\nderived = ["rft"]\nsources = ["stb"]\nid_pattern = "G(\\\\d)"\n',
            "named group 'id'",
        ),
        ('[[provenance]]\nname = "p"\nderived = ["rft"]\nsources = ["stb"]\nmax_held_out = -1\n', "non-negative"),
        ("", "no [[checks]] (or [[provenance]]) entry"),
    ],
)
def test_bad_provenance_manifests_exit_2(tmp_path, body, message):
    (tmp_path / "rft.jsonl").write_text(json.dumps({"id": "1", "messages": [{"role": "user", "content": "hi"}]}) + "\n")
    manifest = tmp_path / "m.toml"
    manifest.write_text(MANIFEST.split("[[provenance]]")[0] + body, encoding="utf-8")
    with pytest.raises(ManifestError, match=re.escape(message)):
        load_manifest(manifest)
    res = CliRunner().invoke(main, ["provenance", str(manifest)])
    assert res.exit_code == 2 and message in res.output and "Traceback" not in res.output


def test_report_without_provenance_is_a_clean_error(tmp_path):
    bare = tmp_path / "report.json"
    bare.write_text(json.dumps({"verdict": "pass", "checks": [], "datasets": {}, "findings": []}))
    res = CliRunner().invoke(main, ["provenance", str(bare), "--statement"])
    assert res.exit_code == 2 and "no 'provenance' section" in res.output


def _webshop_sources(order=("wtest", "wtrain")):
    specs = {
        "wtest": DatasetSpec("wtest", ["webshop:0:500"], role="eval", split_label="test"),
        "wtrain": DatasetSpec("wtrain", ["webshop:500:"], role="eval", split_label="train"),
    }
    return [specs[n] for n in order]


def test_duplicate_goal_in_two_splits_is_flagged_and_counted_held_out(tmp_path):
    goals = [r.view("query") for r in Dataset(DatasetSpec("g", ["webshop:0:2000"])).records()]
    dup = next(i for i in range(500) if goals[i] in goals[500:])  # a test goal also in the train range
    derived = tmp_path / "d.jsonl"
    derived.write_text(
        json.dumps({"id": "a", "text": goals[dup]}) + "\n" + json.dumps({"id": "b", "text": goals[1999]}) + "\n",
        encoding="utf-8",
    )
    d = DatasetSpec("d", [str(derived)], text_field="text", id_field="id")
    for order in (("wtest", "wtrain"), ("wtrain", "wtest")):
        out = run(ProvenanceSpec("w", ["d"], list(order), methods=["exact"]), [*_webshop_sources(order), d])
        a, b = out["records"]
        assert (a["source_split"], a["ambiguous_splits"], a["held_out"]) == ("test", ["train"], True)
        assert b["source_split"] == "train" and "ambiguous_splits" not in b and not b["held_out"]
        assert out["ambiguous"] == 1 and "1 attributed record match an item of another split" in statement(out)


def test_webshop_search_imitation_goals_trace_to_test_goals(tmp_path):
    # goal_query_map.json (the search model's imitation data): instruction -> human search queries
    doc = json.loads(shared_file("webshop/baseline_models/data/goal_query_map.json").read_text(encoding="utf-8"))
    derived = tmp_path / "gqm.jsonl"
    derived.write_text(
        "".join(
            json.dumps({"id": f"gqm{i}", "text": "\n".join([goal, *queries])}) + "\n"
            for i, (goal, queries) in enumerate(doc.items())
        ),
        encoding="utf-8",
    )
    out = run(
        ProvenanceSpec("webshop", ["gqm"], ["wtest", "wtrain"], methods=["exact"]),
        [*_webshop_sources(), DatasetSpec("gqm", [str(derived)], text_field="text", id_field="id")],
    )
    assert out["records_total"] == 1506 and out["unattributed"] == 0
    assert out["by_split"] == {"test": 480, "train": 1026} and out["ambiguous"] == 39
    assert out["source_items_by_split"]["test"] == 480 and out["verdict"] == "fail"


def test_manifest_without_provenance_entries_is_refused_by_the_command(tmp_path):
    (tmp_path / "t.jsonl").write_text(json.dumps({"id": "1", "messages": [{"role": "user", "content": "hi"}]}) + "\n")
    manifest = tmp_path / "m.toml"
    manifest.write_text(
        '[datasets.stb]\npath = "stabletoolbench"\nrole = "eval"\n[datasets.t]\npath = "t.jsonl"\n'
        'role = "train"\n[[checks]]\nname = "c"\ntrain = ["t"]\neval = ["stb"]\n',
        encoding="utf-8",
    )
    res = CliRunner().invoke(main, ["provenance", str(manifest)])
    assert res.exit_code == 2 and "no [[provenance]] entry to run" in res.output


def test_html_report_draws_provenance_bar(tmp_path):
    """The HTML report shows each provenance entry's statement and a bar per source split."""
    from auditor.report import Report

    entry = {
        "name": "v",
        "derived": ["toolbench_v"],
        "sources": ["stb"],
        "records_total": 3,
        "by_split": {"test": 1, "train": 1},
        "source_items_by_split": {"test": 1},
        "held_out_splits": ["test"],
        "unattributed": 1,
        "conflicts": 0,
        "held_out_records": 1,
        "allowance": 0,
        "verdict": "fail",
        "records": [
            {
                "derived_dataset": "toolbench_v",
                "derived_id": "G1@7",
                "how": "both",
                "source_split": "test",
                "source_dataset": "stb",
                "source_id": "7",
                "held_out": True,
                "score": 1.0,
            }
        ],
    }
    page = Report("fail", {}, [], [], extra={"provenance": [entry]}).render("html")
    assert "derived records per source split" in page and "test (held out)" in page
    assert "1/3 (33.3%)" in page and statement(entry)[:40] in page and "G1@7" in page

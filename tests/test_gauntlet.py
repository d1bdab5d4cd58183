"""The foreign-data gauntlet (issue 22, item 9): public training sets the tool was never shaped on.

Each dataset in ``tests/data/foreign`` (slices of public SFT / preference / tool-use data that are not in
``../shared/data``; sources and licences in its ``PROVENANCE.md``) is audited as a training set against the
bundled ``stabletoolbench`` eval set, with the default methods and engine, through the CLI, and must show:

- **every record read**: the training side counts as many records as the file holds (counted here with
  ``json`` / ``pyarrow``, independently of the tool), none skipped;
- **every string field searched**: the record with the most string fields (of the first 20) is copied once
  per string field, at any depth, with a real StableToolBench test query added to that field only (a
  different query per field); the default audit finds every one of them conclusively, exit code 1;
- **a clean copy passes**: the file as published, exit code 0, no conclusive finding.

A missed field is named in the failure (its path in the record), so a failing run says which part of a
record the tool did not read.
"""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from helpers import REPO
from test_false_pass import stb_items

from auditor.cli import main

FOREIGN = REPO / "tests" / "data" / "foreign"
#: the planted record is the one with the most string fields among the first ``CHOOSE_FROM`` records
CHOOSE_FROM = 20

Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class Foreign:
    """One foreign dataset: ``rel`` (a file, or a folder of one-record ``*.json`` files) under FOREIGN,
    its layout, and the records its slice holds (``PROVENANCE.md``)."""

    rel: str
    layout: str  # "list" | "object" | "lines" | "lines.gz" | "parquet" | "files"
    records: int

    @property
    def id(self) -> str:
        return self.rel.replace("/", ":")

    @property
    def path(self) -> Path:
        return FOREIGN / self.rel


DATASETS = [
    Foreign("llama-factory/alpaca_en_demo.json", "list", 200),
    Foreign("llama-factory/dpo_en_demo.json", "list", 60),
    Foreign("llama-factory/kto_en_demo.json", "list", 100),
    Foreign("llama-factory/v1_sft_demo.jsonl", "lines", 200),
    Foreign("llama-factory/v1_dpo_demo.jsonl", "lines", 10),
    Foreign("llama-factory/mllm_demo.json", "list", 6),
    Foreign("llama-factory/dataset_info.json", "object", 104),
    Foreign("toolrl/rlla_sft.json", "list", 62),
    Foreign("toolrl/test.parquet", "parquet", 80),
    Foreign("fastchat/dummy_conversation.json", "list", 150),
    Foreign("fastchat/mt_bench_question.jsonl", "lines", 80),
    Foreign("fastchat/mt_bench_reference_answer_gpt-4.jsonl", "lines", 30),
    Foreign("open-assistant/en_100_message.jsonl", "lines", 15),
    Foreign("open-assistant/en_100_text.jsonl", "lines", 100),
    Foreign("hh-rlhf/harmless-base-test.jsonl.gz", "lines.gz", 150),
    Foreign("tooltalk", "files", 12),
    Foreign("self-instruct/seed_tasks.jsonl", "lines", 175),
    Foreign("arena-hard/question.jsonl", "lines", 150),
    Foreign("arena-hard/model_answer_gpt-4-0314.jsonl", "lines", 30),
    Foreign("gsm8k/test.jsonl", "lines", 250),
    Foreign("gpteacher/toolformer-dedupe-only-dataset.json", "list", 150),
    Foreign("toolalpaca-questions/validation_data.json", "list", 10),
    Foreign("functionary", "files", 3),
]
PARAMS = [pytest.param(d, id=d.id) for d in DATASETS]


# -- reading and writing the files as they are published (independently of the tool) ---------------


def load(ds: Foreign, path: Path | None = None) -> list[Any]:
    """The records of ``path`` (default: the published file), one per list item, object value, line,
    Parquet row or file."""
    path = path or ds.path
    if ds.layout == "files":
        return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(path.glob("*.json"))]
    if ds.layout == "parquet":
        return pq.read_table(path).to_pylist()
    if ds.layout in ("lines", "lines.gz"):
        raw = gzip.decompress(path.read_bytes()) if ds.layout == "lines.gz" else path.read_bytes()
        return [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]
    doc = json.loads(path.read_text(encoding="utf-8"))
    return list(doc.values()) if ds.layout == "object" else doc


def write(ds: Foreign, records: list[Any], folder: Path) -> Path:
    """``records`` in the published layout, under the published file name: what ``--train`` gets."""
    folder.mkdir(parents=True, exist_ok=True)
    if ds.layout == "files":
        for k, rec in enumerate(records):
            (folder / f"{k:04d}.json").write_text(json.dumps(rec, ensure_ascii=False, indent=4), encoding="utf-8")
        return folder
    target = folder / ds.path.name
    if ds.layout == "parquet":
        pq.write_table(pa.Table.from_pylist(records, schema=pq.read_schema(ds.path)), target)
    elif ds.layout in ("lines", "lines.gz"):
        data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
        target.write_bytes(gzip.compress(data, mtime=0) if ds.layout == "lines.gz" else data)
    else:
        doc: Any = {f"r{k}": r for k, r in enumerate(records)} if ds.layout == "object" else records
        target.write_text(json.dumps(doc, ensure_ascii=False, indent=2), encoding="utf-8")
    return target


def train_arg(ds: Foreign, written: Path) -> str:
    return str(written / "*.json") if ds.layout == "files" else str(written)


#: a path step into a string that holds a JSON document (tool arguments, tool lists, OpenAPI docs)
IN_JSON = "<json>"


def _embedded_json(text: str) -> Any:
    """The JSON array or object a string holds, else None."""
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, (dict, list)) else None


def string_leaves(obj: Any, path: Path_ = ()) -> Iterator[Path_]:
    """Paths of every string in ``obj``, at any depth, in document order; a string holding a JSON array
    or object is a leaf itself and also leads (through :data:`IN_JSON`) to the strings inside it.

    >>> list(string_leaves({"a": "x", "b": [1, {"c": "y"}], "d": None, "e": '{"f": "z"}'}))
    [('a',), ('b', 1, 'c'), ('e',), ('e', '<json>', 'f')]
    """
    if isinstance(obj, str):
        yield path
        inner = _embedded_json(obj)
        if inner is not None:
            yield from string_leaves(inner, (*path, IN_JSON))
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield from string_leaves(value, (*path, key))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from string_leaves(value, (*path, i))


def with_leaf(obj: Any, path: Path_, text: str) -> Any:
    """A copy of ``obj`` with ``text`` added on its own line to the string at ``path`` (inside an
    embedded JSON document: there, re-serialized as its producer would).

    >>> with_leaf({"a": ["x", "y"]}, ("a", 1), "Q")
    {'a': ['x', 'y\\nQ']}
    >>> with_leaf({"args": '{"q": "x"}'}, ("args", IN_JSON, "q"), "Q")
    {'args': '{"q": "x\\\\nQ"}'}
    """
    if not path:
        return f"{obj}\n{text}"
    if path[0] == IN_JSON:
        return json.dumps(with_leaf(json.loads(obj), path[1:], text), ensure_ascii=False)
    out = copy.copy(obj)
    out[path[0]] = with_leaf(obj[path[0]], path[1:], text)
    return out


def show(path: Path_) -> str:
    """``('messages', 0, 'content')`` → ``messages[0].content``; inside embedded JSON: ``args<json>.q``."""
    out = ""
    for step in path:
        if step == IN_JSON:
            out += IN_JSON
        else:
            out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out or "(the record itself)"


# -- the audits (each run once per dataset, shared by the tests below) ------------------------------


@dataclass
class Run:
    exit_code: int
    output: str
    report: dict | None

    def train_summary(self) -> dict:
        assert self.report is not None, self.output
        [summary] = [s for s in self.report["datasets"].values() if s["role"] == "train"]
        return summary

    def conclusive_items(self) -> set[int]:
        assert self.report is not None, self.output
        return {f["eval_ordinal"] for f in self.report["findings"] if f["conclusive"]}


class Runs:
    """Audits of the gauntlet, cached per dataset and case, sharing one index folder."""

    def __init__(self, root: Path):
        self.root = root
        self.cache: dict[tuple[str, str], Run] = {}
        self.plants: dict[str, list[tuple[Path_, int]]] = {}

    def audit(self, ds: Foreign, case: str, train: str) -> Run:
        key = (ds.id, case)
        if key not in self.cache:
            out = self.root / f"{ds.id}-{case}"
            args = ["audit", "--train", train, "--eval", "stabletoolbench"]
            args += ["--report-dir", str(out / "report"), "--index-dir", str(self.root / "idx")]
            res = CliRunner().invoke(main, args)
            report_file = out / "report" / "report.json"
            report = json.loads(report_file.read_text()) if report_file.exists() else None
            self.cache[key] = Run(res.exit_code, res.output + (res.stderr or ""), report)
        return self.cache[key]

    def clean(self, ds: Foreign) -> Run:
        return self.audit(ds, "clean", train_arg(ds, ds.path))

    def planted(self, ds: Foreign) -> tuple[Run, list[tuple[Path_, int]]]:
        """The published records plus one copy of the richest record per string field, query k added
        to field k of copy k."""
        if ds.id not in self.plants:
            records = load(ds)
            chosen = max(records[:CHOOSE_FROM], key=lambda r: len(list(string_leaves(r))))
            paths = list(string_leaves(chosen))
            items = stb_items(len(paths))
            copies = [with_leaf(chosen, p, item.view("query")) for p, item in zip(paths, items)]
            self.plants[ds.id] = [(p, item.ordinal) for p, item in zip(paths, items)]
            written = write(ds, records + copies, self.root / f"{ds.id}-planted" / "data")
            self.audit(ds, "planted", train_arg(ds, written))
        return self.cache[(ds.id, "planted")], self.plants[ds.id]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Runs:
    return Runs(tmp_path_factory.mktemp("gauntlet"))


# -- the tests -------------------------------------------------------------------------------------


def test_every_foreign_dataset_is_listed_with_its_notice():
    """The gauntlet covers every dataset of the folder (but agent-owned ``seal-tools``), each with a
    LICENSE and a NOTICE, and the slices hold the records PROVENANCE.md says."""
    folders = {p.name for p in FOREIGN.iterdir() if p.is_dir()} - {"seal-tools"}
    assert folders == {d.rel.split("/")[0] for d in DATASETS}
    assert len(folders) >= 10
    for folder in folders:
        assert (FOREIGN / folder / "LICENSE").stat().st_size > 500
        assert "Licence:" in (FOREIGN / folder / "NOTICE").read_text()
    provenance = (FOREIGN / "PROVENANCE.md").read_text()
    for ds in DATASETS:
        assert len(load(ds)) == ds.records, ds.rel
        if ds.layout != "files":
            assert f"`{ds.path.name}`" in provenance and f"{ds.records} / " in provenance


@pytest.mark.parametrize("ds", PARAMS)
def test_every_record_is_read(runs, ds):
    """As many training records as the file holds, none skipped, no file left out."""
    run = runs.clean(ds)
    assert run.exit_code != 2, run.output
    summary = run.train_summary()
    assert (summary["read"], summary["records"], summary["skipped"]) == (ds.records, ds.records, 0), summary
    assert summary["skipped_files"] == []


@pytest.mark.parametrize("ds", PARAMS)
def test_a_clean_copy_passes(runs, ds):
    """The published slice holds no StableToolBench test query: PASS, exit 0, no conclusive finding."""
    run = runs.clean(ds)
    assert run.exit_code == 0, run.output
    assert run.report is not None and run.report["verdict"] == "pass"
    assert run.conclusive_items() == set()


@pytest.mark.parametrize("ds", PARAMS)
def test_a_query_in_any_string_field_is_found(runs, ds):
    """A real test query added to each string field in turn (any depth, one copy per field) is found
    conclusively by the default audit: FAIL, exit 1, every planted query, every copy read."""
    run, plants = runs.planted(ds)
    assert run.exit_code != 2, run.output
    summary = run.train_summary()
    assert (summary["records"], summary["skipped"]) == (ds.records + len(plants), 0), summary
    found = run.conclusive_items()
    missed = [show(path) for path, ordinal in plants if ordinal not in found]
    assert not missed, f"{len(missed)}/{len(plants)} string fields not searched: {missed}"
    assert run.exit_code == 1 and run.report is not None and run.report["verdict"] == "fail", run.output


def test_toolrl_sft_file_leaks_two_of_its_rl_test_prompts(tmp_path):
    """A public leak (issue 22): two of ToolRL's 80 RL test prompts (rows 0 and 42 of ``test.parquet``)
    sit verbatim in the ``input`` of two SFT records (upstream 341 and 393, kept in the slice). The default
    audit of the SFT file against the test set must find exactly those two (before: PASS 0/80; found only
    with ``--train-text-field input``). Reading the record whole is not enough for row 42: its prompt is two
    short lines inside a longer ``input``, so it also needs the containment check for short items (item 4)."""
    args = [
        "audit",
        "--train",
        str(FOREIGN / "toolrl" / "rlla_sft.json"),
        "--eval",
        str(FOREIGN / "toolrl" / "test.parquet"),
    ]
    args += ["--report-dir", str(tmp_path / "r"), "--index-dir", str(tmp_path / "idx")]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 1, res.output
    doc = json.loads((tmp_path / "r" / "report.json").read_text())
    assert {f["eval_ordinal"] for f in doc["findings"] if f["conclusive"]} == {0, 42}

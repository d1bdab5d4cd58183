"""Regression tests for false PASSes (issue 12): contaminated data must never pass.

Each test reproduces one way a contaminated training set passed, at reduced size, on the bundled
StableToolBench queries (the 765 solvable test queries) planted in chat-format training records that
share an agent system prompt, as real agent training sets do.
"""

from __future__ import annotations

import json
from pathlib import Path

import auditor.audit as audit_mod
from auditor.audit import AuditConfig, CheckSpec, run_audit
from auditor.boilerplate import BoilerplateConfig, Masker, detect
from auditor.datasets import Dataset, DatasetSpec
from auditor.records import Record

SYSTEM = (
    "You are AutoGPT, you can use many tools (functions) to do the following task.\n"
    "First I will give you the task description, and your task start.\n"
    "At each step, you need to give your thought to analyze the status now and what to do next, "
    "with a function call to actually excute your step.\n"
    "Remember: the state change is irreversible, you can't go back to one of the former state."
)


def stb_queries(count: int = 50) -> list[str]:
    """The first ``count`` bundled StableToolBench queries (one per eval item)."""
    records = Dataset(DatasetSpec("stb", ["stabletoolbench"], role="eval")).records()
    return [r.view("query") for _, r in zip(range(count), records)]


def chat(rid: str, user: str, system: str = SYSTEM) -> str:
    msgs = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return json.dumps({"id": rid, "messages": [*msgs, {"role": "assistant", "content": "On it."}]}) + "\n"


def filler(i: int) -> str:
    return f"Tell me fact number {i} about the planet Mars and its moon number {i * 7 % 13}."


def stb_config(train: Path, tmp_path: Path, workers: int = 1, methods=None, batch_size: int = 64) -> AuditConfig:
    return AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", ["stabletoolbench"], role="eval"),
            "tr": DatasetSpec("tr", [str(train)], role="train"),
        },
        checks=[CheckSpec("c", train=["tr"], eval=["ev"], methods=methods)],
        workers=workers,
        batch_size=batch_size,
        findings_store="memory",
        index_dir=str(tmp_path / "idx"),
    )


# -- 1. the parallel engine and the boilerplate cache ---------------------------------------------


def test_masker_never_serves_an_earlier_batch():
    """``Masker.masked`` must mask the batch it is given, even one with an earlier batch's identity
    (a worker that frees a batch hands its ``id`` to the next one; a list refilled in place keeps it)."""
    recs = [Record("t", str(i), f"t:{i}", {"text": f"{SYSTEM}\n{filler(i)}"}, ordinal=i) for i in range(40)]
    masker = Masker(detect(recs, [], BoilerplateConfig(min_records=10)), [], views=("text",), methods=["exact"])
    batch = recs[:20]
    first = masker.masked(batch)
    batch[:] = recs[20:]
    second = masker.masked(batch)
    assert [r.ordinal for r in first] == list(range(20))
    assert [r.ordinal for r in second] == list(range(20, 40))
    assert second[0].views["text"] == filler(20)


def test_parallel_engine_finds_what_the_serial_one_finds(tmp_path, monkeypatch):
    """The reproduction: records sharing one system prompt (boilerplate masking on), 50 StableToolBench
    queries verbatim among them, the default local engine with 2 workers on a file over its parallel
    threshold (``LocalEngine.min_parallel_bytes``, 8 MB by default, set to 0 here instead of writing
    8 MB). Before the fix the parallel scan passed (a worker's masker served an earlier batch)."""
    queries = stb_queries()
    train = tmp_path / "train.jsonl"
    with train.open("w", encoding="utf-8") as f:
        for i in range(2500):
            f.write(chat(f"r{i}", filler(i)))
            if i % 50 == 49:  # spread over the batches, so that any batch served stale is a miss
                f.write(chat(f"q{i}", queries[i // 50]))
    serial = run_audit(stb_config(train, tmp_path, workers=1))
    real_get_engine = audit_mod.get_engine
    monkeypatch.setattr(audit_mod, "get_engine", lambda name, **kw: real_get_engine(name, min_parallel_bytes=0, **kw))
    parallel = run_audit(stb_config(train, tmp_path, workers=2))
    assert parallel.run["workers"] == 2
    assert serial.checks[0]["boilerplate"]["lines"] >= 3  # masking is active
    for report in (serial, parallel):
        assert report.verdict == "fail"
        assert report.checks[0]["contaminated_items"] == 50
    assert parallel.findings == serial.findings

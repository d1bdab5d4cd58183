"""Leaks planted one way at a time (issue 22): is each found, and what does the audit say?

    python -m benchmarks.bench_leaks                      # every case (about 2 minutes on 2 cores)
    python -m benchmarks.bench_leaks --cases 'alpaca_*' dot_below --json leaks.json
    python -m benchmarks.bench_leaks --list

Each case writes a training set of 2,000 realistic records (real text from ../shared/data: ToolBench test
queries and answers with their tool docs, Glaive function-calling dialogues, API-Bank level-3 training
records; none holds a planted text) with the first 50 bundled StableToolBench test queries planted
verbatim, one thing varied at a time: the schema and the field that holds the query, a disguise of the
query, or (``short_*``) 50 short WebShop goals embedded in a longer line as the eval set. It then runs the
real CLI (``python -m auditor audit``, default methods, default engine, the ``stabletoolbench`` eval set
unless the case brings its own) in a fresh process and prints one row per case: planted items found
conclusively and found only as suspected (out of 50), the verdict, the exit code and the wall seconds.
Controls: ``control_clean`` (the filler alone: must pass) and ``chat_user`` (the query as a plain user
turn: the reference that is found).

Every figure is in-sample for nothing: no threshold is fitted here, the cases are fixed before running.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from auditor.datasets.dataset import Dataset, DatasetSpec
from benchmarks.common import REPO, repo_env
from benchmarks.leak_cases import (
    DISGUISES,
    NOT_READ,
    PLANTS,
    RECORDS,
    SCHEMAS,
    SHAPED,
    Filler,
    disguised_record,
    filler_pool,
    schema_records,
    short_goals,
    short_record,
    toolalpaca_apis,
    write_schema,
)

NINE_MB = 9 * 1024 * 1024
TWO_MB = 2 * 1024 * 1024


@dataclass
class Setup:
    train: list[str]
    eval: str
    planted: list[int]  # eval ordinals of the planted items


@dataclass(frozen=True)
class Case:
    name: str
    group: str
    what: str
    build: Callable[[Path, list[Filler], list[str]], Setup]


def _schema_case(schema: str, as_csv: bool = False) -> Callable:
    def build(folder: Path, pool: list[Filler], queries: list[str]) -> Setup:
        records = list(schema_records(schema, pool, queries))
        return Setup([str(write_schema(schema, records, folder, as_csv))], "stabletoolbench", list(range(PLANTS)))

    return build


def _control(folder: Path, pool: list[Filler], queries: list[str]) -> Setup:
    records = list(schema_records("chat_user", pool, []))
    return Setup([str(write_schema("chat_user", records, folder))], "stabletoolbench", [])


def _first_record_9mb(folder: Path, pool: list[Filler], queries: list[str]) -> Setup:
    """Chat records ``{id, text, messages}``; the first one's tool turn holds 9 MB of real tool results."""
    records = []
    for i, rec in enumerate(schema_records("chat_user", pool, queries)):
        rec["text"] = pool[i % len(pool)].assistant
        records.append(rec)
    big, size, j = [], 0, 0
    while size < NINE_MB:
        chunk = pool[j % len(pool)].context or pool[j % len(pool)].assistant
        big.append(chunk)
        size += len(chunk.encode()) + 1
        j += 1
    records[0]["messages"].insert(2, {"role": "tool", "content": "\n".join(big)})
    return Setup([str(write_schema("chat_user", records, folder))], "stabletoolbench", list(range(PLANTS)))


def _record_2mb(folder: Path, pool: list[Filler], queries: list[str]) -> Setup:
    """2,000 chat records; record 1,000's tool turn is 2 MB of real tool results with the 50 queries spread
    through it (one every 40 KB)."""
    records = list(schema_records("chat_user", pool, []))
    parts, size, j, k = [], 0, 0, 0
    while size < TWO_MB:
        chunk = pool[j % len(pool)].context or pool[j % len(pool)].assistant
        parts.append(chunk)
        size += len(chunk.encode()) + 1
        j += 1
        if k < len(queries) and size >= (k + 1) * TWO_MB // (len(queries) + 1):
            parts.append(queries[k])
            k += 1
    records[RECORDS // 2]["messages"].insert(2, {"role": "tool", "content": "\n".join(parts)})
    return Setup([str(write_schema("chat_user", records, folder))], "stabletoolbench", list(range(k)))


def _alpaca_eval_set(folder: Path, pool: list[Filler], queries: list[str]) -> Setup:
    """The 50 queries as an Alpaca eval file (one instruction for all, the query in ``input``)."""
    folder.mkdir(parents=True, exist_ok=True)
    ev = folder / "eval_alpaca.json"
    instruction = "Use the available tools to answer the user's request."
    ev.write_text(json.dumps([{"instruction": instruction, "input": q, "output": ""} for q in queries]))
    records = list(schema_records("chat_user", pool, queries))
    return Setup([str(write_schema("chat_user", records, folder))], str(ev), list(range(PLANTS)))


def _toolalpaca(folder: Path, pool: list[Filler], queries: list[str]) -> Setup:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "train_data.json"
    path.write_text(json.dumps(toolalpaca_apis(pool, queries), ensure_ascii=False))
    return Setup([str(path)], "stabletoolbench", list(range(PLANTS)))


def _toolrl_public(folder: Path, pool: list[Filler], queries: list[str]) -> Setup:
    """ToolRL's SFT slice against its RL test set (tests/data/foreign/toolrl): rows 0 and 42 leak."""
    foreign = REPO / "tests" / "data" / "foreign" / "toolrl"
    return Setup([str(foreign / "rlla_sft.json")], str(foreign / "test.parquet"), [0, 42])


def _disguise_case(kind: str) -> Callable:
    def build(folder: Path, pool: list[Filler], queries: list[str]) -> Setup:
        stride = RECORDS // PLANTS
        records = [
            disguised_record(kind, pool[i % len(pool)], i, queries[i // stride] if i % stride == stride - 1 else None)
            for i in range(RECORDS)
        ]
        return Setup([str(write_schema("chat_user", records, folder))], "stabletoolbench", list(range(PLANTS)))

    return build


def _short_case(lo: int, hi: int) -> Callable:
    def build(folder: Path, pool: list[Filler], queries: list[str]) -> Setup:
        folder.mkdir(parents=True, exist_ok=True)
        goals = short_goals(lo, hi)
        ev = folder / "eval_goals.jsonl"
        ev.write_text("".join(json.dumps({"id": str(idx), "text": g}) + "\n" for idx, g in goals))
        stride = RECORDS // len(goals)
        records = [
            short_record(pool[i % len(pool)], i, goals[i // stride][1] if i % stride == stride - 1 else None)
            for i in range(RECORDS)
        ]
        return Setup([str(write_schema("prompt_completion", records, folder))], str(ev), list(range(len(goals))))

    return build


def cases() -> list[Case]:
    out = [
        Case("control_clean", "control", "the filler alone (chat records), nothing planted: must PASS", _control),
        Case("chat_user", "control", SCHEMAS["chat_user"][0], _schema_case("chat_user")),
    ]
    for name in (
        "alpaca_input",
        "alpaca_output",
        "alpaca_no_input",
        "prompt_completion",
        "qa_answer",
        "dolly_context",
        "dpo_chosen",
        "schema_change_1000",
        "openai_tool_description",
    ):
        out.append(Case(name, "schema", SCHEMAS[name][0], _schema_case(name)))
    out.insert(
        3, Case("alpaca_input_csv", "schema", "Alpaca as CSV, query in input", _schema_case("alpaca_input", True))
    )
    out.append(Case("first_record_9mb", "schema", "chat JSONL whose first record is 9 MB", _first_record_9mb))
    out.append(Case("record_2mb", "schema", "one 2 MB record (a tool turn) holding the 50 queries", _record_2mb))
    out.append(Case("alpaca_eval_set", "schema", "the eval set in Alpaca form (one instruction)", _alpaca_eval_set))
    for name in NOT_READ:
        out.append(Case(name, "not read", SCHEMAS[name][0], _schema_case(name)))
    out.append(
        Case("toolalpaca_questions", "not read", "ToolAlpaca's older layout: API objects with Questions", _toolalpaca)
    )
    for kind, (what, _) in DISGUISES.items():
        out.append(Case(kind, "disguise", what, _disguise_case(kind)))
    for kind, what in SHAPED.items():
        out.append(Case(kind, "disguise", what, _disguise_case(kind)))
    out.append(Case("toolrl_public", "public", "ToolRL's SFT file vs its 80 RL test prompts (2 leak)", _toolrl_public))
    out.append(
        Case("short_5to7_words", "short", "50 WebShop goals of 5-7 words in a task_instruction line", _short_case(5, 7))
    )
    out.append(Case("short_8to10_words", "short", "the same with goals of 8-10 words", _short_case(8, 10)))
    return out


def target(row: dict) -> tuple[str, bool]:
    """Issue 22's target for a case, and whether the row meets it."""
    name, n = row["case"], row.get("planted") or 0
    found = (row["conclusive"] or 0) if row["conclusive"] is not None else 0
    suspected = row["suspected"] or 0
    if name == "control_clean":
        return "PASS, exit 0", row["verdict"] == "pass" and row["exit"] == 0
    if name == "toolrl_public":
        return "2/2, exit 1", found == 2 and row["exit"] == 1
    if name == "alpaca_eval_set":
        return ">=48/50, or exit 2 (items read as one text)", found >= 48 or row["exit"] == 2
    if name.startswith("short_"):
        return ">=48/50 found, or INCOMPLETE", found + suspected >= 48 or row["verdict"] == "incomplete"
    if name == "record_2mb":
        return ">=48/50, exit 1, < 10 s", found >= 48 and row["exit"] == 1 and row["seconds"] < 10
    need = 45 if name in ("camel_case", "lunate_sigma") else 48
    return f">={need}/{n}, exit 1", found >= need * n // PLANTS and row["exit"] == 1


def run_case(case: Case, root: Path, pool: list[Filler], queries: list[str]) -> dict:
    folder = root / case.name
    setup = case.build(folder / "data", pool, queries)
    args = [sys.executable, "-m", "auditor", "audit", "--eval", setup.eval]
    for t in setup.train:
        args += ["--train", t]
    args += ["--report-dir", str(folder / "report"), "--index-dir", str(root / "indexes")]
    env = repo_env()
    t0 = time.perf_counter()
    res = subprocess.run(args, capture_output=True, text=True, cwd=REPO, env=env)
    seconds = time.perf_counter() - t0
    row = {"case": case.name, "group": case.group, "what": case.what, "exit": res.returncode, "seconds": seconds}
    row["planted"] = len(setup.planted)
    report = folder / "report" / "report.json"
    if res.returncode == 2 or not report.exists():
        lines = (res.stderr or res.stdout).strip().splitlines()
        row.update(conclusive=None, suspected=None, verdict="error", note=lines[-1][:160] if lines else "")
        return row
    doc = json.loads(report.read_text())
    planted = set(setup.planted)
    conclusive = {f["eval_ordinal"] for f in doc["findings"] if f["conclusive"]} & planted
    any_found = {f["eval_ordinal"] for f in doc["findings"]} & planted
    others = {f["eval_ordinal"] for f in doc["findings"] if f["conclusive"]} - planted
    note = f"{len(others)} other item(s) conclusive" if others else ""
    row.update(
        conclusive=len(conclusive),
        suspected=len(any_found - conclusive),
        verdict=doc["verdict"],
        note=note,
    )
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="*", default=["*"], help="case names or shell patterns (default: all)")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--json", help="also write the rows as JSON to this file")
    ap.add_argument("--keep", help="keep the generated files and reports in this folder")
    args = ap.parse_args()
    chosen = [
        c for c in cases() if any(fnmatch.fnmatch(c.name, p) for p in " ".join(args.cases).replace(",", " ").split())
    ]
    if args.list or not chosen:
        for c in cases():
            print(f"{c.name:28} {c.group:9} {c.what}")
        return
    items = [r.view("query") for r in Dataset(DatasetSpec("ev", ["stabletoolbench"], role="eval")).records()]
    queries = items[:PLANTS]
    goals = [g for lo, hi in ((5, 7), (8, 10)) for _, g in short_goals(lo, hi)]
    pool = filler_pool(items + goals)
    print(
        f"filler: {len(pool)} real exchanges; {RECORDS} records per case, {PLANTS} planted; eval: stabletoolbench unless the case brings its own"
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.keep) if args.keep else Path(tmp)
        print("| case | group | found conclusive | suspected only | verdict | exit | seconds | target | met | note |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for case in chosen:
            row = run_case(case, root, pool, queries)
            row["target"], row["met"] = target(row)
            rows.append(row)
            n = row.get("planted", PLANTS)
            found = "-" if row["conclusive"] is None or not n else f"{row['conclusive']}/{n}"
            sus = "-" if row["suspected"] is None or not n else f"{row['suspected']}/{n}"
            print(
                f"| {case.name} | {case.group} | {found} | {sus} | {row['verdict'].upper()} | {row['exit']} "
                f"| {row['seconds']:.1f} | {row['target']} | {'yes' if row['met'] else 'NO'} | {row['note']} |",
                flush=True,
            )
    met = sum(r["met"] for r in rows)
    print(f"targets met: {met}/{len(rows)}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

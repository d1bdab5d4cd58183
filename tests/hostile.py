"""The hostile-input corpus, generated on demand into a folder (shared by the reliability tests).

Every training file holds (somewhere readable) a copy of the eval item ``LEAK`` so a test can tell
"read and checked" from "silently dropped". ``EVAL`` is a clean JSONL eval set of three items.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import zstandard
from click.testing import CliRunner

from auditor.cli import main

REPO = Path(__file__).resolve().parent.parent

LEAK = "book a one way flight from boston to denver for two adults next friday morning"
EVAL_ITEMS = [
    {"id": "e1", "text": LEAK},
    {"id": "e2", "text": "find a vegan restaurant near the city hall that is open after ten at night"},
    {"id": "e3", "text": "what is the weather forecast for the weekend in the mountains near lake tahoe"},
]


def write_eval(folder: Path, items=EVAL_ITEMS, name: str = "eval.jsonl") -> Path:
    p = folder / name
    p.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    return p


def jl(*objs) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


GOOD = {"id": "t1", "text": f"User: {LEAK}\nAssistant: sure"}
OTHER = {"id": "t2", "text": "an unrelated training record about cooking pasta al dente"}

#: name -> (file bytes, problem in the one-line error, where in the file ('line N'/'item N'/None))
CORPUS: dict[str, tuple[bytes, str, str | None]] = {
    "truncated.json": (json.dumps([GOOD, OTHER, OTHER], indent=1).encode()[:-25], "invalid JSON", "line 12"),
    "invalid_utf8.jsonl": (
        jl(GOOD) + b'{"id": "t2", "text": "caf\xe9 au lait"}\n' + jl(OTHER),
        "not valid UTF-8",
        "line 2",
    ),
    "invalid_utf8.json": (
        b"[\n" + json.dumps(GOOD).encode() + b',\n{"id": 2, "text": "caf\xe9"}\n]',
        "not valid UTF-8",
        "line 3",
    ),
    "nul.jsonl": (jl(GOOD) + b'{"id": "t2", "text": "nul\x00byte"}\n', "invalid JSON", "line 2"),
    "nul.json": (
        b"[\n" + json.dumps(GOOD).encode() + b',\n{"id": 2, "text": "a\x00b"}\n]',
        "NUL byte in a JSON document",
        "line 3",
    ),
    "nul.csv": (b'id,text\nt1,"' + LEAK.encode() + b'"\nt2,nul\x00byte\n', "NUL byte in row", "line 3"),
    "empty.jsonl": (b"", "no records in the file", None),
    "empty.json": (b"  \n", "empty file", None),
    "deep.json": (
        b"[\n" + json.dumps(GOOD).encode() + b",\n" + b"[" * 5000 + b"]" * 5000 + b"\n]",
        "JSON nested deeper than",
        "line 3",
    ),
    "deep.jsonl": (jl(GOOD) + b"[" * 100000 + b"]" * 100000 + b"\n", "JSON nested deeper than", "line 2"),
    "wrong_schema.jsonl": (jl(GOOD, {"id": "t2", "text": 5}), "text field 'text' is int, not a string", "line 2"),
    "toolbench_wrong.json": (
        json.dumps([{"query_id": 1, "query": LEAK}, {"query_id": 2, "query": 7}]).encode(),
        "missing or non-string 'query'",
        "item 1",
    ),
    "truncated.jsonl.gz": (gzip.compress(jl(GOOD, OTHER) * 50)[:-30], "truncated compressed data", None),
    "truncated.jsonl.zst": (
        zstandard.ZstdCompressor().compress(jl(GOOD, OTHER) * 50)[:-30],
        "truncated compressed data",
        None,
    ),
    "csv_unterminated.csv": (
        b'id,text\nt1,"' + LEAK.encode() + b'"\nt2,"open quote\nt3,more\n',
        "malformed CSV: unexpected end of data",
        "line 4",
    ),
}


#: files bad as eval data only: on the training side their records are read whole (the ``fields`` view)
EVAL_ONLY_BAD: dict[str, tuple[bytes, str, str | None]] = {
    "missing_field.jsonl": (jl(GOOD, {"id": "t2", "body": "no text here"}), "no text field found", "line 2"),
}


def make_file(folder: Path, name: str) -> Path:
    p = folder / name
    p.write_bytes({**CORPUS, **EVAL_ONLY_BAD}[name][0])
    return p


def cli(*args: str):
    """Run the CLI in-process; returns click's Result (stdout and stderr kept apart)."""
    return CliRunner().invoke(main, list(args), catch_exceptions=True)


def run_cli(*args: str, timeout: float = 120, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    """Run ``python -m auditor`` in a real subprocess from the repository root."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "auditor", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        **kw,
    )


def report(report_dir: Path) -> dict:
    return json.loads((report_dir / "report.json").read_text(encoding="utf-8"))


def assert_accounting(doc: dict) -> None:
    """records read = records checked + skipped + left out by the split, for every dataset."""
    for name, d in doc["datasets"].items():
        assert d["read"] == d["records"] + d["skipped"] + d["filtered_by_split"], name
        assert d["skipped"] == sum(d["skip_reasons"].values()), name

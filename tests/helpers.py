"""Helpers the test modules import (``from helpers import shared_file``): where the repository and the
public releases in ../shared/data are, and a skip that names a missing release.

Fixtures live in ``conftest.py``; plain functions and constants live here, so no test imports conftest.
"""

from __future__ import annotations

import csv
import gzip
import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("AUDITOR_SHARED_DATA", REPO.parent / "shared" / "data"))


def shared_file(rel: str) -> Path:
    """Path of a file in ../shared/data, skipping the test (with the reason) when it is absent."""
    path = SHARED / rel
    if not path.exists():
        pytest.skip(f"real data not available: {path} is absent; {fetch_hint(rel)}")
    return path


def fetch_hint(rel: str = "") -> str:
    """How to get the public release holding ``rel`` (a path under ../shared/data; empty: all of them)."""
    name = rel.split("/", 1)[0] if "/" in rel else "all"
    return f"fetch it with: auditor data fetch {name} (docs/data.md; AUDITOR_SHARED_DATA picks the folder)"


GOLDEN = REPO / "tests" / "data" / "golden"  # reports of the README's audits (tests/test_report_golden.py)


def golden_path(name: str, file: str) -> Path:
    """Where the golden ``file`` (``report.json``, ``report.md`` ...) of README audit ``name`` is kept;
    ``split``'s report.json (several MB: every derived record of its provenance entry) is gzipped."""
    gzipped = file == "report.json" and name == "split"
    return GOLDEN / (f"{name}.{file}.gz" if gzipped else f"{name}.{file}")


def read_golden(name: str, file: str) -> str:
    """The golden file's text (decompressed)."""
    data = golden_path(name, file).read_bytes()
    return (gzip.decompress(data) if golden_path(name, file).suffix == ".gz" else data).decode("utf-8")


def loadable_golden_report(name: str) -> str:
    """The golden ``report.json`` of ``name`` with its masked run figures (``"<volatile>"``) put back as
    numbers, so that ``auditor report`` (which checks every value's type) accepts it."""
    report = json.loads(read_golden(name, "report.json"))

    def unmask(section: dict) -> None:
        for key, value in section.items():
            if isinstance(value, dict):
                unmask(value)
            elif value == "<volatile>" and key not in ("version", "started"):
                section[key] = 0

    unmask(report["run"])
    return json.dumps(report)


def stb_heldout_case() -> tuple[list, list]:
    """60 StableToolBench eval queries, then training records: the frozen held-out paraphrases and
    same-topic negatives (``tests/data/heldout/stabletoolbench.tsv``) of the first 30 items that have one."""
    from auditor.datasets.dataset import Dataset, DatasetSpec
    from auditor.records.record import Record

    ev = list(Dataset(DatasetSpec("stb", ["stabletoolbench"], role="eval")).records())
    with open(REPO / "tests" / "data" / "heldout" / "stabletoolbench.tsv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    ids = list(dict.fromkeys(r["item_id"] for r in rows))[:30]
    by_id = {r.id: r for r in ev}
    items = [by_id[i] for i in ids] + [r for r in ev if r.id not in set(ids)][:30]
    train = [
        Record("heldout", f"{r['kind']}:{r['item_id']}", f"stabletoolbench.tsv:{n + 2}", {"text": r["text"]}, ordinal=n)
        for n, r in enumerate(rows)
        if r["item_id"] in set(ids)
    ]
    return items, train


def mmlu_questions(n: int = 60, start: int = 0) -> list:
    """Real text about something else: the first ``n`` MMLU sociology questions (llm-decontaminator's
    copy), numbered from ``start``."""
    from auditor.records.record import Record

    path = shared_file("llm-decontaminator/data/rephrase/sociology_test.csv")
    with open(path, newline="", encoding="utf-8") as f:
        qs = [row[0] for row in csv.reader(f) if row][:n]
    return [
        Record("mmlu", str(i), f"sociology_test.csv:{i + 1}", {"text": q}, ordinal=start + i) for i, q in enumerate(qs)
    ]


def json_strings(value, out: list[str], limit: int | None = None) -> None:
    """The string values (and keys) of a parsed JSON document, appended to ``out`` (up to ``limit``)."""
    stack = [value]
    while stack and (limit is None or len(out) < limit):
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            out.extend(k for k in v if isinstance(k, str))
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)

"""Maintainer script: rebuild the bundled evaluation sets from a checkout of the public releases.

    python -m auditor.data._bundle ../shared/data

Writes the trimmed files under ``auditor/data/`` and ``registry.json`` with their SHA-256
fingerprints, which :mod:`auditor.registry` checks at every load.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).parent
STB_GROUPS = ("G1_instruction", "G1_category", "G1_tool", "G2_instruction", "G2_category", "G3_instruction")


def _dump(obj, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def main(shared: str) -> None:
    src = Path(shared)
    entries = {}
    files = []
    for g in STB_GROUPS:
        doc = json.loads((src / "stabletoolbench/solvable_queries/test_instruction" / f"{g}.json").read_text())
        trimmed = [{"query_id": r["query_id"], "query": r["query"], "relevant APIs": r["relevant APIs"]} for r in doc]
        _dump(trimmed, HERE / "stabletoolbench" / f"{g}.json")
        files.append(f"stabletoolbench/{g}.json")
    entries["stabletoolbench"] = {
        "format": "toolbench-queries",
        "files": files,
        "description": "StableToolBench solvable test queries (765; id, group file, query, relevant APIs)",
        "splits": "group file: G1_instruction, G1_category, G1_tool, G2_instruction, G2_category, G3_instruction",
        "source": "THUNLP-MT/StableToolBench@aa4ed9f4737ad98bd706663f01d63623c3427812 solvable_queries/test_instruction",
        "licence": "Apache-2.0",
        "notice": "stabletoolbench/NOTICE",
    }
    for domain in ("airline", "retail"):
        base = src / "tau2-bench/data/tau2/domains" / domain
        out = HERE / "tau2" / domain
        out.mkdir(parents=True, exist_ok=True)
        for name in ("tasks.json", "split_tasks.json"):
            shutil.copyfile(base / name, out / name)
        entries[f"tau2-{domain}"] = {
            "format": "tau2-tasks",
            "files": [f"tau2/{domain}/tasks.json"],
            "aux_files": [f"tau2/{domain}/split_tasks.json"],
            "description": f"tau2-bench {domain} tasks with their train/test split (split_tasks.json)",
            "splits": "train, test",
            "licence": "MIT",
            "notice": "tau2/NOTICE",
            "source": f"sierra-research/tau2-bench@a2c024725189473d2d7cea3a5cfdbcc67478e41f data/tau2/domains/{domain}",
        }
    (HERE / "webshop").mkdir(exist_ok=True)
    shutil.copyfile(src / "webshop/baseline_models/data/human_goals.json", HERE / "webshop/human_goals.json")
    entries["webshop"] = {
        "format": "webshop-goals",
        "files": ["webshop/human_goals.json"],
        "description": "WebShop human goals (12,087 instructions); select by index range, e.g. webshop:0:500",
        "splits": "index range START:END (baseline code: test 0:500, eval 500:1500, train 1500:)",
        "licence": "MIT",
        "notice": "webshop/NOTICE",
        "source": "princeton-nlp/WebShop@64fa2a5c15c7daa698b9ac93f5bb5437b634c9bd baseline_models/data/human_goals.json",
    }
    for entry in entries.values():
        entry["sha256"] = {
            f: hashlib.sha256((HERE / f).read_bytes()).hexdigest() for f in entry["files"] + entry.get("aux_files", [])
        }
    _dump({"version": 1, "datasets": entries}, HERE / "registry.json")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data")

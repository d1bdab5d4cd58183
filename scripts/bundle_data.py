"""Maintainer script: rebuild the bundled evaluation sets from a checkout of the public releases.

    python scripts/bundle_data.py ../shared/data

Writes the trimmed files under ``auditor/data/`` and ``registry.json`` with their SHA-256
fingerprints, which :mod:`auditor.datasets.registry` checks at every load.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from auditor.datasets import registry
from auditor.datasets.dataset import Dataset, DatasetSpec

HERE = Path(__file__).resolve().parent.parent / "auditor" / "data"  # the package's bundled data
STB_GROUPS = ("G1_instruction", "G1_category", "G1_tool", "G2_instruction", "G2_category", "G3_instruction")


def _dump(obj, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def main(shared: str) -> None:
    src = Path(shared)
    entries: dict[str, dict[str, Any]] = {}
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
        "splits": (
            "index range START:END (baseline code: test 0:500; train_choice_il.py: eval 500:1500, train 1500:; "
            "train_search_il.py: train 500:)"
        ),
        "licence": "MIT",
        "notice": "webshop/NOTICE",
        "source": "princeton-nlp/WebShop@64fa2a5c15c7daa698b9ac93f5bb5437b634c9bd baseline_models/data/human_goals.json",
    }
    entries.update(benchmarks(src))
    for entry in entries.values():
        entry["sha256"] = {
            f: hashlib.sha256((HERE / f).read_bytes()).hexdigest() for f in entry["files"] + entry.get("aux_files", [])
        }
    _dump({"version": 1, "datasets": entries}, HERE / "registry.json")
    _count(entries)
    _dump({"version": 1, "datasets": entries}, HERE / "registry.json")


GORILLA = ("ShishirPatil/gorilla", "6ea57973c7a6097fd7c5915698c54c17c5b1b6c8")
GORILLA_V1 = ("ShishirPatil/gorilla", "7bef0009980152c0f3eb811a545d2e6209807b92")
API_BANK = ("AlibabaResearch/DAMO-ConvAI", "5d5a2d40b2e6b6998a06961cc43ad0a8c069b153")
TOOLALPACA = ("tangqiaoyu/ToolAlpaca", "189069998d64a7baf1b4a1c3c4b2e75eb9d05532")
NESTFUL = ("IBM/NESTFUL", "053cbde0446dddd31e8293f179085e1b39ab79b5")
TAU_BENCH = ("sierra-research/tau-bench", "59a200c6d575d595120f1cb70fea53cef0632f6b")
BFCL_V4 = "gorilla/berkeley-function-call-leaderboard/bfcl_eval/data"
BFCL_V1 = "gorilla/bfcl_v1_7bef000/berkeley-function-call-leaderboard/data"
APACHE_TEXT = HERE / "stabletoolbench" / "LICENSE"


def _gz(src: Path, dest_rel: str, upstream: dict, data: bytes | None = None) -> str:
    """Write ``src`` (or ``data``) gzip-compressed (deterministic: mtime 0) as ``dest_rel``.gz and record
    the upstream file's own SHA-256 (of the uncompressed bytes) in ``upstream``."""
    raw = src.read_bytes() if data is None else data
    rel = dest_rel + ".gz"
    out = HERE / rel
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))
    upstream[rel] = hashlib.sha256(raw).hexdigest()
    return rel


def _notice(folder: str, title: str, repo: tuple[str, str], paths: str, licence: str, note: str) -> str:
    (HERE / folder).mkdir(parents=True, exist_ok=True)
    if licence == "Apache-2.0":
        shutil.copyfile(APACHE_TEXT, HERE / folder / "LICENSE")
        terms = "Licence: Apache License 2.0 (full text in LICENSE beside this file)."
    else:
        terms = "Licence: MIT, as stated by the repository's LICENSE file:\n\n" + MIT_TAU_BENCH
    text = (
        f"{title}\nSource: https://github.com/{repo[0]}, commit {repo[1]},\nfiles {paths}.\n{terms}\n"
        f"Modification: {note} Each file's SHA-256 before compression is in registry.json (upstream_sha256).\n"
    )
    (HERE / folder / "NOTICE").write_text(text, encoding="utf-8")
    return f"{folder}/NOTICE"


MIT_TAU_BENCH = """MIT License

Copyright (c) 2024 Sierra

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
(Text of the LICENSE file of sierra-research/tau-bench.)"""

BFCL_V4_CATEGORIES = (
    "simple_python simple_java simple_javascript multiple parallel parallel_multiple irrelevance "
    "live_simple live_multiple live_parallel live_parallel_multiple live_relevance live_irrelevance "
    "multi_turn_base multi_turn_miss_func multi_turn_miss_param multi_turn_long_context memory web_search"
).split()
BFCL_V1_CATEGORIES = (
    "simple multiple_function parallel_function parallel_multiple_function relevance chatable java javascript sql "
    "rest executable_simple executable_multiple_function executable_parallel_function "
    "executable_parallel_multiple_function"
).split()
UNCOMPRESSED_NOTE = "none to the content; compressed with gzip."


def _bfcl_files(folder: Path, names: list[str], target: str, up: dict) -> tuple[list, list]:
    """BFCL question files of ``folder`` bundled under ``target``, and their ``possible_answer/``
    files where there are some (aux files)."""
    files, aux = [], []
    for name in names:
        files.append(_gz(folder / name, f"{target}/{name}", up))
        answer = folder / "possible_answer" / name
        if answer.exists():
            aux.append(_gz(answer, f"{target}/possible_answer/{name}", up))
    return files, aux


def benchmarks(src: Path) -> dict:
    """The function-calling benchmarks (Apache-2.0 / MIT files of ../shared/data, PROVENANCE.md)."""
    entries: dict = {}

    up: dict = {}
    files, aux = _bfcl_files(src / BFCL_V4, [f"BFCL_v4_{cat}.json" for cat in BFCL_V4_CATEGORIES], "bfcl/v4", up)
    for doc in sorted((src / BFCL_V4 / "multi_turn_func_doc").glob("*.json")):
        aux.append(_gz(doc, f"bfcl/v4/multi_turn_func_doc/{doc.name}", up))
    live = [c for c in BFCL_V4_CATEGORIES if c.startswith("live_")]
    non_live = BFCL_V4_CATEGORIES[:7]
    entries["bfcl"] = {
        "format": "bfcl",
        "files": files,
        "aux_files": aux,
        "description": "BFCL v4 questions (19 categories, live and multi-turn included), ground truth as calls",
        "splits": "category: " + ", ".join(BFCL_V4_CATEGORIES) + "; groups: non_live, live, multi_turn, agentic",
        "split_aliases": {
            "non_live": ",".join(non_live),
            "live": ",".join(live),
            "multi_turn": ",".join(c for c in BFCL_V4_CATEGORIES if c.startswith("multi_turn")),
            "agentic": "memory,web_search",
        },
        "source": f"{GORILLA[0]}@{GORILLA[1]} {BFCL_V4.removeprefix('gorilla/')}",
        "licence": "Apache-2.0",
        "notice": _notice(
            "bfcl",
            "Berkeley Function-Calling Leaderboard (BFCL) v4 question and answer files, and the v1 test set",
            GORILLA,
            f"{BFCL_V4.removeprefix('gorilla/')}/BFCL_v4_*.json, possible_answer/, multi_turn_func_doc/ "
            f"(and, for v1, commit {GORILLA_V1[1]}, {BFCL_V1.removeprefix('gorilla/bfcl_v1_7bef000/')}/"
            "gorilla_openfunctions_v1_test_*.json, possible_answer/)",
            "Apache-2.0",
            "none to the content; compressed with gzip. Not bundled: BFCL_v4_format_sensitivity.json (a list "
            "of ids, not questions), memory_prereq_conversation/, unused_datasets/.",
        ),
        "upstream_sha256": up,
    }
    up = {}
    names = [f"gorilla_openfunctions_v1_test_{cat}.json" for cat in BFCL_V1_CATEGORIES]
    files, aux = _bfcl_files(src / BFCL_V1, names, "bfcl/v1", up)
    entries["bfcl-v1"] = {
        "format": "bfcl",
        "files": files,
        "aux_files": aux,
        "description": "BFCL v1 test set as first released (2,000 questions, 14 categories); ids <category>_<line>",
        "splits": "category: " + ", ".join(BFCL_V1_CATEGORIES),
        "source": f"{GORILLA_V1[0]}@{GORILLA_V1[1]} berkeley-function-call-leaderboard/data",
        "licence": "Apache-2.0",
        "notice": "bfcl/NOTICE",
        "upstream_sha256": up,
    }

    up, files = {}, []
    base = src / "damo-convai/api-bank"
    tests = ["level-1-api", "level-1-response", "level-2-api", "level-2-response", "level-3"]
    for stem in tests:
        files.append(_gz(base / "test-data" / f"{stem}.json", f"api-bank/test-data/{stem}.json", up))
    files.append(_gz(base / "training-data/lv3-train.json", "api-bank/training-data/lv3-train.json", up))
    entries["api-bank"] = {
        "format": "api-bank",
        "files": files,
        "description": "API-Bank test levels 1-3 (default) and the level-3 training file (train-level-3)",
        "splits": ", ".join(tests) + "; training: train-level-3; groups: level-1, level-2, test, train",
        "default_split": ",".join(tests),
        "split_aliases": {
            "level-1": "level-1-api,level-1-response",
            "level-2": "level-2-api,level-2-response",
            "test": ",".join(tests),
            "train": "train-level-3",
        },
        "source": f"{API_BANK[0]}@{API_BANK[1]} api-bank/test-data, api-bank/training-data",
        "licence": "Apache-2.0",
        "notice": _notice(
            "api-bank",
            "API-Bank test and training data",
            API_BANK,
            "api-bank/test-data/{level-1-api,level-1-response,level-2-api,level-2-response,level-3}.json, "
            "api-bank/training-data/lv3-train.json (licence: api-bank/LICENSE, Apache-2.0; the repository root "
            "LICENSE is MIT)",
            "Apache-2.0",
            "none to the content; compressed with gzip. Not bundled: level-3-batch-inf*.json (level 3 "
            "re-cut for batch inference), lv3-api-train / lv3-response-train (lv3-train is their union), "
            "lv1-lv2-samples/ (the dialogues the level-1/2 files are cut from). The level-1/2 training files "
            "are not in the public snapshot.",
        ),
        "upstream_sha256": up,
    }

    up = {}
    files = [
        _gz(src / "toolalpaca/data" / f"eval_{k}.json", f"toolalpaca/eval_{k}.json", up) for k in ("real", "simulated")
    ]
    entries["toolalpaca"] = {
        "format": "toolalpaca",
        "files": files,
        "description": "ToolAlpaca evaluation instructions (real APIs 114, simulated 100) with golden actions",
        "splits": "real, simulated",
        "source": f"{TOOLALPACA[0]}@{TOOLALPACA[1]} data/eval_real.json, data/eval_simulated.json",
        "licence": "Apache-2.0",
        "notice": _notice(
            "toolalpaca",
            "ToolAlpaca evaluation sets",
            TOOLALPACA,
            "data/eval_real.json, data/eval_simulated.json",
            "Apache-2.0",
            UNCOMPRESSED_NOTE + " The training set (train_data.json) is not in the public snapshot.",
        ),
        "upstream_sha256": up,
    }

    up = {}
    nest = {
        "executable": "executable/executable-data.json",
        "glaive": "non-executable/non-executable-glaive-data.json",
        "sgd": "non-executable/non-executable-sgd-data.json",
    }
    files = [_gz(src / "nestful/data" / rel, f"nestful/{Path(rel).name}", up) for rel in nest.values()]
    entries["nestful"] = {
        "format": "nestful",
        "files": files,
        "description": "NESTFUL nested API-call sequences (300: executable 85, glaive 169, sgd 46)",
        "splits": "executable, glaive, sgd",
        "source": f"{NESTFUL[0]}@{NESTFUL[1]} data/",
        "licence": "Apache-2.0",
        "notice": _notice(
            "nestful",
            "NESTFUL data files",
            NESTFUL,
            "data/" + ", data/".join(nest.values()),
            "Apache-2.0",
            UNCOMPRESSED_NOTE + " The *-spec.json function specs are not bundled.",
        ),
        "upstream_sha256": up,
    }

    up = {}
    q = "gorilla/eval/eval-data/questions"
    files = [
        _gz(src / "gorilla/data/apibench/torchhub_eval.json", "apibench/torchhub_eval.json", up),
        _gz(
            src / "gorilla" / q / "tensorflowhub/questions_tensorflowhub_0_shot.jsonl",
            "apibench/questions_tensorflowhub_0_shot.jsonl",
            up,
        ),
        _gz(
            src / "gorilla" / q / "huggingface/questions_huggingface_0_shot.jsonl",
            "apibench/questions_huggingface_0_shot.jsonl",
            up,
        ),
        _gz(src / "gorilla/data/apibench/torchhub_train.json", "apibench/torchhub_train.json", up),
    ]
    entries["apibench"] = {
        "format": "apibench",
        "files": files,
        "description": "APIBench (Gorilla) eval: TorchHub 186 (with api_call), TensorFlow Hub 685, HuggingFace 904; "
        "TorchHub training set (train-torchhub)",
        "splits": "torchhub, tensorflowhub, huggingface; training: train-torchhub (alias train)",
        "default_split": "torchhub,tensorflowhub,huggingface",
        "split_aliases": {"train": "train-torchhub", "eval": "torchhub,tensorflowhub,huggingface"},
        "source": f"{GORILLA[0]}@{GORILLA[1]} data/apibench/torchhub_{{eval,train}}.json, {q}/",
        "licence": "Apache-2.0",
        "notice": _notice(
            "apibench",
            "APIBench (Gorilla) TorchHub split and eval questions",
            GORILLA,
            f"data/apibench/torchhub_eval.json, data/apibench/torchhub_train.json, {q}/{{tensorflowhub,"
            "huggingface}/questions_*_0_shot.jsonl",
            "Apache-2.0",
            UNCOMPRESSED_NOTE + " The TensorFlow Hub and HuggingFace train files are not in the public "
            "snapshot (4 MiB or more); their eval sides are the 0-shot question files.",
        ),
        "upstream_sha256": up,
    }

    up = {}
    traj_path = src / "tau-bench/historical_trajectories/gpt-4o-airline.json"
    tasks: dict = {}
    for run in json.loads(traj_path.read_text(encoding="utf-8")):
        task = run["info"]["task"]
        tasks.setdefault(run["task_id"], {"task_id": run["task_id"], **task})
    data = (json.dumps([tasks[k] for k in sorted(tasks)], ensure_ascii=False, indent=1) + "\n").encode()
    rel = _gz(traj_path, "tau-bench/airline_tasks.json", up, data=data)
    up = {
        rel: {
            "extracted_from": "historical_trajectories/gpt-4o-airline.json",
            "sha256_of_source": hashlib.sha256(traj_path.read_bytes()).hexdigest(),
        }
    }
    entries["tau-bench-airline"] = {
        "format": "tau-bench-tasks",
        "files": [rel],
        "description": "tau-bench (v1) airline test tasks (50), instruction and gold actions",
        "splits": "test (retail tasks are not in the public JSON files)",
        "source": f"{TAU_BENCH[0]}@{TAU_BENCH[1]} historical_trajectories/gpt-4o-airline.json (info.task)",
        "licence": "MIT",
        "notice": _notice(
            "tau-bench",
            "tau-bench (v1) airline tasks",
            TAU_BENCH,
            "historical_trajectories/gpt-4o-airline.json",
            "MIT",
            "the task of each run (info.task: user_id, instruction, actions, outputs), one per task_id (the "
            "four trials of a task carry the same task), with its task_id; trajectories dropped; gzip.",
        ),
        "upstream_sha256": up,
    }
    return entries


def _count(entries: dict) -> None:
    """Record counts per entry and per split, read through the adapters (what `auditor registry` shows)."""
    registry._catalogue.cache_clear()
    registry._verified.cache_clear()
    for name, entry in entries.items():
        ds = Dataset(DatasetSpec(name=name, paths=[name], role="eval"))
        ds.split = None  # every split, the training ones too
        per = Counter(r.split for r in ds.records())
        entry["records"] = sum(per.values())
        entry["split_counts"] = {str(k): v for k, v in sorted(per.items(), key=lambda kv: str(kv[0])) if k}


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data")

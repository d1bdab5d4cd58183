"""The bundled function-calling benchmarks: each entry loads with its record count (the figures of
../shared/data/PROVENANCE.md, an independent count) and its fingerprint; the bundled bytes decompress to
the upstream files; splits, aliases, defaults and training splits resolve as documented."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections import Counter

import pytest
from click.testing import CliRunner
from helpers import SHARED, shared_file

from auditor.adapters import detect
from auditor.cli import main
from auditor.datasets import registry
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.errors import RegistryError

# record counts per split as PROVENANCE.md states them (not as our adapters count them)
PROVENANCE_COUNTS = {
    "bfcl": {"simple_python": 400, "simple_java": 100, "simple_javascript": 50, "multiple": 200, "parallel": 200,
             "parallel_multiple": 200, "irrelevance": 240, "live_simple": 258, "live_multiple": 1053,
             "live_parallel": 16, "live_parallel_multiple": 24, "live_relevance": 16, "live_irrelevance": 884,
             "multi_turn_base": 200, "multi_turn_miss_func": 200, "multi_turn_miss_param": 200,
             "multi_turn_long_context": 200, "memory": 155, "web_search": 100},
    "bfcl-v1": {"simple": 400, "relevance": 240, "chatable": 200, "multiple_function": 200, "parallel_function": 200,
                "parallel_multiple_function": 200, "executable_simple": 100, "java": 100, "sql": 100, "rest": 70,
                "executable_multiple_function": 50, "executable_parallel_function": 50, "javascript": 50,
                "executable_parallel_multiple_function": 40},
    "api-bank": {"level-1-api": 399, "level-1-response": 375, "level-2-api": 135, "level-2-response": 103,
                 "level-3": 50, "train-level-3": 1245},
    "toolalpaca": {"real": 114, "simulated": 100},
    "nestful": {"executable": 85, "glaive": 169, "sgd": 46},
    "apibench": {"torchhub": 186, "tensorflowhub": 685, "huggingface": 904, "train-torchhub": 837},
    "tau-bench-airline": {"test": 50},
}  # fmt: skip


def _load(ref: str, role: str = "eval"):
    ds = Dataset(DatasetSpec(name="d", paths=[ref], role=role))
    return list(ds.records()), ds


@pytest.mark.parametrize("name", sorted(PROVENANCE_COUNTS))
def test_every_new_entry_loads_with_its_count_and_fingerprint(name):
    entry = registry.resolve(name)
    assert len(entry.sha256) == 64 and entry.licence in ("Apache-2.0", "MIT")
    records, ds = _load(f"{name}:{','.join(PROVENANCE_COUNTS[name])}")
    assert dict(Counter(r.split for r in records)) == PROVENANCE_COUNTS[name]
    assert ds.stats.skipped == 0 and all(r.view("query").strip() for r in records)
    assert ds.describe()["files_sha256"] == entry.sha256  # "sha256" is of the selected records
    cat = json.loads((registry.DATA_DIR / "registry.json").read_text())["datasets"][name]
    assert (registry.DATA_DIR / cat["notice"]).exists()
    if cat["licence"] == "Apache-2.0":
        assert "Apache License" in (registry.DATA_DIR / cat["notice"]).parent.joinpath("LICENSE").read_text()


def test_bundled_bytes_are_the_upstream_files():
    """Each gzip file decompresses to the bytes whose SHA-256 registry.json records; where the shared
    copy exists, that is the upstream file's own SHA-256."""
    cat = json.loads((registry.DATA_DIR / "registry.json").read_text())["datasets"]
    upstream_by_digest = {}
    if SHARED.exists():
        for p in (
            p for d in ("gorilla", "damo-convai", "toolalpaca", "nestful") for p in (SHARED / d).rglob("*.json*")
        ):
            if p.stat().st_size < 5_000_000:
                upstream_by_digest[hashlib.sha256(p.read_bytes()).hexdigest()] = p
    checked = 0
    for name, entry in cat.items():
        for rel, digest in (entry.get("upstream_sha256") or {}).items():
            if isinstance(digest, dict):  # extracted, not copied (tau-bench tasks)
                continue
            data = gzip.decompress((registry.DATA_DIR / rel).read_bytes())
            assert hashlib.sha256(data).hexdigest() == digest, rel
            if upstream_by_digest:
                assert digest in upstream_by_digest, f"{name}: {rel} matches no file of ../shared/data"
            checked += 1
    assert checked >= 60


def test_tampered_bundled_file_fails_its_fingerprint(tmp_path, monkeypatch):
    import shutil

    data = tmp_path / "data"
    shutil.copytree(registry.DATA_DIR, data)
    target = data / "nestful" / "executable-data.json.gz"
    target.write_bytes(gzip.compress(gzip.decompress(target.read_bytes()).replace(b"New York", b"Newark"), mtime=0))
    monkeypatch.setattr(registry, "DATA_DIR", data)
    registry._verified.cache_clear()
    try:
        with pytest.raises(RegistryError, match="fingerprint"):
            registry.resolve("nestful")
    finally:
        registry._verified.cache_clear()


def test_default_split_aliases_and_training_split():
    test, _ = _load("api-bank")
    assert len(test) == 399 + 375 + 135 + 103 + 50 and {r.split for r in test} == {
        "level-1-api", "level-1-response", "level-2-api", "level-2-response", "level-3"
    }  # fmt: skip
    train, _ = _load("api-bank:train-level-3", role="train")
    assert len(train) == 1245 and not any("Generate an API request" in r.view("query") for r in train)
    assert len(_load("api-bank:level-1")[0]) == 399 + 375
    live, _ = _load("bfcl:live")
    assert len(live) == 258 + 1053 + 16 + 24 + 16 + 884
    assert len(_load("apibench")[0]) == 186 + 685 + 904


def test_ids_are_the_benchmarks_own():
    bfcl, _ = _load("bfcl:live_simple")
    assert bfcl[0].id == "live_simple_0-0-0"
    bank, _ = _load("api-bank:level-1-api")
    assert bank[0].id == "ModifyRegistration-QueryHealthData-CancelRegistration-level-2-2/0"
    apib, _ = _load("apibench:huggingface")
    assert apib[-1].id == "911"  # question ids skip numbers: 904 questions, last id 911
    tau, _ = _load("tau-bench-airline")
    assert [r.id for r in tau[:3]] == ["0", "1", "2"]


def test_registry_command_lists_counts_splits_and_licence():
    out = CliRunner().invoke(main, ["registry"]).output
    assert "bfcl" in out and "4696 records" in out and "live_multiple 1053" in out
    assert "api-bank" in out and "train-level-3 1245" in out and "Apache-2.0" in out
    assert "tau-bench-airline" in out and "MIT" in out


@pytest.mark.parametrize(
    "rel, fmt",
    [
        ("damo-convai/api-bank/test-data/level-3.json", "api-bank"),
        ("damo-convai/api-bank/training-data/lv3-train.json", "api-bank"),
        ("gorilla/berkeley-function-call-leaderboard/bfcl_eval/data/BFCL_v4_multi_turn_base.json", "bfcl"),
        (
            "gorilla/bfcl_v1_7bef000/berkeley-function-call-leaderboard/data/gorilla_openfunctions_v1_test_simple.json",
            "bfcl",
        ),
        ("gorilla/data/apibench/torchhub_train.json", "apibench"),
        ("gorilla/gorilla/eval/eval-data/questions/huggingface/questions_huggingface_0_shot.jsonl", "apibench"),
        ("toolalpaca/data/eval_real.json", "toolalpaca"),
        ("nestful/data/executable/executable-data.json", "nestful"),
    ],
)
def test_users_copies_are_detected_as_their_benchmark(rel, fmt):
    assert detect(shared_file(rel)).name == fmt

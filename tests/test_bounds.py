"""Bounded work on hostile parameters: numeric method and run parameters checked before anything is
built, a path listed many times read once, recursive globs that would walk the file system refused
(figures: benchmarks/bench_bounds.py)."""

from __future__ import annotations

import json

import pytest
from hostile import LEAK

from auditor import methods
from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.manifest import load_manifest
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.errors import ConfigError, InputError, ManifestError


@pytest.mark.parametrize(
    "method, params, message",
    [
        ("minhash", {"num_perm": 1e9}, "num_perm must be an integer"),
        ("minhash", {"num_perm": 1_000_000_000}, "num_perm must be between 2 and 4096"),
        ("minhash", {"shingle_size": 10**7}, "shingle_size must be between 1 and 64"),
        ("ngram", {"n": 10**9}, "n must be between 1 and 64"),
        ("ngram", {"threshold": float("nan")}, "threshold must be between 0 and 1"),
        ("exact", {"min_chars": -5}, "min_chars must be between 0"),
        ("calls", {"conclusive_min_calls": True}, "must be an integer"),
    ],
)
def test_numeric_method_parameters_are_bounded(method, params, message):
    with pytest.raises(ConfigError, match=message):
        methods.create(method, params)


def test_num_perm_1e9_in_a_manifest_is_one_line_before_any_work(tmp_path):
    m = tmp_path / "split.toml"
    m.write_text(
        '[datasets.e]\npath = "webshop:0:100"\nrole = "eval"\n[datasets.t]\npath = "webshop:100:200"\nrole = "train"\n'
        '[[checks]]\nname = "c"\ntrain = ["t"]\neval = ["e"]\n[methods.minhash]\nnum_perm = 1e9\n',
        encoding="utf-8",
    )
    with pytest.raises(ManifestError, match="num_perm must be an integer"):
        load_manifest(m)


@pytest.mark.parametrize(
    "key, value", [("batch_size", 10**9), ("batch_size", 0), ("workers", 100_000), ("keep_per_item", 10**7)]
)
def test_run_parameters_are_bounded(key, value):
    config = AuditConfig(
        datasets={"e": DatasetSpec("e", ["webshop:0:10"], role="eval"), "t": DatasetSpec("t", ["webshop:10:20"])},
        checks=[CheckSpec("c", train=["t"], eval=["e"])],
    )
    setattr(config.output if key == "keep_per_item" else config, key, value)
    with pytest.raises(ConfigError, match=key):
        config.validate()


def test_negative_or_nan_max_contaminated_is_refused():
    for bad in (-1, float("nan")):
        config = AuditConfig(
            datasets={"e": DatasetSpec("e", ["webshop:0:10"], role="eval"), "t": DatasetSpec("t", ["webshop:10:20"])},
            checks=[CheckSpec("c", train=["t"], eval=["e"], max_contaminated=bad)],
        )
        with pytest.raises(ConfigError, match="max_contaminated"):
            config.validate()


def test_a_path_listed_200k_times_is_read_once(tmp_path):
    (tmp_path / "t.jsonl").write_text(json.dumps({"id": "1", "text": LEAK}) + "\n", encoding="utf-8")
    ds = Dataset(DatasetSpec("t", ["t.jsonl"] * 200_000, base_dir=str(tmp_path), confine_to=str(tmp_path)))
    assert [r.id for r in ds.records()] == ["1"] and len(ds.files) == 1


def test_two_globs_matching_one_file_read_it_once(tmp_path):
    (tmp_path / "t.jsonl").write_text(json.dumps({"id": "1", "text": LEAK}) + "\n", encoding="utf-8")
    ds = Dataset(DatasetSpec("t", [str(tmp_path / "*.jsonl"), str(tmp_path / "t.*")]))
    assert [r.id for r in ds.records()] == ["1"]


@pytest.mark.parametrize("pattern, message", [("/**", "whole file system"), ("/usr/**/*.jsonl", "outside the")])
def test_unbounded_recursive_globs_are_refused(tmp_path, pattern, message):
    m = tmp_path / "split.toml"
    m.write_text(
        f'[datasets.e]\npath = "webshop:0:100"\nrole = "eval"\n[datasets.t]\npath = "{pattern}"\nrole = "train"\n'
        '[[checks]]\nname = "c"\ntrain = ["t"]\neval = ["e"]\n',
        encoding="utf-8",
    )
    with pytest.raises(ManifestError, match=message):
        load_manifest(m)


def test_recursive_glob_inside_the_manifest_folder_is_fine(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "t.jsonl").write_text(json.dumps({"id": "1", "text": LEAK}) + "\n", encoding="utf-8")
    ds = Dataset(DatasetSpec("t", ["a/**/*.jsonl"], base_dir=str(tmp_path), confine_to=str(tmp_path)))
    assert [r.id for r in ds.records()] == ["1"]
    with pytest.raises(InputError, match="whole file system"):
        Dataset(DatasetSpec("t", ["/**/*.jsonl"]))

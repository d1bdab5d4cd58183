"""Configuration at the edge: the CLI reads the environment (click ``envvar``), the library takes
explicit arguments; ``--index-dir`` moves the embedding cache with the indexes."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from auditor import AuditConfig, CheckSpec, DatasetSpec, run_audit
from auditor.cli import main

MANIFEST = """
{index_dir}
[datasets.test]
path = "webshop:0:100"
role = "eval"

[datasets.train]
path = "webshop:100:400"
role = "train"

[[checks]]
name = "w"
train = ["train"]
eval = ["test"]
methods = ["ngram"]
"""


def _persisted(folder) -> list[str]:
    """Names of the index folders persisted under ``folder``."""
    return sorted(p.name for p in folder.glob("ngram*")) if folder.exists() else []


def test_library_reads_no_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("AUDITOR_INDEX_DIR", str(tmp_path / "env"))
    config = AuditConfig(
        datasets={
            "test": DatasetSpec("test", ["webshop:0:100"], role="eval"),
            "train": DatasetSpec("train", ["webshop:100:400"], role="train"),
        },
        checks=[CheckSpec("w", train=["train"], eval=["test"], methods=["ngram"])],
        findings_store="memory",
    )
    assert config.index_dir is None
    run_audit(config)
    assert not (tmp_path / "env").exists()  # nothing persisted without a folder given
    config.index_dir = str(tmp_path / "given")
    run_audit(config)
    assert _persisted(tmp_path / "given")


@pytest.mark.parametrize(
    ("in_manifest", "flag", "where"),
    [
        (True, False, "manifest"),  # the manifest's index_dir beats $AUDITOR_INDEX_DIR
        (True, True, "flag"),  # --index-dir typed beats the manifest
        (False, False, "env"),  # $AUDITOR_INDEX_DIR fills in for a manifest without one
    ],
)
def test_index_dir_precedence(tmp_path, monkeypatch, in_manifest, flag, where):
    monkeypatch.setenv("AUDITOR_INDEX_DIR", str(tmp_path / "env"))
    manifest = tmp_path / "split.toml"
    manifest.write_text(MANIFEST.format(index_dir='index_dir = "manifest"' if in_manifest else ""))
    args = ["verify", str(manifest), "--report-dir", str(tmp_path / "rep")]
    if flag:
        args += ["--index-dir", str(tmp_path / "flag")]
    res = CliRunner().invoke(main, args)
    # a pass: no goal of 0:100 stands in 100:400 (its 4 goals under 8 tokens were unchecked, exit 1,
    # before short items were checked by containment)
    assert res.exit_code == 0, res.output
    used = {name: bool(_persisted(tmp_path / name)) for name in ("manifest", "flag", "env")}
    assert used == {name: name == where for name in used}


def test_embedding_cache_follows_index_dir(tmp_path, monkeypatch):
    pytest.importorskip("sentence_transformers", reason="the 'embed' extra is not installed")
    pytest.importorskip("faiss", reason="the 'embed' extra is not installed")
    ev, tr = tmp_path / "eval.jsonl", tmp_path / "train.jsonl"
    ev.write_text(json.dumps({"id": 0, "question": "What is the capital city of Australia?"}) + "\n")
    tr.write_text(json.dumps({"text": "Name the city that serves as Australia's capital."}) + "\n")
    base = ["audit", "--train", str(tr), "--eval", str(ev), "--method", "embedding"]

    def run(name: str, *extra: str) -> None:
        res = CliRunner().invoke(main, [*base, "--report-dir", str(tmp_path / name), *extra])
        assert res.exit_code == 0, res.output

    monkeypatch.delenv("AUDITOR_EMBED_CACHE", raising=False)
    run("r1", "--index-dir", str(tmp_path / "idx"))
    assert list((tmp_path / "idx" / "embeddings").iterdir())  # the cache moved with --index-dir
    monkeypatch.setenv("AUDITOR_EMBED_CACHE", str(tmp_path / "env-cache"))
    run("r2", "--index-dir", str(tmp_path / "idx2"))
    assert list((tmp_path / "env-cache").iterdir()) and not (tmp_path / "idx2" / "embeddings").exists()
    run("r3", "--embed-cache", str(tmp_path / "flag-cache"))
    assert list((tmp_path / "flag-cache").iterdir())

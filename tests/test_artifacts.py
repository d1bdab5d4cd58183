"""Artifacts: atomic writes, verified indexes (tampered / truncated / pickled refused), no pickle
anywhere, and manifest paths that cannot leave the manifest's folder unless given absolute."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
from hostile import GOOD, LEAK, OTHER, cli, jl, report, write_eval

from auditor.audit.manifest import load_manifest
from auditor.errors import IndexFileError, ManifestError
from auditor.io import atomic as _io
from auditor.report import Report
from auditor.store import indexes as indexstore

PACKAGE = Path(__file__).resolve().parent.parent / "auditor"


def _no_temp_files(folder: Path) -> bool:
    return not [p for p in folder.iterdir() if p.name.startswith(".")]


def test_atomic_write_keeps_the_old_file_when_the_rename_fails(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    _io.atomic_write_text(target, "old complete content\n")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        _io.atomic_write_text(target, "new content that never lands")
    assert target.read_text() == "old complete content\n"
    assert _no_temp_files(tmp_path)


def test_report_write_interrupted_mid_write_leaves_previous_report(tmp_path, monkeypatch):
    rep = Report(verdict="pass", datasets={}, checks=[], findings=[])
    paths = rep.write(tmp_path / "r")
    before = {p.name: p.read_bytes() for p in paths.values()}
    real_fsync = os.fsync
    calls = []

    class Interrupted(BaseException):
        pass

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise Interrupted  # like Ctrl-C half way through the set (one file written, one not)
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(Interrupted):
        Report(verdict="fail", datasets={}, checks=[], findings=[]).write(tmp_path / "r")
    assert {p.name: p.read_bytes() for p in paths.values()} == before
    assert _no_temp_files(tmp_path) and os.listdir(tmp_path) == ["r"]


def _saved_index(tmp_path):
    arrays = {"h": np.arange(1000, dtype=np.uint64), "p": np.arange(1000, dtype=np.int64)}
    folder = indexstore.save_index(tmp_path, "ngram", {"n": 13}, "f" * 64, arrays, {"ns": [13]})
    return folder


def test_index_roundtrip_and_tampering_refused(tmp_path):
    folder = _saved_index(tmp_path)
    arrays, meta = indexstore.load_index(tmp_path, "ngram", {"n": 13}, "f" * 64)
    assert arrays["h"][-1] == 999 and meta == {"ns": [13]}
    doc = json.loads((folder / "index.json").read_text())
    assert doc["format"] == "auditor-index" and doc["version"] == indexstore.VERSION
    assert doc["params"] == {"n": 13} and len(doc["checksum"]) == 64

    # one flipped byte in an array
    data = bytearray((folder / "h.npy").read_bytes())
    data[-1] ^= 0xFF
    (folder / "h.npy").write_bytes(bytes(data))
    with pytest.raises(IndexFileError, match="h.npy: checksum mismatch"):
        indexstore.load_index(tmp_path, "ngram", {"n": 13}, "f" * 64)

    # a truncated array
    folder = _saved_index(tmp_path)
    (folder / "p.npy").write_bytes((folder / "p.npy").read_bytes()[:100])
    with pytest.raises(IndexFileError, match="p.npy: checksum mismatch"):
        indexstore.load_index(tmp_path, "ngram", {"n": 13}, "f" * 64)

    # an edited description (meta), arrays untouched
    folder = _saved_index(tmp_path)
    doc = json.loads((folder / "index.json").read_text())
    doc["meta"]["ns"] = [8, 13]
    (folder / "index.json").write_text(json.dumps(doc))
    with pytest.raises(IndexFileError, match="index description modified"):
        indexstore.load_index(tmp_path, "ngram", {"n": 13}, "f" * 64)

    # a truncated description
    folder = _saved_index(tmp_path)
    (folder / "index.json").write_text((folder / "index.json").read_text()[:50])
    with pytest.raises(IndexFileError, match="unreadable index description"):
        indexstore.load_index(tmp_path, "ngram", {"n": 13}, "f" * 64)


def test_pickled_array_is_refused_even_with_matching_checksums(tmp_path):
    """An attacker who rewrites every checksum still cannot get a pickle loaded."""
    import hashlib

    folder = _saved_index(tmp_path)
    buf = io.BytesIO()
    np.save(buf, np.array([{"evil": 1}], dtype=object), allow_pickle=True)
    data = buf.getvalue()
    (folder / "h.npy").write_bytes(data)
    doc = json.loads((folder / "index.json").read_text())
    doc["arrays"]["h"]["sha256"] = hashlib.sha256(data).hexdigest()
    doc["checksum"] = indexstore.doc_checksum(doc)
    (folder / "index.json").write_text(json.dumps(doc))
    with pytest.raises(IndexFileError, match="unreadable array"):
        indexstore.load_index(tmp_path, "ngram", {"n": 13}, "f" * 64)


def test_index_save_failure_leaves_no_folder(tmp_path, monkeypatch):
    real = np.save
    calls = []

    def failing_save(file, arr, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise OSError("disk full")
        return real(file, arr, **kw)

    monkeypatch.setattr(np, "save", failing_save)
    with pytest.raises(OSError):
        _saved_index(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_cli_refuses_a_tampered_persisted_ngram_index_and_rebuilds_when_deleted(tmp_path):
    ev = write_eval(tmp_path)
    train = tmp_path / "train.jsonl"
    train.write_bytes(jl(GOOD, OTHER))
    idx = tmp_path / "idx"
    args = [
        "audit",
        "--eval",
        str(ev),
        "--train",
        str(train),
        "--method",
        "ngram",
        "--index-dir",
        str(idx),
        "--report-dir",
        str(tmp_path / "r"),
    ]
    assert cli(*args).exit_code == 1
    (folder,) = [p for p in idx.iterdir() if p.name.startswith("ngram-")]
    first = report(tmp_path / "r")["findings"]
    assert cli(*args).exit_code == 1 and report(tmp_path / "r")["findings"] == first  # reused
    (array,) = [p for p in folder.glob("h*.npy")]
    array.write_bytes(array.read_bytes()[:-8])  # truncated
    res = cli(*args)
    assert res.exit_code == 2
    assert res.stderr.strip() == (
        f"Error: {array}: checksum mismatch (truncated or modified); delete the folder to rebuild"
    )
    import shutil

    shutil.rmtree(folder)
    assert cli(*args).exit_code == 1 and report(tmp_path / "r")["findings"] == first


def test_no_pickle_in_the_package():
    """Nothing a user might load goes through pickle: no pickle import, every np.load refuses it."""
    for path in PACKAGE.rglob("*.py"):
        src = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import|from)\s+(c?pickle|dill|joblib|shelve)\b", src, re.M), path
        assert "allow_pickle=True" not in src, path
        for call in re.findall(r"np\.load\(.*", src):  # the call's line
            assert "allow_pickle=False" in call, (path, call)
        assert "torch.load(" not in src or "weights_only=True" in src, path


# -- manifest paths ---------------------------------------------------------------------------


def _manifest(folder: Path, train_path: str, extra: str = "") -> Path:
    m = folder / "split.toml"
    m.write_text(
        f'{extra}[datasets.ev]\npath = "eval.jsonl"\nrole = "eval"\n'
        f'[datasets.tr]\npath = {json.dumps(train_path)}\nrole = "train"\n'
        '[[checks]]\nname = "c"\ntrain = ["tr"]\neval = ["ev"]\nmethods = ["exact"]\n'
    )
    return m


@pytest.fixture
def layout(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    write_eval(proj)
    (proj / "data").mkdir()
    (proj / "data" / "inside.jsonl").write_bytes(jl({"id": "t", "text": LEAK}))
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(jl({"id": "t", "text": LEAK}))
    return proj, outside


def test_manifest_paths_inside_the_folder_work(layout):
    proj, _ = layout
    res = cli("verify", str(_manifest(proj, "data/inside.jsonl")), "--report-dir", str(proj / "r"))
    assert res.exit_code == 1 and report(proj / "r")["checks"][0]["contaminated_items"] == 1
    res = cli("verify", str(_manifest(proj, "data/*.jsonl")), "--report-dir", str(proj / "r"))
    assert res.exit_code == 1


@pytest.mark.parametrize("rel", ["../outside.jsonl", "data/../../outside.jsonl", "../*.jsonl"])
def test_manifest_relative_paths_cannot_escape(layout, rel):
    proj, outside = layout
    res = cli("verify", str(_manifest(proj, rel)))
    assert res.exit_code == 2
    assert "leads outside the manifest's folder" in res.stderr and "absolute path" in res.stderr
    with pytest.raises(ManifestError, match="leads outside"):
        load_manifest(_manifest(proj, rel))


def test_manifest_symlink_out_of_the_folder_is_refused(layout):
    proj, outside = layout
    os.symlink(outside, proj / "data" / "link.jsonl")
    res = cli("verify", str(_manifest(proj, "data/link.jsonl")))
    assert res.exit_code == 2 and "leads outside the manifest's folder" in res.stderr


def test_manifest_absolute_paths_and_bundled_names_are_allowed(layout):
    proj, outside = layout
    res = cli("verify", str(_manifest(proj, str(outside))), "--report-dir", str(proj / "r"))
    assert res.exit_code == 1 and report(proj / "r")["checks"][0]["contaminated_items"] == 1
    m = proj / "bundled.toml"
    m.write_text(
        '[datasets.ev]\npath = "tau2-airline:test"\nrole = "eval"\n'
        '[datasets.tr]\npath = "data/inside.jsonl"\nrole = "train"\n'
        '[[checks]]\nname = "c"\ntrain = ["tr"]\neval = ["ev"]\nmethods = ["exact"]\n'
    )
    assert cli("verify", str(m), "--report-dir", str(proj / "r")).exit_code == 0


@pytest.mark.parametrize("key", ["report_dir", "index_dir"])
def test_manifest_output_folders_cannot_escape(layout, key):
    proj, _ = layout
    m = _manifest(proj, "data/inside.jsonl", extra=f'{key} = "../elsewhere"\n')
    res = cli("verify", str(m))
    assert res.exit_code == 2 and f"'{key}': '../elsewhere' leads outside" in res.stderr
    assert not (proj.parent / "elsewhere").exists()
    absolute = proj.parent / "abs_out"
    m = _manifest(proj, "data/inside.jsonl", extra=f'{key} = "{absolute}"\n')
    config = load_manifest(m)
    assert (config.output.report_dir if key == "report_dir" else config.index_dir) == str(absolute)


def test_manifest_max_record_chars(layout):
    proj, _ = layout
    m = proj / "m.toml"
    body = (
        '[datasets.ev]\npath = "eval.jsonl"\nrole = "eval"\n'
        '[datasets.tr]\npath = "data/inside.jsonl"\nrole = "train"\non_error = "skip"\nmax_record_chars = 20\n'
        '[[checks]]\nname = "c"\ntrain = ["tr"]\neval = ["ev"]\nmethods = ["exact"]\n'
    )
    m.write_text(body)
    res = cli("verify", str(m), "--report-dir", str(proj / "r"))
    doc = report(proj / "r")
    assert res.exit_code == 1 and doc["verdict"] == "incomplete"
    assert doc["datasets"]["tr"]["skip_reasons"] == {"record longer than max_record_chars=20": 1}
    m.write_text(body.replace("max_record_chars = 20", 'max_record_chars = "big"'))
    res = cli("verify", str(m))
    assert res.exit_code == 2 and "'max_record_chars' must be a positive integer" in res.stderr

"""--write-clean / write_clean: the cleaned training sets re-audit clean, in their original formats."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from click.testing import CliRunner

from auditor.cli import main
from auditor.datasets.dataset import Dataset, DatasetSpec


def _goals(a: int, b: int) -> list[str]:
    return [r.view("query") for r in Dataset(DatasetSpec("g", [f"webshop:{a}:{b}"], role="eval")).records()]


def test_cli_write_clean_webshop_reaudits_clean(tmp_path):
    runner = CliRunner()
    clean = tmp_path / "clean"
    res = runner.invoke(
        main,
        [
            "audit",
            "--eval",
            "webshop:0:500",
            "--train",
            "webshop:500:",
            "--method",
            "exact",
            "--method",
            "ngram",
            "--write-clean",
            str(clean),
            "--report-dir",
            str(tmp_path / "r1"),
        ],
    )
    assert res.exit_code == 1, res.output
    report = json.loads((tmp_path / "r1" / "report.json").read_text())
    removed = [json.loads(line) for line in (clean / "removed.jsonl").read_text().splitlines()]
    summary = report["clean"]["datasets"]["webshop:500:"]
    assert summary["removed"] == len(removed) >= report["checks"][0]["contaminated_items"] == 42
    assert summary["kept"] + summary["removed"] == 12087 - 500
    assert all(r["method"] in ("exact", "ngram") and r["eval_dataset"] == "webshop:0:500" for r in removed)
    written = clean / "webshop_500_" / "human_goals.json"
    assert json.loads(written.read_text())[:1] and summary["files"][0]["format"] == "webshop-goals"
    res = runner.invoke(
        main,
        [
            "audit",
            "--eval",
            "webshop:0:500",
            "--train",
            str(written),
            "--method",
            "exact",
            "--method",
            "ngram",
            "--report-dir",
            str(tmp_path / "r2"),
        ],
    )
    assert res.exit_code == 0, res.output
    again = json.loads((tmp_path / "r2" / "report.json").read_text())
    # what is left are suspected findings only (a short goal inside a longer one: "i need gluten free
    # popcorn" in "… popcorn seasoning …"), which the cleaning does not remove and the verdict ignores
    assert all(f["evidence"].get("tier") == "suspected" for f in again["findings"]) and again["verdict"] == "pass"
    assert again["datasets"]["human_goals"]["records"] == summary["kept"]


def test_manifest_write_clean_keeps_formats(tmp_path):
    leaked, other = _goals(0, 6), _goals(3000, 3012)
    rows = [{"id": f"c{i}", "text": t, "extra": str(i)} for i, t in enumerate(leaked[:2] + other[:4])]
    with open(tmp_path / "t.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["id", "text", "extra"])
        w.writeheader()
        w.writerows(rows)
    pq.write_table(
        pa.Table.from_pylist(
            [{"id": i, "text": f"Chat: {t} please", "n": i} for i, t in enumerate(leaked[2:4] + other[4:8])]
        ),
        tmp_path / "t.parquet",
    )
    with gzip.open(tmp_path / "t.jsonl.gz", "wt") as f:
        for i, t in enumerate(leaked[4:6] + other[8:12]):
            f.write(json.dumps({"uid": f"j{i}", "prompt": t}) + "\n")
    manifest = tmp_path / "split.toml"
    body = """
[datasets.test]
path = "webshop:0:6"
role = "eval"
[datasets.csvset]
path = "{csv}"
role = "train"
[datasets.pqset]
path = "{pq}"
role = "train"
[datasets.jset]
path = "{js}"
role = "train"
[[checks]]
name = "c"
train = ["csvset", "pqset", "jset"]
eval = ["test"]
methods = ["exact", "ngram"]
"""
    manifest.write_text('write_clean = "clean"\n' + body.format(csv="t.csv", pq="t.parquet", js="t.jsonl.gz"))
    res = CliRunner().invoke(main, ["verify", str(manifest), "--report-dir", str(tmp_path / "r1")])
    assert res.exit_code == 1, res.output
    clean = tmp_path / "clean"
    removed = [json.loads(line) for line in (clean / "removed.jsonl").read_text().splitlines()]
    assert sorted((r["dataset"], r["id"]) for r in removed) == [
        ("csvset", "c0"),
        ("csvset", "c1"),
        ("jset", "j0"),
        ("jset", "j1"),
        ("pqset", "0"),
        ("pqset", "1"),
    ]
    with open(clean / "csvset" / "t.csv", newline="") as f:
        kept_rows = list(csv.DictReader(f))
    assert kept_rows == rows[2:]  # same columns, same values
    table = pq.read_table(clean / "pqset" / "t.parquet")
    assert table.schema == pq.read_schema(tmp_path / "t.parquet") and table.column("n").to_pylist() == [2, 3, 4, 5]
    with gzip.open(clean / "jset" / "t.jsonl.gz", "rt") as f:  # compressed as the input was
        kept_lines = f.read().splitlines()
    assert [json.loads(x)["uid"] for x in kept_lines] == [
        "j2",
        "j3",
        "j4",
        "j5",
    ]
    again = tmp_path / "again.toml"
    again.write_text(body.format(csv="clean/csvset/t.csv", pq="clean/pqset/t.parquet", js="clean/jset/t.jsonl.gz"))
    res = CliRunner().invoke(main, ["verify", str(again), "--report-dir", str(tmp_path / "r2")])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "r2" / "report.json").read_text())["findings"] == []


def test_write_clean_tau2_keeps_split_file(tmp_path):
    clean = tmp_path / "clean"
    res = CliRunner().invoke(
        main,
        [
            "audit",
            "--eval",
            "tau2-airline:test",
            "--train",
            "tau2-airline:train",
            "--method",
            "exact",
            "--write-clean",
            str(clean),
            "--report-dir",
            str(tmp_path / "r"),
        ],
    )
    assert res.exit_code in (0, 1), res.output
    out = clean / "tau2-airline_train" / "tasks.json"
    assert (out.parent / "split_tasks.json").exists()
    ds = Dataset(DatasetSpec("x", [str(out)], split="train"))
    kept = list(ds.records())
    summary = json.loads((tmp_path / "r" / "report.json").read_text())["clean"]["datasets"]["tau2-airline:train"]
    assert len(kept) == summary["kept"] > 0 and summary["files"][0]["format"] == "tau2-tasks"


def test_write_clean_bad_targets_are_one_line_errors(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    res = CliRunner().invoke(
        main,
        [
            "audit",
            "--eval",
            "webshop:0:50",
            "--train",
            "webshop:50:100",
            "--method",
            "exact",
            "--write-clean",
            str(blocker),
        ],
    )
    assert res.exit_code == 2 and "exists and is not a folder" in res.output and "Traceback" not in res.output
    manifest = tmp_path / "m.toml"
    manifest.write_text(
        'write_clean = 3\n[datasets.a]\npath = "webshop:0:5"\nrole = "eval"\n'
        '[datasets.b]\npath = "webshop:5:9"\nrole = "train"\n'
        '[[checks]]\nname = "c"\ntrain = ["b"]\neval = ["a"]\n'
    )
    res = CliRunner().invoke(main, ["verify", str(manifest)])
    assert res.exit_code == 2 and "'write_clean' must be a string" in res.output


def _leaky_train(folder, name="train.jsonl"):
    """A training JSONL holding two WebShop test goals verbatim and two other goals."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"id": f"t{i}", "text": t} for i, t in enumerate(_goals(0, 2) + _goals(3000, 3002))]
    p = folder / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    p.chmod(0o640)
    return p


def _untouched(path, before: bytes, mode: int) -> bool:
    return path.read_bytes() == before and (path.stat().st_mode & 0o777) == mode


def test_write_clean_over_the_inputs_folder_is_refused_before_the_audit(tmp_path, monkeypatch):
    """Issue 12: `--write-clean .` rewrote train/train.jsonl in place (and set it to 0600)."""
    train = _leaky_train(tmp_path / "train")
    before = train.read_bytes()
    monkeypatch.chdir(tmp_path)
    for out in (".", "train", str(tmp_path)):
        res = CliRunner().invoke(
            main,
            ["audit", "--eval", "webshop:0:50", "--train", "train/train.jsonl", "--method", "exact"]
            + ["--write-clean", out, "--report-dir", str(tmp_path / "r")],
        )
        assert res.exit_code == 2, res.output
        assert "holds the input file" in res.output and "Traceback" not in res.output
        assert len(res.output.strip().splitlines()) == 1
        assert not (tmp_path / "r").exists()  # refused before the audit ran
        assert _untouched(train, before, 0o640)
    # the manifest's write_clean = "." (relative to the manifest's folder, where its data is)
    manifest = tmp_path / "train" / "split.toml"
    manifest.write_text(
        'write_clean = "."\n[datasets.test]\npath = "webshop:0:50"\nrole = "eval"\n'
        '[datasets.train]\npath = "train.jsonl"\nrole = "train"\n'
        '[[checks]]\nname = "c"\ntrain = ["train"]\neval = ["test"]\nmethods = ["exact"]\n'
    )
    res = CliRunner().invoke(main, ["verify", str(manifest), "--report-dir", str(tmp_path / "r")])
    assert res.exit_code == 2 and "holds the input file" in res.output, res.output
    assert not (tmp_path / "r").exists() and _untouched(train, before, 0o640)


def test_write_clean_dataset_names_never_leave_the_folder(tmp_path):
    """A dataset named ".." wrote its cleaned file outside the write_clean folder."""
    data = tmp_path / "m"
    _leaky_train(data / "a", "t.jsonl")
    _leaky_train(data / "b", "t.jsonl")
    manifest = data / "split.toml"
    manifest.write_text(
        'write_clean = "out/clean"\n[datasets.test]\npath = "webshop:0:50"\nrole = "eval"\n'
        '[datasets.".."]\npath = "a/t.jsonl"\nrole = "train"\n'
        '[datasets."__"]\npath = "b/t.jsonl"\nrole = "train"\n'
        '[[checks]]\nname = "c"\ntrain = ["..", "__"]\neval = ["test"]\nmethods = ["exact"]\n'
    )
    before = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
    res = CliRunner().invoke(main, ["verify", str(manifest), "--report-dir", str(tmp_path / "r")])
    assert res.exit_code == 1, res.output
    after = {p for p in data.rglob("*") if p.is_file()}
    new = sorted(str(p.relative_to(data)) for p in after - set(before))
    assert all(n.startswith("out/clean/") for n in new), new
    assert all(p.read_bytes() == b for p, b in before.items())
    summary = json.loads((tmp_path / "r" / "report.json").read_text())["clean"]["datasets"]
    written = sorted(f["written"] for d in summary.values() for f in d["files"])
    assert len(set(written)) == 2  # two datasets, two folders: neither overwrites the other
    for w in written:
        assert (tmp_path / "m" / "out" / "clean") in Path(w).resolve().parents
        assert [json.loads(x)["id"] for x in Path(w).read_text().splitlines()] == ["t2", "t3"]
        assert Path(w).stat().st_mode & 0o777 == 0o666 & ~_umask()  # an ordinary file, not 0600


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_write_clean_refuses_a_symlinked_dataset_folder_leading_to_the_inputs(tmp_path):
    data = tmp_path / "data"
    train = _leaky_train(data, "t.jsonl")
    before = train.read_bytes()
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "t").symlink_to(data)  # clean/t/t.jsonl would be data/t.jsonl
    res = CliRunner().invoke(
        main,
        ["audit", "--eval", "webshop:0:50", "--train", str(train), "--method", "exact"]
        + ["--write-clean", str(clean), "--report-dir", str(tmp_path / "r")],
    )
    assert res.exit_code == 2 and "outside the folder" in res.output, res.output
    assert not (tmp_path / "r").exists() and _untouched(train, before, 0o640)

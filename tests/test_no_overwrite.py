"""Nothing the user wrote is overwritten (issue 22, item 8).

The manifest is an input, never a target; a clean folder or report folder that holds files auditor
did not write (or that were changed since it wrote them: each output folder's ledger,
``.auditor-written.json``, names every file auditor wrote with its SHA-256) is refused before the
audit runs, with one line naming the folder and the files, exit 2; a failed write (EFBIG under
RLIMIT_FSIZE, ENOSPC on a full tmpfs) leaves no partial or temp file. Every case compares the bytes
of the manifest and of each user file before and after the command.

Data: WebShop goals (bundled, MIT): 50 eval goals ``webshop:0:50``, and a training file holding 40
other goals plus 10 of the eval goals verbatim (the leaks).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hostile import REPO

from auditor.cli import main
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.io.ledger import LEDGER
from auditor.records.record import TEXT

runner = CliRunner()


def goals(split: str) -> list[str]:
    return [r.view(TEXT) for r in Dataset(DatasetSpec("w", [f"webshop:{split}"])).records()]


@pytest.fixture(scope="module")
def corpus() -> tuple[list[str], list[str]]:
    return goals("0:50"), goals("200:240")


def project(root: Path, corpus, manifest_extra: str = "", data_dir: Path | None = None) -> dict[str, Path]:
    """A user's project: ``split.toml`` (with ``manifest_extra`` at its top), ``data/train.jsonl``
    (40 clean goals, 10 leaked eval goals) and a user file ``notes.txt``."""
    evals, clean = corpus
    data = data_dir or root / "data"
    data.mkdir(parents=True, exist_ok=True)
    root.mkdir(parents=True, exist_ok=True)
    train = data / "train.jsonl"
    rows = [{"id": f"t{i}", "text": t} for i, t in enumerate(clean)] + [
        {"id": f"leak{i}", "text": t} for i, t in enumerate(evals[:10])
    ]
    train.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    manifest = root / "split.toml"
    manifest.write_text(
        manifest_extra + 'findings_store = "memory"\n'
        f'[datasets.test]\npath = "webshop:0:50"\nrole = "eval"\n'
        f'[datasets.train]\npath = "{train}"\nrole = "train"\n'
        '[[checks]]\nname = "c"\ntrain = ["train"]\neval = ["test"]\nmethods = ["exact"]\n',
        encoding="utf-8",
    )
    notes = root / "notes.txt"
    notes.write_text("my notes\n", encoding="utf-8")
    return {"manifest": manifest, "train": train, "notes": notes}


def snapshot(*paths: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in paths}


def unchanged(before: dict[Path, bytes]) -> bool:
    return all(p.read_bytes() == b for p, b in before.items())


def refused(res, folder: Path, *names: str) -> None:
    """One error line, exit 2, naming ``folder`` and each of ``names``."""
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in res.output, res.output
    assert str(folder) in lines[0], lines[0]
    for n in names:
        assert n in lines[0], lines[0]


def audit_args(p: dict[str, Path]) -> list[str]:
    return ["audit", "--eval", "webshop:0:50", "--train", str(p["train"]), "--method", "exact"]


# -- the manifest is an input ----------------------------------------------------------------------


def test_write_clean_dot_in_a_manifest_never_replaces_it(tmp_path, corpus):
    """The issue's case: the data lives elsewhere, the manifest says ``write_clean = "."``; before,
    split.toml was replaced by the cleaned one and the next verify said PASS on the cleaned copy."""
    p = project(tmp_path / "proj", corpus, 'write_clean = "."\n', data_dir=tmp_path / "elsewhere")
    before = snapshot(p["manifest"], p["train"], p["notes"])
    res = runner.invoke(main, ["verify", str(p["manifest"]), "--report-dir", str(tmp_path / "r")])
    refused(res, tmp_path / "proj", "split.toml", "manifest")
    assert unchanged(before) and not (tmp_path / "r").exists()
    assert sorted(os.listdir(tmp_path / "proj")) == ["notes.txt", "split.toml"]
    # the same with the flag
    p["manifest"].write_text(p["manifest"].read_text().replace('write_clean = "."\n', ""), encoding="utf-8")
    before = snapshot(p["manifest"], p["train"], p["notes"])
    for out in (".", str(tmp_path / "proj")):
        cwd = os.getcwd()
        os.chdir(tmp_path / "proj")
        try:
            res = runner.invoke(
                main, ["verify", "split.toml", "--write-clean", out, "--report-dir", str(tmp_path / "r")]
            )
        finally:
            os.chdir(cwd)
        assert res.exit_code == 2 and "the manifest is an input" in res.output, res.output
        assert unchanged(before) and not (tmp_path / "r").exists()
    # and the real training file still fails
    res = runner.invoke(main, ["verify", str(p["manifest"]), "--report-dir", str(tmp_path / "r")])
    assert res.exit_code == 1 and "10 conclusive + 0 suspected of 50 eval items" in res.output, res.output


def test_the_cleaned_manifest_is_not_a_target_of_its_own_verify(tmp_path, corpus):
    p = project(tmp_path, corpus)
    clean = tmp_path / "clean"
    res = runner.invoke(main, [*audit_args(p), "--write-clean", str(clean), "--report-dir", str(tmp_path / "r")])
    assert res.exit_code == 1, res.output
    cleaned = clean / "split.toml"
    before = snapshot(cleaned, *(clean / "train").iterdir())
    res = runner.invoke(main, ["verify", str(cleaned)])  # its report goes to clean/report
    assert res.exit_code == 0 and (clean / "report" / "report.json").exists(), res.output
    res = runner.invoke(main, ["verify", str(cleaned), "--write-clean", str(clean)])
    refused(res, clean, "manifest")
    assert unchanged(before)
    # the first audit may run again: the clean folder holds its own files and its report folder
    res = runner.invoke(main, [*audit_args(p), "--write-clean", str(clean), "--report-dir", str(tmp_path / "r")])
    assert res.exit_code == 1, res.output
    assert (clean / "report" / "report.json").exists()


# -- a clean folder holding files auditor did not write ---------------------------------------------


@pytest.mark.parametrize("user_file", ["split.toml", "removed.jsonl", "notes.txt", "train/train.jsonl", "report"])
@pytest.mark.parametrize("how", ["audit", "verify-flag", "manifest"])
def test_a_clean_folder_with_a_user_file_is_refused_before_the_audit(tmp_path, corpus, user_file, how):
    p = project(tmp_path / "proj", corpus)
    clean = tmp_path / "out"
    target = clean / user_file
    if user_file == "report":  # a folder named like the clean folder's report folder, not auditor's
        target = clean / "report" / "report.md"
    target.parent.mkdir(parents=True)
    target.write_text("the user's own file\n", encoding="utf-8")
    before = snapshot(p["manifest"], p["train"], target)
    rep = tmp_path / "r"
    if how == "audit":
        res = runner.invoke(main, [*audit_args(p), "--write-clean", str(clean), "--report-dir", str(rep)])
    elif how == "verify-flag":
        res = runner.invoke(main, ["verify", str(p["manifest"]), "--write-clean", str(clean), "--report-dir", str(rep)])
    else:
        p["manifest"].write_text(f'write_clean = "{clean}"\n' + p["manifest"].read_text(), encoding="utf-8")
        before = snapshot(p["manifest"], p["train"], target)
        res = runner.invoke(main, ["verify", str(p["manifest"]), "--report-dir", str(rep)])
    shown = user_file if user_file != "report" else "report/report.md"
    refused(res, clean, shown, "did not write")
    assert unchanged(before) and not rep.exists()  # refused before the audit: no report either


def test_a_clean_folder_of_an_earlier_run_is_replaced_but_not_an_edited_file(tmp_path, corpus):
    p = project(tmp_path, corpus)
    clean, rep = tmp_path / "clean", tmp_path / "r"
    args = [*audit_args(p), "--write-clean", str(clean), "--report-dir", str(rep)]
    assert runner.invoke(main, args).exit_code == 1
    ledger = json.loads((clean / LEDGER).read_text())
    assert ledger["kind"] == "clean" and sorted(ledger["files"]) == ["removed.jsonl", "split.toml", "train/train.jsonl"]
    assert len((clean / "removed.jsonl").read_text().splitlines()) == 10
    assert runner.invoke(main, args).exit_code == 1  # its own files: replaced
    killed = clean / "train" / ".train.jsonl.k1l2m3n4.tmp"  # what a killed run leaves: removed
    killed.write_text("half", encoding="utf-8")
    assert runner.invoke(main, args).exit_code == 1 and not killed.exists()
    # a user edits the cleaned file: the next run refuses to replace it
    edited = clean / "train" / "train.jsonl"
    edited.write_text(edited.read_text() + '{"id": "mine", "text": "added by hand"}\n', encoding="utf-8")
    before = snapshot(edited, p["manifest"])
    refused(runner.invoke(main, args), clean, "train/train.jsonl")
    assert unchanged(before)


def test_stale_cleaned_files_of_an_earlier_run_are_removed(tmp_path, corpus):
    """A dataset the next run no longer cleans: its old cleaned files were auditor's, so they go (and
    are no longer in the ledger) instead of blocking every later run."""
    p = project(tmp_path, corpus)
    other = tmp_path / "other.jsonl"
    other.write_text(p["train"].read_text(), encoding="utf-8")
    clean, rep = tmp_path / "clean", tmp_path / "r"
    two = [*audit_args(p), "--train", str(other), "--write-clean", str(clean), "--report-dir", str(rep)]
    assert runner.invoke(main, two).exit_code == 1 and (clean / "other" / "other.jsonl").exists()
    assert runner.invoke(main, [*audit_args(p), "--write-clean", str(clean), "--report-dir", str(rep)]).exit_code == 1
    assert not (clean / "other" / "other.jsonl").exists()
    assert "other/other.jsonl" not in json.loads((clean / LEDGER).read_text())["files"]


def test_a_clean_folder_holding_an_input_is_refused(tmp_path, corpus):
    p = project(tmp_path, corpus)
    before = snapshot(p["train"], p["manifest"])
    res = runner.invoke(
        main, [*audit_args(p), "--write-clean", str(p["train"].parent), "--report-dir", str(tmp_path / "r")]
    )
    refused(res, p["train"].parent, "holds the input file")
    assert unchanged(before) and sorted(os.listdir(p["train"].parent)) == ["train.jsonl"]


@pytest.mark.parametrize("report_dir", ["same", "inside", "around"])
def test_a_report_folder_overlapping_the_clean_folder_is_refused(tmp_path, corpus, report_dir):
    p = project(tmp_path, corpus)
    clean = tmp_path / "clean"
    rep = {"same": clean, "inside": clean / "train", "around": tmp_path}[report_dir]
    if report_dir == "around":
        clean = tmp_path / "r" / "clean"
        rep = tmp_path / "r"
    res = runner.invoke(main, [*audit_args(p), "--write-clean", str(clean), "--report-dir", str(rep)])
    refused(res, clean, "overlap")
    assert not clean.exists() and not (rep / "report.json").exists()


# -- a report folder holding files auditor did not write --------------------------------------------


def _provenance_manifest(tmp_path: Path, p: dict[str, Path]) -> Path:
    m = tmp_path / "prov.toml"
    m.write_text(
        f'[datasets.test]\npath = "webshop:0:50"\nrole = "eval"\nsplit_label = "test"\n'
        f'[datasets.train]\npath = "{p["train"]}"\nrole = "train"\n'
        '[[provenance]]\nname = "p"\nderived = ["train"]\nsources = ["test"]\nmethods = ["exact"]\n',
        encoding="utf-8",
    )
    return m


@pytest.mark.parametrize("user_file", ["report.md", "report.json", "junit.xml", "notes.txt", "split.toml"])
@pytest.mark.parametrize("how", ["audit", "verify-flag", "verify-manifest", "provenance-flag", "provenance-manifest"])
def test_a_report_folder_with_a_user_file_is_refused(tmp_path, corpus, user_file, how):
    p = project(tmp_path, corpus)
    rep = tmp_path / "rep"
    rep.mkdir()
    (rep / user_file).write_text("the user's own file\n", encoding="utf-8")
    before = snapshot(p["manifest"], p["train"], rep / user_file)
    if how == "audit":
        res = runner.invoke(main, [*audit_args(p), "--report-dir", str(rep)])
    elif how.startswith("verify"):
        if how == "verify-manifest":
            p["manifest"].write_text(f'report_dir = "{rep}"\n' + p["manifest"].read_text(), encoding="utf-8")
            before = snapshot(p["manifest"], p["train"], rep / user_file)
            res = runner.invoke(main, ["verify", str(p["manifest"])])
        else:
            res = runner.invoke(main, ["verify", str(p["manifest"]), "--report-dir", str(rep)])
    else:
        m = _provenance_manifest(tmp_path, p)
        if how == "provenance-manifest":
            m.write_text(f'report_dir = "{rep}"\n' + m.read_text(), encoding="utf-8")
            res = runner.invoke(main, ["provenance", str(m)])
        else:
            res = runner.invoke(main, ["provenance", str(m), "--report-dir", str(rep)])
        before[m] = m.read_bytes()
    refused(res, rep, user_file, "not an auditor report")
    assert unchanged(before) and sorted(os.listdir(rep)) == [user_file]


def test_a_report_folder_of_an_earlier_run_is_replaced_but_not_an_edited_file(tmp_path, corpus):
    p = project(tmp_path, corpus)
    rep = tmp_path / "rep"
    assert runner.invoke(main, ["verify", str(p["manifest"]), "--report-dir", str(rep)]).exit_code == 1
    assert runner.invoke(main, ["verify", str(p["manifest"]), "--report-dir", str(rep)]).exit_code == 1
    m = _provenance_manifest(tmp_path, p)
    assert runner.invoke(main, ["provenance", str(m), "--report-dir", str(rep)]).exit_code in (0, 1)
    (rep / "report.md").write_text((rep / "report.md").read_text() + "\nmy review notes\n", encoding="utf-8")
    before = snapshot(rep / "report.md", p["manifest"])
    refused(runner.invoke(main, ["verify", str(p["manifest"]), "--report-dir", str(rep)]), rep, "report.md")
    refused(runner.invoke(main, ["provenance", str(m), "--report-dir", str(rep)]), rep, "report.md")
    assert unchanged(before)


# -- auditor report (re-render) ---------------------------------------------------------------------


def test_rerender_replaces_its_own_file_and_never_a_users(tmp_path, corpus):
    p = project(tmp_path, corpus)
    rep = tmp_path / "rep"
    assert runner.invoke(main, ["verify", str(p["manifest"]), "--report-dir", str(rep)]).exit_code == 1
    for fmt in ("html", "md", "junit"):  # beside report.json: auditor's own files, replaced
        res = runner.invoke(main, ["report", str(rep / "report.json"), "--format", fmt])
        assert res.exit_code == 0, res.output
    # the ledger follows: the next run may still replace the folder
    assert runner.invoke(main, ["verify", str(p["manifest"]), "--report-dir", str(rep)]).exit_code == 1
    user = tmp_path / "mine.html"
    user.write_text("<p>my page</p>\n", encoding="utf-8")
    before = snapshot(user, rep / "report.json")
    res = runner.invoke(main, ["report", str(rep / "report.json"), "--out", str(user)])
    refused(res, user, "auditor did not write it")
    # an edited report.html beside report.json is the user's now
    (rep / "report.html").write_text("<p>edited</p>\n", encoding="utf-8")
    before[rep / "report.html"] = (rep / "report.html").read_bytes()
    res = runner.invoke(main, ["report", str(rep / "report.json"), "--format", "html"])
    refused(res, rep / "report.html", "auditor did not write it")
    assert unchanged(before)
    new = tmp_path / "new.html"  # a new file: written
    assert runner.invoke(main, ["report", str(rep / "report.json"), "--out", str(new)]).exit_code == 0
    assert new.read_text(encoding="utf-8").startswith("<!")


# -- a failed write leaves no partial or temp file -------------------------------------------------


def _leftovers(folder: Path) -> list[str]:
    return sorted(str(q.relative_to(folder)) for q in folder.rglob("*") if q.name.endswith(".tmp"))


def _big_project(tmp_path: Path, clean: Path) -> Path:
    manifest = tmp_path / "split.toml"
    manifest.write_text(
        f'findings_store = "memory"\nreport_dir = "rep"\nwrite_clean = "{clean}"\n'
        '[datasets.test]\npath = "webshop:0:500"\nrole = "eval"\n'
        '[datasets.train]\npath = "webshop:500:"\nrole = "train"\n'
        '[[checks]]\nname = "c"\ntrain = ["train"]\neval = ["test"]\nmethods = ["exact"]\n',
        encoding="utf-8",
    )
    return manifest


def _run(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "auditor", *args], cwd=REPO, capture_output=True, text=True, **kw)


def test_file_size_limit_while_cleaning_leaves_no_partial_file(tmp_path):
    """RLIMIT_FSIZE (``ulimit -f``) between the report's size and the 0.9 MB cleaned file: EFBIG."""
    clean = tmp_path / "clean"
    manifest = _big_project(tmp_path, clean)
    before = snapshot(manifest)

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (400_000, 400_000))

    proc = _run(["verify", str(manifest)], preexec_fn=limit)
    assert proc.returncode == 2 and "ulimit -f" in proc.stderr, proc.stderr
    assert _leftovers(clean) == [] and unchanged(before)
    assert all(f.stat().st_size < 400_000 for f in clean.rglob("*") if f.is_file())
    # what was written is in the ledger: the re-run without the limit is not refused
    proc = _run(["verify", str(manifest)])
    assert proc.returncode == 1, proc.stderr
    assert (clean / "split.toml").exists() and _leftovers(clean) == [] and unchanged(before)


def test_full_disk_while_cleaning_leaves_no_partial_file(tmp_path):
    """A real full disk: a 256 KiB tmpfs mounted for the clean folder (needs root and a kernel that
    lets this process mount; the RLIMIT_FSIZE test above covers the same code where it cannot)."""
    clean = tmp_path / "clean"
    clean.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(clean)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.decode().strip() or 'not root'})")
    try:
        manifest = _big_project(tmp_path, clean)
        before = snapshot(manifest)
        proc = _run(["verify", str(manifest)])
        assert proc.returncode == 2 and "no space left" in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and "report.json" in proc.stderr
        assert _leftovers(clean) == [] and unchanged(before)
        assert (tmp_path / "rep" / "report.json").exists()  # the report was written first
    finally:
        subprocess.run(["umount", str(clean)], check=True)

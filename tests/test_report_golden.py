"""The README's audits write the same report, byte for byte, as the golden files in tests/data/golden/.

Two audits from the README, run through the CLI exactly as written (plus ``--report-dir`` and a fresh
``--index-dir``):

- ``quickstart``: ``auditor audit --eval webshop:0:500 --train webshop:500:`` (the set-up's command 1:
  every default method, conclusive and suspected findings, boilerplate, notes);
- ``split``: ``auditor verify examples/split.toml`` (a manifest with two checks of different methods,
  a ``[[provenance]]`` entry, error types).

For each, ``report.json`` must equal its golden file byte for byte once the few truly volatile values
are masked (:data:`VOLATILE_RUN_KEYS`: when it ran, how long it took, CPU seconds and rates, peak
memory; the tool's version; the repository's own path in dataset file names; the report folder the
suspected note's review command names). Masking parses the JSON
and writes it back with the report's own settings, and the test first checks that this round trip
reproduces the written bytes, so key order, number formats (``0`` vs ``0.0``) and escaping are compared
too. ``report.md``, ``report.html`` and ``junit.xml`` are compared the same way (the run's start time
and duration masked in the text), so a renderer that reads the report differently is caught as well.

The golden files were written by the code before results became dataclasses. A change that is MEANT
to change a report (a new key, a new method, different findings) regenerates them deliberately, and
the diff of tests/data/golden/ is then part of the review:

    cd <repo> && PYTHONPATH=$PWD python tests/test_report_golden.py      # rewrites tests/data/golden/*

(``split.report.json`` is kept gzip-compressed: its provenance section lists all 11,587 derived records;
``gzip -dc tests/data/golden/split.report.json.gz`` shows it.)
"""

from __future__ import annotations

import difflib
import gzip
import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import GOLDEN, REPO, golden_path, read_golden

from auditor.cli import main
from auditor.report._md import md

AUDITS = {
    "quickstart": ["audit", "--eval", "webshop:0:500", "--train", "webshop:500:"],
    "split": ["verify", str(REPO / "examples" / "split.toml")],
}

#: keys of ``run`` (and of ``run.scan``) whose values differ from run to run or machine to machine
VOLATILE_RUN_KEYS = (
    "started",
    "seconds",
    "caller_cpu_s",
    "worker_cpu_s",
    "records_per_s",
    "mb_per_s",
    "peak_rss_mb",
    "peak_worker_rss_mb",
    "version",
)
MASK = "<volatile>"
RENDERINGS = ("report.md", "report.html", "junit.xml")


def _json_text(doc) -> str:
    """JSON as :meth:`auditor.report.Report.to_json` writes it."""
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def _mask_paths(value, repo: str):
    if isinstance(value, str):
        return "<repo>" + value[len(repo) :] if value.startswith(repo) else value
    if isinstance(value, list):
        return [_mask_paths(v, repo) for v in value]
    if isinstance(value, dict):
        return {k: _mask_paths(v, repo) for k, v in value.items()}
    return value


def masked_json(raw: str) -> str:
    """``report.json`` text with the volatile values masked; raises AssertionError when the text is not
    what the report's own JSON settings write (so the masking round trip cannot hide a change)."""
    doc = json.loads(raw)
    assert _json_text(doc) == raw, "report.json is not written as Report.to_json writes it"
    run = doc.get("run", {})
    for k in VOLATILE_RUN_KEYS:
        if k in run:
            run[k] = MASK
        if k in run.get("scan", {}):
            run["scan"][k] = MASK
    doc["datasets"] = _mask_paths(doc["datasets"], str(REPO))
    if "decisions" in doc:  # the decisions file beside the manifest: a path of this machine too
        doc["decisions"] = _mask_paths(doc["decisions"], str(REPO))
    return _json_text(doc)


def masked_text(text: str) -> str:
    """A rendering with the run's version, start time and duration masked (the Markdown and HTML
    footer line; JUnit's ``time`` and ``timestamp`` attributes)."""
    text = re.sub(r"auditor \S+, engine ", f"auditor {MASK}, engine ", text)
    text = re.sub(r"started [0-9T:+-]+, [0-9.]+ s", f"started {MASK}, {MASK} s", text)
    text = re.sub(r'timestamp="[0-9T:-]+"', f'timestamp="{MASK}"', text)
    return re.sub(r' time="[0-9.]+"', f' time="{MASK}"', text)


def run_readme_audit(name: str, tmp: Path) -> dict[str, str]:
    """Run one README audit; file name -> masked content."""
    out, idx = tmp / f"{name}-report", tmp / f"{name}-indexes"
    res = CliRunner().invoke(main, [*AUDITS[name], "--report-dir", str(out), "--index-dir", str(idx)])
    assert res.exit_code == 1, res.output  # both README audits find leaked items
    # the report's own folder, named in the suspected note's review command: a path of this run
    here = {
        file: (out / file)
        .read_text(encoding="utf-8")
        .replace(str(out), "<report-dir>")
        # ... as report.md escapes it
        .replace(md(str(out)), "<report-dir>")
        for file in ("report.json", *RENDERINGS)
    }
    files = {"report.json": masked_json(here["report.json"])}
    for rendering in RENDERINGS:
        files[rendering] = masked_text(here[rendering])
    return files


def write_golden(name: str, files: dict[str, str]) -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for file, text in files.items():
        path, data = golden_path(name, file), text.encode("utf-8")
        path.write_bytes(gzip.compress(data, 9, mtime=0) if path.suffix == ".gz" else data)


def _first_difference(expected: str, actual: str) -> str:
    diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(), "golden", "now", lineterm="", n=2)
    return "\n".join(list(diff)[:60])


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("golden")
    return {name: run_readme_audit(name, tmp) for name in AUDITS}


@pytest.mark.parametrize("name", sorted(AUDITS))
@pytest.mark.parametrize("file", ["report.json", *RENDERINGS])
def test_readme_audit_report_is_unchanged(written, name, file):
    expected, actual = read_golden(name, file), written[name][file]
    assert actual == expected, (
        f"{name} {file} differs from tests/data/golden (regenerate only for an intended change; see the "
        f"module docstring):\n{_first_difference(expected, actual)}"
    )


def test_masking_hides_only_volatile_values(written):
    """The masks cover timings, memory, the version and the repository path, and nothing a reader
    or CI tool acts on (verdicts, counts, findings, datasets' hashes stay compared)."""
    doc = json.loads(written["quickstart"]["report.json"])
    assert doc["verdict"] == "fail" and doc["checks"][0]["contaminated_items"] == 43
    assert doc["run"]["findings_total"] > 0 and doc["run"]["scan"]["records"] == 11587
    masked = {k for k, v in doc["run"].items() if v == MASK} | {k for k, v in doc["run"]["scan"].items() if v == MASK}
    assert masked <= set(VOLATILE_RUN_KEYS)
    assert all(f.startswith("<repo>/auditor/data/") for d in doc["datasets"].values() for f in d["files"])
    assert MASK not in json.dumps({k: v for k, v in doc.items() if k != "run"})


if __name__ == "__main__":  # regenerate the golden files deliberately (see the module docstring)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for audit in AUDITS:
            write_golden(audit, run_readme_audit(audit, Path(tmp)))
            print(f"wrote {audit}: " + ", ".join(str(golden_path(audit, f).relative_to(REPO)) for f in RENDERINGS))
    sys.exit(0)

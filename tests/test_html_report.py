"""report.html in a real headless Chromium: it loads, the plots render, no console message, a screenshot."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.report.html import render_html
from auditor.report.proof import highlight_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="the Debian 'chromium' package is not installed (.ci/run installs it: apt-get install -y chromium)",
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
    "--hide-scrollbars",
]


def chromium(page: Path, tmp: Path, *args: str) -> tuple[str, list[str]]:
    """Run Chromium on ``page`` with a fresh profile; return (stdout, console lines from the log)."""
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    proc = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args, page.resolve().as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return proc.stdout, console


def _stb_queries() -> list:
    return list(Dataset(DatasetSpec("q", ["stabletoolbench"], role="eval")).records())


@pytest.fixture
def report(tmp_path):
    """A real audit: StableToolBench against two training files that leak G1 and G3 queries."""
    qs = _stb_queries()
    g1 = [r for r in qs if r.split == "G1_instruction"][:3]
    g3 = [r for r in qs if r.split == "G3_instruction"][:1]
    a = tmp_path / "train_a.jsonl"
    a.write_text(
        "".join(json.dumps({"id": f"a{i}", "text": r.view("query")}) + "\n" for i, r in enumerate(g1))
        + json.dumps({"id": "a9", "text": "Plan a trip to the moon with three stops."})
        + "\n"
    )
    b = tmp_path / "train_b.jsonl"
    b.write_text(
        json.dumps(
            {
                "id": "b0",
                "text": "System: you are a tool agent.\nUser: "
                + g3[0].view("query")
                + "\nAssistant: calling the API now.",
            }
        )
        + "\n"
    )
    cfg = AuditConfig(
        datasets={
            "stb": DatasetSpec("stb", ["stabletoolbench"], role="eval"),
            "train_a": DatasetSpec("train_a", [str(a)]),
            "train_b": DatasetSpec("train_b", [str(b)]),
        },
        checks=[CheckSpec("stb-leak", train=["train_a", "train_b"], eval=["stb"], methods=["exact", "ngram", "id"])],
        index_dir=None,
    )
    return run_audit(cfg)


def test_report_sections_and_numbers(report, tmp_path):
    check = report.checks[0]
    assert check["contaminated_items"] == 4
    assert {(m["train"], m["contaminated_items"]) for m in check["matrix"]} == {("train_a", 3), ("train_b", 1)}
    subsets = {s["subset"]: (s["contaminated_items"], s["eval_items"]) for s in check["eval_subsets"]}
    assert subsets["G1_instruction"][0] == 3 and subsets["G3_instruction"][0] == 1
    assert sum(n for _, n in subsets.values()) == 765
    paths = report.write(tmp_path / "out")
    page = paths["html"].read_text()
    assert paths["html"].parent == paths["json"].parent
    # self-contained: no URL other than the SVG namespace, no external resource
    assert not re.search(r"(src|href)=['\"]?(https?:|//)", page)
    assert set(re.findall(r"https?://[^\s'\"<>]+", page)) <= {"http://www.w3.org/2000/svg"}
    assert page.count('class="threshold"') == 2  # exact at 1.0, ngram at 0.5; id has none


def test_highlight_marks_shared_span_only():
    ev, tr = highlight_html(
        "Book a cheap flight to Rome for two adults next May",
        "Unrelated words here. book a cheap flight to Rome for two adults next May! Thanks <b>",
    )
    assert ev == "<mark>Book a cheap flight to Rome for two adults next May</mark>"
    assert tr.startswith("Unrelated words here. <mark>book a cheap") and tr.endswith("May</mark>! Thanks &lt;b&gt;")
    assert "<mark>" not in highlight_html("alpha beta gamma", "delta epsilon")[1]


@needs_chromium
def test_page_renders_in_chromium(report, tmp_path):
    page = report.write(tmp_path / "out")["html"]
    dom, console = chromium(page, tmp_path, "--dump-dom")
    assert console == [], console
    body = re.search(r"<body([^>]*)>", dom).group(1)
    assert 'data-ready="1"' in body  # the inline script ran to its end
    charts = int(re.search(r'data-charts="(\d+)"', body).group(1))
    assert charts == 4  # 2 score histograms (exact, ngram; id has no findings) + matrix + subset bars
    assert "FAIL" in dom and dom.count("<mark>") >= 4
    shot = tmp_path / "report.png"
    chromium(page, tmp_path, "--window-size=1280,2400", f"--screenshot={shot}")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 30_000  # a blank page is a few KB


@needs_chromium
def test_console_check_catches_errors(tmp_path):
    """The console check above can fail: a page with a script error is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        render_html(_empty_report()).replace("document.body.setAttribute('data-ready'", "undefinedFn();x('data-ready'")
    )
    dom, console = chromium(bad, tmp_path, "--dump-dom")
    assert any("undefinedFn" in line for line in console)
    assert 'data-ready="1"' not in dom


def _empty_report():
    from auditor.report import Report

    return Report("pass", {}, [], [])

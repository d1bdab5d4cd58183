"""The notebooks in notebooks/ execute top to bottom without error (nbclient, a real kernel)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest
from helpers import REPO, SHARED
from nbclient import NotebookClient

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def _text(nb) -> str:
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            out.append(o.get("text", "") + "".join(str(v) for v in (o.get("data") or {}).values()))
    return "\n".join(out)


def test_both_notebooks_exist():
    assert {p.name for p in NOTEBOOKS} == {"toolmvr_reviewer_audit.ipynb", "caft_split_audit.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path: Path, tmp_path, monkeypatch):
    monkeypatch.setenv("AUDITOR_SHARED_DATA", str(SHARED))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = _text(nb)
    assert "Traceback" not in text
    if path.stem == "caft_split_audit":
        assert "webshop-split:" in text and "<svg" in text
    elif (SHARED / "tool-mvr" / "data" / "RefineToolBench" / "I3.json").exists():
        assert (
            "3 of 3 public I3 records are StableToolBench test queries, verbatim (the audit found the same items on its own: True)"
            in text
        )
        assert "<svg" in text
    else:
        assert "MISSING" in text


def _run(path: Path, cwd: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
    return _text(nb)


def test_toolmvr_notebook_without_the_data_names_a_source_a_reviewer_can_fetch(tmp_path, monkeypatch):
    """Issue 40: without the shared data the notebook said ABSENT and pointed to a PROVENANCE.md inside
    the missing folder. Now it names the upstream repository and commit, and how to put them in place."""
    empty = tmp_path / "none"
    empty.mkdir()
    monkeypatch.setenv("AUDITOR_SHARED_DATA", str(empty))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    text = _run(REPO / "notebooks" / "toolmvr_reviewer_audit.ipynb", tmp_path)
    assert "Traceback" not in text and "MISSING" in text and "PROVENANCE.md" not in text
    assert "git clone https://github.com/zhymma/Tool-MVR" in text
    assert f"auditor data fetch tool-mvr --dest {empty.resolve()}" in text
    assert "6a3652bad4efaa28484e0208d9c412f6071aea1d" in text
    assert f"shared data: {empty.resolve()} (present)" in text


@pytest.mark.skipif(
    not (REPO.parent / "shared" / "data").is_dir(),
    reason="needs ../shared/data beside the checkout: auditor data fetch all",
)
def test_notebook_finds_the_shared_data_beside_its_checkout_not_the_package(tmp_path, monkeypatch):
    """Without AUDITOR_SHARED_DATA, the folder is found from the notebook's own folder (notebooks/ ->
    ../../shared/data), wherever the package is installed."""
    monkeypatch.delenv("AUDITOR_SHARED_DATA", raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    text = _run(REPO / "notebooks" / "caft_split_audit.ipynb", REPO / "notebooks")
    assert f"shared data: {(REPO.parent / 'shared' / 'data').resolve()} (present)" in text
    docs = (REPO / "notebooks" / "README.md").read_text()
    assert "AUDITOR_SHARED_DATA" in docs and "../../shared/data" in docs


def test_plots_carry_their_look_without_a_stylesheet():
    """Issue 40: in notebook output (no report.html stylesheet) a 0/153 (0.0%) subset drew a full black
    bar: the track's colour came only from the page's CSS. Each element now carries its look."""
    from auditor.report import _svg

    svg = _svg.bars([("test", 0, 153), ("train", 3, 10)], "share")
    assert "0/153 (0.0%)" in svg
    for rect in re.findall(r"<rect [^>]*>", svg):
        assert " fill=" in rect, rect
    assert svg.count('class="track" ') == 2 and svg.count('fill="#e8ecf2"') == 2
    assert re.search(r'<rect class="bar" fill="#3a6fb0" x="\S+" y="\S+" width="0\.0"', svg)
    hist = _svg.histogram([0.9, 0.95], 0.5, "ngram")
    assert 'class="threshold" stroke="#c0262d"' in hist and 'class="axis" stroke="#555"' in hist


def test_nbconvert_html_of_a_notebook_draws_the_charts_with_their_colours(tmp_path, monkeypatch):
    """Issue 40: nbconvert's HTML of a notebook has no report.html stylesheet, so a chart's track drew
    as a full black bar. Executed and exported for real: every chart rectangle carries its own fill."""
    nbconvert = pytest.importorskip("nbconvert", reason="nbconvert is in the test extra")
    monkeypatch.setenv("AUDITOR_SHARED_DATA", str(SHARED))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(REPO / "notebooks" / "caft_split_audit.ipynb", as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    html, _ = nbconvert.HTMLExporter().from_notebook_node(nb)
    charts = re.findall(r"<svg [^>]*class=\"chart\".*?</svg>", html, re.S)
    assert charts
    rects = [r for svg in charts for r in re.findall(r"<rect [^>]*>", svg)]
    assert rects and all(" fill=" in r for r in rects), [r for r in rects if " fill=" not in r][:3]

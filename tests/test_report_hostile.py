"""``auditor report`` on a hostile report.json (issue 23, item 6): HTML in every string field is shown
as text (no script runs in headless Chromium, the Markdown holds no markup), HTML in a numeric field
is one error naming the field, and a renderer that fails on a valid report is reported as a bug, not
as an invalid report. Also: at 800 px no table of the page is clipped, however long its names.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_html_report import chromium, needs_chromium

import auditor.report as report_module
from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.cli import main
from auditor.datasets.dataset import DatasetSpec
from auditor.errors import AuditorError, InternalError
from auditor.report import Report

PWN = (
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">"
    "<script>document.body.setAttribute('data-pwned','script')</script>"
    "<svg onload=\"document.body.setAttribute('data-pwned','svg')\"></svg>]('\"|`*_#\n# PASS"
)


@pytest.fixture(scope="module")
def real_report(tmp_path_factory) -> dict:
    """A real report with findings of conclusive and suspected tiers, provenance-free, as JSON."""
    tmp = tmp_path_factory.mktemp("hostile")
    train = tmp / "train.jsonl"
    train.write_text(
        json.dumps({"id": "t0", "messages": [{"role": "user", "content": "i need gluten free popcorn seasoning"}]})
        + "\n"
        + json.dumps({"id": "t1", "instruction": "Say it.", "input": "i need gluten free popcorn"})
        + "\n",
        encoding="utf-8",
    )
    cfg = AuditConfig(
        datasets={
            "ev": DatasetSpec("ev", ["webshop:0:500"], role="eval"),
            "tr": DatasetSpec("tr", [str(train)], role="train"),
        },
        checks=[CheckSpec("c", train=["tr"], eval=["ev"])],
        index_dir=None,
    )
    doc = run_audit(cfg).to_dict()
    assert doc["findings"] and doc["texts"]
    return doc


#: objects whose keys are names from the data (datasets, labels, reasons, texts), not field names
MAPS = {"datasets", "texts", "error_types", "items_by_method", "skip_reasons", "not_indexed_reasons", "by_split"}


def _hostile_strings(value, keyed: bool = False):
    """Every string of ``value`` with :data:`PWN` added, and the keys of the objects that are maps
    of names (:data:`MAPS`)."""
    if isinstance(value, str):
        return value + PWN
    if isinstance(value, list):
        return [_hostile_strings(v) for v in value]
    if isinstance(value, dict):
        return {
            (k + PWN if keyed else k): _hostile_strings(v, k in MAPS or (keyed and isinstance(v, dict)))
            for k, v in value.items()
        }
    return value


def _rerender(src: Path, fmt: str, out: Path):
    return CliRunner().invoke(main, ["report", str(src), "--format", fmt, "--out", str(out)])


def _body(dom: str) -> str:
    return re.search(r"<body([^>]*)>", dom).group(1)


@needs_chromium
def test_html_in_every_string_field_runs_no_script(real_report, tmp_path):
    doc = _hostile_strings(real_report)
    doc["verdict"] = real_report["verdict"]  # the class name it picks is escaped too, but keep it real
    src = tmp_path / "report.json"
    src.write_text(json.dumps(doc), encoding="utf-8")
    page = tmp_path / "out.html"
    res = _rerender(src, "html", page)
    assert res.exit_code == 0, res.output
    dom, console = chromium(page, tmp_path, "--dump-dom")
    body = _body(dom)
    assert 'data-ready="1"' in body  # the page's own script ran to its end ...
    assert "data-pwned" not in body  # ... and none of the report's
    html = page.read_text()
    assert "<img src=x" not in html and "<script>document" not in html and "<svg onload" not in html
    md = tmp_path / "out.md"
    assert _rerender(src, "md", md).exit_code == 0
    text = md.read_text()
    assert "<img" not in text and "<script" not in text and "<svg" not in text
    assert "\n# PASS" not in text  # a newline in a value cannot start a heading
    junit = tmp_path / "out.xml"
    assert _rerender(src, "junit", junit).exit_code == 0
    import xml.etree.ElementTree as ET

    ET.parse(junit)  # well-formed: every value is XML-escaped


def _numeric_paths(value, path=""):
    """``(path, pattern)`` of each number in ``value``: the pattern folds list indices, so each kind
    of numeric field is tried once."""
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield path, re.sub(r"\[\d+\]", "[]", path)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _numeric_paths(v, f"{path}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _numeric_paths(v, f"{path}.{k}" if path else k)


def _set(doc, path: str, value) -> None:
    parts = re.findall(r"[^.\[\]]+|\[\d+\]", path)
    node = doc
    for p in parts[:-1]:
        node = node[int(p[1:-1])] if p.startswith("[") else node[p]
    last = parts[-1]
    if last.startswith("["):
        node[int(last[1:-1])] = value
    else:
        node[last] = value


#: numeric fields the renderers print or compute with: a string in one is rejected on load
PRINTED = {
    "checks[].eval_items",
    "checks[].contaminated_items",
    "checks[].contaminated_share",
    "checks[].allowance",
    "checks[].suspected",
    "checks[].items_by_method.exact",
    "checks[].method_stats[].eval_items",
    "checks[].method_stats[].eval_not_indexed",
    "checks[].matrix[].contaminated_items",
    "checks[].eval_subsets[].eval_items",
    "checks[].skipped.train",
    "findings[].score",
    "findings[].train_ordinal",
    "findings[].evidence.span[]",
    "datasets.ev.records",
    "datasets.ev.skipped",
    "run.seconds",
}


def test_html_in_any_numeric_field_is_one_error_naming_it(real_report, tmp_path):
    """Each kind of numeric field once: rejected in one line naming it, or (a method's own statistic
    no renderer reads) left out of the page; never markup."""
    seen: dict[str, str] = {}
    for path, pattern in _numeric_paths(real_report):
        seen.setdefault(pattern, path)
    assert PRINTED <= set(seen), PRINTED - set(seen)
    rejected = set()
    for n, (pattern, path) in enumerate(sorted(seen.items())):
        doc = json.loads(json.dumps(real_report))
        _set(doc, path, "<img src=x onerror=alert(1)>")
        src = tmp_path / "report.json"
        src.write_text(json.dumps(doc), encoding="utf-8")
        for fmt in ("html", "md"):
            out = tmp_path / f"{n}.{fmt}"
            res = _rerender(src, fmt, out)
            assert res.exit_code in (0, 2), (path, res.output, res.exception)
            if res.exit_code == 2:
                lines = res.output.strip().splitlines()
                assert len(lines) == 1 and "not a valid auditor report" in lines[0], (path, res.output)
                assert re.sub(r"\[\d+\]", "[]", path).split("[]")[0].split(".")[0] in lines[0], lines[0]
                assert "expected, not a string" in lines[0] and "<img" not in res.output, lines[0]
                rejected.add(pattern)
            else:
                assert "<img src=x" not in out.read_text(), path
    assert PRINTED <= rejected, PRINTED - rejected


def test_renderers_escape_numbers_even_past_validation(real_report):
    """Defence in depth: a Report built in code (no validation) with markup in its counts."""
    doc = json.loads(json.dumps(real_report))
    c = doc["checks"][0]
    for key in ("eval_items", "allowance", "items_by_method"):
        c[key] = {m: PWN for m in c[key]} if key == "items_by_method" else PWN
    doc["datasets"]["ev"]["records"] = doc["datasets"]["ev"]["skipped"] = PWN
    doc["error_types"] = {"tr": {"label": PWN}}
    report = Report.from_dict(doc)
    page, md = report.render("html"), report.render("md")
    assert "<img src=x" not in page and "<script>document" not in page
    assert "<img" not in md and "<script" not in md


def test_a_renderer_bug_is_reported_as_a_bug(real_report, tmp_path, monkeypatch):
    src = tmp_path / "report.json"
    src.write_text(json.dumps(real_report), encoding="utf-8")

    def broken(report):
        raise KeyError("a renderer bug")

    monkeypatch.setitem(report_module.model.FORMATS, "md", broken)  # the registered Markdown renderer
    res = _rerender(src, "md", tmp_path / "out.md")
    assert isinstance(res.exception, InternalError) and isinstance(res.exception.__cause__, KeyError), res.output
    assert "a bug in auditor's renderer" in str(res.exception) and "a renderer bug" in str(res.exception)
    assert not isinstance(res.exception, AuditorError) and res.exit_code not in (0, 2)
    assert "not a valid auditor report" not in res.output


def test_invalid_input_is_still_the_invalid_report_line(real_report, tmp_path):
    doc = json.loads(json.dumps(real_report))
    doc["findings"][0]["evidence"] = "<b>x</b>"
    src = tmp_path / "report.json"
    src.write_text(json.dumps(doc), encoding="utf-8")
    res = _rerender(src, "md", tmp_path / "out.md")
    assert res.exit_code == 2 and "findings[0].evidence: an object expected, not a string" in res.output


@needs_chromium
def test_no_table_is_clipped_at_800_px_with_long_names(real_report, tmp_path):
    doc = json.loads(json.dumps(real_report))
    long = "selected_Toolbench_V_augmented_with_reflection_and_error_correction_trajectories_v2_release.json"
    doc["checks"][0]["train"] = [long, long.replace("_V_", "_R_")]
    doc["checks"][0]["name"] = "stabletoolbench-against-toolmvr-and-steptool-training-sets-for-the-appendix"
    page = tmp_path / "long.html"
    page.write_text(Report.from_dict(doc).render("html"), encoding="utf-8")
    for width in (800, 1400):
        dom, console = chromium(page, tmp_path, "--dump-dom", f"--window-size={width},1400")
        assert console == [], console
        body = _body(dom)
        assert 'data-ready="1"' in body and 'data-clipped="0"' in body, (width, body)


def test_review_list_shows_the_evidence_of_every_suspected_finding(real_report):
    report = Report.from_dict(real_report)
    suspected = [f for f in report.findings if (f.get("evidence") or {}).get("tier") == "suspected"]
    if not suspected:
        pytest.skip("this audit gave no suspected finding")
    md = report.render("md").split("## Suspected findings")[1]
    rows = [line for line in md.splitlines() if re.match(r"\| \d+ \|", line)]
    assert len(rows) == min(len(suspected), 50)
    assert all(row.rstrip(" |").rsplit(" | ", 1)[1].strip() for row in rows)  # the evidence cell is filled
    assert "suspected: below the conclusive bar" in md

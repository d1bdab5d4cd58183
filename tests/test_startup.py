"""Start-up loads only what a run uses (issue 36): pinned by which modules are loaded, not by timing
(the figures: ``benchmarks/bench_startup.py``, docs/scale.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import click
from helpers import REPO

from auditor.cli import COMMANDS, commands, main

#: what no start-up and no exact + ngram audit loads: the model tiers' stacks and their modules
HEAVY = ("torch", "sentence_transformers", "faiss", "ray", "scipy", "auditor.methods.embedding", "auditor.embed")


def _loaded(code: str, *args: str) -> list[str]:
    """The modules loaded once ``code`` ran in a fresh interpreter (it may set ``LOADED`` itself)."""
    probe = f"import json, sys\nLOADED = None\n{code}\nprint(json.dumps(sorted(LOADED or sys.modules)))\n"
    out = subprocess.run(
        [sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=REPO, timeout=300, check=True
    )
    return json.loads(out.stdout.splitlines()[-1])


def _heavy(loaded: list[str], extra: tuple[str, ...] = ()) -> list[str]:
    return [m for m in loaded if any(m == h or m.startswith(h + ".") for h in (*HEAVY, *extra))]


def test_import_auditor_loads_the_errors_and_the_version_only():
    loaded = [m for m in _loaded("import auditor") if m.startswith("auditor")]
    assert loaded == ["auditor", "auditor._lazy", "auditor._version", "auditor.errors"]  # _lazy: PEP 562


def test_the_public_names_resolve_on_first_use_and_are_listed():
    loaded = _loaded(
        "import auditor\nauditor.run_audit, auditor.Report, auditor.Detector\nassert set(auditor.__all__) <= set(dir(auditor))"
    )
    assert "auditor.audit.run" in loaded and "auditor.integrations.detector" in loaded


def test_the_cli_its_help_and_its_version_import_no_command():
    for argv in (None, ["--help"], ["--version"]):
        code = "import auditor.cli"
        if argv is not None:
            code += f"\ntry:\n    auditor.cli.main({argv!r}, prog_name='auditor')\nexcept SystemExit:\n    pass"
        loaded = _loaded(code)
        assert _heavy(loaded, ("numpy", "pyarrow", "auditor.cli.", "auditor.audit", "auditor.methods")) == [], argv


def test_a_command_imports_its_own_module_only():
    loaded = _loaded("import auditor.cli\ntry:\n    auditor.cli.main(['data', '--help'])\nexcept SystemExit:\n    pass")
    assert "auditor.cli.data" in loaded
    assert _heavy(loaded, ("numpy", "auditor.cli.run", "auditor.cli.review_cmd", "auditor.audit")) == []


_FIRST_RECORD = """
import runpy
from auditor.adapters import base

made = base.Adapter.record

def record(self, *a, **k):
    global LOADED
    if LOADED is None:
        LOADED = list(sys.modules)  # the modules loaded when the first record is made
    return made(self, *a, **k)

base.Adapter.record = record
sys.argv = ["auditor", *sys.argv[1:]]
try:
    runpy.run_module("auditor", run_name="__main__")
except SystemExit:
    pass
"""


#: what an exact + ngram audit loads only after its first record, if at all: Arrow (the Python twin's token
#: hashes), DuckDB (the findings store, opened when its buffer first fills), the report model and its renderings
LATER = ("pyarrow", "duckdb", "auditor.report.model", "auditor.report.html", "auditor.report.markdown")


def test_an_exact_and_ngram_audit_loads_no_model_tier_by_its_first_record(tmp_path):
    argv = ["audit", "--eval", "webshop:0:50", "--train", "webshop:50:100", "--method", "exact", "--method", "ngram"]
    loaded = _loaded(_FIRST_RECORD, *argv, "--report-dir", str(tmp_path / "r"), "--index-dir", str(tmp_path / "i"))
    assert "auditor.methods.exact" in loaded and "auditor.methods.ngram" in loaded
    assert _heavy(loaded, ("auditor.methods.minhash", "auditor.methods.calls", "auditor.methods.entities")) == []
    assert _heavy(loaded, LATER) == []  # each is loaded where first used: none before the first record


def test_an_audit_loads_duckdb_once_its_findings_fill_the_stores_buffer(tmp_path):
    whole_run = _FIRST_RECORD.replace("LOADED = list(sys.modules)", "pass")  # LOADED stays None: at the exit
    runs = (  # eval, train (200:1200 repeats goals of 0:200), verdict, the store's buffer, DuckDB opened
        ("webshop:0:50", "webshop:50:100", "pass", 20_000, False),
        ("webshop:0:200", "webshop:200:1200", "fail", 20_000, False),
        ("webshop:0:200", "webshop:200:1200", "fail", 2, True),  # 2 findings: they fill it
    )
    for ev, train, verdict, buffer, duckdb in runs:
        small = f"import auditor.store.findings_db as db\ndb.DuckDBFindingStore.__init__.__defaults__ = (5, None, {buffer})\n"
        argv = ["audit", "--eval", ev, "--train", train, "--method", "exact", "--method", "ngram"]
        loaded = _loaded(small + whole_run, *argv, "--report-dir", str(tmp_path / f"{train}-{buffer}"))
        report = json.loads((tmp_path / f"{train}-{buffer}" / "report.json").read_text())
        filled = report["run"]["findings_total"] >= buffer
        assert (report["verdict"], filled, "duckdb" in loaded) == (verdict, duckdb, duckdb), train
        assert {"auditor.report.markdown", "auditor.report.html"} <= set(loaded)
        assert "pyarrow" not in loaded  # the C kernel reads no Arrow, and the paraphrase tier is not imported


def test_the_report_package_loads_its_model_and_renderings_when_first_used():
    loaded = _loaded("import auditor.report, auditor.report.results, auditor.report.publish")
    assert [m for m in loaded if m in ("auditor.report.model", *LATER)] == []
    code = (
        "from auditor.report import Report\ntry:\n    Report('pass', {}, [], []).render('xml')\n"
        "except Exception as e:\n    print(e)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300, check=True
    )
    assert out.stdout.strip() == "unknown report format 'xml' (formats: json, conda, conda-pr, html, junit, md)"
    assert "auditor.report.markdown" in _loaded(
        "from auditor.report import Report\nReport('pass', {}, [], []).render('md')"
    )


def test_the_command_table_names_each_commands_module_and_first_line():
    found = commands()
    assert set(found) == set(COMMANDS)
    for name, cmd in found.items():
        module, line = COMMANDS[name]
        assert cmd.callback is not None and cmd.callback.__module__ == module, name
        assert line == " ".join((cmd.help or "").split("\n\n")[0].split()), name
        for limit in (30, 45, 80):
            assert click.Command(name, help=line).get_short_help_str(limit) == cmd.get_short_help_str(limit)
    assert main.list_commands(None) == sorted(COMMANDS)

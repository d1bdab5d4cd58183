"""An engine is a plugin: one class, registered by naming it, and the audit runs on it unchanged.

``SerialEngine`` below is a whole engine — every unit read and searched in this process, one after
the other — written against :mod:`auditor.scan` alone, as a new engine module in ``auditor/engines/``
would be. Registering it (subclassing :class:`~auditor.engines.base.Engine` with a ``name``) is all
it takes for ``--engine serial`` on the command line and ``engine = "serial"`` (with its own options)
in a manifest. The README's two audits run on it write the golden reports of
tests/test_report_golden.py byte for byte, but for the engine's own name where the report states it
(``run.engine``, the Markdown and HTML footers).
"""

from __future__ import annotations

import dataclasses
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from click.testing import CliRunner
from helpers import REPO, read_golden
from test_report_golden import AUDITS, RENDERINGS, masked_json, masked_text, md

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.manifest import parse_manifest
from auditor.audit.run import run_audit
from auditor.cli import main
from auditor.datasets.dataset import Dataset
from auditor.datasets.spec import DatasetSpec
from auditor.datasets.units import Unit, UnitReader
from auditor.engines import base
from auditor.engines.base import DEFAULT_SPLIT_BYTES, Engine, EngineConfig, get_engine
from auditor.errors import ConfigError, ManifestError
from auditor.methods.base import Finding
from auditor.scan.driver import run_scan
from auditor.scan.job import ScanJob, ScanStats, UnitResult, scan_unit

#: where the serial engine's name shows in each file (the golden files say "local")
NAMED = {
    "report.json": ('"engine": "local"', '"engine": "serial"'),
    "report.md": ("engine local,", "engine serial,"),
    "report.html": ("engine <code>local</code>", "engine <code>serial</code>"),
    "junit.xml": None,
}


@pytest.fixture
def serial_engine():
    """Registers ``serial`` for one test (and forgets it afterwards). In the registry itself, not a copy:
    a built-in engine first imported during the test registers there too, and stays for the next one."""

    @dataclass
    class SerialOptions(EngineConfig):
        reverse_plan: bool = field(default=False, metadata={"manifest": "serial_reverse_plan"})

    @dataclass
    class SerialEngine(Engine):
        name = "serial"
        summary = "every unit in this process, one after the other"
        Config = SerialOptions
        batch_size: int = 512
        workers: int | None = 1
        split_bytes: int = DEFAULT_SPLIT_BYTES
        reverse_plan: bool = False
        units_run: list[Unit] = dataclasses.field(default_factory=list, init=False)

        def scan(self, job: ScanJob, dataset: Dataset, stats: ScanStats) -> Iterator[Finding]:
            units = dataset.plan(self.split_bytes)

            def run_units(
                job: ScanJob, reader: UnitReader, tasks: list[tuple[Unit, int | None]], count_only: bool
            ) -> Iterator[UnitResult]:
                for unit, start in tasks:
                    self.units_run.append(unit)
                    yield scan_unit(job, reader, unit, start, count_only)

            yield from run_scan(run_units, job, dataset, stats, units)

    yield SerialEngine
    base.ENGINES.unregister("serial")


def test_a_registered_engine_is_an_engine_by_name(serial_engine):
    engine = get_engine("serial", batch_size=64, address="ray://elsewhere:10001")  # another engine's option
    assert isinstance(engine, serial_engine) and engine.batch_size == 64
    assert "serial" in base.names()
    with pytest.raises(ConfigError, match="unknown engine 'serail'.*did you mean 'serial'"):
        get_engine("serail")


def test_the_manifest_learns_a_registered_engines_options(serial_engine):
    doc = {
        "engine": "serial",
        "serial_reverse_plan": True,
        "datasets": {"e": {"path": "webshop:0:50", "role": "eval"}, "t": {"path": "webshop:50:60", "role": "train"}},
        "checks": [{"name": "c", "train": ["t"], "eval": ["e"]}],
    }
    cfg = parse_manifest(doc)
    assert (cfg.engine, cfg.engine_options) == ("serial", {"serial": {"reverse_plan": True}})
    with pytest.raises(ManifestError, match="'serial_reverse_plan' must be a boolean"):
        parse_manifest({**doc, "serial_reverse_plan": 1})


@pytest.mark.parametrize("name", sorted(AUDITS))
def test_the_readme_audits_on_a_plugin_engine_write_the_golden_reports(serial_engine, name, tmp_path, monkeypatch):
    made: list[Engine] = []
    real = get_engine

    def keep(engine_name, **kw):
        made.append(real(engine_name, **kw))
        return made[-1]

    monkeypatch.setattr("auditor.audit.run.get_engine", keep)
    out, idx = tmp_path / "report", tmp_path / "indexes"
    args = [*AUDITS[name], "--engine", "serial", "--report-dir", str(out), "--index-dir", str(idx)]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 1, res.output  # both README audits find leaked items
    assert [type(e) for e in made] == [serial_engine] and made[0].units_run  # the scans ran on it
    for file in ["report.json", *RENDERINGS]:
        # the report's own folder, named in the suspected note's review command (as test_report_golden masks it)
        text = (
            (out / file)
            .read_text(encoding="utf-8")
            .replace(str(out), "<report-dir>")
            .replace(md(str(out)), "<report-dir>")
        )
        written = masked_json(text) if file == "report.json" else masked_text(text)
        expected = read_golden(name, file)
        if NAMED[file] is not None:
            local, serial = NAMED[file]
            assert expected.count(local) == 1, file
            expected = expected.replace(local, serial)
        assert written == expected, f"{name} {file} differs from the golden file"


def test_the_engine_in_the_docs_is_one_module_and_audits_as_the_local_engine(monkeypatch, request):
    """docs/architecture.md's engine, loaded as the module ``auditor.engines.serial`` would be: it
    registers itself and finds what the local engine finds."""
    request.addfinalizer(lambda: base.ENGINES.unregister("serial"))
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    code = doc.split("```python\n", 1)[1].split("```", 1)[0]
    module = types.ModuleType("auditor.engines.serial")
    module.__package__ = "auditor.engines"
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, "docs/architecture.md", "exec"), module.__dict__)
    assert base.registry()["serial"] is module.SerialEngine

    def config(engine: str) -> AuditConfig:
        return AuditConfig(
            datasets={
                "e": DatasetSpec("e", ["webshop:0:200"], role="eval"),
                "t": DatasetSpec("t", ["webshop:100:400"], role="train"),
            },
            checks=[CheckSpec("c", train=["t"], eval=["e"], methods=["exact", "ngram"])],
            engine=engine,
            findings_store="memory",
        )

    serial, local = run_audit(config("serial")).to_dict(), run_audit(config("local")).to_dict()
    assert serial["run"]["engine"] == "serial" and serial["checks"][0]["contaminated_items"] == 100
    assert serial["findings"] == local["findings"] and serial["checks"] == local["checks"]

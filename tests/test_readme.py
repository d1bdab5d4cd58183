"""The README's set-up commands and the figures it and docs/cli.md quote are what the tool prints (the
commands themselves run in tests/test_doc_blocks.py)."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner
from helpers import REPO

from auditor.audit.config import AuditConfig, CheckSpec
from auditor.audit.run import run_audit
from auditor.cli import main
from auditor.datasets.dataset import DatasetSpec

README = (REPO / "README.md").read_text()
CLI_DOC = (REPO / "docs" / "cli.md").read_text()
NOTEBOOKS = (REPO / "notebooks" / "README.md").read_text()


def _contaminated(train: str, eval_: str, methods: list[str] | None = None) -> int:
    cfg = AuditConfig(
        datasets={"e": DatasetSpec("e", [eval_], role="eval"), "t": DatasetSpec("t", [train])},
        checks=[CheckSpec("c", ["t"], ["e"], methods=methods)],
        index_dir=None,
    )
    return run_audit(cfg).checks[0]["contaminated_items"]


def test_quick_start_figures():
    """Command 1 of the set-up and the choice-model variant named beside it."""
    found = int(re.search(r"It finds (\d+) leaked test goals", README).group(1))
    choice = int(re.search(r"`--train webshop:1500:` finds (\d+)", README).group(1))
    assert re.search(
        r"```bash\npip install -e \. && auditor audit --eval webshop:0:500 --train webshop:500: +# exit 1\n", README
    )
    assert _contaminated("webshop:500:", "webshop:0:500") == found
    assert _contaminated("webshop:1500:", "webshop:0:500") == choice


def test_notebook_figures_in_the_notebooks_readme():
    m = re.search(r"(\d+)/20 airline and (\d+)/40 retail test tasks", NOTEBOOKS)
    methods = ["exact", "ngram", "id"]  # the notebook's
    assert _contaminated("tau2-airline:train", "tau2-airline:test", methods) == int(m.group(1))
    assert _contaminated("tau2-retail:train", "tau2-retail:test", methods) == int(m.group(2))


def test_example_manifest_runs_as_docs_cli_says(tmp_path):
    assert "auditor verify examples/split.toml" in CLI_DOC
    res = CliRunner().invoke(
        main, ["verify", str(REPO / "examples" / "split.toml"), "--report-dir", str(tmp_path / "r")]
    )
    assert res.exit_code == 1, res.output  # both checks find leaked items
    doc = json.loads((tmp_path / "r" / "report.json").read_text())
    found = int(re.search(r"It finds (\d+) leaked test goals", README).group(1))
    assert int(re.search(r"(\d+) of WebShop's 500 test goals", CLI_DOC).group(1)) == found
    retail = int(re.search(r"(\d+)/40 retail test tasks", CLI_DOC).group(1))
    assert [c["contaminated_items"] for c in doc["checks"]] == [found, retail]
    traced = int(re.search(r"exit 1: (\d+) training goals trace to the test split", CLI_DOC).group(1))
    assert doc["provenance"][0]["held_out_records"] == traced  # WebShop training goals copied from test goals
    res = CliRunner().invoke(
        main,
        ["provenance", str(REPO / "examples" / "split.toml"), "--statement"] + ["--report-dir", str(tmp_path / "p")],
    )
    assert res.exit_code == 1 and f" {traced} (0.4%) to the held-out split 'test'" in res.output


def test_quick_start_audit_needs_no_optional_extra(tmp_path):
    """Command 1 installs without [embed] / [ray]: the default audit imports none of their packages."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from auditor.cli import main\n"
        f"r = CliRunner().invoke(main, ['audit', '--eval', 'webshop:0:500', '--train', 'webshop:500:', "
        f"'--report-dir', {str(tmp_path / 'r')!r}, '--index-dir', {str(tmp_path / 'i')!r}])\n"
        "heavy = ['torch', 'sentence_transformers', 'transformers', 'faiss', 'ray']\n"
        "print(r.exit_code, [m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert out.stdout.split("\n")[0] == "1 []", out.stdout + out.stderr


def test_ci_runs_the_readme_test_command_with_the_linters_first():
    """``.ci/run`` runs the README's test command verbatim: ruff and mypy (config in pyproject.toml), then pytest,
    then the tests marked slow (which a plain ``pytest`` leaves out)."""
    command = re.search(r"```bash\n(apt-get update[^\n]*)\n```", README).group(1)
    ci = (REPO / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci == command
    steps = [s.strip() for s in command.split("&&")]
    assert steps.index("ruff check .") < steps.index("ruff format --check .") < steps.index("mypy")
    assert steps.index("mypy") < steps.index("python -m pytest -q") == len(steps) - 2
    assert steps[-1] == "python -m pytest -q -m slow"  # the tests a plain `pytest` leaves out

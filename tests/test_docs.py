"""README is a front door; docs/ holds the rest, one source per fact."""

from __future__ import annotations

import re

import click
from click.testing import CliRunner
from helpers import REPO

from auditor.audit import manifest
from auditor.cli import commands as cli_commands
from auditor.cli import main

README = (REPO / "README.md").read_text()
DOCS = REPO / "docs"


CLI_DOC = DOCS / "cli.md"


def _cli_rows() -> dict[str, str]:
    """``auditor NAME`` → its row of docs/cli.md's CLI table (``data`` is two rows: ``data fetch``, ``data list``)."""
    rows: dict[str, str] = {}
    for line in CLI_DOC.read_text().split("\n## ", 1)[0].splitlines():
        m = re.match(r"\| `auditor ([a-z-]+)[^`]*` \|(.*)\|\s*$", line)
        if m:
            rows[m.group(1)] = rows.get(m.group(1), "") + line
    return rows


def test_every_cli_option_is_in_its_row_of_the_cli_table_and_nowhere_else():
    rows = _cli_rows()
    missing = []
    for name, cmd in sorted(cli_commands().items()):
        assert name in rows, f"command '{name}' is not in docs/cli.md's CLI table"
        commands = cmd.commands.values() if isinstance(cmd, click.Group) else [cmd]
        for sub in commands:
            for param in sub.params:
                if isinstance(param, click.Option) and param.name != "help":
                    flag = max(param.opts, key=len)  # the long form
                    if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", rows[name]):
                        missing.append(f"auditor {name} {flag}")
    assert not missing, f"options missing from their row of docs/cli.md's CLI table: {missing}"
    # one source: no other page repeats the table
    for doc in [REPO / "README.md", REPO / "CONTRIBUTING.md", *DOCS.glob("*.md")]:
        if doc != CLI_DOC:
            assert "| `auditor audit`" not in doc.read_text(), f"{doc.name} repeats the CLI table"


def test_the_readmes_method_table_is_the_registry():
    """One row per registered method, in the registry's words for when it runs."""
    section = README.split("\n## Methods\n", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `(\w+)` \|.*\| (by default|when named) \|$", section, flags=re.M))
    out = CliRunner().invoke(main, ["methods"]).output
    registry = {
        m.group(1): "when named" if "[run when named]" in m.group(2) else "by default"
        for m in re.finditer(r"^(\w+)\s+\S+\s+(.*)$", out, flags=re.M)
    }
    assert rows == registry


def test_every_manifest_key_is_in_docs_manifest():
    text = (DOCS / "manifest.md").read_text()
    keys = manifest.TOP_KEYS | manifest.DATASET_KEYS | manifest.CHECK_KEYS | manifest.PROVENANCE_KEYS
    # a key is documented as `key = ...` in the example manifest, as a `[key.NAME]` / `[[key]]` table,
    # or named in backticks in the prose
    pattern = r"(?<![\w-]){k}\s*=|\[\[?{k}[.\]]|`{k}`"
    missing = sorted(k for k in keys if not re.search(pattern.format(k=re.escape(k)), text))
    assert not missing, f"manifest keys missing from docs/manifest.md: {missing}"
    assert "report_dir = " not in README, "the manifest example belongs in docs/manifest.md only"


def _anchors(text: str) -> set[str]:
    """The fragments a Markdown page answers to on GitHub: heading slugs and ``<a id="...">``."""
    slugs = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in re.findall(r"^#+ (.*)$", text, re.M)}
    return slugs | set(re.findall(r'<a id="([^"]+)">', text))


def test_readme_is_a_front_door_and_links_resolve():
    assert len(README) <= 5_000, len(README)
    pages = [REPO / "README.md", REPO / "CONTRIBUTING.md", REPO / "notebooks" / "README.md", *DOCS.glob("*.md")]
    pages.append(REPO / "benchmarks" / "results" / "HISTORY.md")
    for path in pages:
        headings = re.findall(r"^#+ (.*)$", path.read_text(), re.M)
        assert len(headings) == len(set(headings)), f"{path.name}: a heading twice (its #section is ambiguous)"
        for target, fragment in re.findall(r"\]\(([^)#:]*)(?:#([^)]*))?\)", path.read_text()):
            page = (path.parent / target) if target else path
            assert page.exists(), f"{path.name}: broken link {target}"
            if fragment and page.suffix == ".md":
                assert fragment in _anchors(page.read_text()), f"{path.name}: no section #{fragment} in {target}"
    # sections named from code, the Action, the hooks and the changelog ("docs/scale.md#the-gates-ceiling")
    named = [
        *(REPO / "auditor").rglob("*.py"),
        REPO / "action.yml",
        REPO / ".pre-commit-hooks.yaml",
        REPO / "CHANGELOG.md",
    ]
    for path in named:
        for name, fragment in re.findall(r"\b([\w-]+\.md)#([\w-]+)", path.read_text()):
            page = DOCS / name
            assert page.exists() and fragment in _anchors(page.read_text()), (
                f"{path.name}: no section {name}#{fragment}"
            )


def test_tour_figure_is_the_set_up_figure():
    """The tour prints the set-up audit; test_readme checks the set-up figure against a real run."""
    found = re.search(r"It finds (\d+) leaked test goals", README).group(1)
    assert f"audit: fail, {found} conclusive + " in README

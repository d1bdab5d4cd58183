"""README is a front door; docs/ holds the rest, one source per fact."""

from __future__ import annotations

import re

import click
from helpers import REPO

from auditor.audit import manifest
from auditor.cli import main

README = (REPO / "README.md").read_text()
DOCS = REPO / "docs"


def _cli_section() -> str:
    return README.split("\n## CLI\n", 1)[1].split("\n## ", 1)[0]


def test_every_cli_option_is_in_the_readme_cli_table_and_not_in_docs():
    table = _cli_section()
    missing = []
    for name, cmd in sorted(main.commands.items()):
        for param in cmd.params:
            if isinstance(param, click.Option) and param.name != "help":
                flag = max(param.opts, key=len)
                if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", table):
                    missing.append(f"auditor {name} {flag}")
    assert not missing, f"options missing from the README's CLI table: {missing}"
    # one source: the CLI table lives in the README only, no docs file repeats it
    for doc in DOCS.glob("*.md"):
        assert "| `auditor audit`" not in doc.read_text(), f"{doc.name} repeats the CLI table"


def test_every_manifest_key_is_in_docs_manifest():
    text = (DOCS / "manifest.md").read_text()
    keys = manifest.TOP_KEYS | manifest.DATASET_KEYS | manifest.CHECK_KEYS | manifest.PROVENANCE_KEYS
    # a key is documented as `key = ...` in the example manifest, as a `[key.NAME]` / `[[key]]` table,
    # or named in backticks in the prose
    pattern = r"(?<![\w-]){k}\s*=|\[\[?{k}[.\]]|`{k}`"
    missing = sorted(k for k in keys if not re.search(pattern.format(k=re.escape(k)), text))
    assert not missing, f"manifest keys missing from docs/manifest.md: {missing}"
    assert "report_dir = " not in README, "the manifest example belongs in docs/manifest.md only"


def test_readme_is_a_front_door_and_links_resolve():
    assert len(README) <= 12_000, len(README)
    for path in [REPO / "README.md", *DOCS.glob("*.md")]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", path.read_text()):
            assert (path.parent / target).exists(), f"{path.name}: broken link {target}"


def test_tour_figure_is_the_set_up_figure():
    """The tour prints the set-up audit; test_readme checks the set-up figure against a real run."""
    found = re.search(r"It finds (\d+) leaked test goals", README).group(1)
    assert f"audit: fail, {found} conclusive + " in README

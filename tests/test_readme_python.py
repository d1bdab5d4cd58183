"""The README's Python example is six lines and runs as written (every other Python block of the docs runs
in tests/test_doc_blocks.py)."""

from __future__ import annotations

import re

from helpers import REPO

README = (REPO / "README.md").read_text()


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_readme_python_example_runs():
    section = README.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    (block,) = _python_blocks(section)
    assert len(block.strip().splitlines()) <= 6
    exec(compile(block, "README.md", "exec"), {})

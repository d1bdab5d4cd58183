"""The README's Python example runs as written (and the docs' Python examples, docs/python-api.md)."""

from __future__ import annotations

import re

import pytest
from helpers import REPO

README = (REPO / "README.md").read_text()
API = (REPO / "docs" / "python-api.md").read_text()


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_readme_python_example_runs():
    section = README.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    (block,) = _python_blocks(section)
    assert len(block.strip().splitlines()) <= 6
    exec(compile(block, "README.md", "exec"), {})


@pytest.mark.parametrize("index", range(len(_python_blocks(API))))
def test_the_python_api_examples_run(index, tmp_path, monkeypatch):
    block = _python_blocks(API)[index]
    for module in re.findall(r"^(?:import|from) (datasets|ray|datatrove)\b", block, flags=re.M):
        pytest.importorskip(module)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    exec(compile(block, f"docs/python-api.md block {index}", "exec"), {"__name__": "__main__"})

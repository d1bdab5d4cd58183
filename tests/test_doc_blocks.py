"""Every fenced code block of README.md, CONTRIBUTING.md and docs/*.md is run or checked here, or marked,
with a reason, as illustrative or as run by a named test (issue 40 item 2; conventions: CONTRIBUTING.md).

Shell lines run in a temp folder beside a copy of ``examples/`` and the public releases, each with the
exit code its ``# exit N`` comment gives (else 0); install steps are checked against this checkout
instead of run. Transcripts (``$ command`` then its output) run and are compared line by line. Python
runs; TOML, YAML and JSON are loaded by the part of auditor (or the tool) that reads them.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import docblocks
import pytest
import yaml
from docblocks import Block
from helpers import REPO

from auditor.audit import manifest
from auditor.audit.decisions import Decisions
from auditor.cli import main
from auditor.datasets.dataset import Dataset, DatasetSpec

BLOCKS = docblocks.all_blocks()
#: languages this module runs or loads; any other block must be marked
RUN = docblocks.SHELL | {"text", "console", "python", "toml", "yaml", "json", ""}


def _run_here(block: Block) -> bool:
    return not ({"illustrative", "tested by"} & set(block.markers))


def _params() -> list:
    return [
        pytest.param(b, id=b.name, marks=[pytest.mark.slow] if "slow" in b.markers else [])
        for b in BLOCKS
        if _run_here(b)
    ]


def test_every_block_is_run_or_says_why_not():
    """Counted, so a block the runner does not know fails here rather than passing unseen."""
    unknown = [b.name for b in BLOCKS if _run_here(b) and (b.lang not in RUN or _kind(b) is None)]
    assert not unknown, f"blocks neither run nor marked (CONTRIBUTING.md says how to mark one): {unknown}"
    for b in BLOCKS:
        assert b.markers.get("illustrative", "x"), f"{b.name}: an illustrative block must say why"
        for named in filter(None, b.markers.get("tested by", "").split(", ")):
            path, _, name = named.partition("::")
            test = REPO / path
            assert test.is_file(), f"{b.name}: no test file {path}"
            assert not name or re.search(rf"^def {re.escape(name)}\(", test.read_text(), re.M), f"{b.name}: no {named}"
    run = sum(_run_here(b) for b in BLOCKS)
    assert run >= len(BLOCKS) - run, f"{run} of {len(BLOCKS)} blocks run"  # most blocks are run, not waved through


def _kind(block: Block) -> str | None:
    if block.lang in docblocks.SHELL:
        return "shell"
    if block.transcript():
        return "transcript"
    if block.lang in {"text", "console"}:
        return "output" if "output of" in block.markers else None
    if block.lang == "":
        return "tree" if block.text.startswith("auditor/\n") else None
    return block.lang


@pytest.mark.parametrize("block", _params())
def test_block(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    kind = _kind(block)
    assert kind, f"{block.name}: not a block this module runs"
    globals()[f"_check_{kind}"](block, tmp_path, monkeypatch)


# -- shell -------------------------------------------------------------------------------------------------


@functools.cache
def _shell_output(page: str, line: int, base: str) -> str:
    """Run one shell block's lines in order (cached: an output block after it reads the same run)."""
    block = next(b for b in BLOCKS if b.name == f"{page}:{line}")
    work = docblocks.workspace(Path(base))
    output, skipped = [], []
    for command, code in docblocks.commands(block.text):
        if why := docblocks.needs_absent_data(command):
            skipped.append(f"`{command}` {why}")
            continue
        run = []
        for step in docblocks.steps(command):
            why = docblocks.install_step(step)
            if why == "not an install step":
                why = docblocks.ci_or_pytest_step(step)
            if why == "run it":
                run.append(step)
            else:
                assert why is None, f"{block.name}: {step}: {why}"
        if run:
            res = docblocks.bash(" && ".join(run), work)
            assert res.returncode == code, (
                f"{block.name}: `{command}` exited {res.returncode}, the page says {code}:\n{res.stdout}"
            )
            output.append(res.stdout)
    if skipped:  # the other lines ran and held
        pytest.skip("; ".join(skipped))
    return "".join(output)


def _check_shell(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _shell_output(str(block.page.relative_to(REPO)), block.line, str(tmp_path))


def _check_output(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = block.markers["output of"]
    if source == "the block above":
        above = block.previous
        assert above is not None and above.lang in docblocks.SHELL, f"{block.name}: no shell block above"
        actual = _shell_output(str(above.page.relative_to(REPO)), above.line, str(tmp_path / "above"))
        problem = docblocks.mismatch(block.text, actual)
    else:  # the start of the command's output
        if why := docblocks.needs_absent_data(source):
            pytest.skip(why)
        work = docblocks.workspace(tmp_path)
        problem = docblocks.mismatch(block.text + "...\n", docblocks.bash(source, work).stdout)
    assert problem is None, f"{block.name}: {problem}"


def _check_transcript(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``$ command`` lines run in one shell, in order (``echo $?`` sees the command before it)."""
    steps: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    end = "@@doc-block-end"
    script = "".join(f"{cmd}\n__rc=$?; printf '\\n{end}\\n'; (exit $__rc)\n" for cmd, _ in steps)
    if why := docblocks.needs_absent_data(block.text):
        pytest.skip(why)
    out = docblocks.bash(script, docblocks.workspace(tmp_path)).stdout
    outputs = out.split(f"\n{end}\n")
    assert len(outputs) == len(steps) + 1, out
    for (cmd, shown), actual in zip(steps, outputs):
        problem = docblocks.mismatch("\n".join(shown), actual)
        assert problem is None, f"{block.name}: `$ {cmd}`: {problem}"


# -- python, data, the tree ---------------------------------------------------------------------------------


def _check_python(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for module in re.findall(r"^(?:import|from) (datasets|ray|datatrove)\b", block.text, flags=re.M):
        pytest.importorskip(module)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    exec(compile(block.text, block.name, "exec"), {"__name__": "__main__"})


def _check_toml(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A manifest loads (auditor's loader) as written, and with each commented-out ``# key = value`` line
    taken in; a fragment (no ``[[checks]]``) loads inside a manifest that gives it a check."""
    text = block.text
    if not re.search(r"^\[\[(checks|provenance)\]\]", text, flags=re.M):
        (name,) = re.findall(r"^\[datasets\.(\w+)\]", text, flags=re.M)
        text += f'[datasets.e]\npath = "webshop:0:10"\nrole = "eval"\n[[checks]]\nname = "c"\ntrain = ["{name}"]\neval = ["e"]\n'
    for path in re.findall(r'^path = "([^":]+\.\w+)"', text, flags=re.M):  # the local files it names
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text('[{"messages": [{"role": "user", "content": "hi"}]}]\n')
    for variant in {text, re.sub(r"^# (?=\w+ = )", "", text, flags=re.M)}:
        (tmp_path / "split.toml").write_text(variant)
        assert manifest.load_manifest(tmp_path / "split.toml").checks, variant


def _check_yaml(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A .pre-commit-config.yaml names hooks this repository has (or a local one running an auditor
    command); workflow steps are steps of examples/contamination.yml, with inputs action.yml has."""
    doc = yaml.safe_load(block.text)
    if isinstance(doc, dict) and "repos" in doc:
        ours = {h["id"] for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
        for repo in doc["repos"]:
            for hook in repo["hooks"]:
                re.compile(hook.get("files", ""))
                if repo["repo"] == "local":
                    words = hook["entry"].split()
                    assert words[0] == "auditor" and words[1] in main.list_commands(None), hook
                    assert hook["language"] == "system"
                else:
                    assert hook["id"] in ours, f"{block.name}: no hook {hook['id']} in .pre-commit-hooks.yaml"
        return
    assert isinstance(doc, list), f"{block.name}: a YAML block of a shape this test does not know"
    workflow = yaml.safe_load((REPO / "examples" / "contamination.yml").read_text())
    steps = [s for job in workflow["jobs"].values() for s in job["steps"]]
    inputs = yaml.safe_load((REPO / "action.yml").read_text())["inputs"]
    for step in doc:
        assert any(step.items() <= full.items() for full in steps), f"{block.name}: not a step of the example: {step}"
        if step.get("uses") == "./.auditor":
            assert set(step["with"]) <= set(inputs), (
                f"{block.name}: action.yml has no input {set(step['with']) - set(inputs)}"
            )


def _check_json(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A decisions file loads; a record is read by the format the sniffer picks, as one record."""
    doc = json.loads(block.text)
    if doc.get("format") == "auditor-decisions":
        (tmp_path / "auditor-decisions.json").write_text(block.text)
        assert len(Decisions.load(tmp_path / "auditor-decisions.json").entries) == len(doc["decisions"])
        return
    path = tmp_path / "record.jsonl"
    path.write_text(json.dumps(doc) + "\n")
    dataset = Dataset(DatasetSpec("doc", [str(path)]))
    records = list(dataset.records())
    assert len(records) == 1, f"{block.name}: read as {len(records)} records"
    heading = [h for h in block.page.read_text().splitlines()[: block.line] if h.startswith("#")][-1]
    named = re.search(r"\(`([\w-]+)`", heading)  # "### CAFT schema (`caft`, JSON Lines)"
    if named:
        assert dataset.formats() == {str(path): named.group(1)}, f"{block.name}: not read as {named.group(1)}"


def _check_tree(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every module and folder the tree names exists, and it names every package of auditor/."""
    named = docblocks.tree_entries(block.text)
    missing = [p for p in named if not (REPO / p).exists()]
    assert not missing, f"{block.name}: the tree names what does not exist: {missing}"
    packages = {f"auditor/{p.parent.name}/" for p in (REPO / "auditor").glob("*/__init__.py")}
    assert packages <= set(named), f"{block.name}: packages missing from the tree: {sorted(packages - set(named))}"

"""The CI pieces docs/report.md promises, run for real: the pre-commit hooks (``.pre-commit-hooks.yaml``)
through ``pre-commit try-repo`` on a temporary git repository, and the composite GitHub Action
(``action.yml``) by running its ``run:`` steps in bash with its inputs substituted, each on a leaking
and a clean copy of real data (WebShop goals 100:200 as the training file, goals 0:100 the eval set:
the clean control; three eval goals appended to the training file: the leak).

The ``language: system`` hook and the action's verify step run an ``auditor`` shim that runs this
checkout (``python -m auditor`` with this repository first on PYTHONPATH). The ``language: python``
hook (pre-commit builds a virtualenv and pip-installs the package) and the action's install step
(pip-installs the package into a fresh virtualenv) are the slow tests: tens of seconds each.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import REPO

from auditor.datasets.dataset import Dataset, DatasetSpec

pytest.importorskip("pre_commit", reason="pre-commit is not installed (the test extra has it)")

GIT = ["git", "-c", "user.name=auditor-test", "-c", "user.email=test@example.invalid", "-c", "init.defaultBranch=main"]
MANIFEST = """[datasets.test]
path = "webshop:0:100"
role = "eval"

[datasets.train]
path = "data/train.jsonl"
role = "train"

[[checks]]
name = "goals"
train = ["train"]
eval = ["test"]
methods = ["exact", "ngram"]
"""
LEAKED = 3  # eval goals copied into the leaking training file


def _git(cwd: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _goals(split: str) -> list[tuple[str, str]]:
    return [(r.id, r.view("query")) for r in Dataset(DatasetSpec("w", [f"webshop:{split}"])).records()]


def _data_repo(root: Path) -> Path:
    """A git repository with split.toml and a clean data/train.jsonl, committed."""
    (root / "data").mkdir(parents=True)
    (root / "split.toml").write_text(MANIFEST)
    lines = [json.dumps({"id": i, "text": t}) for i, t in _goals("100:200")]
    (root / "data" / "train.jsonl").write_text("\n".join(lines) + "\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "clean data")
    return root


def _leak(root: Path) -> None:
    """Append copies of eval goals to the training file and stage them (a commit about to be made)."""
    with open(root / "data" / "train.jsonl", "a") as f:
        for i, text in _goals("0:100")[10 : 10 + LEAKED]:
            f.write(json.dumps({"id": f"copy-{i}", "text": text}) + "\n")
    _git(root, "add", "data/train.jsonl")


def _shim(tmp_path: Path) -> dict[str, str]:
    """An environment whose ``auditor`` on PATH runs this checkout."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "auditor"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m auditor "$@"\n')
    shim.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(REPO))
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    return env


def _hook_repo(root: Path, package: bool) -> Path:
    """A git repository holding the hooks file (and with ``package``, what pip needs to install auditor)."""
    root.mkdir()
    shutil.copy(REPO / ".pre-commit-hooks.yaml", root)
    if package:
        for name in ("pyproject.toml", "README.md", "LICENSE"):
            shutil.copy(REPO / name, root)
        shutil.copytree(REPO / "auditor", root / "auditor", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "hooks")
    return root


def _try_repo(data: Path, hooks: Path, hook: str, env: dict[str, str], *extra: str, timeout: int = 120):
    cmd = [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), hook, "--verbose", *extra]
    return subprocess.run(cmd, cwd=data, env=env, capture_output=True, text=True, timeout=timeout)


def _check_hook(tmp_path: Path, hook: str, env: dict[str, str], package: bool, timeout: int) -> None:
    hooks = _hook_repo(tmp_path / "hooks", package)
    data = _data_repo(tmp_path / "data")
    clean = _try_repo(data, hooks, hook, env, "--all-files", timeout=timeout)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert (
        re.search(r"\.Passed\n", clean.stdout)
        and "goals: pass, 0 conclusive + 0 suspected of 100 eval items" in clean.stdout
    )
    _leak(data)
    leaking = _try_repo(data, hooks, hook, env, timeout=timeout)  # the staged change, as on a commit
    assert leaking.returncode == 1, leaking.stdout + leaking.stderr
    assert re.search(r"\.Failed\n", leaking.stdout)
    assert f"goals: fail, {LEAKED} conclusive + 0 suspected of 100 eval items" in leaking.stdout


def test_system_hook_fails_on_a_leak_and_passes_clean_data(tmp_path):
    _check_hook(tmp_path, "auditor-verify-system", _shim(tmp_path), package=False, timeout=120)


def test_hooks_verify_a_manifest_without_passing_file_names():
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"auditor-verify", "auditor-verify-system"}
    assert {h["language"] for h in hooks.values()} == {"python", "system"}
    for h in hooks.values():
        assert h["entry"] == "auditor verify" and h["pass_filenames"] is False and h["args"] == ["split.toml"]


@pytest.mark.slow
def test_python_hook_installs_auditor_and_fails_on_a_leak(tmp_path):
    """pre-commit builds the hook's virtualenv from a copy of this package (its core dependencies)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    _check_hook(tmp_path, "auditor-verify", env, package=True, timeout=540)


# -- the GitHub Action ------------------------------------------------------------------------------

ACTION = yaml.safe_load((REPO / "action.yml").read_text())
EXPR = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def _condition(expr: str | None, inputs: dict[str, str]) -> bool:
    """The ``if:`` forms action.yml uses: ``inputs.X == 'v'`` / ``inputs.X != 'v'`` joined by ``&&``."""
    if expr is None:
        return True
    result = True
    for clause in expr.split("&&"):
        m = re.fullmatch(r"\s*inputs\.([\w-]+)\s*(==|!=)\s*'([^']*)'\s*", clause)
        assert m, f"action.yml: an if: this test cannot evaluate: {expr!r}"
        equal = inputs[m.group(1)] == m.group(3)
        result = result and (equal if m.group(2) == "==" else not equal)
    return result


def _substitute(text: str, inputs: dict[str, str]) -> str:
    def value(m: re.Match) -> str:
        name = m.group(1)
        assert name.startswith("inputs."), f"action.yml: an expression this test cannot substitute: {name}"
        return inputs[name[len("inputs.") :]]

    return EXPR.sub(value, text)


def _run_action(
    workspace: Path, env: dict[str, str], action_path: Path = REPO, **given: str
) -> tuple[list[str], dict[str, str], int]:
    """Run the action's ``run:`` steps as a runner would (bash -eo pipefail, the step's env, GITHUB_*);
    ``uses:`` steps (setup-python) are left to GitHub. Returns (steps run, outputs, exit code)."""
    declared = ACTION["inputs"]
    assert set(given) <= set(declared), set(given) - set(declared)
    inputs = {name: str(spec.get("default", "")) for name, spec in declared.items()} | given
    outputs_file = workspace.parent / "github_output"
    outputs_file.write_text("")
    ran, code = [], 0
    for step in ACTION["runs"]["steps"]:
        if "run" not in step or not _condition(step.get("if"), inputs):
            continue
        assert step["shell"] == "bash"
        step_env = dict(env, GITHUB_OUTPUT=str(outputs_file), GITHUB_ACTION_PATH=str(action_path))
        step_env["GITHUB_WORKSPACE"] = str(workspace)
        step_env |= {k: _substitute(str(v), inputs) for k, v in (step.get("env") or {}).items()}
        script = _substitute(step["run"], inputs)
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            cwd=workspace,
            env=step_env,
            capture_output=True,
            text=True,
            timeout=540,
        )
        ran.append(step.get("name", ""))
        code = done.returncode
        if code:
            break
    outputs = dict(line.split("=", 1) for line in outputs_file.read_text().splitlines())
    return ran, outputs, code


def test_action_verify_step_fails_on_a_leak_and_passes_clean_data(tmp_path):
    env = _shim(tmp_path)
    data = _data_repo(tmp_path / "work")
    ran, outputs, code = _run_action(data, env, install="false")
    assert ran == ["auditor verify"]  # install="false": the auditor on PATH
    assert code == 0 and outputs == {"exit-code": "0", "report-dir": "reports/contamination", "verdict": "pass"}
    report = json.loads((data / "reports" / "contamination" / "report.json").read_text())
    assert report["checks"][0]["contaminated_items"] == 0
    _leak(data)
    ran, outputs, code = _run_action(data, env, install="false", **{"report-dir": "out/r", "fail-on": "suspected"})
    assert code == 1 and outputs == {"exit-code": "1", "report-dir": "out/r", "verdict": "fail"}
    report = json.loads((data / "out" / "r" / "report.json").read_text())
    assert report["checks"][0]["contaminated_items"] == LEAKED and report["checks"][0]["fail_on"] == "suspected"
    (data / "split.toml").write_text(MANIFEST.replace("data/train.jsonl", "data/missing.jsonl"))
    ran, outputs, code = _run_action(data, env, install="false", **{"report-dir": "out/r"})
    assert code == 2 and outputs["verdict"] == ""  # the older report in out/r is not read as this run's


def test_example_workflow_uses_the_action_with_its_inputs():
    """examples/contamination.yml: the action is checked out where `uses:` looks, given declared inputs,
    and the report folder it uploads is the one the action writes."""
    flow = yaml.safe_load((REPO / "examples" / "contamination.yml").read_text())
    steps = next(iter(flow["jobs"].values()))["steps"]
    checkout = next(s for s in steps if s.get("with", {}).get("path"))
    action = next(s for s in steps if str(s.get("uses", "")).startswith("./"))
    assert action["uses"] == f"./{checkout['with']['path']}"
    assert set(action["with"]) <= set(ACTION["inputs"])
    folder = action["with"]["report-dir"]
    paths = [str(v) for s in steps for v in (s.get("with") or {}).values()]
    assert folder in paths and f"{folder}/junit.xml" in paths


@pytest.mark.slow
def test_action_install_step_installs_auditor_in_a_fresh_virtualenv(tmp_path):
    """The install step's pip line, in a virtualenv (system site packages give it the dependencies,
    so pip builds and installs only auditor), then the verify step with that virtualenv's auditor."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    data = _data_repo(tmp_path / "work")
    _leak(data)
    action = _hook_repo(tmp_path / "action", package=True)  # a copy: pip builds in the folder it installs
    shutil.copy(REPO / "action.yml", action)
    ran, outputs, code = _run_action(data, env, action, extras="")
    assert ran == ["Install auditor", "auditor verify"]
    assert code == 1 and outputs["verdict"] == "fail"
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import auditor; print(auditor.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(venv)), where  # the virtualenv's own copy, not this checkout


def test_docs_name_the_hooks_and_the_actions_inputs_that_exist():
    """docs/report.md's "In CI": every hook id its configs use is a shipped hook (or a local one), every
    input and output of action.yml is described, and the files it cites exist."""
    section = (REPO / "docs" / "report.md").read_text().split("\n## In CI\n", 1)[1].split("\n## ", 1)[0]
    shipped = {h["id"] for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    configs = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", section, re.S)]
    for config in (c for c in configs if isinstance(c, dict) and "repos" in c):
        for repo in config["repos"]:
            ids = {h["id"] for h in repo["hooks"]}
            assert repo["repo"] == "local" or ids <= shipped, ids - shipped
    for name in [*ACTION["inputs"], *ACTION["outputs"]]:
        assert f"`{name}`" in section, f"action.yml's {name} is not described in docs/report.md"
    for cited in re.findall(r"`((?:\.|examples/|tests/)?[\w./-]+\.(?:ya?ml|py))`", section):
        assert cited == ".pre-commit-config.yaml" or (REPO / cited).is_file(), cited  # that one is the user's
    assert ".github/workflows/contamination.yml" not in section  # cited before it existed; the example is in examples/


def test_action_installs_the_readmes_torch_and_documents_fail_on_and_decisions(tmp_path):
    """Issue 40: the install step ran torch from the PyTorch CPU index, not the README's line; fail-on
    was described as conclusive/suspected only; there was no decisions input. Now the README's line, the
    three values described, and a decisions file given to the action decides the verdict."""
    readme_torch = re.search(r"pip install (torch==[\d.]+)", (REPO / "README.md").read_text()).group(1)
    install = next(s for s in ACTION["runs"]["steps"] if s.get("name") == "Install auditor")["run"]
    assert f"python -m pip install {readme_torch}\n" in install and "download.pytorch.org" not in install
    described = ACTION["inputs"]["fail-on"]["description"]
    assert all(v in described for v in ("conclusive", "suspected", "unreviewed"))
    assert "decisions" in ACTION["inputs"]
    env = _shim(tmp_path)
    data = _data_repo(tmp_path / "work")
    _leak(data)
    ran, outputs, code = _run_action(data, env, install="false", **{"report-dir": "r1"})
    assert code == 1
    report = json.loads((data / "r1" / "report.json").read_text())
    assert report["checks"][0]["contaminated_items"] == LEAKED
    # an empty decisions file the action is pointed to: read (named in the report), verdict unchanged
    (data / "review").mkdir()
    ran, outputs, code = _run_action(data, env, install="false", **{"report-dir": "r2", "decisions": "review/d.json"})
    assert code == 1 and outputs["verdict"] == "fail"
    report = json.loads((data / "r2" / "report.json").read_text())
    assert str(report["decisions"]["file"]).endswith("review/d.json"), report["decisions"]


def _suspect(data: Path) -> None:
    """Stage a training record holding the first 13 words of a test goal (one shared 13-gram of a longer
    item: suspected, not a copy)."""
    goal = next(t for _, t in _goals("0:100") if len(t.split()) >= 14)
    words = goal.split()
    with open(data / "data" / "train.jsonl", "a") as f:
        f.write(json.dumps({"id": "partial", "text": " ".join(words[:13]) + " and then nothing alike at all"}) + "\n")
    _git(data, "add", "data/train.jsonl")


UNREVIEWED = re.compile(r"unreviewed: 1 suspected eval item \(ngram: [^)]*\) nobody has decided")


def test_a_passing_hook_still_prints_the_unreviewed_line(tmp_path):
    """Issue 40: pre-commit hides a passing hook's output, so "unreviewed: 1 suspected …" went unseen.
    The hooks are verbose: a clean commit with one suspected finding passes and prints it (no --verbose
    given to pre-commit here)."""
    env = _shim(tmp_path)
    hooks = _hook_repo(tmp_path / "hooks", package=False)
    data = _data_repo(tmp_path / "data")
    _suspect(data)
    cmd = [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "auditor-verify-system"]
    done = subprocess.run(cmd, cwd=data, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\.Passed\n", done.stdout)
    assert UNREVIEWED.search(done.stdout), done.stdout


def _clone_of_this_checkout(root: Path) -> tuple[Path, str]:
    """A git clone of this repository (its committed state, as a user's repo: URL serves it) and the
    full hash of its HEAD, what docs/report.md tells users to pin as ``rev:``."""
    subprocess.run([*GIT, "clone", "-q", str(REPO), str(root)], check=True, capture_output=True, timeout=120)
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    return root, head.stdout.strip()


def _documented_config(repo: Path, rev: str) -> dict:
    """docs/report.md's .pre-commit-config.yaml that names a repository URL, with ``repo:`` and ``rev:``
    the user's own (a clone of this checkout and its commit); its rev: placeholder has a commit's form."""
    section = (REPO / "docs" / "report.md").read_text().split("\n## In CI\n", 1)[1].split("\n## ", 1)[0]
    configs = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", section, re.S)]
    config = next(c for c in configs if isinstance(c, dict) and c["repos"][0]["repo"] != "local")
    assert re.fullmatch(r"[0-9a-f]{40}", str(config["repos"][0]["rev"])), "rev: is shown as a full commit hash"
    assert "v0.1.0" not in yaml.safe_dump(config)  # no such tag exists
    config["repos"][0] |= {"repo": str(repo), "rev": rev}
    return config


def test_try_repo_on_a_clone_at_its_commit_hash_passes_and_prints_the_unreviewed_line(tmp_path):
    """The pin docs/report.md documents (no release tag exists): ``pre-commit try-repo`` on a temp git
    clone of this checkout with ``--ref`` its HEAD's full hash runs the hook that commit ships; a commit
    with a suspected finding passes and prints the unreviewed line. ``--ref v0.1.0`` (documented
    before) is no ref of it and fails."""
    env = _shim(tmp_path)
    clone, head = _clone_of_this_checkout(tmp_path / "auditor")
    data = _data_repo(tmp_path / "data")
    _suspect(data)
    cmd = [sys.executable, "-m", "pre_commit", "try-repo", str(clone), "auditor-verify-system", "--ref", head]
    done = subprocess.run(cmd, cwd=data, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\.Passed\n", done.stdout) and UNREVIEWED.search(done.stdout), done.stdout
    cmd[-1] = "v0.1.0"
    bad = subprocess.run(cmd, cwd=data, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "v0.1.0" in bad.stdout + bad.stderr


def test_the_documented_config_with_a_pinned_commit_runs_its_hook(tmp_path):
    """docs/report.md's .pre-commit-config.yaml as written, but for ``repo:``/``rev:`` (a clone and its
    HEAD hash) and the hook id (the system hook, which needs no virtualenv: the next test runs the
    documented one): ``pre-commit run`` fails the commit that leaks and passes the clean data, its
    ``files:`` pattern matching the data's paths."""
    env = _shim(tmp_path)
    clone, head = _clone_of_this_checkout(tmp_path / "auditor")
    config = _documented_config(clone, head)
    config["repos"][0]["hooks"][0]["id"] = "auditor-verify-system"
    data = _data_repo(tmp_path / "data")
    (data / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    _git(data, "add", ".pre-commit-config.yaml")
    _git(data, "commit", "-qm", "pre-commit config")
    run = [sys.executable, "-m", "pre_commit", "run", "--all-files"]
    clean = subprocess.run(run, cwd=data, env=env, capture_output=True, text=True, timeout=120)
    assert clean.returncode == 0 and "goals: pass, 0 conclusive + 0 suspected" in clean.stdout, clean.stdout
    _leak(data)
    leaking = subprocess.run(run[:-1], cwd=data, env=env, capture_output=True, text=True, timeout=120)
    assert leaking.returncode == 1 and f"goals: fail, {LEAKED} conclusive" in leaking.stdout, leaking.stdout


@pytest.mark.slow
def test_the_documented_config_verbatim_installs_its_hook_at_the_pinned_commit(tmp_path):
    """The same config with the documented hook id (``auditor-verify``, language python): pre-commit
    builds its virtualenv from the clone at the pinned commit; a passing run prints the unreviewed line."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    clone, head = _clone_of_this_checkout(tmp_path / "auditor")
    data = _data_repo(tmp_path / "data")
    (data / ".pre-commit-config.yaml").write_text(yaml.safe_dump(_documented_config(clone, head)))
    _git(data, "add", ".pre-commit-config.yaml")
    _suspect(data)
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run"], cwd=data, env=env, capture_output=True, text=True, timeout=540
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\.Passed\n", done.stdout) and UNREVIEWED.search(done.stdout), done.stdout


def _top_level_names(text: str) -> list[str]:
    """The backticked names of ``text`` outside parentheses (the list items, not their explanations)."""
    depth, kept = 0, []
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and ch not in "()":
            kept.append(ch)
    return re.findall(r"`([\w-]+)`", "".join(kept))


def test_every_documented_input_and_output_is_the_actions():
    """The other direction of test_docs_name_the_hooks_and_the_actions_inputs_that_exist: the inputs and
    outputs docs/report.md lists are exactly action.yml's, none missing and none that does not exist."""
    section = (REPO / "docs" / "report.md").read_text().split("\n## In CI\n", 1)[1].split("\n## ", 1)[0]
    listed = re.search(r"Inputs: (.*?)Outputs: (.*?)\. \[", section, re.S)
    assert listed, "docs/report.md's In CI no longer lists the action's inputs and outputs"
    assert _top_level_names(listed.group(1)) == list(ACTION["inputs"])
    assert sorted(_top_level_names(listed.group(2))) == sorted(ACTION["outputs"])
    assert _top_level_names("`a` (`x` (`y`)), `b`") == ["a", "b"]

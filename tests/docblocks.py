"""The fenced code blocks of README.md, CONTRIBUTING.md and docs/*.md, and how each is run or checked
(tests/test_doc_blocks.py; the conventions are CONTRIBUTING.md's).

A block is preceded, directly, by zero or more HTML comments that say what it is:
``<!-- output of the block above -->``, ``<!-- output of: COMMAND -->``, ``<!-- tested by tests/x.py::name -->``,
``<!-- illustrative: REASON -->``, ``<!-- slow -->``.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from helpers import REPO, SHARED, fetch_hint
from packaging.requirements import Requirement

PAGES = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]
MARKER = re.compile(r"^\s*<!--\s*(illustrative|tested by|output of|slow)\s*:?\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
SHELL = {"bash", "sh", "shell"}
#: the README's test command, as .ci/run runs it: its steps are CI's, not re-run inside the suite
CI_STEPS = [s.strip() for s in (REPO / ".ci" / "run").read_text().strip().splitlines()[-1].split("&&")]


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    markers: dict[str, str] = field(default_factory=dict)
    previous: Block | None = None  # the block before it on the same page

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"

    def transcript(self) -> bool:
        return self.lang in {"text", "console"} and self.text.lstrip().startswith("$ ")


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, end = len(m.group(1)), i + 1
        while not lines[end].strip().startswith("```"):
            end += 1
        markers, j = {}, i - 1
        while j >= 0 and (mm := MARKER.match(lines[j])):
            markers[mm.group(1)] = mm.group(2)
            j -= 1
        text = "\n".join(line[indent:] for line in lines[i + 1 : end]) + "\n"
        found.append(Block(page, i + 1, m.group(2), text, markers, found[-1] if found else None))
        i = end + 1
    return found


def all_blocks() -> list[Block]:
    return [b for page in PAGES for b in blocks(page)]


# -- output compared with what a page shows ---------------------------------------------------------------


def _line_pattern(shown: str) -> re.Pattern[str]:
    """``…`` anywhere and a trailing `` ...`` stand for any text."""
    tail = shown.endswith(" ...")
    body = shown[: -len(" ...")] if tail else shown
    return re.compile(".*".join(re.escape(part) for part in body.split("…")) + (".*" if tail else ""))


def mismatch(shown: str, actual: str) -> str | None:
    """Why ``actual`` is not what ``shown`` shows (None: it is). A line ``...`` skips any lines."""
    want = [s.rstrip() for s in shown.strip("\n").splitlines()]
    got = [a.rstrip() for a in actual.strip("\n").splitlines()]
    i, gap = 0, False
    for s in want:
        if s.strip() in ("...", "…"):
            gap = True
            continue
        pattern = _line_pattern(s)
        if gap:
            hits = [j for j in range(i, len(got)) if pattern.fullmatch(got[j])]
            if not hits:
                return f"shown line not in the output after line {i}: {s!r}\n--- output:\n{actual}"
            i, gap = hits[0] + 1, False
        elif i < len(got) and pattern.fullmatch(got[i]):
            i += 1
        else:
            return f"line {i + 1} of the output is {got[i] if i < len(got) else None!r}, shown: {s!r}\n--- output:\n{actual}"
    if not gap and i < len(got):
        return f"output goes on after what is shown: {got[i]!r}\n--- output:\n{actual}"
    return None


# -- a workspace: a temp folder beside a copy of examples/ and the public releases -------------------------


def workspace(base: Path) -> Path:
    """``base/work`` holding a copy of ``examples/``; ``base/shared/data`` is the public releases (when this
    checkout has them), so a command's ``../shared/data/...`` reads them as it does from a checkout beside them."""
    work = base / "work"
    shutil.copytree(REPO / "examples", work / "examples")
    if SHARED.is_dir():
        (base / "shared").mkdir()
        (base / "shared" / "data").symlink_to(SHARED.resolve())
    return work


def needs_absent_data(text: str) -> str | None:
    """Why ``text`` cannot run here (it reads ../shared/data, which is absent), else None."""
    if "../shared/data" in text and not SHARED.is_dir():
        return f"reads ../shared/data, absent here; {fetch_hint()}"
    return None


def bash(script: str, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    """Run as a user would: without the folders the test fixtures point auditor to (reports and indexes
    then go where the docs say, under ``cwd``)."""
    env = {k: v for k, v in os.environ.items() if k not in ("AUDITOR_REPORT_DIR", "AUDITOR_INDEX_DIR")}
    return subprocess.run(
        ["bash", "-c", script],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
    )


# -- shell lines ----------------------------------------------------------------------------------------------


def commands(text: str) -> list[tuple[str, int]]:
    """(command line, exit code expected: a trailing ``# exit N``, else 0) for each line of a shell block."""
    out = []
    for line in text.replace("\\\n", " ").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            m = re.search(r"\s#\s*exit (\d+)\b", line)
            out.append((line.strip(), int(m.group(1)) if m else 0))
    return out


def _installed(requirement: str, extra: str = "") -> str | None:
    """Why ``requirement`` (as pyproject.toml writes it) is not met here, None when it is."""
    req = Requirement(requirement)
    if req.marker is not None and not req.marker.evaluate({"extra": extra}):
        return None
    if req.name == "auditor":  # one extra naming others: auditor[embed]
        return next(filter(None, (extra_missing(x) for x in sorted(req.extras))), None)
    try:
        version = importlib.metadata.version(req.name)
    except importlib.metadata.PackageNotFoundError:
        return f"{req.name} is not installed"
    if not req.specifier.contains(version.split("+")[0], prereleases=True):
        return f"{req.name} {version} is not {req.specifier}"
    return None


def extra_missing(extra: str) -> str | None:
    """Why ``pip install -e ".[extra]"`` would change this install (None: it is in place)."""
    requires = importlib.metadata.requires("auditor") or []
    if not any(f'extra == "{extra}"' in r for r in requires):
        return f"pyproject.toml has no extra [{extra}]"
    return next(filter(None, (_installed(r, extra) for r in requires if f'extra == "{extra}"' in r)), None)


def install_step(step: str) -> str | None:
    """An install step checked against this checkout instead of run: None when it is an install step that
    holds (what it installs is installed), "not an install step", or why it does not hold."""
    words = shlex.split(step, comments=True)
    if words[:2] != ["pip", "install"]:
        return "not an install step"
    args = words[2:]
    if args[:1] == ["-e"]:
        m = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", args[1])
        if not m or len(args) != 2:
            return f"an editable install of something else: {step}"
        import auditor

        if Path(auditor.__file__).resolve().parent != REPO / "auditor":
            return f"auditor is not installed from this checkout ({auditor.__file__})"
        return next(filter(None, (extra_missing(x) for x in (m.group(1) or "").split(",") if x)), None)
    return next(filter(None, (_installed(a) for a in args)), None)


def steps(line: str) -> list[str]:
    """The ``&&`` steps of a command line, its trailing comment left out."""
    return [s.strip() for s in line.split(" #")[0].split("&&")]


def ci_or_pytest_step(step: str) -> str | None:
    """A step CI runs (one of .ci/run's) is not re-run here: None. A ``python -m pytest`` step is collected
    (it must name tests that exist), not run, from the repository root. Anything else: "run it"."""
    if step in CI_STEPS:
        return None
    words = shlex.split(step)
    if words[:3] != ["python", "-m", "pytest"]:
        return "run it"
    res = subprocess.run(
        [*words, "--collect-only", "-p", "no:cacheprovider"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    if res.returncode != 0:  # 5: no test collected
        return f"{step}: collects no test (exit {res.returncode}):\n{res.stdout[-2000:]}{res.stderr[-2000:]}"
    return None


# -- the architecture tree ------------------------------------------------------------------------------------


def tree_entries(text: str) -> list[str]:
    """The paths a ``auditor/`` tree block names: ``name/`` and ``name.py`` at two spaces per level."""
    stack: list[str] = []
    paths = []
    for line in text.splitlines():
        m = re.match(r"^( *)([\w.]+/|[\w]+\.py)(?:\s|$)", line)
        if not m or len(m.group(1)) % 2 or len(m.group(1)) // 2 > len(stack):
            continue
        depth = len(m.group(1)) // 2
        del stack[depth:]
        path = "".join(stack) + m.group(2)
        paths.append(path)
        if m.group(2).endswith("/"):
            stack.append(m.group(2))
    return paths

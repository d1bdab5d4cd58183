"""The package layout shows the pipeline, and its modules import each other without cycles.

The import graph is read from the source (module-level imports only; imports inside functions and under
``TYPE_CHECKING`` are deferred and do not run at load time). ``from pkg import submodule`` is an edge to
the submodule, as Python resolves it; a package's ``__init__`` importing its children is not a cycle.
"""

from __future__ import annotations

import ast
import subprocess
import sys

from helpers import REPO

PACKAGE = REPO / "auditor"


def _modules() -> dict[str, tuple[ast.Module, bool]]:
    out = {}
    for p in PACKAGE.rglob("*.py"):
        parts = list(p.relative_to(REPO).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (ast.parse(p.read_text(encoding="utf-8")), is_pkg)
    return out


def _targets(mod: str, is_pkg: bool, node: ast.ImportFrom, known: set[str]) -> list[str]:
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    if node.level:
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in known]
    return subs if len(subs) == len(node.names) else [target, *subs]


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {}
    for mod, (tree, is_pkg) in mods.items():
        deps: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            found = [n for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom)]
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found = []  # deferred: runs when called, not at import
            for n in found:
                names = (
                    _targets(mod, is_pkg, n, set(mods)) if isinstance(n, ast.ImportFrom) else [a.name for a in n.names]
                )
                deps.update(t for t in names if t in mods and t != mod)
        graph[mod] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_lower_stages_never_import_the_orchestration():
    graph = import_graph()
    upper = ("auditor.audit", "auditor.report", "auditor.cli", "auditor.engines")
    for mod, deps in graph.items():
        if mod.startswith(("auditor.io", "auditor.records", "auditor.text")):
            assert not [d for d in deps if d.startswith(upper) or d == "auditor"], mod


def test_top_level_is_packages_not_a_flat_list():
    flat = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert flat == ["__init__.py", "__main__.py", "_version.py", "errors.py"]


def test_import_auditor_in_a_fresh_interpreter():
    r = subprocess.run([sys.executable, "-c", "import auditor, auditor.cli"], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr

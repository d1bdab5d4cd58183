"""The package layout shows the pipeline: its modules import each other without cycles, its folders
form layers that import only the layers below them, and no module is over 450 lines.

The import graph is read from the source: every import, at load time, inside a function (a deferred
import is still an edge: it runs when the function is called) or under ``TYPE_CHECKING`` (an edge
for mypy: a type named from above is a dependency on it all the same). ``from pkg import
submodule`` is an edge to the submodule, as Python resolves it; a package's ``__init__`` importing its
children is not a cycle. The folders (``io/``, ``records/``, ..., ``audit/``, ``report/``) form the
layering :data:`LAYERS`: a module imports only modules of its own folder and of the folders below it.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys

from helpers import REPO

PACKAGE = REPO / "auditor"


@functools.cache
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


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """Ids of the nodes under an ``if TYPE_CHECKING:`` block (annotations only; never run)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.update(id(n) for n in ast.walk(node))
    return out


def import_graph(deferred: bool = True, typing: bool = True) -> dict[str, set[str]]:
    """Module → the modules it imports; ``deferred``: imports inside functions and classes count too;
    ``typing``: imports under ``TYPE_CHECKING`` count too."""
    mods = _modules()
    graph: dict[str, set[str]] = {}
    for mod, (tree, is_pkg) in mods.items():
        deps: set[str] = set()
        skipped = set() if typing else _type_checking_nodes(tree)
        for node in tree.body:
            if not deferred and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue  # runs when called, not at import
            for n in ast.walk(node):
                if id(n) in skipped or not isinstance(n, ast.Import | ast.ImportFrom):
                    continue
                names = (
                    _targets(mod, is_pkg, n, set(mods)) if isinstance(n, ast.ImportFrom) else [a.name for a in n.names]
                )
                deps.update(t for t in names if t in mods and t != mod)
        graph[mod] = deps
    return graph


#: imports under ``TYPE_CHECKING`` that close a cycle, each with why it stands for now (the lead
#: removes an entry when the work it names lands): importer → imported
KNOWN_TYPE_CYCLES: dict[str, str] = {
    # a type-only import that closes a cycle, with why it cannot point down (none today)
}


def checked_graph() -> dict[str, set[str]]:
    """:func:`import_graph`, every kind of import, less the :data:`KNOWN_TYPE_CYCLES` edges."""
    graph, loaded, run = import_graph(), import_graph(deferred=False), import_graph(deferred=False, typing=False)
    for mod, dep in KNOWN_TYPE_CYCLES.items():
        assert dep in loaded[mod] - run[mod], (
            f"{mod} -> {dep} is no longer a TYPE_CHECKING import: drop it from KNOWN_TYPE_CYCLES"
        )
        graph[mod] = graph[mod] - {dep}
    return graph


def folder(mod: str) -> str | None:
    """The pipeline folder of a module (``auditor.scan.job`` → ``scan``; None for top-level modules)."""
    parts = mod.split(".")
    return parts[1] if len(parts) > 2 else None


def folder_pairs(graph: dict[str, set[str]]) -> list[tuple[str, str, list[str]]]:
    """Folders that import each other, each pair once, with the imports that make it."""
    edges: dict[tuple[str, str], list[str]] = {}
    for mod, deps in graph.items():
        for dep in deps:
            a, b = folder(mod), folder(dep)
            if a and b and a != b:
                edges.setdefault((a, b), []).append(f"{mod} -> {dep}")
    return [(a, b, edges[a, b] + edges[b, a]) for a, b in sorted(edges) if a < b and (b, a) in edges]


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
    """None at load time, none counting the imports that run inside functions, and none counting the
    imports made for type checking too."""
    assert cycles(import_graph(deferred=False, typing=False)) == []
    assert cycles(import_graph(typing=False)) == []
    assert cycles(checked_graph()) == []


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_graph_counts_deferred_imports():
    """An import inside a function is an edge: the package has such imports, and the graph holds them."""
    graph, loaded = import_graph(typing=False), import_graph(deferred=False, typing=False)
    assert all(loaded[m] <= deps for m, deps in graph.items())
    assert any(deps - loaded[m] for m, deps in graph.items())


def test_the_graph_counts_type_checking_imports():
    """An import under ``TYPE_CHECKING`` is an edge: the package has such imports, and the graph holds them."""
    graph, run = import_graph(), import_graph(typing=False)
    assert all(run[m] <= deps for m, deps in graph.items())
    assert any(deps - run[m] for m, deps in graph.items())
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n")
    assert len(_type_checking_nodes(tree)) > 1


def test_no_two_folders_import_each_other():
    assert folder_pairs(checked_graph()) == []
    assert folder_pairs({"auditor.a.x": {"auditor.b.y"}, "auditor.b.y": set(), "auditor.b.z": {"auditor.a.x"}}) == [
        ("a", "b", ["auditor.a.x -> auditor.b.y", "auditor.b.z -> auditor.a.x"])
    ]


#: the folders, lowest first: each imports only the folders before it (docs/architecture.md)
LAYERS = (
    "io",
    "records",
    "text",
    "adapters",
    "datasets",
    "methods",
    "masking",
    "scan",
    "engines",
    "store",
    "report",
    "audit",
    "integrations",
    "fetch",
    "cli",
)


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """The imports of a module from a folder at or above its own layer in :data:`LAYERS` (its own
    folder excepted), and of a folder not in it."""
    rank = {f: i for i, f in enumerate(LAYERS)}
    out = []
    for mod, deps in sorted(graph.items()):
        a = folder(mod)
        for dep in sorted(deps):
            b = folder(dep)
            if a and b and a != b and (a not in rank or b not in rank or rank[b] > rank[a]):
                out.append(f"{mod} -> {dep}")
    return out


def test_every_folder_is_a_layer_and_imports_only_those_below():
    folders = {folder(m) for m in import_graph()} - {None}
    assert folders == set(LAYERS), f"folders not in LAYERS: {folders - set(LAYERS)}; gone: {set(LAYERS) - folders}"
    assert upward_imports(checked_graph()) == []


def test_an_upward_import_is_found():
    graph = {"auditor.text.a": {"auditor.methods.b"}, "auditor.methods.b": {"auditor.text.c"}, "auditor.text.c": set()}
    assert upward_imports(graph) == ["auditor.text.a -> auditor.methods.b"]


def test_the_scan_and_the_engines_never_import_the_audit():
    """The scan (job, stages, merger) sits below the engines, and neither knows the audit: the audit
    assembles the stages."""
    for mod, deps in checked_graph().items():
        if folder(mod) in ("scan", "engines"):
            assert not [d for d in deps if folder(d) in ("audit", "report", "cli", "store")], mod
        if folder(mod) == "scan":
            assert not [d for d in deps if folder(d) == "engines"], mod


def test_lower_stages_never_import_the_orchestration():
    graph = checked_graph()
    upper = ("auditor.audit", "auditor.report", "auditor.cli", "auditor.engines")
    for mod, deps in graph.items():
        if mod.startswith(("auditor.io", "auditor.records", "auditor.text", "auditor.masking")):
            assert not [d for d in deps if d.startswith(upper) or d == "auditor"], mod


def test_top_level_is_packages_not_a_flat_list():
    flat = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert flat == ["__init__.py", "__main__.py", "_version.py", "errors.py", "registry.py"]


def test_import_auditor_in_a_fresh_interpreter():
    r = subprocess.run([sys.executable, "-c", "import auditor, auditor.cli"], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr


#: the longest a module may be (CONTRIBUTING.md: "no module over 450 lines")
MAX_LINES = 450
#: modules still over it, each with the work that brings it under (the lead removes an entry when
#: that work lands)
KNOWN_LONG: dict[str, str] = {}


def long_modules() -> dict[str, int]:
    """Every module of the package over :data:`MAX_LINES` lines, with its count."""
    counts = {str(p.relative_to(REPO)): len(p.read_text(encoding="utf-8").splitlines()) for p in PACKAGE.rglob("*.py")}
    return {p: n for p, n in sorted(counts.items()) if n > MAX_LINES}


def test_no_module_over_450_lines():
    long = long_modules()
    assert {p: n for p, n in long.items() if p not in KNOWN_LONG} == {}
    assert [p for p in KNOWN_LONG if p not in long] == [], "under the limit now: drop it from KNOWN_LONG"

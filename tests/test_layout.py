"""The package layout shows the pipeline: its modules import each other without cycles, its folders
form layers that import only the layers below them, and no module is over 450 lines.

The import graph is read from the source: every import, at load time, inside a function (a deferred
import is still an edge: it runs when the function is called) or under ``TYPE_CHECKING`` (an edge
for mypy: a type named from above is a dependency on it all the same). ``from pkg import
submodule`` is an edge to the submodule, as Python resolves it; a package's ``__init__`` importing its
children is not a cycle. The folders (``io/``, ``records/``, ..., ``audit/``, ``report/``) form the
layering :data:`LAYERS`: a module imports only modules of its own folder and of the folders below it.

``benchmarks/`` is a package too: its scripts run as ``python -m benchmarks.NAME`` from the root, share
benchmarks/common.py, never edit ``sys.path``, are type-checked, and are documented that way.
"""

from __future__ import annotations

import ast
import functools
import re
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
    assert flat == ["__init__.py", "__main__.py", "_lazy.py", "_version.py", "errors.py", "registry.py"]


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


# --- benchmarks/: a package whose scripts run as ``python -m benchmarks.NAME`` from the root ------------

BENCHMARKS = REPO / "benchmarks"
#: the one module of benchmarks/ that finds the checkout from its own path (``REPO``, ``SHARED`` ...)
BENCHMARKS_COMMON = BENCHMARKS / "common.py"


def sys_path_edits(tree: ast.Module) -> list[int]:
    """Lines that change ``sys.path``: a call of one of its methods (``sys.path.insert(...)``), an
    assignment to it or to an item or slice of it, ``+=`` on it, ``del`` of an item."""

    def is_path(node: ast.expr) -> bool:
        node = node.value if isinstance(node, ast.Subscript) else node
        return ast.unparse(node) == "sys.path"

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_path(node.func.value):
            if node.func.attr not in ("index", "count", "copy"):
                lines.append(node.lineno)
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.Delete):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        lines += [node.lineno for t in targets if is_path(t)]
    return sorted(lines)


def test_sys_path_edits_are_found():
    code = (
        "import sys\nsys.path.insert(0, 'x')\nsys.path.append('y')\nsys.path = ['z']\nsys.path[:0] = ['w']\n"
        "sys.path += ['v']\ndel sys.path[0]\nn = sys.path.index('x')\nsite = [p for p in sys.path if p]\n"
    )
    assert sys_path_edits(ast.parse(code)) == [2, 3, 4, 5, 6, 7]


def test_the_benchmarks_are_a_package_and_never_edit_sys_path():
    """benchmarks/ is a package (its scripts import each other as ``benchmarks.X``); none edits
    ``sys.path``, and only benchmarks/common.py finds the checkout from its own ``__file__``."""
    assert (BENCHMARKS / "__init__.py").exists()
    assert BENCHMARKS_COMMON.exists()
    edits, own_path = {}, []
    for path in sorted(BENCHMARKS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = str(path.relative_to(REPO))
        if sys_path_edits(tree):
            edits[rel] = sys_path_edits(tree)
        if path != BENCHMARKS_COMMON and any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(tree)):
            own_path.append(rel)
    assert edits == {}, f"sys.path edited (run the script as python -m benchmarks.NAME instead): {edits}"
    assert own_path == [], f"use REPO, SHARED, RESULTS ... of benchmarks/common.py, not __file__: {own_path}"


def test_every_benchmark_module_imports_from_the_root():
    """What ``python -m benchmarks.NAME`` does first: import the module, from the repository root."""
    names = sorted(f"benchmarks.{p.stem}" for p in BENCHMARKS.glob("*.py") if p.stem != "__init__")
    r = subprocess.run([sys.executable, "-c", f"import {', '.join(names)}"], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_startup", "--help"], capture_output=True, text=True, cwd=REPO
    )
    assert r.returncode == 0 and "--code" in r.stdout, r.stderr


def test_mypy_covers_the_benchmarks():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: tomli, a dependency there
        import tomli as tomllib  # type: ignore[no-redef]

    mypy = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    covered = [*mypy.get("packages", []), *mypy.get("files", [])]
    assert "benchmarks" in covered or "benchmarks/" in covered, covered


#: a benchmark run as a file (``python``, then the script's path under benchmarks/, on one line or
#: two), which no longer imports: the scripts are modules of the package
SCRIPT_COMMAND = re.compile(r"\b(?:python3?|PEER_PYTHON)\s+(?:\S*/)?benchmarks/\w+\.py")


def test_benchmark_commands_are_documented_as_modules():
    """Every page and docstring that shows how to run a benchmark says ``python -m benchmarks.NAME``
    (the changelog and benchmarks/results/HISTORY.md keep the commands of their time)."""
    pages = [REPO / "README.md", REPO / "CONTRIBUTING.md", *(REPO / "docs").glob("*.md")]
    pages += [*BENCHMARKS.glob("*.py"), *(REPO / "tests").glob("*.py"), *PACKAGE.rglob("*.py")]
    found = [
        f"{p.relative_to(REPO)}: {m.group(0)!r}" for p in pages for m in SCRIPT_COMMAND.finditer(p.read_text("utf-8"))
    ]
    assert found == [], f"write python -m benchmarks.NAME: {found}"
    assert SCRIPT_COMMAND.search("`python\n  " + "benchmarks/bench_real.py --mb 100`")
    assert not SCRIPT_COMMAND.search("`python -m benchmarks.bench_real --mb 100`")

"""The package's imports have no cycle: between modules, nor between the packages that hold them (docs/development.md,
"Layout"). Every import counts, at the top of a module, inside a function or under ``TYPE_CHECKING``."""

from __future__ import annotations

import ast
from pathlib import Path

import planner_gui

ROOT = Path(planner_gui.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Each module of planner_gui -> the modules of planner_gui it imports (a package's ``__init__`` by its name)."""
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")
                if node.level:
                    base = base[: len(base) - node.level + 1]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                # ``from X import y``: y is a module of X where there is one, else a name in X.
                targets = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in modules else stem for a in node.names]
            for t in targets:
                while t and t not in modules:  # (``import a.b.c`` imports a.b.c; a name inside a module: the module)
                    t = t.rpartition(".")[0]
                if t and t != name:
                    graph[name].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def packages(graph: dict[str, set[str]], depth: int) -> dict[str, set[str]]:
    """The graph between the packages (names cut to ``depth`` parts) that hold the modules."""

    def cut(m: str) -> str:
        return ".".join(m.split(".")[:depth])

    out: dict[str, set[str]] = {}
    for m, deps in graph.items():
        out.setdefault(cut(m), set()).update(cut(d) for d in deps if cut(d) != cut(m))
    return out


def test_the_cycle_finder_finds_a_cycle_and_only_one():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_relative_function_level_and_type_only_imports():
    g = import_graph()
    # results.py imports the spares section of a run under TYPE_CHECKING and inside a function.
    assert "planner_gui.core.spares_result" in g["planner_gui.core.results"]
    assert "planner_gui.core.sim.run" in g["planner_gui.core.analysis.sizing"]  # (``from ..sim.run import``)
    assert "planner_gui.core.summary" in g["planner_gui.core.results"]


def test_no_module_imports_one_that_imports_it_back():
    assert cycles(import_graph()) == []


def test_no_package_imports_one_that_imports_it_back():
    g = import_graph()
    for depth in (2, 3, 4):  # planner_gui.core, planner_gui.core.sim, planner_gui.core.study.files, ...
        assert cycles(packages(g, depth)) == [], depth

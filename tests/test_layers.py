"""The package's imports have no cycle: between modules, nor between the packages that hold them (docs/development.md,
"Layout"). Every import counts, at the top of a module, inside a function or under ``TYPE_CHECKING``."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

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
    assert "planner_gui.core.analysis.spares_result" in g["planner_gui.core.analysis.results"]
    assert "planner_gui.core.sim.run" in g["planner_gui.core.analysis.sizing"]  # (``from ..sim.run import``)
    assert "planner_gui.core.analysis.summary" in g["planner_gui.core.analysis.results"]


def test_no_module_imports_one_that_imports_it_back():
    assert cycles(import_graph()) == []


def test_no_package_imports_one_that_imports_it_back():
    g = import_graph()
    for depth in (2, 3, 4):  # planner_gui.core, planner_gui.core.sim, planner_gui.core.study.files, ...
        assert cycles(packages(g, depth)) == [], depth


def core_layers() -> list[list[str]]:
    """The core's layers, top first, as pyproject.toml's import-linter contract lists them (each a list of the
    independent packages it holds)."""
    text = (ROOT.parent / "pyproject.toml").read_text(encoding="utf-8")
    contract = text[text.index('type = "layers"') :]
    assert re.search(r'^containers = \["planner_gui.core"\]$', contract, re.M)
    listed = json.loads(re.search(r"^layers = (\[.*\])$", contract, re.M).group(1))
    return [[f"planner_gui.core.{p.strip()}" for p in layer.split("|")] for layer in listed]


def layer_of(module: str, layers: list[list[str]]) -> tuple[int, str] | None:
    """(the index of the layer, top 0, and the package of it) holding ``module``; None outside every layer."""
    for i, layer in enumerate(layers):
        for package in layer:
            if module == package or module.startswith(package + "."):
                return i, package
    return None


def upward(graph: dict[str, set[str]], layers: list[list[str]]) -> list[str]:
    """The imports that break the layers: into a layer above, or into an independent package beside."""
    wrong = []
    for m, deps in sorted(graph.items()):
        here = layer_of(m, layers)
        for d in sorted(deps):
            there = layer_of(d, layers)
            if here is not None and there is not None and there[1] != here[1] and there[0] <= here[0]:
                wrong.append(f"{m} -> {d}")
    return wrong


def test_every_core_module_sits_in_a_layer():
    """The tree is the architecture: no module of the core lies beside the layers (only the package's own
    ``__init__``, which gathers the public names)."""
    layers = core_layers()
    core = [m for m in import_graph() if m.startswith("planner_gui.core.")]
    assert [m for m in core if layer_of(m, layers) is None] == []


def test_each_core_layer_imports_only_the_layers_below_it():
    """The rule of the import-linter contract, checked on this file's own import graph (so that the test command
    checks it too): a module imports its own package and the layers below its own, nothing above or beside."""
    assert upward(import_graph(), core_layers()) == []


def test_the_layer_check_finds_an_import_upward_or_beside():
    layers = core_layers()
    run, results = "planner_gui.core.sim.run", "planner_gui.core.analysis.results"
    spec, fit = "planner_gui.core.study.spec", "planner_gui.core.incidents.fit"
    assert upward({results: {run}, run: set()}, layers) == []
    assert upward({run: {results}}, layers) == [f"{run} -> {results}"]
    assert upward({spec: {fit}}, layers) == [f"{spec} -> {fit}"]
    assert upward({spec: {"planner_gui.core.study.store"}}, layers) == []
    assert layer_of("planner_gui.core.util.fmt", layers) == (len(layers) - 1, "planner_gui.core.util")


def test_the_cores_names_for_scripts_are_loaded_from_their_layers_when_first_asked_for():
    """``planner_gui.core`` loads no layer on import (the app starts its compute process first); each name it
    exports is its home module's own, listed alike in ``__all__``, for type checkers and in ``dir``."""
    import importlib
    import subprocess
    import sys

    import planner_gui.core as core

    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, planner_gui.core; print(sorted(m for m in sys.modules if m.startswith("
         "'planner_gui.core.') or m.startswith('scipy') or m == 'numpy'))"],
        capture_output=True, text=True, check=True, cwd=ROOT.parent,
    ).stdout.strip()  # fmt: skip
    assert loaded == "[]"
    tree = ast.parse((ROOT / "core" / "__init__.py").read_text())
    typed = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names if n.level == 1}
    assert sorted(core.__all__) == sorted(typed) == sorted(core._HOME)
    for name in core.__all__:
        home = importlib.import_module(core._HOME[name], "planner_gui.core")
        assert getattr(core, name) is getattr(home, name) and name in dir(core)
    with pytest.raises(AttributeError, match="no_such_name"):
        core.no_such_name  # noqa: B018

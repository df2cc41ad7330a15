"""The folder tree is the architecture: no import cycle inside ``tb_plugin/`` and ``writer/``, and each layer of
``tb_plugin/`` imports only the layers its package docstring allows (``tb_plugin/__init__.py``).

Imports are read from the source (``ast``), all of them: one moved into a function or under ``if TYPE_CHECKING:``
to dodge a cycle at load time is still a cycle of the design. On the tree before the layers had folders, this finds
the four cycles that were there (kineto/begin_end/paddle/chunks/detect, the MindSpore modules, cache/ingest/parallel,
http/runs/precomputed with the views that read stored answers).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = {"tb_plugin": "profscope.tb_plugin", "writer": "profscope.writer", "profscope": "profscope"}

# What each layer may import besides itself (tb_plugin/__init__.py says the same in words).
ALLOWED = {
    "layout": set(),
    "model": set(),
    "ingest": {"model", "layout"},
    "views": {"model", "ingest", "layout"},
    "store": {"model", "ingest", "views", "layout"},
    "server": {"model", "ingest", "views", "store", "layout"},
    "reports": {"model", "ingest", "views", "store", "server", "layout", "writer"},
    # The writer runs inside training jobs: the on-disk contract, format detection for `profscope import`, and the
    # span scalars (computed in its child processes with the same code TensorBoard's Scalars show).
    "writer": {"layout", "ingest", "model", "reports"},
    # The top package: the Python API (``from profscope import open_trace``), reports/notebook.py's.
    "profscope": {"reports"},
}


@dataclass(frozen=True)
class Import:
    source: str  # importing module
    target: str  # imported module of the project
    line: int


def project_modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for folder, package in PACKAGES.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            parts = path.relative_to(REPO / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join((package,) + parts)] = path
    return modules


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            targets = [f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in modules else origin
                       for alias in node.names]
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield Import(name, target, node.lineno)


def all_imports() -> list[Import]:
    modules = project_modules()
    return [imp for name, path in modules.items() for imp in imports_of(name, path, modules)]


def cycles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    graph: dict[str, list[str]] = {}
    for a, b in edges:
        graph.setdefault(a, []).append(b)
        graph.setdefault(b, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(graph[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def layer_of(module: str) -> str:
    if module == "profscope":
        return "profscope"
    if module.startswith("profscope.writer"):
        return "writer"
    rest = module[len("profscope.tb_plugin."):].split(".") if module != "profscope.tb_plugin" else [""]
    return rest[0] if rest[0] != "layout" else "layout"


def test_cycle_finder_finds_cycles() -> None:
    assert cycles([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e")]) == [["a", "b", "c"]]
    assert cycles([("a", "b"), ("b", "c")]) == []


def test_no_import_cycles() -> None:
    edges = {(i.source, i.target) for i in all_imports()}
    assert len(edges) > 100, "the test reads almost no imports"
    assert cycles(edges) == []


def test_every_module_belongs_to_a_layer() -> None:
    for module in project_modules():
        if module == "profscope.tb_plugin":
            continue
        assert layer_of(module) in ALLOWED, f"{module}: a folder tb_plugin/__init__.py does not list"


def test_layers_import_only_what_they_may() -> None:
    wrong = []
    for imp in all_imports():
        source, target = layer_of(imp.source), layer_of(imp.target)
        if source != target and target not in ALLOWED[source]:
            wrong.append(f"{imp.source}:{imp.line} imports {imp.target} ({source} may not import {target})")
    assert wrong == []


# Every folder of tb_plugin/ with Python modules in it (a new one is found without a change here).
SUBPACKAGES = sorted(str(path.parent.relative_to(REPO / "tb_plugin")).replace("/", ".")
                     for path in (REPO / "tb_plugin").rglob("*.py")
                     if path.parent != REPO / "tb_plugin" and "__pycache__" not in path.parts)
SUBPACKAGES = sorted(set(SUBPACKAGES))


def test_every_folder_is_a_package() -> None:
    assert {"model", "ingest.chrome", "views.analyses", "views.trace", "views.distributed", "views.runs",
            "views.quantities"} <= set(SUBPACKAGES)
    for package in SUBPACKAGES:
        assert (REPO / "tb_plugin" / package.replace(".", "/") / "__init__.py").exists(), package


def test_only_outside_views_ask_the_facade() -> None:
    """``views/answers.py`` sits on top of the views: no view imports it (a view that needs another's answer is
    handed it), so the facade can import every view without a cycle."""
    wrong = [f"{i.source}:{i.line}" for i in all_imports()
             if i.target == "profscope.tb_plugin.views.answers" and layer_of(i.source) == "views"]
    assert wrong == []
    users = {layer_of(i.source) for i in all_imports() if i.target == "profscope.tb_plugin.views.answers"}
    assert {"server", "store", "reports"} <= users


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_package_inits_only_describe(package: str) -> None:
    """A package's __init__ says what the folder holds and may import; it imports nothing of Profscope, so
    importing one module never loads its siblings."""
    path = REPO / "tb_plugin" / package.replace(".", "/") / "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert ast.get_docstring(tree), f"{path} has no docstring"
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]

"""The package's imports run one way: entry points → graph → nodes → services/config → basics.

Every ``import`` of a deskresearch module (at module level, in a function, or for type checking)
is an edge. Each module belongs to a layer; an edge may stay in its layer or go down, never up,
and no set of modules imports itself in a circle. ``bench/`` is held to "no circles" too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "src" / "deskresearch"

# Highest first. A module's layer is the first prefix (longest match) that names it.
LAYERS: list[list[str]] = [
    ["deskresearch"],  # the public API (__init__) re-exports from below
    ["deskresearch.__main__"],
    [
        "deskresearch.cli",
        "deskresearch.batch",
        "deskresearch.mcp",
        "deskresearch.ui",
    ],  # entry points
    ["deskresearch.session"],  # the one way every entry point runs a research
    ["deskresearch.served"],  # the graph langgraph.json names, built on import
    ["deskresearch.graph", "deskresearch.tool", "deskresearch.resume_fix"],
    ["deskresearch.nodes"],
    ["deskresearch.report"],
    ["deskresearch.grounding"],
    ["deskresearch.services"],
    ["deskresearch.progress", "deskresearch.runscope", "deskresearch.tracing"],
    ["deskresearch.config", "deskresearch.prompts"],
    ["deskresearch.state"],
    ["deskresearch.safety", "deskresearch.text"],
    ["deskresearch.errors", "deskresearch._version", "deskresearch.lighter"],
    ["deskresearch.records"],
]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path, top: str) -> dict[str, Path]:
    return {module_name(p, root): p for p in (root / top).rglob("*.py")}


def imports(path: Path, name: str, known: set[str]) -> Iterator[str]:
    """The modules of ``known`` that ``path`` (module ``name``) imports, in any scope."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            # `from pkg import mod` imports the module pkg.mod; `from mod import name`, mod.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                       for a in node.names]  # fmt: skip
        else:
            continue
        yield from (t for t in targets if t in known and t != name)


def layer_of(module: str) -> int:
    best, depth = -1, -1
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > depth:
                best, depth = i, len(p)
    assert best >= 0, f"{module} has no layer: add it to LAYERS"
    return best


def graph_of(root: Path, top: str) -> dict[str, set[str]]:
    mods = modules(root, top)
    return {m: set(imports(p, m, set(mods))) for m, p in mods.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                found.append(sorted(scc))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def upward(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{a} → {b}" for a, targets in graph.items() for b in targets if layer_of(b) < layer_of(a)
    )


PACKAGE_GRAPH = graph_of(PACKAGE.parent, "deskresearch")


def test_no_import_runs_up_a_layer() -> None:
    assert upward(PACKAGE_GRAPH) == []


def test_no_modules_import_each_other_in_a_circle() -> None:
    assert circles(PACKAGE_GRAPH) == []


def test_bench_has_no_circles() -> None:
    assert circles(graph_of(ROOT, "bench")) == []


@pytest.mark.parametrize("wrong", [
    ("deskresearch.services.web.fetch", "from deskresearch.graph import build_graph"),
    ("deskresearch.config.context", "from deskresearch.session.settings import gather"),
    ("deskresearch.records", "import deskresearch.state"),
])  # fmt: skip
def test_a_wrong_way_import_is_caught(wrong: tuple[str, str], tmp_path: Path) -> None:
    """The check sees an upward import wherever it hides (here: inside a function)."""
    module, line = wrong
    target_module = line.split()[1]
    source = PACKAGE.parent / (module.replace(".", "/") + ".py")
    copy = tmp_path / "deskresearch"
    for path in modules(PACKAGE.parent, "deskresearch").values():
        target = copy / path.relative_to(PACKAGE)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8")
        if path == source:
            text += f"\n\ndef _late() -> None:\n    {line}\n"
        target.write_text(text, encoding="utf-8")
    assert upward(graph_of(tmp_path, "deskresearch")) == [f"{module} → {target_module}"]


def test_each_package_says_what_lives_there_and_what_it_may_import() -> None:
    for init in PACKAGE.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert "import" in doc.lower(), f"{init.relative_to(ROOT)}: say what it may import"

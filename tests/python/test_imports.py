"""No import cycle in the package or in bench/'s scripts (issue 27).

The import graph is read statically (``ast``): every ``import`` and ``from ... import`` of a
module of ``python/sharebuf/`` or ``bench/`` is an edge, at module level and inside functions
alike (a lazy import that keeps start-up fast is fine, as long as it forms no cycle: the
cycle is still there, only deferred). ``from . import name`` is an edge to the submodule
``name`` when there is one, else to the package's ``__init__``; a package's ``__init__`` is not
an edge of its submodules (Python loads it first, but it is the package's front, not a use).
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "sharebuf"
BENCH = ROOT / "bench"


def _modules() -> dict:
    """Module name -> file, for the package (``sharebuf...``) and bench's top-level scripts."""
    mods = {}
    for f in sorted(PACKAGE.rglob("*.py")):
        parts = ["sharebuf", *f.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = f
    mods["sharebuf._core"] = None  # the compiled engine: a leaf
    for f in sorted(BENCH.glob("*.py")):
        mods[f.stem] = f
    return mods


def _target(name: str, mods: dict):
    """The module an imported dotted name lands in (its longest known prefix), or None."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in mods:
            return ".".join(parts)
        parts.pop()
    return None


def import_graph() -> dict:
    """Module -> set of the modules of the package and bench/ it imports (anywhere in it)."""
    mods = _modules()
    graph = {}
    for mod, f in mods.items():
        if f is None:
            graph[mod] = set()
            continue
        is_pkg = f.name == "__init__.py"
        package = mod if is_pkg else mod.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    base_name = ".".join(base + ([node.module] if node.module else []))
                else:
                    base_name = node.module or ""
                names = [f"{base_name}.{a.name}" for a in node.names]
                names = [n if n in mods else base_name for n in names]
            for n in names:
                t = _target(n, mods)
                if t is not None and t != mod:
                    edges.add(t)
        graph[mod] = edges
    return graph


def cycles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
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
    return sorted(out)


def test_the_graph_sees_the_package_and_bench():
    g = import_graph()
    assert "sharebuf.runner" in g and "scaling" in g
    assert "sharebuf.results" in g["sharebuf.runner"]  # a module-level import
    assert "sharebuf._core" in g["sharebuf.runner"]  # a function-level import of the compiled engine


def test_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles (module-level and function-level imports both count): " + "; ".join(
        " <-> ".join(c) for c in found)


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []

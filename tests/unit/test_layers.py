"""The folders are the data flow: imports run down the layers of docs/architecture.md, and
no module imports itself back through others (the only circle allowed is type-only)."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

LAYERS: list[tuple[str, ...]] = [
    ("lib.vocab", "lib.digest", "lib.json_bounds", "lib.bounded_cache", "lib.csv_export"),
    ("lib.metrics", "lib.images", "lib.mirror"),
    ("lib.table",),
    ("lib.data",),
    ("lib.analysis", "lib.uploads", "lib.viewer", "lib.charts"),
    ("lib.report", "lib.about"),
    ("ui",),
    ("pages", "app"),
]
"""Lowest first: a module may import from its own layer's packages or lower ones only.
`lib.table` (pure functions on frames) sits below `lib.data`, which calls it to build the
`Bench` it returns; data flows bytes -> tables -> verdict table -> page numbers."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, type_only: bool) -> set[str]:
    """Absolute imports of lib/ui modules in `path`; `type_only` keeps those under
    `if TYPE_CHECKING:` too (left out otherwise: they never run)."""
    tree = ast.parse(path.read_text())
    skip: set[int] = set()
    if not type_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skip.update(id(n) for child in node.body for n in ast.walk(child))
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                out.add(f"{node.module}.{alias.name}")
                out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {m for m in out if m.split(".")[0] in ("lib", "ui")}


def _graph(type_only: bool = False) -> dict[str, set[str]]:
    files = [p for d in ("lib", "ui") for p in (ROOT / d).rglob("*.py")]
    files += [*(ROOT / "pages").glob("*.py"), ROOT / "app.py"]
    names = {_module_name(p): p for p in files if p != ROOT / "lib" / "__init__.py"}
    graph: dict[str, set[str]] = {name: set() for name in names}
    for name, path in names.items():
        for target in _imports(path, type_only):
            while target not in names and "." in target:  # `from lib.x import name`
                target = target.rsplit(".", 1)[0]
            if target in names and target != name and not name.startswith(target + "."):
                graph[name].add(target)  # a package's own __init__ is not a circle
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of `graph` (graphlib finds one when there is any), or None."""
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        return list(exc.args[1])
    return None


def _layer(module: str) -> int:
    best = None
    for level, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            inside = module == prefix or module.startswith(prefix + ".")
            if inside and (best is None or len(prefix) > best[0]):
                best = (len(prefix), level)
    assert best is not None, f"{module} is in no layer of LAYERS: place it"
    return best[1]


def test_no_import_runs_back_up() -> None:
    graph = _graph()
    upward = [
        f"{a} (layer {_layer(a)}) imports {b} (layer {_layer(b)})"
        for a, targets in graph.items()
        for b in sorted(targets)
        if _layer(b) > _layer(a)
    ]
    assert not upward, "\n".join(upward)


def test_no_circle_among_modules_that_run() -> None:
    assert _cycle(_graph()) is None


def test_the_only_circle_counting_type_hints_is_the_mirrors() -> None:
    graph = _graph(type_only=True)
    for name in graph:  # drop the mirror's own edges: what is left must have no circle
        if name.startswith("lib.mirror"):
            graph[name] = {t for t in graph[name] if not t.startswith("lib.mirror")}
    assert _cycle(graph) is None


@pytest.mark.parametrize("package", ["lib.data", "lib.table", "lib.analysis", "lib.uploads"])
def test_lower_packages_hold_no_streamlit(package: str) -> None:
    folder = ROOT / package.replace(".", "/")
    users = [p.name for p in folder.rglob("*.py") if "import streamlit" in p.read_text()]
    assert not users, users


def test_lib_keeps_few_top_level_modules() -> None:
    top = [p.stem for p in (ROOT / "lib").glob("*.py") if p.stem != "__init__"]
    assert len(top) <= 12, sorted(top)

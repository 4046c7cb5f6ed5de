"""The folders are the data flow: imports run down the layers of docs/architecture.md, and
no module imports itself back through others (the only circle allowed is type-only).

Every wing is checked: `lib/` (and the rooms of `lib/data`), `ui/`, `pages/` + `app.py`,
`tools/` and `bench/`; nothing below `ui/` imports Streamlit in any form; a module outside
a `lib/data` room reaches it through the room's face only. Each check takes a root, so the
tests can plant a wrong import in a copy and see the check fail."""

from __future__ import annotations

import ast
import graphlib
import importlib
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WINGS = ("lib", "ui", "pages", "tools", "bench")
"""The folders of code the app and its helpers are made of (tests/ may reach anything)."""

LAYERS: list[tuple[str, ...]] = [
    (
        "lib.vocab",
        "lib.digest",
        "lib.json_bounds",
        "lib.bounded_cache",
        "lib.csv_export",
        "lib.file_lock",
    ),
    ("lib.metrics", "lib.images", "lib.mirror"),
    ("lib.table",),
    ("lib.data.parquet",),
    ("lib.data.remote",),
    ("lib.data.shots",),
    ("lib.data.demo",),
    ("lib.data",),
    ("lib.analysis", "lib.uploads", "lib.viewer", "lib.charts"),
    ("lib.report", "lib.about"),
    ("ui",),
    ("pages", "app"),
    ("tools",),
    ("bench",),
]
"""Lowest first: a module may import from its own layer's packages or lower ones only.
`lib.table` (pure functions on frames) sits below `lib.data`, which calls it to build the
`Bench` it returns; data flows bytes -> tables -> verdict table -> page numbers. Inside
`lib.data`: parquet readers, then where bytes come from (`remote`), the screenshot stores
(`shots`), the demo, then the loader (`load`, `source`, `light_cache`). `tools/` (a local
Hub, relayouts) and `bench/` (measures) stand on the app; nothing of the app imports them
(nor `tests`)."""

ROOMS = ("lib.data.remote", "lib.data.parquet", "lib.data.shots", "lib.data.demo")
"""Packages with a face: imported from outside only as `from <room> import <name in __all__>`."""


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _files(root: Path) -> list[Path]:
    files = [p for d in WINGS if d != "pages" for p in (root / d).rglob("*.py")]
    return [*files, *(root / "pages").glob("*.py"), root / "app.py"]


def _import_nodes(path: Path, type_only: bool) -> list[ast.Import | ast.ImportFrom]:
    """Absolute imports in `path`; `type_only` keeps those under `if TYPE_CHECKING:` too
    (left out otherwise: they never run)."""
    tree = ast.parse(path.read_text())
    skip: set[int] = set()
    if not type_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skip.update(id(n) for child in node.body for n in ast.walk(child))
    return [
        node
        for node in ast.walk(tree)
        if id(node) not in skip
        and (isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and not node.level))
    ]


def _imports(path: Path, type_only: bool) -> set[str]:
    out = set()
    for node in _import_nodes(path, type_only):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                out.add(f"{node.module}.{alias.name}")
                out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {m for m in out if m.split(".")[0] in (*WINGS, "app", "tests")}


def _graph(root: Path = ROOT, type_only: bool = False) -> dict[str, set[str]]:
    names = {_module_name(p, root): p for p in _files(root) if p != root / "lib" / "__init__.py"}
    names = {n: p for n, p in names.items() if n not in ("lib", "bench", "tools")}
    graph: dict[str, set[str]] = {name: set() for name in names}
    for name, path in names.items():
        for target in _imports(path, type_only):
            if target.split(".")[0] == "tests":
                graph[name].add("tests")
                continue
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
    if module == "tests":
        return len(LAYERS)  # above everything: only tools and bench may use its helpers
    best = None
    for level, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            inside = module == prefix or module.startswith(prefix + ".")
            if inside and (best is None or len(prefix) > best[0]):
                best = (len(prefix), level)
    assert best is not None, f"{module} is in no layer of LAYERS: place it"
    return best[1]


def upward_imports(root: Path = ROOT) -> list[str]:
    graph = _graph(root)
    return [
        f"{a} (layer {_layer(a)}) imports {b} (layer {_layer(b)})"
        for a, targets in graph.items()
        for b in sorted(targets)
        if _layer(b) > _layer(a) and not (b == "tests" and a.split(".")[0] in ("tools", "bench"))
    ]


def streamlit_below_ui(root: Path = ROOT) -> list[str]:
    """Every `import streamlit...` / `from streamlit... import` in lib/, in any form."""
    found = []
    for path in sorted((root / "lib").rglob("*.py")):
        for node in _import_nodes(path, type_only=True):
            modules = (
                [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            )
            if any(m and m.split(".")[0] == "streamlit" for m in modules):
                found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
    return found


def _face(room: str) -> set[str]:
    return set(importlib.import_module(room).__all__)


def behind_faces(root: Path = ROOT) -> list[str]:
    """Imports of a `lib.data` room from outside it that do not go through its face."""
    wrong = []
    for path in _files(root):
        here = _module_name(path, root)
        for node in _import_nodes(path, type_only=True):
            if isinstance(node, ast.ImportFrom):
                targets = [(node.module or "", [a.name for a in node.names])]
            else:
                targets = [(a.name, []) for a in node.names]
            for module, names in targets:
                for room in ROOMS:
                    if here == room or here.startswith(room + "."):
                        continue
                    where = f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}"
                    if module.startswith(room + "."):
                        wrong.append(f"{where} (import from `{room}`, its face)")
                    elif module == room and set(names) - _face(room):
                        missing = sorted(set(names) - _face(room))
                        wrong.append(f"{where} ({missing} not in `{room}.__all__`)")
    return wrong


def test_no_import_runs_back_up() -> None:
    upward = upward_imports()
    assert not upward, "\n".join(upward)


def test_no_circle_among_modules_that_run() -> None:
    assert _cycle(_graph()) is None


def test_the_only_circle_counting_type_hints_is_the_mirrors() -> None:
    graph = _graph(type_only=True)
    for name in graph:  # drop the mirror's own edges: what is left must have no circle
        if name.startswith("lib.mirror"):
            graph[name] = {t for t in graph[name] if not t.startswith("lib.mirror")}
    assert _cycle(graph) is None


def test_every_wing_is_placed() -> None:
    """Each module of every wing has a layer (`_layer` asserts), and each wing has some."""
    graph = _graph()
    for module in graph:
        _layer(module)
    assert {m.split(".")[0] for m in graph} >= {*WINGS, "app"}


def test_lib_holds_no_streamlit() -> None:
    found = streamlit_below_ui()
    assert not found, "\n".join(found)


def test_rooms_are_entered_by_their_faces() -> None:
    wrong = behind_faces()
    assert not wrong, "\n".join(wrong)


def test_lib_keeps_few_top_level_modules() -> None:
    top = [p.stem for p in (ROOT / "lib").glob("*.py") if p.stem != "__init__"]
    assert len(top) <= 12, sorted(top)


# -- the checks can fail: wrong imports planted in a copy ------------------------------------


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The code's wings (Python files only) in a temporary folder."""
    for wing in WINGS:
        shutil.copytree(ROOT / wing, tmp_path / wing, ignore=_not_python)
    shutil.copy(ROOT / "app.py", tmp_path / "app.py")
    return tmp_path


def _not_python(folder: str, names: list[str]) -> list[str]:
    return [n for n in names if not n.endswith(".py") and not (Path(folder) / n).is_dir()]


def _plant(path: Path, line: str) -> None:
    path.write_text(path.read_text() + f"\n{line}\n")


def test_the_copy_is_clean(copy: Path) -> None:
    assert not upward_imports(copy) and not streamlit_below_ui(copy) and not behind_faces(copy)


@pytest.mark.parametrize(
    "line",
    [
        "from streamlit import cache_data",
        "import streamlit as st",
        "from streamlit.runtime import exists",
        "import streamlit.components.v1",
    ],
)
def test_a_planted_streamlit_import_in_lib_fails(copy: Path, line: str) -> None:
    _plant(copy / "lib" / "data" / "shots" / "store.py", f"    {line}".strip())
    found = streamlit_below_ui(copy)
    assert len(found) == 1 and "lib/data/shots/store.py" in found[0], found


@pytest.mark.parametrize(
    ("module", "line"),
    [
        ("lib/data/parquet/page_index.py", "from lib.data.shots import ShotStore"),
        ("lib/vocab.py", "from lib.data import load_bench"),
        ("lib/report.py", "from ui.fmt import value_with_ci"),
        ("ui/fmt.py", "import app"),
        ("tools/relayout.py", "from bench.common import ROOT"),
        ("lib/images.py", "from tests.helpers import browser"),
    ],
)
def test_a_planted_upward_import_fails(copy: Path, module: str, line: str) -> None:
    _plant(copy / module, line)
    found = upward_imports(copy)
    name = module.removesuffix(".py").replace("/", ".")
    assert [f for f in found if f.startswith(name + " ")], found


@pytest.mark.parametrize(
    "line",
    [
        "from lib.data.shots.store import ShotStore",
        "import lib.data.parquet.page_index",
        "from lib.data.remote import HubRanges",
    ],
)
def test_an_import_behind_a_face_fails(copy: Path, line: str) -> None:
    _plant(copy / "ui" / "fetch.py", line)
    found = behind_faces(copy)
    assert len(found) == 1 and found[0].startswith("ui/fetch.py"), found

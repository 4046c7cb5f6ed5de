"""docs/architecture.md matches the tree: every module, file or dotted name it names
exists, and its file tree ("Where things live") lists every module under lib/ and ui/.

When a module is added or moved, the failure says which line to add (or fix) where. The
checks take the doc's text and a root, so tests feed them a doc that is wrong on purpose."""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
TREE_HEADING = "## Where things live"
LISTED = ("lib", "ui")
"""Every module under these folders has a line of its own in the tree."""
PLACEHOLDERS = {"pages/N_Name.py"}
"""Paths the doc writes as a pattern, not a file."""
INDENT = 2


@dataclass(frozen=True)
class Entry:
    path: str  # relative to the root; a folder ends with "/"
    line: int  # 1-based, in the doc
    depth: int


def tree(text: str) -> list[Entry]:
    """The entries of the file tree: the code block after TREE_HEADING, one name per line
    (a folder ends with '/'), nested by INDENT spaces, a description after two spaces."""
    lines = text.split("\n")
    first, last = _tree_lines(text)
    out: list[Entry] = []
    parents: list[str] = []
    for i in range(first + 1, last):
        line = lines[i]
        name = line.strip().split("  ")[0].strip()
        depth = (len(line) - len(line.lstrip(" "))) // INDENT
        assert name and " " not in name, f"docs/architecture.md:{i + 1}: not `name  what`"
        assert depth <= len(parents), f"docs/architecture.md:{i + 1}: indented too deep"
        parents = parents[:depth]
        path = "".join(parents) + name
        out.append(Entry(path, i + 1, depth))
        if name.endswith("/"):
            parents.append(name)
    return out


def _suggest(module: str, entries: list[Entry]) -> str:
    """The line to add for `module` (a path under the root) and where."""
    parts = module.rstrip("/").split("/")
    folder = "/".join(parts[:-1]) + "/"
    name = parts[-1] + ("/" if module.endswith("/") else "")
    depth = len(parts) - 1
    line = " " * (depth * INDENT) + name.ljust(18 - depth * INDENT) + "  <what it does, one line>"
    under = next((e for e in entries if e.path == folder), None)
    where = (
        f"under `{folder}` (line {under.line})"
        if under is not None
        else f"with its folder `{folder}` (add the folder's line first)"
    )
    return f"{module} is not in docs/architecture.md's tree: add the line\n    {line!r}\n  {where}"


def modules_missing(text: str, root: Path = ROOT) -> list[str]:
    entries = tree(text)
    listed = {e.path for e in entries}
    wanted: list[str] = []
    for top in LISTED:
        for path in sorted((root / top).rglob("*.py")):
            rel = path.relative_to(root)
            if path.name == "__init__.py":  # a package: its folder's line
                if rel.parent.as_posix() != top:
                    wanted.append(rel.parent.as_posix() + "/")
            else:
                wanted.append(rel.as_posix())
    missing = [m for m in wanted if m not in listed]
    # a folder listed whole (`ui/stepper/`) holds its package; folders come first
    missing.sort(key=lambda m: (m.count("/") - m.endswith("/"), m))
    return [_suggest(m, entries) for m in missing]


def tree_entries_gone(text: str, root: Path = ROOT) -> list[str]:
    return [
        f"docs/architecture.md:{e.line}: the tree names {e.path}, which does not exist "
        "(remove the line or fix the name)"
        for e in tree(text)
        if not (root / e.path).exists()
    ]


PATH = re.compile(r"(?<![\w/.])((?:lib|ui|pages|tests|bench|tools|docs|deploy)/[\w./-]*[\w/])")
DOTTED = re.compile(r"(?<![\w.])((?:lib|ui)(?:\.[A-Za-z_]\w*)+)")


def names_gone(text: str, root: Path = ROOT) -> list[str]:
    """Paths and dotted names (`lib.x.y`, `ui.x.NAME`) outside the tree that do not exist."""
    first, last = _tree_lines(text)
    wrong = []
    for number, line in enumerate(text.split("\n"), 1):
        if first <= number - 1 <= last:
            continue
        for path in PATH.findall(line):
            if path not in PLACEHOLDERS and not (root / path).exists():
                wrong.append(f"docs/architecture.md:{number}: `{path}` does not exist")
        for dotted in DOTTED.findall(line):
            why = _resolve(dotted, root)
            if why:
                wrong.append(f"docs/architecture.md:{number}: `{dotted}`: {why}")
    return wrong


def _tree_lines(text: str) -> tuple[int, int]:
    """The 0-based indices of the tree block's opening and closing fences."""
    lines = text.split("\n")
    start = lines.index(TREE_HEADING)
    first = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    last = next(i for i in range(first + 1, len(lines)) if lines[i].startswith("```"))
    return first, last


def _resolve(dotted: str, root: Path) -> str:
    """ "" when `dotted` is a module, or a module and one name defined in it; else why not."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        base = root.joinpath(*parts[:cut])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            rest = parts[cut:]
            if not rest:
                return ""
            if root != ROOT:
                return ""  # names are checked by importing, in the real tree only
            module = importlib.import_module(".".join(parts[:cut]))
            if hasattr(module, rest[0]):
                return ""
            return f"`{'.'.join(parts[:cut])}` has no `{rest[0]}`"
    return "no such module"


def test_every_module_under_lib_and_ui_is_in_the_tree() -> None:
    missing = modules_missing(DOC.read_text())
    assert not missing, "\n".join(missing)


def test_every_line_of_the_tree_exists() -> None:
    gone = tree_entries_gone(DOC.read_text())
    assert not gone, "\n".join(gone)


def test_every_module_and_name_the_doc_names_exists() -> None:
    gone = names_gone(DOC.read_text())
    assert not gone, "\n".join(gone)


def test_the_stale_references_are_gone() -> None:
    text = DOC.read_text()
    for stale in ("../shared", "DESIGN.md", "research/", "compare.", "_resampled_by_type"):
        assert stale not in text, stale


# -- the checks can fail ---------------------------------------------------------------------


def test_a_new_module_is_named_with_the_line_to_add_and_where(tmp_path: Path) -> None:
    (tmp_path / "lib" / "uploads").mkdir(parents=True)
    (tmp_path / "ui").mkdir()
    for name in ("lib/uploads/__init__.py", "lib/uploads/shared.py", "lib/uploads/link_codec.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "lib" / "analysis").mkdir()
    (tmp_path / "lib" / "analysis" / "__init__.py").write_text("")
    (tmp_path / "lib" / "analysis" / "audit.py").write_text("")
    doc = "\n".join(
        [
            TREE_HEADING,
            "```",
            "lib/                everything",
            "  uploads/            a visitor's files",
            "    shared.py           links",
            "```",
        ]
    )
    missing = modules_missing(doc, tmp_path)
    assert len(missing) == 3, missing
    folder, audit, codec = missing
    assert folder.startswith("lib/analysis/ is not in") and "  analysis/" in folder
    assert audit.startswith("lib/analysis/audit.py") and "add the folder's line first" in audit
    assert (
        codec.startswith("lib/uploads/link_codec.py") and "under `lib/uploads/` (line 4)" in codec
    )
    assert "'    link_codec.py" in codec


def test_a_stale_tree_line_or_name_is_caught(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "vocab.py").write_text("")
    doc = "\n".join(
        [
            "# x",
            "",
            "## Data",
            "The loader is `lib.data.hub` and lib/data/hub.py; words in `lib.vocab`.",
            TREE_HEADING,
            "```",
            "lib/                everything",
            "  vocab.py            words",
            "  demo_shots.py       gone",
            "```",
        ]
    )
    assert tree_entries_gone(doc, tmp_path) == [
        "docs/architecture.md:9: the tree names lib/demo_shots.py, which does not exist "
        "(remove the line or fix the name)"
    ]
    gone = names_gone(doc, tmp_path)
    assert any("`lib/data/hub.py` does not exist" in g for g in gone), gone
    assert any("`lib.data.hub`: no such module" in g for g in gone), gone
    assert not any("lib.vocab" in g for g in gone), gone


def test_a_name_a_module_does_not_define_is_caught() -> None:
    assert _resolve("lib.data.load.Bench", ROOT) == ""
    assert _resolve("lib.data.shots.ShotStore", ROOT) == ""
    assert "has no `stored_count`" in _resolve("lib.data.load.stored_count", ROOT)
    assert _resolve("lib.data.demo_shots", ROOT) == "`lib.data` has no `demo_shots`"

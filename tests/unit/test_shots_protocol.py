"""Every screenshot store satisfies `lib.data.shots.Shots`: the same methods with the same
signatures and a `gone` attribute, so `Bench.shots` can hold any of them. The stores are
found, not listed: every class under lib/ that has `pngs` and `thumbs` is one."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from lib.data.remote import LocalFolder
from lib.data.shots import PendingShots, Shots, ShotStore

ROOT = Path(__file__).resolve().parents[2]
MEMBERS = [
    name
    for name, value in vars(Shots).items()
    if inspect.isfunction(value) and not name.startswith("_")
]


def _stores() -> list[type]:
    found = []
    for path in sorted((ROOT / "lib").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name != "Shots":
                methods = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
                if {"pngs", "thumbs"} <= methods:
                    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
                    found.append(getattr(importlib.import_module(module), node.name))
    return found


def test_the_stores_are_found() -> None:
    assert set(_stores()) >= {ShotStore, PendingShots}
    assert set(MEMBERS) >= {"ready", "job", "start", "wait", "prefetch", "pngs", "thumbs"}


@pytest.mark.parametrize("store", _stores(), ids=lambda c: c.__name__)
def test_every_store_has_the_protocols_methods_and_signatures(store: type) -> None:
    wrong = []
    for name in MEMBERS:
        method = getattr(store, name, None)
        if method is None:
            wrong.append(f"{store.__name__}.{name} is missing")
        elif inspect.signature(method) != inspect.signature(getattr(Shots, name)):
            wrong.append(
                f"{store.__name__}.{name}{inspect.signature(method)} is not "
                f"Shots.{name}{inspect.signature(getattr(Shots, name))}"
            )
    assert not wrong, "\n".join(wrong)


def test_instances_are_shots(tmp_path: Path) -> None:
    stores = [
        ShotStore({}, LocalFolder(tmp_path), "local-" + "0" * 16),
        PendingShots(tmp_path / "README.md", lambda: None, lambda: None, lambda: False),
    ]
    for store in stores:
        assert isinstance(store, Shots) and store.gone == ""


def test_a_store_missing_a_method_or_with_another_signature_is_caught() -> None:
    """The check can fail: a copy of ShotStore with `pngs` taking no `fetch` is not a store."""

    class Broken(ShotStore):
        def pngs(self, split: str, row: int) -> list[bytes | None] | None:  # type: ignore[override]
            return None

    with pytest.raises(AssertionError, match=r"Broken.pngs"):
        test_every_store_has_the_protocols_methods_and_signatures(Broken)

"""The demo banner: one line for every synthetic source, details on demand, and no
server path on screen (issue 30)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import streamlit as st

from lib.data.source import marked_synthetic
from tests.helpers.apptest import open_page, shown, texts
from ui.sidebar import BANNER_TITLE


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_data.clear()
    st.cache_resource.clear()
    yield


def _banner(at) -> list[str]:
    return [shown(m.value) for m in at.markdown if BANNER_TITLE in m.value]


def _everything(at) -> str:
    """Every text of a run, sidebar included, with widget labels and help."""
    parts = [texts(at), texts(at.sidebar)]
    for kind in (at.button, at.selectbox, at.radio):
        parts += [f"{w.label} {w.help or ''}" for w in kind]
    return "\n".join(parts)


def test_a_lib_mirror_folder_has_the_banner_and_no_server_path(use_mirror: Path) -> None:
    """`CUAVB_DATA=<folder made by lib.mirror>`: the banner says so in one line (details in
    a popover), and neither the sidebar nor the page prints the folder's absolute path."""
    at = open_page()
    assert not at.exception
    banner = _banner(at)
    assert len(banner) == 1 and "lib.mirror" in banner[0]
    assert "\n" not in banner[0].strip()  # one line
    assert not at.warning  # not an alert box
    everything = _everything(at)
    assert str(use_mirror) not in everything and str(use_mirror.parent) not in everything
    assert f"Local mirror: {use_mirror.name}" in texts(at.sidebar)


def test_a_real_looking_folder_has_no_banner(
    mirror_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same files without the README marker read as real data: no banner."""
    folder = tmp_path / "unmarked"
    shutil.copytree(mirror_dir, folder)
    readme = folder / "README.md"
    text = readme.read_text()
    assert "\nsynthetic: true" in text
    readme.write_text(text.replace("\nsynthetic: true", "\nsynthetic_note: removed", 1))
    monkeypatch.setenv("CUAVB_DATA", str(folder))
    at = open_page()
    assert not at.exception
    assert not _banner(at)


def test_the_named_demo_has_the_banner(mirror_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUAVB_DATA", "demo")
    at = open_page()
    assert not at.exception
    banner = _banner(at)
    assert len(banner) == 1 and "CUAVB_DATA=demo" in banner[0]
    assert "Built-in synthetic demo data" in texts(at.sidebar)


def test_the_fallback_banner_keeps_try_the_hub_again_in_its_details(
    mirror_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("CUAVB_DATA", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path / "empty-cache"))
    at = open_page()
    assert not at.exception
    banner = _banner(at)
    assert len(banner) == 1 and "The Hub could not be reached" in banner[0]
    assert at.button(key="retry_hub").label == "Try the Hub again"
    detail = [t.value for t in at.text]
    assert detail and "<cache>" in detail[0]  # the technical detail, as plain text
    assert str(tmp_path) not in detail[0]  # without the server's cache path


@pytest.mark.parametrize(
    ("front", "marked"),
    [
        ("synthetic: true\n", True),
        ("synthetic: 'yes'\n", False),
        ("synthetic: [unclosed\n", False),
        ("pretty_name: x\n", False),
    ],
)
def test_the_marker_is_read_strictly(tmp_path: Path, front: str, marked: bool) -> None:
    (tmp_path / "README.md").write_text(f"---\n{front}---\n# body\n")
    assert marked_synthetic(tmp_path) is marked
    assert marked_synthetic(tmp_path / "nowhere") is False

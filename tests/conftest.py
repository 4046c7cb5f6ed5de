"""Shared fixtures: one generated mirror per test session, offline Hub, AppTest helpers."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # a Hub id must fail at once, not after 24 s of retries
os.environ.setdefault("CUAVB_RAISE_ERRORS", "1")  # AppTest should see real exceptions

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def mirror_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default (small) mirror, written once per session where the demo lives too."""
    from lib import mirror, source

    demo_root = tmp_path_factory.mktemp("demo")
    os.environ[source.DEMO_DIR_ENV] = str(demo_root)
    # Our own cache (Hub light data, screenshots) too: a revision cached by a real run in
    # ~/.cache must not stand in for the demo the offline tests expect.
    os.environ.setdefault("CUAVB_CACHE_DIR", str(tmp_path_factory.mktemp("cuavb-cache")))
    return mirror.write_mirror(source.demo_dir(), full=False, seed=source.DEMO_SEED)


@pytest.fixture(scope="session")
def bench(mirror_dir: Path):
    """The mirror loaded through the real loader (shared, read-only)."""
    from lib.data import load_bench
    from lib.source import resolve

    return load_bench(resolve(str(mirror_dir)))


@pytest.fixture
def use_mirror(mirror_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point the app at the session mirror for one test."""
    monkeypatch.setenv("CUAVB_DATA", str(mirror_dir))
    yield mirror_dir


@pytest.fixture(scope="session")
def app_url(mirror_dir: Path) -> Iterator[str]:
    """One app server on the session mirror, shared by the browser tests."""
    from tests.browser import streamlit_server

    with streamlit_server({"CUAVB_DATA": str(mirror_dir)}) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    from tests.browser import chromium

    with chromium() as b:
        yield b


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    yield pg
    context.close()


@pytest.fixture(scope="session")
def report_json(mirror_dir: Path) -> str:
    """`python -m lib.report --data <mirror> --format json` as printed, built once for the
    whole suite (the full report bootstraps every section: tens of seconds under load)."""
    import contextlib
    import io

    from lib import report

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert report.main(["--data", str(mirror_dir), "--format", "json"]) == 0
    return out.getvalue()

"""Shared fixtures: one generated mirror per machine, offline Hub, AppTest helpers.

The suite runs in parallel (pytest-xdist, see pyproject.toml): every worker is its own
process with its own session fixtures. What is costly and read-only is built once and
shared: the demo mirror once per machine (`tests.helpers.mirror_cache`, keyed by the
generator's version), the headless report once per run (`run_dir` and `built_once`); what
a worker changes (caches, app servers on free ports, temporary folders from
`tmp_path`/`tmp_path_factory`) is per worker. A new test needs no convention for this:
use the fixtures below and `tmp_path`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lib.file_lock import exclusive
from tests.helpers.slack import scaled_ms

os.environ["HF_HUB_OFFLINE"] = "1"  # a Hub id must fail at once, not after 24 s of retries
os.environ.setdefault("CUAVB_RAISE_ERRORS", "1")  # AppTest should see real exceptions

ROOT = Path(__file__).resolve().parents[1]


def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder shared by every worker of this test run (the run's base temp folder;
    without xdist, the session's own)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]
) -> Path:
    """`run_dir/name`, made by `build(path)` by the first worker that asks; the others wait
    for it and reuse it. `build` must leave `path` complete (or raise): it is called once
    per run. Only for read-only results: every worker sees the same files."""
    path = run_dir(tmp_path_factory) / name
    done = path.with_name(f"{name}.done")
    with exclusive(path.with_name(f"{name}.lock")):
        if not done.exists():
            build(path)
            done.touch()
    return path


@pytest.fixture(scope="session", autouse=True)
def _own_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """This worker's own cache (Hub light data, screenshots): a revision cached by a real
    run in ~/.cache must not stand in for the demo the offline tests expect, and two
    workers must not write one cache at once. Set for every test, whatever it uses."""
    os.environ.setdefault("CUAVB_CACHE_DIR", str(tmp_path_factory.mktemp("cuavb-cache")))
    # screenshots for people to look at (tests.helpers.browser.shot_path): this run's folder
    os.environ.setdefault("CUAVB_SHOTS_DIR", str(run_dir(tmp_path_factory)))


@pytest.fixture(scope="session")
def mirror_dir() -> Path:
    """The default (small) mirror, where the demo lives too: built once per machine and
    generator version (`tests.helpers.mirror_cache`: ~/.cache/cuavb-dashboard-tests, or
    `CUAVB_TEST_CACHE`), shared read-only by every worker and every later run."""
    from lib.data import source
    from tests.helpers import mirror_cache

    folder = mirror_cache.demo_mirror()
    os.environ[source.DEMO_DIR_ENV] = str(folder.parent)
    assert source.demo_dir() == folder
    return folder


@pytest.fixture(scope="session")
def bench(mirror_dir: Path):
    """The mirror loaded through the real loader (shared, read-only)."""
    from lib.data.load import load_bench
    from lib.data.source import resolve

    return load_bench(resolve(str(mirror_dir)))


@pytest.fixture
def use_mirror(mirror_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point the app at the session mirror for one test."""
    monkeypatch.setenv("CUAVB_DATA", str(mirror_dir))
    yield mirror_dir


@pytest.fixture(scope="session")
def app_url(mirror_dir: Path) -> Iterator[str]:
    """One app server on the session mirror, shared by the browser tests."""
    from tests.helpers.browser import streamlit_server

    with streamlit_server({"CUAVB_DATA": str(mirror_dir)}) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    from tests.helpers.browser import chromium

    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def listener() -> Iterator[tuple[int, list[str]]]:
    """`tests.helpers.browser.planted_listener` for one module's hostile-input browser tests: the
    port their payload URLs point at and the paths it was asked for (defined once here)."""
    from tests.helpers.browser import planted_listener

    with planted_listener() as found:
        yield found


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(scaled_ms(30_000))
    yield pg
    context.close()


@pytest.fixture(scope="session")
def report_json(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """`python -m lib.report --data <mirror> --format json` as printed, built once for the
    whole run and shared by the workers (the full report bootstraps every section: tens of
    seconds under load)."""
    import contextlib
    import io

    from lib import report
    from tests.helpers.report_memo import memoised

    def build(path: Path) -> None:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.MonkeyPatch.context() as patch:
            memoised(patch, report_memo_dir(tmp_path_factory))  # lib.report.tables reuses it
            assert report.main(["--data", str(mirror_dir), "--format", "json"]) == 0
        path.write_text(out.getvalue())

    return built_once(tmp_path_factory, "report.json", build).read_text()


@pytest.fixture(scope="session")
def report_with_predictions_json(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """`report_json` with the mirror's sample predictions file (`--predictions`): built once
    for the run, like `report_json`, for every test that reads the uploaded verifiers' part."""
    import contextlib
    import io

    from lib import report
    from tests.helpers.report_memo import memoised

    sample = mirror_dir / "sample_predictions.csv"

    def build(path: Path) -> None:
        out = io.StringIO()
        argv = ["--data", str(mirror_dir), "--predictions", str(sample), "--format", "json"]
        with contextlib.redirect_stdout(out), pytest.MonkeyPatch.context() as patch:
            memoised(patch, report_memo_dir(tmp_path_factory))  # the CLI tests reuse it
            assert report.main(argv) == 0
        path.write_text(out.getvalue())

    return built_once(tmp_path_factory, "report_predictions.json", build).read_text()


def report_memo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where `tests.helpers.report_memo` keeps the report sections of this run (read by
    every worker)."""
    return run_dir(tmp_path_factory) / "report-memo"


@pytest.fixture
def report_memo(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """`lib.report`'s sections computed once per run for one input
    (`tests.helpers.report_memo`): for tests that print a report whose sections another
    test computes too (`report_json`, the sample predictions read another way) and change
    nothing in how a section computes."""
    from tests.helpers.report_memo import memoised

    memoised(monkeypatch, report_memo_dir(tmp_path_factory))

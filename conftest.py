"""Root conftest: makes `lib`, `ui` and `pages` importable from the tests, and sets how
the suite is spread over parallel workers (pytest-xdist; options in pyproject.toml)."""

import os
from pathlib import Path

import pytest

# Every chart a page draws in the suite is checked against Vega-Lite's schema first
# (`ui.vega.CHECK_ENV`; the app itself draws them unvalidated). Browser servers inherit it.
os.environ.setdefault("CUAVB_CHECK_CHARTS", "1")

# The slowest modules (whole-suite --durations, 2026-12-03): handed to the workers first,
# so that no long module starts last and runs alone at the end. A module not named here
# runs as usual, only later (modules with browser tests next, then the rest).
SLOW_FIRST = (
    "tests/browser/test_browser_url_roundtrip.py",
    "tests/unit/test_predictions.py",
    "tests/unit/test_mirror.py",
    "tests/unit/test_hub.py",
    "tests/browser/test_browser_viewer.py",
    "tests/browser/test_browser_axe.py",  # every page, both themes: ~55 s serial (quiet)
    "tests/browser/test_browser_hostile_pages.py",
    "tests/browser/test_browser_narrow_dark.py",
    "tests/browser/test_browser_shell.py",
    "tests/browser/test_browser_hostile_text.py",
    "tests/unit/test_report_bounds.py",
    "tests/browser/test_browser_share.py",  # a second server + the thread: ~105 s serial
    "tests/app/test_shared_link_page.py",  # five AppTest threads: ~100 s serial (load 10)
    "tests/unit/test_link_codec.py",  # hostile links under tracemalloc: ~60 s serial
    "tests/unit/test_metrics.py",
    "tests/unit/test_report_frames.py",
    "tests/unit/test_report_frozen.py",  # two full reports: ~40 s serial (2026-12-06, load 10)
    "tests/browser/test_browser_wide_tables.py",  # eight pages: ~45 s serial (quiet)
    "tests/browser/test_space_iframe.py",
    "tests/unit/test_startup_imports.py",
    "tests/unit/test_agreement.py",
    "tests/app/test_metrics_zero_width_pages.py",
    "tests/unit/test_parity.py",
    "tests/unit/test_parity_power.py",
    "tests/app/test_parity_words.py",
    "tests/unit/test_hub_lies.py",
    "tests/unit/test_readme_snippet.py",
    "tests/unit/test_flagged_excluded.py",  # a full report with --exclude-flagged: ~60 s serial
    "tests/browser/test_browser_iterations.py",
    "tests/unit/test_iterations.py",
    "tests/app/test_iterations_page.py",
    "tests/unit/test_audit.py",
    "tests/unit/test_report_labels.py",  # four partial reports: ~35 s serial (load 14)
    "tests/browser/test_browser_audit.py",  # two sessions' labels, links: ~80 s serial (load 9)
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker, order the modules slowest first (`SLOW_FIRST`, then modules with
    a browser test); the tests of a module keep their order. Every worker sorts the same
    way, so they agree on the collection; a serial run keeps the plain order."""
    if not hasattr(config, "workerinput"):
        return
    rank: dict[str, tuple[int, int]] = {}
    for item in items:
        module = item.nodeid.split("::")[0]
        if module in SLOW_FIRST:
            here = (0, SLOW_FIRST.index(module))
        else:
            here = (1 if item.get_closest_marker("browser") else 2, 0)
        rank[module] = min(rank.get(module, here), here)
    items.sort(key=lambda item: rank[item.nodeid.split("::")[0]])


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker per core for the suite (or PYTEST_XDIST_AUTO_NUM_WORKERS);
    no workers when one file or one test is asked for (`pytest tests/test_x.py`), where
    starting workers costs more than it saves and `-s`/`--pdb` should just work."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    args = [a for a in config.args if not a.startswith("-")]
    if len(args) == 1 and (Path(args[0].split("::")[0]).is_file() or "::" in args[0]):
        return 0
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return len(cores) if cores else os.cpu_count() or 1


@pytest.fixture(autouse=True)
def _metrics_doctest_names(doctest_namespace: dict) -> None:
    """The doctests of `lib/metrics/` read the public API as one namespace, as a caller of
    the `lib.metrics` facade does (an example of `ac1` may build a `confusion`)."""
    import lib.metrics

    doctest_namespace.update({name: getattr(lib.metrics, name) for name in lib.metrics.__all__})

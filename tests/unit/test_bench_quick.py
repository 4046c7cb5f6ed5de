"""Smoke tests of bench/run.py: its loaders on the small mirror and its results table.

The whole `python -m bench.run --quick` (servers + browsers) takes about a minute, too
long for the suite; here its load measurements run for real in fresh interpreters, as
the benchmark runs them, and the table is checked for every row, measured or not.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path

import pytest

from bench import common, measures
from bench import table as results_table

ROW_STARTS = (
    "Peak RSS",
    "Load time",
    "First load",
    "Cold process → home",
    "… then Agreement",
    "Step switch, server time per Next click",
    "Bare PNG",
    "Step switch ÷ bare PNG",
    "Agreement page recompute",
    "App RSS right after start",
    "App RSS after 1 session",
    "Memory growth per extra session",
    "App peak RSS",
)


def _measures(rows: list[list[str]]) -> list[str]:
    return [row[0] for row in rows]


def test_table_has_every_row_when_nothing_was_measured() -> None:
    results = {"settings": asdict(common.QUICK), "browser": {"error": "no chromium"}}
    rows = results_table.table_rows(results)
    for start in ROW_STARTS:
        assert any(m.startswith(start) for m in _measures(rows)), start
    assert all(len(row) == 6 for row in rows)
    cold = next(r for r in rows if r[0].startswith("Cold process"))
    assert cold[1] == "n/a: no chromium"
    table = results_table.render_table(results)
    assert table.splitlines()[0] == "| measure | ours | naive | ratio | target | met? |"


def test_targets_are_judged_from_the_numbers() -> None:
    mem = {"VmRSS": 300.0, "VmHWM": 350.0, "RssAnon": 200.0, "RssFile": 100.0}
    results = {
        "settings": asdict(common.FULL),
        "ours_load": {"peak_mb": 250.0, "import_rss_mb": 140.0, "load_s": 1.0, "load_cpu_s": 1},
        "naive_load": {"peak_mb": 2600.0, "import_rss_mb": 140.0, "load_s": 9.0, "load_cpu_s": 8},
        "png": {"total_ms": {"n": 10, "median": 20.0, "p95": 30.0}, "cpu_mean_ms": 15.0},
        "browser": {
            "ours": {
                "home_s": 4.0,
                "agreement_s": 6.0,
                "mem_start": {**mem, "VmRSS": 60.0},
                "mem_one": mem,
                "mem_many": {**mem, "VmRSS": 500.0, "RssAnon": 300.0},
                "mem_peak": 520.0,
                "one": {
                    "steps": 300,
                    "tasks": 12,
                    "server_ms": {"n": 300, "median": 150.0, "p95": 300.0},
                    "server_cpu_ms": {"n": 300, "median": 120.0, "p95": 200.0},
                    "client_ms": {"n": 300, "median": 400.0, "p95": 900.0},
                },
                "many": {"sessions": 20, "ok": 20, "steps": [300] * 20, "errors": []},
            },
            "naive": {"home_s": 20.0, "agreement_s": 1.0, "mem_peak": 3000.0},
        },
    }
    met = {row[0]: row[5] for row in results_table.table_rows(results)}
    by_start = {s: next(v for k, v in met.items() if k.startswith(s)) for s in ROW_STARTS}
    assert by_start["Peak RSS"] == "yes"  # 10.4x less and 250 MB < 400 MB
    assert by_start["Cold process → home"] == "yes"  # 4 s < 5 s
    assert by_start["… then Agreement"] == "**no**"  # 6 s
    assert by_start["Step switch, server time per Next click"] == "**no**"  # 150 ms median
    assert by_start["Memory growth per extra session"] == "yes"  # (500 - 300) / 20 = 10 MB
    ratio = next(r for r in results_table.table_rows(results) if r[0].startswith("Step switch ÷"))
    assert ratio[1] == "7.5× (medians)"


def test_percentile_interpolates() -> None:
    assert common.percentile([], 50) is None
    assert common.percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert common.percentile([0.0, 10.0], 95) == pytest.approx(9.5)


def test_load_measures_on_the_small_mirror(mirror_dir: Path, tmp_path: Path) -> None:
    """Ours keeps the PNGs out of memory; the naive way holds every one of them."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "cache")}
    env.pop("CUAVB_RAISE_ERRORS", None)
    ours = measures.run_measure("load-ours", mirror_dir, env, timeout=300)
    assert "error" not in ours, ours
    assert ours["tasks"] == 260 and ours["screenshots"] > 0
    assert ours["peak_mb"] >= ours["import_rss_mb"] > 0
    env[common.CACHE_ENV] = ours["cache_dir"]  # the naive way reads the same Arrow cache
    naive = measures.run_measure("load-naive", mirror_dir, env, timeout=300)
    assert "error" not in naive, naive
    assert naive["tasks"] == 260
    png_mb = sum(p.stat().st_size for p in (mirror_dir / "trajectories").glob("*.parquet"))
    assert naive["png_mb_held"] > 0.5 * png_mb / 2**20  # the PNG bytes are in the frames

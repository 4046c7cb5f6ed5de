"""Measurements that run in a fresh interpreter: `python -m bench.run --measure KIND`.

Part of `python -m bench.run` (see its docstring).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from bench.common import CACHE_ENV, ROOT, peak_rss_mb, proc_status

T = TypeVar("T")

# --------------------------------------------------------------------------- measurements
# Each runs in a fresh interpreter: `python -m bench.run --measure KIND --data DIR`.


def _timed_load(started: float, load: Callable[[], T]) -> tuple[T, dict[str, float]]:
    """``load()`` and the figures both loaders are compared on (import and load time, CPU,
    RSS after the imports and after the load, peak), taken one way for both.

    ``started`` is `time.perf_counter()` before the loader's imports.
    """
    imported = proc_status()
    t1, c1 = time.perf_counter(), time.process_time()
    loaded = load()
    t2, c2 = time.perf_counter(), time.process_time()
    now = proc_status()
    figures = {
        "import_s": t1 - started,
        "load_s": t2 - t1,
        "load_cpu_s": c2 - c1,
        "import_rss_mb": imported["VmRSS"],
        "peak_mb": peak_rss_mb(),
        "rss_mb": now["VmRSS"],
        "anon_mb": now["RssAnon"],
        "file_mb": now["RssFile"],
    }
    return loaded, figures


def measure_load_ours(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Our loader: memory-mapped Arrow + image-free frames (the Arrow cache may be cold).

    With `--n N`, then the bare PNG cost over N screenshots (`png_cost`).
    """
    t0 = time.perf_counter()
    from lib.data.load import cache_dir_for, load_bench
    from lib.data.source import resolve

    bench, figures = _timed_load(t0, lambda: load_bench(resolve(str(folder))))
    out = {
        **figures,
        "cache_dir": str(cache_dir_for(folder)),
        "tasks": len(bench.tasks),
        "annotations": len(bench.annotations),
        "verdicts": len(bench.verdicts),
        "screenshots": int(bench.tasks["n_screenshots_stored"].sum()),
    }
    if args.n:  # after the peak was read: the sample's pages must not count in it
        del bench
        out["png"] = png_cost(folder, args.n)
    return out


def measure_load_naive(folder: Path, _: argparse.Namespace) -> dict[str, Any]:
    """The naive way: every config and split `to_pandas()`, screenshots included."""
    t0 = time.perf_counter()
    import datasets  # noqa: F401  (imported before the clock, as our loader's imports are)

    from bench.naive_app import load_everything

    cache = os.environ.get(CACHE_ENV) or None
    frames, figures = _timed_load(t0, lambda: load_everything(str(folder), cache))
    png_bytes = 0
    for cell in frames["trajectories"]["screenshots"]:
        for image in cell if cell is not None else ():
            png_bytes += len(image.get("bytes") or b"")
    return {
        **figures,
        "png_mb_held": png_bytes / 2**20,
        "tasks": len(frames["trajectories"]),
    }


def png_cost(folder: Path, n: int) -> dict[str, Any]:
    """Bare cost of one screenshot: `Bench.screenshot_png` + PIL decode, over a sample.

    Uses `bench.viewer_speed.measure_png_decode` (the viewer's own measure), with this
    process's CPU time around it.
    """
    from bench.viewer_speed import measure_png_decode

    c0 = time.process_time()
    got = measure_png_decode(folder, n)
    cpu = time.process_time() - c0
    total = got["read_and_decode"]
    return {
        "source": "bench.viewer_speed.measure_png_decode",
        "total_ms": {"n": total["n"], "median": total["median_ms"], "p95": total["p95_ms"]},
        "read_ms": {
            "n": got["read"]["n"],
            "median": got["read"]["median_ms"],
            "p95": got["read"]["p95_ms"],
        },
        "cpu_mean_ms": 1e3 * cpu / max(total["n"], 1),
        "png_kb": got.get("png_kb_median"),
    }


def measure_appstep(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The viewer engineer's AppTest step switch (whole-page reruns: an upper bound)."""
    from bench.viewer_speed import measure_step_switch

    got = measure_step_switch(folder, args.n)

    def stats(key: str) -> dict[str, Any] | None:
        value = got.get(key)
        if not value:
            return None
        return {"n": value["n"], "median": value["median_ms"], "p95": value["p95_ms"]}

    return {
        "ms": stats("step_switch"),
        "fragment_ms": stats("step_fragment"),
        "fragment_cpu_ms": stats("step_fragment_cpu"),
        "tasks": got.get("tasks"),
    }


def measure_agreement(folder: Path, _: argparse.Namespace) -> dict[str, Any]:
    """Recompute of the Agreement page (2,000 resamples), two ways.

    `lib`: `bench.agreement_speed.page_recompute` (everything the page computes, no
    Streamlit), median of 3 runs after a warm-up. `recompute`: the page itself under
    AppTest with `st.cache_data` cleared (the loaded data stays): computation + rendering.
    """
    os.environ["CUAVB_DATA"] = str(folder)
    os.environ["CUAVB_RAISE_ERRORS"] = "1"
    import streamlit as st

    from bench.agreement_speed import page_recompute
    from lib.data.load import load_bench
    from lib.data.source import resolve
    from lib.vocab import N_RESAMPLES
    from tests.helpers.apptest import open_page

    out: dict[str, Any] = {"n_resamples": N_RESAMPLES}
    bench = load_bench(resolve(str(folder)))
    from lib.vocab import UV_THRESHOLD

    page_recompute(bench, UV_THRESHOLD, N_RESAMPLES)  # warm-up: imports, BLAS
    walls, cpus = [], []
    for threshold in (0.8, 0.7, 0.6):  # like moving the threshold slider
        t0, c0 = time.perf_counter(), time.process_time()
        page_recompute(bench, threshold, N_RESAMPLES)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    out["lib_s"], out["lib_cpu_s"] = statistics.median(walls), statistics.median(cpus)
    del bench

    t0 = time.perf_counter()
    at = open_page("pages/1_Agreement.py", timeout=1800)
    out["first_s"] = time.perf_counter() - t0
    if at.exception:
        raise RuntimeError(f"the Agreement page raised: {at.exception[0].value}")
    st.cache_data.clear()  # the loaded data (cache_resource) stays: this is a recompute
    t0, c0 = time.perf_counter(), time.process_time()
    at.run(timeout=1800)
    out["recompute_s"] = time.perf_counter() - t0
    out["recompute_cpu_s"] = time.process_time() - c0
    t0 = time.perf_counter()
    at.run(timeout=1800)
    out["cached_s"] = time.perf_counter() - t0
    return out


MEASURES: dict[str, Callable[[Path, argparse.Namespace], dict[str, Any]]] = {
    "load-ours": measure_load_ours,
    "load-naive": measure_load_naive,
    "appstep": measure_appstep,
    "agreement": measure_agreement,
}


def run_measure(
    kind: str, folder: Path, env: dict[str, str], n: int = 0, timeout: float = 3600
) -> dict[str, Any]:
    """One measurement in a fresh interpreter; {"error": ...} when it failed."""
    cmd = [sys.executable, "-m", "bench.run", "--measure", kind, "--data", str(folder)]
    cmd += ["--n", str(n)] if n else []
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return {"error": f"exit {proc.returncode}: " + " | ".join(tail)}
    result = json.loads(lines[-1])
    result["process_s"] = time.perf_counter() - t0
    return result

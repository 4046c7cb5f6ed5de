"""`python -m bench.viewer_speed [--data DIR | --full] [--steps N]`: the viewer's step switch.

Measures, on one mirror, in this process:

- server time per step switch: the trajectory page is driven with AppTest (deep link to
  step 0 of a trajectory, then `Next` clicks to its end, over many trajectories with
  screenshots); each `click().run()` is timed. AppTest reruns the whole page, so this is
  an upper bound; the step view is an `st.fragment` and a real Next click reruns only
  that part, whose own time is reported too;
- the bare cost of reading and decoding one PNG (`Bench.screenshot_png` + PIL `load()`),
  and the ratio step switch / bare decode;
- resident memory (psutil RSS) before stepping, after a first pass, and after the whole
  run, to show the caches are bounded: memory stays flat however many steps are viewed.

Default: the small mirror, generated into a temporary folder. `--full` uses (and if
absent generates, several minutes) the full-size mirror in `data/full`. `--data DIR`
uses an existing mirror. Other scripts (bench/run.py) can import `measure_step_switch`,
`measure_png_decode` and `measure_memory`; each returns a plain dict.
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.common import percentile

ROOT = Path(__file__).resolve().parents[1]
FULL_DIR = ROOT / "data" / "full"
PAGE = "pages/4_Trajectory.py"
NEXT_KEY = "viewer_next"
TARGET_MS = 100.0


def _environment(data_dir: Path) -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["CUAVB_DATA"] = str(data_dir)
    os.environ["CUAVB_RAISE_ERRORS"] = "1"
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def _bench(data_dir: Path):
    _environment(data_dir)
    from lib.data import load_bench
    from lib.source import resolve

    return load_bench(resolve(str(data_dir)))


def _stats(seconds: list[float]) -> dict[str, float | int | None]:
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "median_ms": percentile(ms, 50),
        "p95_ms": percentile(ms, 95),
        "max_ms": max(ms) if ms else None,
    }


def _rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def _anon_mb() -> float:
    """Resident memory that is not file-backed: what the app itself holds.

    RSS also counts pages of the memory-mapped Arrow files that were read (about one
    PNG per step): the kernel can drop those at any time, so they are reported apart.
    """
    import psutil

    info = psutil.Process().memory_info()
    return (info.rss - info.shared) / 2**20


def _tasks_with_screenshots(bench, limit: int | None = None) -> list[str]:
    """Trajectories with at least two screenshots, alternating splits, longest first."""
    tasks = bench.tasks[bench.tasks["n_screenshots_stored"] >= 2]
    tasks = tasks.sort_values(["n_screenshots_stored", "task_id"], ascending=[False, True])
    by_split = [list(group["task_id"]) for _, group in tasks.groupby("split")]
    order: list[str] = []
    while any(by_split):
        for ids in by_split:
            if ids:
                order.append(ids.pop(0))
    return order[:limit] if limit else order


def _open(task_id: str, timeout: float):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    at.query_params.update({"task": task_id, "step": "0"})
    at.switch_page(PAGE)
    return at.run()


@contextmanager
def _timed_fragment() -> Iterator[list[tuple[float, float]]]:
    """Time every call of the step view fragment (`ui.viewer.step_view`) while inside.

    In a browser a Next click reruns only this fragment; AppTest reruns the whole page,
    so the fragment's own time is the closer measure of a real step switch. Each entry is
    (wall, CPU of the script thread) in seconds: CPU time does not grow when other
    processes load the machine.
    """
    from ui import viewer as ui_viewer

    original = ui_viewer.step_view
    times: list[tuple[float, float]] = []

    def timed(*args: Any, **kwargs: Any) -> Any:
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            times.append((time.perf_counter() - t0, time.thread_time() - c0))

    ui_viewer.step_view = timed
    try:
        yield times
    finally:
        ui_viewer.step_view = original


def step_through(n_steps: int, tasks: list[str], timeout: float = 120) -> dict[str, Any]:
    """Click Next `n_steps` times over `tasks` (to each one's end, then the next task).

    Returns the per-click times (s) of the whole page and of the step view fragment, the
    task-open times (s), and how many tasks were used.
    """
    with _timed_fragment() as fragment:
        run = _step_through(n_steps, tasks, timeout, fragment)
    return run


def _step_through(
    n_steps: int, tasks: list[str], timeout: float, fragment: list[tuple[float, float]]
) -> dict[str, Any]:
    clicks: list[float] = []
    clicks_cpu: list[float] = []
    fragments: list[tuple[float, float]] = []
    opens: list[float] = []
    used = 0
    for task_id in tasks:
        if len(clicks) >= n_steps:
            break
        t0 = time.perf_counter()
        at = _open(task_id, timeout)
        opens.append(time.perf_counter() - t0)
        if at.exception:
            raise RuntimeError(f"{task_id}: {at.exception[0].value}")
        used += 1
        while len(clicks) < n_steps:
            button = at.button(key=NEXT_KEY)
            if button.disabled:
                break
            before = len(fragment)
            t0, c0 = time.perf_counter(), time.process_time()
            at = button.click().run()
            clicks.append(time.perf_counter() - t0)
            clicks_cpu.append(time.process_time() - c0)
            fragments.extend(fragment[before:])
            if at.exception:
                raise RuntimeError(f"{task_id}: {at.exception[0].value}")
    return {
        "clicks": clicks,
        "clicks_cpu": clicks_cpu,
        "fragments": [wall for wall, _ in fragments],
        "fragments_cpu": [cpu for _, cpu in fragments],
        "opens": opens,
        "tasks": used,
    }


def measure_step_switch(data_dir: Path | str, n_steps: int = 300) -> dict[str, Any]:
    """Server time per Next click (AppTest, whole-page rerun), over many trajectories.

    Caches start empty, so most clicks draw a new action layer and a new thumbnail
    (the cost a reader pays on first viewing a step).
    """
    import streamlit as st

    bench = _bench(Path(data_dir))
    st.cache_data.clear()
    st.cache_resource.clear()
    tasks = _tasks_with_screenshots(bench)
    _open(tasks[0], 300)  # warm-up: loads the Bench into st.cache_resource
    run = step_through(n_steps, tasks)
    return {
        "step_switch": _stats(run["clicks"]),
        "step_switch_cpu": _stats(run["clicks_cpu"]),
        "step_fragment": _stats(run["fragments"]),
        "step_fragment_cpu": _stats(run["fragments_cpu"]),
        "task_open": _stats(run["opens"]),
        "tasks": run["tasks"],
    }


def measure_png_decode(data_dir: Path | str, n_samples: int = 200) -> dict[str, Any]:
    """Bare cost of one screenshot: `Bench.screenshot_png` + a full PIL decode."""
    from PIL import Image

    bench = _bench(Path(data_dir))
    tasks = bench.tasks[bench.tasks["n_screenshots_stored"] > 0]
    samples = [
        (t.split, int(t.row), k)
        for t in tasks.itertuples()
        for k in range(int(t.n_screenshots_stored))
    ]
    step = max(1, len(samples) // n_samples)
    read_s, decode_s, sizes = [], [], []
    for split, row, k in samples[::step][:n_samples]:
        t0 = time.perf_counter()
        png = bench.screenshot_png(split, row, k)
        t1 = time.perf_counter()
        with Image.open(io.BytesIO(png)) as image:
            image.load()
        t2 = time.perf_counter()
        read_s.append(t1 - t0)
        decode_s.append(t2 - t1)
        sizes.append(len(png))
    both = [a + b for a, b in zip(read_s, decode_s, strict=True)]
    return {
        "read": _stats(read_s),
        "decode": _stats(decode_s),
        "read_and_decode": _stats(both),
        "png_kb_median": statistics.median(sizes) / 1024 if sizes else None,
    }


def measure_memory(data_dir: Path | str, n_steps: int = 300, passes: int = 3) -> dict[str, Any]:
    """RSS before stepping, after each pass of `n_steps` clicks over different trajectories.

    Flat growth after the first pass shows that the viewer's caches are bounded.
    """
    import streamlit as st

    bench = _bench(Path(data_dir))
    tasks = _tasks_with_screenshots(bench)
    _open(tasks[0], 300)
    gc.collect()
    rss = [_rss_mb()]
    anon = [_anon_mb()]
    steps = 0
    offset = 0
    for _ in range(passes):
        run = step_through(n_steps, tasks[offset:] + tasks[:offset])
        offset = (offset + run["tasks"]) % len(tasks)
        steps += len(run["clicks"])
        gc.collect()
        rss.append(_rss_mb())
        anon.append(_anon_mb())
    st.cache_data.clear()
    gc.collect()
    return {
        "rss_mb": rss,
        "anon_mb": anon,
        "steps": steps,
        "growth_first_pass_mb": anon[1] - anon[0],
        "growth_after_first_pass_mb": anon[-1] - anon[1],
        "anon_after_clearing_caches_mb": _anon_mb(),
    }


def mirror_dir(data: Path | None, full: bool, tmp: Path) -> Path:
    """The mirror to measure: `data`, `data/full` (generated if absent) or a small temp one."""
    if data is not None:
        return data
    target = FULL_DIR if full else tmp / "mirror"
    if not (target / "README.md").exists():
        flags = ["--full"] if full else []
        print(f"Generating the {'full' if full else 'small'} mirror in {target}…", flush=True)
        subprocess.run(
            [sys.executable, "-m", "lib.mirror", str(target), *flags], cwd=ROOT, check=True
        )
    return target


def _fmt(value: float | None, unit: str = "ms") -> str:
    return "n/a" if value is None else f"{value:,.1f} {unit}"


def report(results: dict[str, Any]) -> str:
    """A Markdown table of the measurements."""
    switch = results["step_switch"]["step_switch"]
    switch_cpu = results["step_switch"]["step_switch_cpu"]
    fragment = results["step_switch"]["step_fragment"]
    fragment_cpu = results["step_switch"]["step_fragment_cpu"]
    opened = results["step_switch"]["task_open"]
    png = results["png"]["read_and_decode"]
    memory = results["memory"]
    ratio = (
        switch["median_ms"] / png["median_ms"] if switch["median_ms"] and png["median_ms"] else None
    )
    verdict = "yes" if switch["median_ms"] and switch["median_ms"] < TARGET_MS else "no"
    fragment_ratio = (
        fragment["median_ms"] / png["median_ms"]
        if fragment["median_ms"] and png["median_ms"]
        else None
    )
    rss = " → ".join(f"{v:,.0f}" for v in memory["rss_mb"])
    anon = " → ".join(f"{v:,.0f}" for v in memory["anon_mb"])
    rows = [
        ("Mirror", results["data"], ""),
        (
            f"Step switch, server time per Next click ({switch['n']} clicks, "
            f"{results['step_switch']['tasks']} trajectories)",
            f"median {_fmt(switch['median_ms'])}, p95 {_fmt(switch['p95_ms'])}",
            f"< {TARGET_MS:.0f} ms: {verdict}; process CPU median "
            f"{_fmt(switch_cpu['median_ms'])}, p95 {_fmt(switch_cpu['p95_ms'])}",
        ),
        (
            "Step switch, the step view fragment alone (what a browser's Next click reruns)",
            f"median {_fmt(fragment['median_ms'])}, p95 {_fmt(fragment['p95_ms'])}",
            f"script-thread CPU median {_fmt(fragment_cpu['median_ms'])}, "
            f"p95 {_fmt(fragment_cpu['p95_ms'])}",
        ),
        (
            "Open a trajectory (deep link, whole page)",
            f"median {_fmt(opened['median_ms'])}, p95 {_fmt(opened['p95_ms'])}",
            "",
        ),
        (
            f"Bare PNG read + decode ({png['n']} screenshots, median "
            f"{results['png']['png_kb_median']:,.0f} kB)",
            f"median {_fmt(png['median_ms'])}, p95 {_fmt(png['p95_ms'])}",
            f"read {_fmt(results['png']['read']['median_ms'])}, "
            f"decode {_fmt(results['png']['decode']['median_ms'])}",
        ),
        (
            "Ratio step switch / bare read + decode (medians)",
            f"whole page {_fmt(ratio, 'x')}, fragment {_fmt(fragment_ratio, 'x')}",
            "",
        ),
        (
            f"Anonymous RSS (RSS minus file-backed pages) before stepping → after each "
            f"pass ({memory['steps']} steps in all)",
            f"{anon} MB",
            f"growth after the first pass: {memory['growth_after_first_pass_mb']:+,.1f} MB",
        ),
        (
            "RSS incl. file-backed pages of the memory-mapped Arrow files",
            f"{rss} MB",
            "page cache of the screenshots read; the kernel reclaims it",
        ),
    ]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    rows.append(("Machine load (1-min average) / CPUs", f"{load:.1f} / {os.cpu_count()}", ""))
    lines = ["| measurement | value | note |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.viewer_speed", description=__doc__)
    parser.add_argument("--data", type=Path, help="an existing mirror folder")
    parser.add_argument("--full", action="store_true", help="use (or make) data/full")
    parser.add_argument("--steps", type=int, default=300, help="Next clicks per measurement")
    parser.add_argument("--passes", type=int, default=3, help="memory: passes of --steps")
    parser.add_argument("--png-samples", type=int, default=200)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="viewer-speed-") as tmp:
        data = mirror_dir(args.data, args.full, Path(tmp))
        results: dict[str, Any] = {"data": str(data)}
        results["png"] = measure_png_decode(data, args.png_samples)
        results["step_switch"] = measure_step_switch(data, args.steps)
        results["memory"] = measure_memory(data, args.steps, args.passes)
    print(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())

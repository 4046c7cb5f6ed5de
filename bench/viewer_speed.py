"""`python -m bench.viewer_speed [--data DIR | --full] [--steps N]`: the viewer in chromium.

Measures, with a real `streamlit run` server and Debian's chromium (as a user meets it):

- step -> next screenshot painted: from the input event's own timestamp (a Next `click`
  or an ArrowRight `keydown`, alternating; as INP measures) to the next paint after the
  new screenshot is in the page, loaded and decoded (`requestAnimationFrame`, then a task
  after it), over many steps of several trajectories;
- server script runs during the stepping (the app's run state observed in the page):
  the in-browser stepper (`ui.stepper`) must make none;
- switching to another trajectory inside the page (the task picker) until its first
  screenshot is painted, first visit and again once its screenshots are cached;
- the bare cost of reading and decoding one PNG on the server (`Bench.screenshot_png` +
  PIL), for scale.

Default: the small mirror, generated into a temporary folder. `--full` uses (and if
absent generates, several minutes) the full-size mirror in `data/full`. `--data DIR`
uses an existing mirror. `bench/run.py` imports `measure_step_switch` and
`measure_png_decode`; each returns a plain dict. The machine load is printed with the
figures (a shared 2-core machine).
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import percentile

ROOT = Path(__file__).resolve().parents[1]
FULL_DIR = ROOT / "data" / "full"
P50_TARGET_MS = 50.0
P90_TARGET_MS = 100.0
SWITCH_TARGET_MS = 500.0

HARNESS = """() => {
  const stepper = () => {
    for (const e of document.querySelectorAll('*')) {
      const box = e.shadowRoot && e.shadowRoot.querySelector('.stp');
      if (box) return box;
    }
    return null;
  };
  const shown = () => {
    const box = stepper();
    const img = box && box.querySelector('img.shotimg');
    return img ? `${box.getAttribute('data-task')}#${img.getAttribute('data-step')}` : '';
  };
  // the frame after the current one has been painted: rAF, then a task after it
  const painted = () => new Promise((r) => requestAnimationFrame(() => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => r();
    ch.port2.postMessage(0);
  }));
  // On each input event (capture phase, before the stepper's handler): wait until the
  // shown screenshot changes and is loaded and decoded, then for the next paint; the
  // result is ms from the event's own timestamp (INP's start) to that paint.
  const watch = (event) => {
    if (!['click', 'keydown'].includes(event.type)) return;
    const before = shown();
    const start = event.timeStamp;
    window.__result = (async () => {
      const end = performance.now() + 60000;
      while (performance.now() < end) {
        const now = shown();
        const box = stepper();
        const img = box && box.querySelector('img.shotimg');
        if (now && now !== before && img.complete && img.naturalWidth > 0) {
          try { await img.decode(); } catch (e) { /* painted as is */ }
          await painted();
          return {ms: performance.now() - start, shown: now};
        }
        await new Promise((r) => requestAnimationFrame(r));
      }
      return null;
    })();
  };
  document.addEventListener('click', watch, true);
  document.addEventListener('keydown', watch, true);
  window.__runs = 0;
  const app = document.querySelector('[data-testid=stApp]');
  new MutationObserver(() => {
    if (app.getAttribute('data-test-script-state') === 'running') window.__runs += 1;
  }).observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  window.__shown = shown;
}"""
"""Installed in the page: times input -> screenshot painted, and counts script runs."""

RESULT = "async () => { const r = await window.__result; window.__result = null; return r; }"


def _environment(data_dir: Path) -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["CUAVB_DATA"] = str(data_dir)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def _bench(data_dir: Path):
    _environment(data_dir)
    from lib.data.load import load_bench
    from lib.data.source import resolve

    return load_bench(resolve(str(data_dir)))


def _stats(ms: list[float]) -> dict[str, float | int | None]:
    return {
        "n": len(ms),
        "median_ms": percentile(ms, 50),
        "p90_ms": percentile(ms, 90),
        "p95_ms": percentile(ms, 95),
        "max_ms": max(ms) if ms else None,
    }


def _tasks_with_screenshots(bench, limit: int | None = None) -> list[tuple[str, int]]:
    """(task, screenshots) with at least three screenshots, alternating splits, longest first."""
    tasks = bench.tasks[bench.tasks["n_screenshots_stored"] >= 3]
    tasks = tasks.sort_values(["n_screenshots_stored", "task_id"], ascending=[False, True])
    by_split = [
        list(zip(g["task_id"], g["n_screenshots_stored"].astype(int), strict=True))
        for _, g in tasks.groupby("split")
    ]
    order: list[tuple[str, int]] = []
    while any(by_split):
        for ids in by_split:
            if ids:
                order.append(ids.pop(0))
    return order[:limit] if limit else order


def _load() -> float | None:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def _open(page: Any, url: str, task: str) -> None:
    from tests.helpers.browser import wait_for_run

    page.goto(f"{url}/Trajectory?task={task}&step=0")
    wait_for_run(page, timeout=300_000)
    page.evaluate(HARNESS)
    page.wait_for_function("(t) => window.__shown() === t + '#0'", arg=task, timeout=120_000)


def _measured(page: Any, expect: str) -> float | None:
    got = page.evaluate(RESULT)
    return got["ms"] if got and got["shown"] == expect else None


def _switch(page: Any, task: str) -> float | None:
    """Pick `task` in the task picker; ms from the Enter key to its first screenshot painted."""
    box = page.locator(".st-key-viewer_task input")
    box.click()
    box.fill(task)
    page.get_by_role("option").filter(has_text=task).first.wait_for()
    page.keyboard.press("Enter")
    return _measured(page, f"{task}#0")


def measure_browser(data_dir: Path | str, n_steps: int = 200, n_tasks: int = 6) -> dict[str, Any]:
    """Step and switch timings in chromium against a fresh server on `data_dir`."""
    from tests.helpers.browser import chromium, streamlit_server

    data_dir = Path(data_dir)
    bench = _bench(data_dir)
    tasks = _tasks_with_screenshots(bench, n_tasks)
    steps_ms: list[float] = []
    by: dict[str, list[float]] = {"click": [], "key": []}
    runs = 0
    load_before = _load()
    with streamlit_server({"CUAVB_DATA": str(data_dir)}, timeout=600) as url, chromium() as b:
        context = b.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.set_default_timeout(120_000)
        per_task = max(1, n_steps // len(tasks))
        for task, shots in tasks:
            _open(page, url, task)
            page.get_by_role("heading", name="Trajectory", exact=True).click()
            page.evaluate("window.__runs = 0")
            nxt = page.locator(".stp button.nav", has_text="Next")
            for step in range(1, min(shots, per_task + 1)):
                how = "click" if step % 2 else "key"
                if how == "click":
                    nxt.click()
                else:
                    page.keyboard.press("ArrowRight")
                got = _measured(page, f"{task}#{step}")
                if got is not None:
                    steps_ms.append(got)
                    by[how].append(got)
            runs += page.evaluate("window.__runs")
        # switching inside the page: a round of first visits, then the same again (cached)
        pair = [t for t, _ in tasks[:3]]
        _open(page, url, pair[0])
        first: list[float] = []
        cached: list[float] = []
        for round_ in (first, cached, cached):
            for task in pair[1:] + pair[:1]:
                got = _switch(page, task)
                if got is not None:
                    round_.append(got)
        context.close()
    return {
        "steps": _stats(steps_ms),
        "click": _stats(by["click"]),
        "key": _stats(by["key"]),
        "server_runs_while_stepping": runs,
        "switch_first": _stats(first),
        "switch_cached": _stats(cached),
        "tasks": len(tasks),
        "load": (load_before, _load()),
    }


def measure_step_switch(data_dir: Path | str, n_steps: int = 200) -> dict[str, Any]:
    """For `bench/run.py`: step -> screenshot painted in chromium (no server run per step)."""
    got = measure_browser(data_dir, n_steps)
    return {
        "step_switch": got["steps"],
        "step_fragment": None,
        "step_fragment_cpu": None,
        "tasks": got["tasks"],
        "browser": got,
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
        read_s.append((t1 - t0) * 1000)
        decode_s.append((t2 - t1) * 1000)
        sizes.append(len(png))
    both = [a + b for a, b in zip(read_s, decode_s, strict=True)]
    return {
        "read": _stats(read_s),
        "decode": _stats(decode_s),
        "read_and_decode": _stats(both),
        "png_kb_median": statistics.median(sizes) / 1024 if sizes else None,
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


def _dist(s: dict[str, Any]) -> str:
    return f"p50 {_fmt(s['median_ms'])}, p90 {_fmt(s['p90_ms'])}, max {_fmt(s['max_ms'])}"


def report(results: dict[str, Any]) -> str:
    """A Markdown table of the measurements."""
    b = results["browser"]
    png = results["png"]["read_and_decode"]
    steps = b["steps"]
    ok = (
        steps["median_ms"] is not None
        and steps["median_ms"] <= P50_TARGET_MS
        and (steps["p90_ms"] or 1e9) <= P90_TARGET_MS
    )
    cached = b["switch_cached"]
    switch_ok = cached["median_ms"] is not None and (cached["max_ms"] or 1e9) <= SWITCH_TARGET_MS
    load = " → ".join("n/a" if v is None else f"{v:.1f}" for v in b["load"])
    rows = [
        ("Mirror", results["data"], ""),
        (
            f"Step → next screenshot painted, chromium ({steps['n']} steps, {b['tasks']} "
            "trajectories, 1400x900)",
            _dist(steps),
            f"target p50 ≤ {P50_TARGET_MS:.0f} ms, p90 ≤ {P90_TARGET_MS:.0f} ms: "
            f"{'met' if ok else 'NOT met'}",
        ),
        ("… by Next click", _dist(b["click"]), f"n={b['click']['n']}"),
        ("… by ArrowRight key", _dist(b["key"]), f"n={b['key']['n']}"),
        (
            "Server script runs while stepping",
            str(b["server_runs_while_stepping"]),
            "target 0 (counted in the page)",
        ),
        (
            "Switch trajectory in the page (picker), first visit",
            _dist(b["switch_first"]),
            f"n={b['switch_first']['n']}",
        ),
        (
            "Switch trajectory in the page, screenshots cached",
            _dist(cached),
            f"target ≤ {SWITCH_TARGET_MS:.0f} ms: {'met' if switch_ok else 'NOT met'}",
        ),
        (
            f"Bare PNG read + decode on the server ({png['n']} screenshots, median "
            f"{results['png']['png_kb_median']:,.0f} kB)",
            f"p50 {_fmt(png['median_ms'])}, p90 {_fmt(png['p90_ms'])}",
            "for scale",
        ),
        ("Machine load (1-min average) before → after / CPUs", f"{load} / {os.cpu_count()}", ""),
    ]
    lines = ["| measurement | value | note |", "|---|---|---|"]
    lines += [f"| {a} | {v} | {c} |" for a, v, c in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.viewer_speed", description=__doc__)
    parser.add_argument("--data", type=Path, help="an existing mirror folder")
    parser.add_argument("--full", action="store_true", help="use (or make) data/full")
    parser.add_argument("--steps", type=int, default=200, help="steps measured in all")
    parser.add_argument("--tasks", type=int, default=6, help="trajectories stepped through")
    parser.add_argument("--png-samples", type=int, default=100)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="viewer-speed-") as tmp:
        data = mirror_dir(args.data, args.full, Path(tmp))
        results: dict[str, Any] = {"data": str(data)}
        results["png"] = measure_png_decode(data, args.png_samples)
        results["browser"] = measure_browser(data, args.steps, args.tasks)
    print(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`python -m bench.run [--quick | --full]`: memory and speed of the app, ours vs the naive way.

The real trajectories config is about 1.5 GB of inline PNGs and a Streamlit Community
Cloud app gets about 2.7 GB. This script measures, in one run on one mirror:

- peak resident memory of loading both configs x both splits our way
  (`lib.data.load_bench`: memory-mapped Arrow, image-free pandas frames) and the naive way
  (`load_dataset(...).to_pandas()` of everything, `bench/naive_app.py`), each in a fresh
  interpreter with the Arrow cache already on disk (the first, cache-building load of ours
  is reported on its own row);
- time from a cold `streamlit run` process to the home page rendered in a real browser
  (Playwright + Debian's chromium), then to the Agreement page, ours vs the naive app;
- server time per step switch in the trajectory viewer: the real server is started through
  `--serve`, which times every script run (wall and the script thread's CPU) while a
  browser clicks Next over many trajectories; and the bare cost of reading + decoding one
  PNG (`Bench.screenshot_png` + PIL), and their ratio;
- time to recompute the Agreement page (2,000 bootstrap resamples) with its caches cleared;
- resident memory of the app process right after start, after one session visited every
  page and stepped through the viewer, and after N more concurrent browser sessions.

`--quick` (default) runs on the small mirror (the demo's, written once per machine to
`~/.cache/cuavb-dashboard/`, see lib/source.py) with fewer steps and sessions, and
finishes in about a minute on an idle 2-core machine. `--full` runs on `data/full`
(generated with `python -m lib.mirror data/full --full` if absent: several minutes and
about 1.6 GB of disk). Every measurement that needs a clean peak runs in its own
interpreter (`--measure KIND`, printing one JSON line); each run uses a fresh Arrow
cache (`HF_DATASETS_CACHE`), deleted at the end. All traffic stays on 127.0.0.1.
Results are printed as a Markdown table and saved to `bench/out/<mode>.json`. Timings
are wall clock and noisy on a busy machine: CPU times are printed beside them.

Experiments: `BENCH_STREAMLIT_FLAGS="--runner.postScriptGC false"` passes flags to both
servers; `BENCH_PROFILE=FILE` writes a cProfile of the servers' fragment runs to FILE.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

ROOT = Path(__file__).resolve().parents[1]
FULL_DIR = ROOT / "data" / "full"
OUT_DIR = ROOT / "bench" / "out"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CACHE_ENV = "BENCH_ARROW_CACHE"  # read by bench/naive_app.py

TARGET_RATIO = 5.0
TARGET_PEAK_MB = 400.0
TARGET_FIRST_PAGE_S = 5.0
TARGET_STEP_MS = 100.0
TARGET_SESSION_MB = 20.0
CLOUD_MB = 2700.0

PAGE_ORDER = ("Agreement", "Judges", "Shifts", "Your verifier", "Trajectory")
"""Sidebar links a session clicks after the home page (Trajectory last: then it steps)."""


@dataclass(frozen=True)
class Settings:
    """How much each phase does. `budget_s` bounds each stepping phase in time."""

    mode: str
    steps: int  # Next clicks of the first session
    sessions: int  # concurrent sessions afterwards
    session_steps: int  # Next clicks of each concurrent session
    per_task: int  # Next clicks in one trajectory before moving to the next
    png_samples: int
    appstep_steps: int  # AppTest Next clicks (bench/viewer_speed.py); 0 = skip
    timeout_s: float  # one browser wait
    budget_s: float


QUICK = Settings("quick", steps=15, sessions=2, session_steps=5, per_task=5, png_samples=60,
                 appstep_steps=0, timeout_s=90, budget_s=30)  # fmt: skip
FULL = Settings("full", steps=300, sessions=20, session_steps=300, per_task=10,
                png_samples=400, appstep_steps=100, timeout_s=600, budget_s=1200)  # fmt: skip


# --------------------------------------------------------------------------- helpers


def proc_status(pid: int | str = "self") -> dict[str, float]:
    """VmRSS, VmHWM (peak RSS), RssAnon, RssFile of a process, in MB (Linux /proc)."""
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem"):
            out[key] = int(value.split()[0]) / 1024
    return out


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb() -> float:
    """This process's peak RSS. VmHWM, not ru_maxrss: on Linux ru_maxrss of an exec'ed child
    starts at its parent's RSS at fork time, which would inflate small peaks."""
    return proc_status()["VmHWM"]


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in [0, 100]); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summary(values: Sequence[float], scale: float = 1.0) -> dict[str, float | int | None]:
    scaled = [v * scale for v in values]
    return {"n": len(scaled), "median": percentile(scaled, 50), "p95": percentile(scaled, 95)}


# --------------------------------------------------------------------------- measurements
# Each runs in a fresh interpreter: `python -m bench.run --measure KIND --data DIR`.


def measure_load_ours(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Our loader: memory-mapped Arrow + image-free frames (the Arrow cache may be cold).

    With `--n N`, then the bare PNG cost over N screenshots (`png_cost`).
    """
    t0 = time.perf_counter()
    from lib.data import cache_dir_for, load_bench
    from lib.source import resolve

    imported = proc_status()
    t1, c1 = time.perf_counter(), time.process_time()
    bench = load_bench(resolve(str(folder)))
    t2, c2 = time.perf_counter(), time.process_time()
    now = proc_status()
    out = {
        "import_s": t1 - t0,
        "load_s": t2 - t1,
        "load_cpu_s": c2 - c1,
        "import_rss_mb": imported["VmRSS"],
        "peak_mb": peak_rss_mb(),
        "rss_mb": now["VmRSS"],
        "anon_mb": now["RssAnon"],
        "file_mb": now["RssFile"],
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

    imported = proc_status()
    t1, c1 = time.perf_counter(), time.process_time()
    frames = load_everything(str(folder), os.environ.get(CACHE_ENV) or None)
    t2, c2 = time.perf_counter(), time.process_time()
    now = proc_status()
    png_bytes = 0
    for cell in frames["trajectories"]["screenshots"]:
        for image in cell if cell is not None else ():
            png_bytes += len(image.get("bytes") or b"")
    return {
        "import_s": t1 - t0,
        "load_s": t2 - t1,
        "load_cpu_s": c2 - c1,
        "import_rss_mb": imported["VmRSS"],
        "peak_mb": peak_rss_mb(),
        "rss_mb": now["VmRSS"],
        "anon_mb": now["RssAnon"],
        "file_mb": now["RssFile"],
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
    from lib.data import load_bench
    from lib.labels import UV_PROCESS_THRESHOLD
    from lib.source import resolve
    from lib.vocab import N_RESAMPLES
    from tests.apptest import open_page

    out: dict[str, Any] = {"n_resamples": N_RESAMPLES}
    bench = load_bench(resolve(str(folder)))
    page_recompute(bench, UV_PROCESS_THRESHOLD, N_RESAMPLES)  # warm-up: imports, BLAS
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


# --------------------------------------------------------------------------- instrumented server


def serve(app: str, log_path: str, flags: list[str]) -> None:
    """`streamlit run APP FLAGS` with every script run timed into LOG_PATH (JSON lines).

    The patch wraps `ScriptRunner._run_script`, which handles one rerun request (widget
    callbacks included, fragment-only when the request names fragments). `cpu` is the
    script thread's CPU time, which other processes on a busy machine do not inflate.
    `post_*` is the part spent in `_on_script_finished` after the browser was told the run
    finished: media clean-up and, with `runner.postScriptGC` (the default), a full
    `gc.collect()`, which holds the GIL, so it delays serving the new image too.
    """
    from streamlit.runtime.scriptrunner import script_runner as sr

    lock = threading.Lock()
    original = sr.ScriptRunner._run_script

    profile_to = os.environ.get("BENCH_PROFILE")  # diagnosis: cProfile of fragment runs
    totals: list[Any] = []  # one pstats.Stats, summed over the fragment runs

    def run(self: Any, rerun_data: Any) -> None:
        if not (profile_to and rerun_data.fragment_id_queue):
            return original(self, rerun_data)
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        try:
            profiler.runcall(original, self, rerun_data)
        finally:
            with lock:
                if totals:
                    totals[0].add(profiler)
                else:
                    totals.append(pstats.Stats(profiler))
                totals[0].dump_stats(profile_to)

    post = threading.local()  # time in _on_script_finished (after "finished" is sent)
    original_finished = sr.ScriptRunner._on_script_finished

    def finished(self: Any, *args: Any, **kwargs: Any) -> None:
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            original_finished(self, *args, **kwargs)
        finally:
            post.wall = getattr(post, "wall", 0.0) + time.perf_counter() - t0
            post.cpu = getattr(post, "cpu", 0.0) + time.thread_time() - c0

    def timed(self: Any, rerun_data: Any) -> None:
        t0, c0 = time.perf_counter(), time.thread_time()
        post.wall = post.cpu = 0.0
        try:
            run(self, rerun_data)
        finally:
            record = {
                "end": time.time(),
                "wall": time.perf_counter() - t0,
                "cpu": time.thread_time() - c0,
                "post_wall": post.wall,
                "post_cpu": post.cpu,
                "fragment": bool(rerun_data.fragment_id_queue),
                "session": getattr(self, "_session_id", ""),
            }
            with lock, open(log_path, "a") as fh:
                fh.write(json.dumps(record) + "\n")

    sr.ScriptRunner._run_script = timed
    sr.ScriptRunner._on_script_finished = finished
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", app, *flags]
    cli.main()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """An instrumented `streamlit run` on a free loopback port."""

    def __init__(self, app: str, env: dict[str, str], workdir: Path, name: str) -> None:
        self.app, self.env, self.name = app, env, name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / f"{name}-runs.jsonl"
        self.out = workdir / f"{name}-server.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float) -> None:
        flags = [
            "--server.port",
            str(self.port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
        ]
        flags += os.environ.get("BENCH_STREAMLIT_FLAGS", "").split()  # experiments
        cmd = [sys.executable, "-m", "bench.run", "--serve", self.app, str(self.log), *flags]
        with self.out.open("w") as out:
            self.proc = subprocess.Popen(
                cmd, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=1) as r:
                    if r.read() == b"ok":
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} server did not start: {self.out.read_text()}")
            time.sleep(0.05)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def memory(self) -> dict[str, float]:
        return proc_status(self.pid)

    def runs(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# --------------------------------------------------------------------------- browser driving

IDLE_JS = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute('data-test-connection-state') !== 'CONNECTED') return false;
  if (app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector("[data-testid='stSkeleton']")) return false;
  return [...document.querySelectorAll("[data-testid='stMain'] img")].every(i => i.complete);
}"""
"""Connected, script idle, no skeleton, every image of the main area loaded."""

TITLE_JS = """(prev) => {
  const h = document.querySelector("[data-testid='stMain'] h1");
  const text = h ? h.innerText.trim() : '';
  return text !== '' && text !== prev;
}"""
"""A page title (h1) is shown and differs from the previous page's."""


async def wait_idle(page: Any, timeout_s: float) -> None:
    await page.wait_for_timeout(50)
    await page.wait_for_function(IDLE_JS, timeout=timeout_s * 1000, polling=50)


async def title(page: Any) -> str:
    h1 = page.locator("[data-testid='stMain'] h1").first
    return (await h1.inner_text()).strip() if await h1.count() else ""


async def rendered(page: Any, previous_title: str, timeout_s: float) -> str:
    """Wait until a new page title is shown and the run is idle; return the title."""
    await page.wait_for_function(TITLE_JS, arg=previous_title, timeout=timeout_s * 1000, polling=50)
    await wait_idle(page, timeout_s)
    return await title(page)


async def visit(page: Any, link_text: str, timeout_s: float) -> float:
    """Click a sidebar page link and wait for that page to be drawn; seconds taken."""
    before = await title(page)
    link = page.locator("[data-testid='stSidebarNavLink']", has_text=link_text).first
    t0 = time.perf_counter()
    await link.click()
    await rendered(page, before, timeout_s)
    return time.perf_counter() - t0


def query(page: Any) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlparse(page.url).query).items()}


async def switch_task(page: Any, presses: int, timeout_s: float) -> None:
    """Pick another trajectory in the viewer's task box (ArrowDown `presses` times)."""
    before = query(page).get("task", "")
    box = page.get_by_role("combobox", name=re.compile(r"^Task"))
    await box.click()
    for _ in range(presses):
        await page.keyboard.press("ArrowDown")
    await page.keyboard.press("Enter")
    await page.wait_for_function(
        "(t) => { const v = new URLSearchParams(location.search).get('task');"
        " return v !== null && v !== t; }",
        arg=before,
        timeout=timeout_s * 1000,
    )
    await wait_idle(page, timeout_s)


async def step_through(
    page: Any,
    steps: int,
    deadline: float,
    timeout_s: float,
    first_switch: int = 0,
    per_task: int = 10,
) -> dict[str, Any]:
    """Click Next `steps` times, moving to the next trajectory after `per_task` steps or at
    its end; returns the client-side latencies and how many trajectories were seen."""
    button = page.locator(".st-key-viewer_next button")
    latencies: list[float] = []
    tasks: set[str] = set()
    switches = 0
    if first_switch:
        await switch_task(page, first_switch, timeout_s)
    in_task = 0
    while len(latencies) < steps and time.perf_counter() < deadline:
        params = query(page)
        tasks.add(params.get("task", ""))
        if in_task >= per_task or await button.count() == 0 or await button.is_disabled():
            await switch_task(page, 1, timeout_s)
            switches += 1
            in_task = 0
            if switches > steps:
                break
            continue
        step = int(params.get("step", "0"))
        t0 = time.perf_counter()
        await button.click()
        await page.wait_for_function(
            "(s) => new URLSearchParams(location.search).get('step') === s",
            arg=str(step + 1),
            timeout=timeout_s * 1000,
        )
        await wait_idle(page, timeout_s)
        latencies.append(time.perf_counter() - t0)
        in_task += 1
    return {"steps": len(latencies), "latency": latencies, "tasks": len(tasks),
            "switches": switches}  # fmt: skip


async def upload(page: Any, csv: Path, timeout_s: float) -> bool:
    """Upload the mirror's sample predictions on the Your verifier page; True if confirmed.

    Confirmed = the page's "No verifier uploaded …" notice went away.
    """
    field = page.locator("[data-testid='stFileUploaderDropzoneInput']").first
    await field.set_input_files(str(csv))
    try:
        await page.get_by_text("No verifier uploaded").first.wait_for(
            state="detached", timeout=min(timeout_s, 60) * 1000
        )
        done = True
    except Exception:
        done = False
    await wait_idle(page, timeout_s)
    return done


async def one_session(
    browser: Any,
    url: str,
    s: Settings,
    steps: int,
    first_switch: int,
    csv: Path | None,
) -> tuple[Any, dict[str, Any]]:
    """A browser session: home, every page, an upload, then steps in the viewer.

    Returns the still open context (its server session stays alive) and what it did.
    """
    context = await new_context(browser, s)
    result: dict[str, Any] = {"pages": {}}
    try:
        page = await context.new_page()
        t0 = time.perf_counter()
        await page.goto(url, wait_until="commit")
        await rendered(page, "", s.timeout_s)
        result["pages"]["Home"] = time.perf_counter() - t0
        for link in PAGE_ORDER:
            result["pages"][link] = await visit(page, link, s.timeout_s)
            if link == "Your verifier" and csv is not None:
                result["uploaded"] = await upload(page, csv, s.timeout_s)
        deadline = time.perf_counter() + s.budget_s  # the stepping part is bounded in time
        result.update(
            await step_through(page, steps, deadline, s.timeout_s, first_switch, s.per_task)
        )
    except Exception as exc:
        result["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    return context, result


async def new_context(browser: Any, s: Settings) -> Any:
    """A browser context (one user) whose every wait allows `s.timeout_s`."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(s.timeout_s * 1000)
    context.set_default_navigation_timeout(s.timeout_s * 1000)
    return context


async def launch_browser(p: Any) -> Any:
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: apt-get install -y chromium")
    return await p.chromium.launch(
        executable_path=CHROMIUM,
        headless=True,
        args=["--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-quic"],
    )


async def cold_start(browser: Any, server: Server, s: Settings) -> tuple[Any, Any, dict[str, Any]]:
    """Start the server, open the home page, then the Agreement page; time both."""
    context = await new_context(browser, s)
    page = await context.new_page()
    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    server.start(s.timeout_s)
    out["health_s"] = time.perf_counter() - t0
    out["mem_start"] = server.memory()
    await page.goto(server.url, wait_until="commit")
    await rendered(page, "", s.timeout_s)
    out["home_s"] = time.perf_counter() - t0
    out["home_server_cpu_s"] = proc_cpu_s(server.pid)
    out["mem_home"] = server.memory()
    c0 = proc_cpu_s(server.pid)
    out["agreement_s"] = await visit(page, "Agreement", s.timeout_s)
    out["agreement_server_cpu_s"] = proc_cpu_s(server.pid) - c0
    out["agreement_total_s"] = time.perf_counter() - t0
    out["mem_agreement"] = server.memory()
    return context, page, out


async def browser_phase(
    folder: Path, env: dict[str, str], s: Settings, workdir: Path
) -> dict[str, Any]:
    """Cold starts (naive, then ours), then the session memory run on our server."""
    from playwright.async_api import async_playwright

    out: dict[str, Any] = {}
    csv = folder / "sample_predictions.csv"
    csv_or_none = csv if csv.exists() else None
    async with async_playwright() as p:
        browser = await launch_browser(p)
        try:
            naive = Server(str(ROOT / "bench" / "naive_app.py"), env, workdir, "naive")
            try:
                context, _, out["naive"] = await cold_start(browser, naive, s)
                out["naive"]["mem_peak"] = naive.memory()["VmHWM"]
                await context.close()
            except Exception as exc:
                out["naive"] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0]}"}
            finally:
                naive.stop()

            ours = Server("app.py", env, workdir, "ours")
            try:
                out["ours"] = await our_sessions(browser, ours, s, csv_or_none)
            except Exception as exc:
                out.setdefault("ours", {})
                out["ours"]["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
            finally:
                ours.stop()
        finally:
            await browser.close()
    return out


async def our_sessions(browser: Any, server: Server, s: Settings, csv: Path | None) -> dict:
    """Cold start, one full session with steps, then `s.sessions` concurrent ones."""
    context, page, out = await cold_start(browser, server, s)
    out["pages"] = {"Agreement": out["agreement_s"]}
    for link in PAGE_ORDER[1:]:
        out["pages"][link] = await visit(page, link, s.timeout_s)
        if link == "Your verifier" and csv is not None:
            out["uploaded"] = await upload(page, csv, s.timeout_s)
    runs_before = len(server.runs())
    deadline = time.perf_counter() + s.budget_s
    one = await step_through(page, s.steps, deadline, s.timeout_s, per_task=s.per_task)
    await page.wait_for_timeout(300)
    step_runs = [r for r in server.runs()[runs_before:] if r["fragment"]]
    out["one"] = {
        **one,
        "server_ms": summary([r["wall"] for r in step_runs], 1e3),
        "server_cpu_ms": summary([r["cpu"] for r in step_runs], 1e3),
        "script_ms": summary([r["wall"] - r.get("post_wall", 0) for r in step_runs], 1e3),
        "script_cpu_ms": summary([r["cpu"] - r.get("post_cpu", 0) for r in step_runs], 1e3),
        "client_ms": summary(one["latency"], 1e3),
    }
    del out["one"]["latency"]
    out["mem_one"] = server.memory()

    runs_before = len(server.runs())
    t0 = time.perf_counter()
    results = await asyncio.gather(
        *(
            one_session(browser, server.url, s, s.session_steps, 2 + 7 * i, csv)
            for i in range(s.sessions)
        )
    )
    out["many_s"] = time.perf_counter() - t0
    await asyncio.sleep(1.0)
    out["mem_many"] = server.memory()
    many_runs = [r for r in server.runs()[runs_before:] if r["fragment"]]
    out["many"] = {
        "sessions": s.sessions,
        "ok": sum("error" not in r for _, r in results),
        "errors": [r["error"] for _, r in results if "error" in r][:3],
        "steps": [r.get("steps", 0) for _, r in results],
        "uploaded": sum(bool(r.get("uploaded")) for _, r in results),
        "tasks": sum(r.get("tasks", 0) for _, r in results),
        "server_ms": summary([r["wall"] for r in many_runs], 1e3),
        "server_cpu_ms": summary([r["cpu"] for r in many_runs], 1e3),
    }
    for ctx, _ in results:
        await ctx.close()
    await context.close()
    out["mem_peak"] = server.memory()["VmHWM"]
    return out


# --------------------------------------------------------------------------- the run


def prepare_mirror(args: argparse.Namespace, s: Settings) -> Path:
    """The mirror folder; generated in a child process so this one stays light."""
    if args.data:
        folder = Path(args.data).resolve()
        if not (folder / "README.md").exists():
            raise SystemExit(f"{folder} is not a mirror (no README.md)")
        return folder
    if s.mode == "quick":  # the demo is the small mirror (seed 0), written once per machine
        code = "from lib.source import ensure_demo; print(ensure_demo())"
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                             text=True, check=True)  # fmt: skip
        return Path(out.stdout.strip().splitlines()[-1])
    if not (FULL_DIR / "README.md").exists():
        print(f"writing the full mirror to {FULL_DIR} …", file=sys.stderr, flush=True)
        cmd = [sys.executable, "-m", "lib.mirror", str(FULL_DIR), "--full"]
        subprocess.run(cmd, cwd=ROOT, check=True)
    return FULL_DIR


def folder_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def run_all(args: argparse.Namespace, s: Settings) -> dict[str, Any]:
    started = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="cuavb-bench-"))
    results: dict[str, Any] = {"settings": asdict(s), "load_before": os.getloadavg()}
    try:
        folder = prepare_mirror(args, s)
        results["mirror"] = {"path": str(folder), "mb": folder_mb(folder)}
        # a fresh Arrow cache per run (on the mirror's disk for --full)
        cache_root = (folder.parent if s.mode == "full" else tmp) / f".bench-cache-{os.getpid()}"
        env = {
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_CACHE": str(cache_root),
            "CUAVB_DATA": str(folder),
            "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
        }
        env.pop("CUAVB_RAISE_ERRORS", None)
        try:

            def step(what: str) -> None:
                print(
                    f"[{time.perf_counter() - started:5.0f} s] {what}", file=sys.stderr, flush=True
                )

            step("load ours, first (builds the Arrow cache)")
            results["first_load"] = run_measure("load-ours", folder, env)
            env[CACHE_ENV] = results["first_load"].get("cache_dir", "")
            step("load ours (cache on disk), then the bare PNG cost")
            results["ours_load"] = run_measure("load-ours", folder, env, n=s.png_samples)
            results["png"] = results["ours_load"].pop("png", None) or results["ours_load"]
            step("load naive (cache on disk)")
            results["naive_load"] = run_measure("load-naive", folder, env)
            if s.appstep_steps:
                step("viewer step switch with AppTest (bench/viewer_speed.py)")
                results["appstep"] = run_measure("appstep", folder, env, n=s.appstep_steps)
            else:
                results["appstep"] = {"error": "skipped in --quick (slow whole-page reruns)"}
            step("agreement recompute")
            results["agreement"] = run_measure("agreement", folder, env)
            step("browsers: cold starts, sessions")
            try:
                results["browser"] = asyncio.run(browser_phase(folder, env, s, tmp))
            except Exception as exc:
                results["browser"] = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            shutil.rmtree(cache_root, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    results["load_after"] = os.getloadavg()
    results["elapsed_s"] = time.perf_counter() - started
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    results["cpu_s"] = sum(u.ru_utime + u.ru_stime for u in usage)
    return results


# --------------------------------------------------------------------------- the table


def _get(d: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(d, dict) or key not in d:
            return None
        d = d[key]
    return d


def _why(*parts: Any) -> str:
    for part in parts:
        if isinstance(part, dict) and "error" in part:
            return f"n/a: {part['error']}"[:160]
    return "n/a: not measured"


def _mb(v: float | None) -> str | None:
    return None if v is None else f"{v:,.0f} MB"


def _s(v: float | None, cpu: float | None = None, what: str = "cpu") -> str | None:
    if v is None:
        return None
    return f"{v:.2f} s" + (f" ({what} {cpu:.2f} s)" if cpu is not None else "")


def _ms(stats: dict | None, cpu: dict | None = None) -> str | None:
    if not stats or not stats.get("n"):
        return None
    text = f"median {stats['median']:.1f} ms, p95 {stats['p95']:.1f} ms"
    if cpu and cpu.get("n"):
        text += f" (cpu {cpu['median']:.1f} / {cpu['p95']:.1f} ms)"
    return text


def _met(ok: bool | None) -> str:
    return "–" if ok is None else ("yes" if ok else "**no**")


def table_rows(r: dict[str, Any]) -> list[list[str]]:
    """The rows of the results table: measure, ours, naive, ratio, target, met."""
    s = r.get("settings", {})
    quick = s.get("mode") == "quick"  # a few MB of PNGs: the memory ratio says nothing
    ours_load, naive_load, first = r.get("ours_load"), r.get("naive_load"), r.get("first_load")
    png, agr = r.get("png"), r.get("agreement")
    browser = r.get("browser") or {}
    ours_b, naive_b = browser.get("ours") or browser, browser.get("naive") or browser
    rows: list[list[str]] = []

    def add(
        measure: str,
        ours: Any,
        naive: Any = "–",
        ratio: str = "–",
        target: str = "–",
        met: bool | None = None,
        why: tuple = (),
    ) -> None:
        ours_text = ours if ours is not None else _why(*why)
        rows.append(
            [
                measure,
                ours_text,
                naive if naive is not None else _why(*why),
                ratio,
                target,
                _met(met),
            ]
        )

    o_peak, n_peak = _get(ours_load, "peak_mb"), _get(naive_load, "peak_mb")
    ratio = n_peak / o_peak if o_peak and n_peak else None
    add(
        "Peak RSS: load 2 configs × 2 splits (fresh process, Arrow cache on disk)",
        _mb(o_peak),
        _mb(n_peak),
        f"{ratio:.1f}× less" if ratio else "–",
        f"≥ {TARGET_RATIO:.0f}× less, ours < {TARGET_PEAK_MB:.0f} MB"
        + (" (the ratio: --full only)" if quick else ""),
        None if ratio is None else (quick or ratio >= TARGET_RATIO) and o_peak < TARGET_PEAK_MB,
        (ours_load, naive_load),
    )
    add(
        "  … of which the interpreter + imports",
        _mb(_get(ours_load, "import_rss_mb")),
        _mb(_get(naive_load, "import_rss_mb")),
        why=(ours_load, naive_load),
    )
    add(
        "Load time, same (wall; cpu)",
        _s(_get(ours_load, "load_s"), _get(ours_load, "load_cpu_s")),
        _s(_get(naive_load, "load_s"), _get(naive_load, "load_cpu_s")),
        why=(ours_load, naive_load),
    )
    add(
        "First load, building the Arrow cache (wall; peak RSS)",
        None
        if _get(first, "load_s") is None
        else f"{_s(first['load_s'], first['load_cpu_s'])}; {_mb(first['peak_mb'])}",
        why=(first,),
    )

    home_o, home_n = _get(ours_b, "home_s"), _get(naive_b, "home_s")
    add(
        "Cold process → home page rendered in chromium",
        _s(home_o, _get(ours_b, "home_server_cpu_s"), "server cpu"),
        _s(home_n, _get(naive_b, "home_server_cpu_s"), "server cpu"),
        f"{home_n / home_o:.1f}× faster" if home_o and home_n else "–",
        f"< {TARGET_FIRST_PAGE_S:.0f} s",
        None if home_o is None else home_o < TARGET_FIRST_PAGE_S,
        (ours_b, naive_b),
    )
    agr_o, agr_n = _get(ours_b, "agreement_s"), _get(naive_b, "agreement_s")
    add(
        "… then Agreement page rendered (sidebar click)",
        _s(agr_o, _get(ours_b, "agreement_server_cpu_s"), "server cpu"),
        _s(agr_n, _get(naive_b, "agreement_server_cpu_s"), "server cpu"),
        target=f"< {TARGET_FIRST_PAGE_S:.0f} s",
        met=None if agr_o is None else agr_o < TARGET_FIRST_PAGE_S,
        why=(ours_b, naive_b),
    )

    one = _get(ours_b, "one")
    server_ms = _get(one, "server_ms")
    steps_text = f"{one['steps']} steps, {one['tasks']} trajectories" if one else ""
    add(
        f"Step switch, server time per Next click ({steps_text})",
        _ms(server_ms, _get(one, "server_cpu_ms")),
        target=f"median < {TARGET_STEP_MS:.0f} ms",
        met=None
        if not server_ms or not server_ms.get("n")
        else server_ms["median"] < TARGET_STEP_MS,
        why=(ours_b,),
    )
    add(
        "  … of which the run itself, before the post-run clean-up (gc.collect)",
        _ms(_get(one, "script_ms"), _get(one, "script_cpu_ms")),
        why=(ours_b,),
    )
    appstep = r.get("appstep")
    add(
        f"  … AppTest, whole page; step_view fragment alone (bench/viewer_speed.py, "
        f"{_get(appstep, 'ms', 'n')} clicks, {_get(appstep, 'tasks')} trajectories)",
        None
        if not _get(appstep, "ms")
        else f"{_ms(_get(appstep, 'ms'))}; "
        + (_ms(_get(appstep, "fragment_ms"), _get(appstep, "fragment_cpu_ms")) or "n/a"),
        why=(appstep,),
    )
    total = _get(png, "total_ms")
    cpu_mean = _get(png, "cpu_mean_ms")
    add(
        f"Bare PNG read + decode ({_get(png, 'total_ms', 'n')} screenshots, "
        f"median {_get(png, 'png_kb') or 0:,.0f} kB)",
        None
        if not total
        else _ms(total) + ("" if cpu_mean is None else f" (cpu mean {cpu_mean:.1f} ms)"),
        why=(png,),
    )
    ratio_text = None
    if server_ms and server_ms.get("n") and total and total.get("n"):
        ratio_text = f"{server_ms['median'] / total['median']:.1f}× (medians)"
    add("Step switch ÷ bare PNG", ratio_text, why=(png, ours_b))
    add(
        "Step switch in the browser, click → image shown (client)",
        _ms(_get(one, "client_ms")),
        why=(ours_b,),
    )
    many = _get(ours_b, "many")
    if many:
        add(
            f"Step switch, server time with {many['sessions']} concurrent sessions",
            _ms(_get(many, "server_ms"), _get(many, "server_cpu_ms")),
            why=(ours_b,),
        )

    add(
        f"Agreement page recompute, {_get(agr, 'n_resamples') or 2000:,} resamples "
        "(AppTest, cache cleared)",
        _s(_get(agr, "recompute_s"), _get(agr, "recompute_cpu_s")),
        why=(agr,),
    )
    add(
        "  … computation alone (bench/agreement_speed.py page_recompute, median of 3)",
        _s(_get(agr, "lib_s"), _get(agr, "lib_cpu_s")),
        why=(_get(agr, "lib"), agr),
    )
    add("  … page rerun with its caches warm (AppTest)", _s(_get(agr, "cached_s")), why=(agr,))

    start = _get(ours_b, "mem_start", "VmRSS")
    add(
        "App RSS right after start",
        _mb(start),
        _mb(_get(naive_b, "mem_start", "VmRSS")),
        why=(ours_b, naive_b),
    )
    add(
        "App RSS after the first page (data loaded)",
        _mb(_get(ours_b, "mem_home", "VmRSS")),
        _mb(_get(naive_b, "mem_home", "VmRSS")),
        why=(ours_b, naive_b),
    )
    mem_one = _get(ours_b, "mem_one", "VmRSS")
    add(
        f"App RSS after 1 session: every page + {_get(one, 'steps') or s.get('steps')} steps",
        None if mem_one is None else f"{mem_one:,.0f} MB (+{mem_one - start:,.0f})",
        why=(ours_b,),
    )
    mem_many = _get(ours_b, "mem_many", "VmRSS")
    if many:
        steps = many["steps"]
        label = (
            f"App RSS after +{many['sessions']} concurrent sessions ({many['ok']} ok, "
            f"{min(steps)}–{max(steps)} steps each)"
        )
    else:
        label = f"App RSS after +{s.get('sessions')} concurrent sessions"
    add(
        label,
        None if mem_many is None else f"{mem_many:,.0f} MB (+{mem_many - start:,.0f})",
        why=(ours_b,),
    )
    per = per_anon = None
    if mem_many is not None and mem_one is not None and many and many.get("ok"):
        sessions = max(many["sessions"], 1)
        per = (mem_many - mem_one) / sessions
        anon = _get(ours_b, "mem_many", "RssAnon"), _get(ours_b, "mem_one", "RssAnon")
        per_anon = (anon[0] - anon[1]) / sessions
    add(
        "Memory growth per extra session (RSS; anonymous only)",
        None if per is None else f"{per:.1f} MB; {per_anon:.1f} MB",
        target=f"< {TARGET_SESSION_MB:.0f} MB",
        met=None if per is None else per < TARGET_SESSION_MB,
        why=(ours_b, {"error": "no concurrent session completed"} if many else None),
    )
    peak_o, peak_n = _get(ours_b, "mem_peak"), _get(naive_b, "mem_peak")
    add(
        "App peak RSS (VmHWM): ours over all the above, naive over its two pages",
        _mb(peak_o),
        _mb(peak_n),
        f"{peak_n / peak_o:.1f}× less" if peak_o and peak_n else "–",
        f"< {CLOUD_MB:,.0f} MB (Cloud)",
        None if peak_o is None else peak_o < CLOUD_MB,
        (ours_b, naive_b),
    )
    return rows


def render_table(r: dict[str, Any]) -> str:
    header = ["measure", "ours", "naive", "ratio", "target", "met?"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += [
        "| " + " | ".join(str(c).replace("|", "/") for c in row) + " |" for row in table_rows(r)
    ]
    return "\n".join(lines)


def render_notes(r: dict[str, Any]) -> str:
    """Context that limits the figures: machine, load, anon vs file-backed memory."""
    ours_b = _get(r, "browser", "ours") or {}
    notes = [
        f"mode {r['settings']['mode']}, mirror {r['mirror']['path']} "
        f"({r['mirror']['mb']:,.0f} MB), {os.cpu_count()} cores, "
        f"python {platform.python_version()}, load average "
        f"{r['load_before'][0]:.1f} before / {r['load_after'][0]:.1f} after, "
        f"run took {r['elapsed_s']:.0f} s and {r.get('cpu_s', 0):.0f} CPU-seconds "
        "(this process, the measurements, both servers and chromium)",
    ]
    for name, key in (("ours", "ours_load"), ("naive", "naive_load")):
        load = r.get(key) or {}
        if "anon_mb" in load:
            held = load.get("png_mb_held")
            extra = f", PNG bytes held {held:,.0f} MB" if held is not None else ""
            notes.append(
                f"{name} load: RSS after load {load['rss_mb']:,.0f} MB = "
                f"{load['anon_mb']:,.0f} MB anonymous + {load['file_mb']:,.0f} MB "
                f"file-backed (memory-mapped Arrow pages){extra}"
            )
    for label, key in (("start", "mem_start"), ("1 session", "mem_one"), ("all", "mem_many")):
        mem = ours_b.get(key)
        if mem:
            notes.append(
                f"app {label}: anonymous {mem['RssAnon']:,.0f} MB, "
                f"file-backed {mem['RssFile']:,.0f} MB"
            )
    many = ours_b.get("many")
    if "uploaded" in ours_b:
        notes.append(
            f"sample predictions uploaded on Your verifier: first session "
            f"{'confirmed' if ours_b['uploaded'] else 'NOT confirmed'}"
            + (
                f", concurrent sessions {many.get('uploaded', 0)}/{many['sessions']}"
                if many
                else ""
            )
        )
    if many and many.get("errors"):
        notes.append("session errors: " + "; ".join(many["errors"]))
    if ours_b.get("pages"):
        pages = ", ".join(f"{k} {v:.1f} s" for k, v in ours_b["pages"].items())
        notes.append(f"first visit of each page (first session): {pages}")
    return "\n".join(f"- {n}" for n in notes)


# --------------------------------------------------------------------------- CLI


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--serve"]:
        serve(argv[1], argv[2], argv[3:])
        return 0
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small mirror, < 1 min (default)")
    mode.add_argument("--full", action="store_true", help="data/full mirror (~1.6 GB)")
    parser.add_argument("--data", help="use this mirror folder instead")
    parser.add_argument("--steps", type=int, help="Next clicks of the first session")
    parser.add_argument("--sessions", type=int, help="concurrent sessions")
    parser.add_argument("--session-steps", type=int, help="Next clicks per concurrent session")
    parser.add_argument("--json", type=Path, help="where to save results (default bench/out/)")
    parser.add_argument("--table", type=Path, help="only print the table of saved results")
    parser.add_argument("--measure", choices=sorted(MEASURES), help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(MEASURES[args.measure](Path(args.data), args)), flush=True)
        return 0
    if args.table:
        saved = json.loads(args.table.read_text())
        print(render_table(saved) + "\n\n" + render_notes(saved))
        return 0
    s = FULL if args.full else QUICK
    overrides = {
        k: v
        for k, v in (
            ("steps", args.steps),
            ("sessions", args.sessions),
            ("session_steps", args.session_steps),
        )
        if v is not None
    }
    s = Settings(**{**asdict(s), **overrides})
    results = run_all(args, s)
    out = args.json or OUT_DIR / f"{s.mode}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1, default=str))
    print(render_table(results))
    print()
    print(render_notes(results))
    print(f"\n(raw results: {out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

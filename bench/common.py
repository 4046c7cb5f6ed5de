"""Settings, targets and process statistics shared by the benchmark modules (`bench.run`),
and the options and data of the compute benchmarks (`compute_arguments`, `compute_bench`).

Part of `python -m bench.run` (see its docstring).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

if TYPE_CHECKING:
    from lib.data.load import Bench

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

MB = 1024 * 1024


def proc_status(pid: int | str = "self") -> dict[str, float]:
    """VmRSS, VmHWM (peak RSS), RssAnon, RssFile of a process, in MB.

    psutil gives the resident set and its file-backed share; the peak (VmHWM) it does not
    expose, so that one value is read from /proc. Not ru_maxrss: on Linux ru_maxrss of an
    exec'ed child starts at its parent's RSS at fork time, which would inflate small peaks.
    """
    process = psutil.Process(None if pid == "self" else int(pid))
    info = process.memory_info()
    out = {
        "VmRSS": info.rss / MB,
        "RssFile": info.shared / MB,
        "RssAnon": (info.rss - info.shared) / MB,
    }
    for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            out["VmHWM"] = int(line.split()[1]) / 1024
    return out


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM)."""
    return proc_status()["VmHWM"]


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in [0, 100], numpy's default); None for no values."""
    if not values:
        return None
    if len(values) == 1:
        return float(values[0])
    if q == 100:
        return float(max(values))
    cuts = statistics.quantiles(values, n=1000, method="inclusive")
    return cuts[round(q * 10) - 1] if q > 0 else float(min(values))


def summary(values: Sequence[float], scale: float = 1.0) -> dict[str, float | int | None]:
    scaled = [v * scale for v in values]
    return {"n": len(scaled), "median": percentile(scaled, 50), "p95": percentile(scaled, 95)}


def compute_arguments(description: str, argv: list[str] | None = None) -> argparse.Namespace:
    """``--data``, ``--runs`` and ``--resamples``: the options of every compute benchmark
    (bench/agreement_speed.py, bench/slices_speed.py), spelled once so they stay alike."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data", help="a source as in CUAVB_DATA (default: a fresh mirror)")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--resamples", type=int, default=2000)
    return parser.parse_args(argv)


@contextmanager
def compute_bench(data: str | None) -> Iterator[Bench]:
    """The loaded ``data`` source (as in CUAVB_DATA), or without it a fresh default mirror
    (the demo's) in a temporary folder removed on exit: what the compute benchmarks time."""
    from lib.data.load import load_bench
    from lib.data.source import resolve

    with tempfile.TemporaryDirectory() as tmp:
        if data:
            source = data
        else:
            from lib import mirror

            source = str(mirror.write_mirror(Path(tmp) / "mirror", full=False, seed=0))
        yield load_bench(resolve(source))


@contextmanager
def codes_to_measure(before: str | None) -> Iterator[dict[str, Path]]:
    """{label: source tree}: "now" (this checkout), and with `before` (a git revision) that
    revision's tree too, extracted to a temporary folder without its `bench/` (this
    checkout's bench measures both), so one invocation compares them side by side under
    the same load. The folder is removed on exit."""
    if not before:
        yield {"now": ROOT}
        return
    with tempfile.TemporaryDirectory(prefix="bench-before-") as tmp:
        archive = subprocess.run(
            ["git", "archive", before], cwd=ROOT, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp, "--exclude=bench"], input=archive, check=True)
        yield {f"before ({before})": Path(tmp), "now": ROOT}


def child_figures(done: subprocess.CompletedProcess[str]) -> dict:
    """A benchmark child's figures: the JSON of its last stdout line, or {"error": ...}
    with its last stderr line when it failed or printed nothing."""
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = done.stderr.strip().splitlines()[-1:]
        return {"error": tail[0][:160] if tail else f"exit {done.returncode}"}
    return json.loads(lines[-1])


def interleaved_runs(
    codes: dict[str, Path], runs: int, one_run: Callable[[Path], dict]
) -> dict[str, list[dict]]:
    """`runs` rounds of `one_run(code)` over every tree of `codes_to_measure`, interleaved so
    both see the same load; each result on stderr as it comes (a `profile` entry printed
    whole after it), then the load average before and after on stdout."""
    results: dict[str, list[dict]] = {}
    load = os.getloadavg()
    for _ in range(runs):
        for label, code in codes.items():
            r = one_run(code)
            results.setdefault(label, []).append(r)
            brief = {k: v for k, v in r.items() if k != "profile"}
            print(f"{label}: {json.dumps(brief)}", file=sys.stderr)
            if "profile" in r:
                print(r["profile"], file=sys.stderr)
    print(
        f"load average before: {load[0]:.1f}; after: {os.getloadavg()[0]:.1f} "
        f"({os.cpu_count()} cores)"
    )
    return results

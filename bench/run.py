"""`python -m bench.run [--quick | --full]`: memory and speed of the app, ours vs the naive way.

The real trajectories config is about 1.5 GB of inline PNGs and a Streamlit Community
Cloud app gets about 2.7 GB. This script measures, in one run on one mirror:

- peak resident memory of loading both configs x both splits our way
  (`lib.data.load.load_bench`: memory-mapped Arrow, image-free pandas frames) and the naive way
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
`~/.cache/cuavb-dashboard/`, see lib/data/source.py) with fewer steps and sessions, and
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
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.browse import browser_phase
from bench.common import (
    CACHE_ENV,
    FULL,
    FULL_DIR,
    OUT_DIR,
    QUICK,
    ROOT,
    Settings,
    peak_rss_mb,
    percentile,
    proc_cpu_s,
    proc_status,
    summary,
)
from bench.measures import MEASURES, run_measure
from bench.server import serve
from bench.table import render_notes, render_table

# --------------------------------------------------------------------------- the run


def prepare_mirror(args: argparse.Namespace, s: Settings) -> Path:
    """The mirror folder; generated in a child process so this one stays light."""
    if args.data:
        folder = Path(args.data).resolve()
        if not (folder / "README.md").exists():
            raise SystemExit(f"{folder} is not a mirror (no README.md)")
        return folder
    if s.mode == "quick":  # the demo is the small mirror (seed 0), written once per machine
        code = "from lib.data.source import ensure_demo; print(ensure_demo())"
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


# Process statistics stay importable from here for other benchmark scripts
# (`from bench.run import proc_status`); they live in bench.common.
__all__ = ["main", "peak_rss_mb", "percentile", "proc_cpu_s", "proc_status", "run_all", "summary"]


if __name__ == "__main__":
    sys.exit(main())

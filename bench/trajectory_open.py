"""`python -m bench.trajectory_open [--data DIR] [--runs 3] [--before REF]`: the server CPU
of opening a trajectory in the viewer, prefetch included (issue 39).

Each run is a fresh interpreter (this file with `--child`, run by path with ``PYTHONPATH``
the code under test) with an empty screenshot cache (`CUAVB_CACHE_DIR` in a temp folder):
it opens the Trajectory page under AppTest on one trajectory (the data loaded, the
imports made, that trajectory's screenshots, thumbnails and prefetched neighbours done),
then picks a trajectory of `--shots` screenshots (default 34) in the task picker, runs the
page and waits until the process is idle (the fetch worker, the thumbnails and the
prefetch of the next and the previous trajectory all done). The figure is the process CPU
(user + system, `resource.getrusage`: the machine is shared, so never wall time) from the
pick to idle. With `--before REF` the same runs are made, interleaved, with the code of git
revision REF (`git archive` into a temp folder). Default data: `data/full` (the full-size
mirror, ~1.5 GB: `python -m lib.mirror data/full --full`, written when missing). Target:
at most 1.0 s for a 34-screenshot trajectory.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TARGET_CPU_S = 1.0
PAGE = "pages/4_Trajectory.py"


def _pick(data: str, shots: int) -> tuple[str, str]:
    """A warm-up task and a `shots`-screenshot task far from it (not its neighbour)."""
    import pandas as pd

    from lib.data.load import load_bench
    from lib.data.source import resolve

    tasks = load_bench(resolve(data)).tasks
    n = pd.to_numeric(tasks["n_screenshots_stored"], errors="coerce")
    wanted = tasks[n == shots]
    if wanted.empty:
        wanted = tasks.iloc[(n - shots).abs().argsort()[:1]]
    target = wanted.iloc[len(wanted) // 2]
    others = tasks[(tasks["split"] == target["split"]) & (tasks["task_id"] != target["task_id"])]
    warm = others.iloc[0] if abs(int(others.iloc[0]["row"]) - int(target["row"])) > 3 else None
    if warm is None:
        warm = others.iloc[-1]
    return str(warm["task_id"]), str(target["task_id"])


def child(data: str, shots: int) -> dict:
    import child_cpu  # beside this script (see its docstring)

    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    sys.path.insert(0, os.getcwd())  # the code under test (cwd = its root)
    os.environ["CUAVB_DATA"] = data
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from streamlit.testing.v1 import AppTest

    warm, target = _pick(data, shots)
    at = AppTest.from_file(str(Path.cwd() / "app.py"), default_timeout=900)
    at.query_params["task"] = warm
    at.switch_page(PAGE)
    at.run()
    if at.exception:
        return {"error": f"first open raised: {at.exception[0].value}"[:200]}
    child_cpu.settle(300.0)
    from ui.viewer import TASK_KEY

    box = at.selectbox(key=TASK_KEY)
    option = next(o for o in box.options if str(o).split(" · ")[0] == target)
    profiles: list = []
    if os.environ.get("BENCH_PROFILE"):  # every thread started from now on, profiled
        import cProfile
        import threading

        plain_run = threading.Thread.run

        def profiled_run(self) -> None:
            prof = cProfile.Profile()
            profiles.append(prof)
            prof.runcall(plain_run, self)

        threading.Thread.run = profiled_run
    c0 = child_cpu.cpu()
    box.set_value(option).run()
    page_cpu = child_cpu.cpu() - c0
    child_cpu.settle(300.0)
    cpu = child_cpu.cpu() - c0
    if at.exception:
        return {"error": f"open raised: {at.exception[0].value}"[:200]}
    from lib.data.load import load_bench
    from lib.data.source import resolve

    bench = load_bench(resolve(data))
    task = bench.task(target)
    if profiles:
        import pstats

        stats = pstats.Stats(profiles[0], stream=sys.stderr)
        for prof in profiles[1:]:
            stats.add(prof)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(40)
    return {
        "cpu_s": cpu,
        "page_run_cpu_s": page_cpu,
        "task": target,
        "n_screenshots": int(task["n_screenshots_stored"]),
    }


def run(code: Path, data: str, shots: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="traj-open-cache-") as cache:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(code)}
        env["CUAVB_CACHE_DIR"] = cache
        args = [sys.executable, str(HERE / "trajectory_open.py"), "--child", "--data", data]
        args += ["--shots", str(shots)]
        done = subprocess.run(args, cwd=code, env=env, capture_output=True, text=True)
    from bench.common import child_figures  # here: a child has no `bench`

    return child_figures(done)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="a mirror folder (default data/full)")
    parser.add_argument("--shots", type=int, default=34)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", help="a git revision to measure too (e.g. main)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.data, args.shots)))
        return 0
    data = args.data
    if data is None:
        folder = ROOT / "data" / "full"
        if not (folder / "README.md").is_file():
            command = [sys.executable, "-m", "lib.mirror", str(folder), "--full"]
            subprocess.run(command, cwd=ROOT, check=True)
        data = str(folder)
    from bench.common import codes_to_measure, interleaved_runs  # a child has no `bench`

    with codes_to_measure(args.before) as codes:
        results = interleaved_runs(codes, args.runs, lambda c: run(c, data, args.shots))
    medians = {}
    for label, rs in results.items():
        ok = [r for r in rs if "cpu_s" in r]
        if not ok:
            print(f"{label}: error {rs[0].get('error')}")
            continue
        medians[label] = statistics.median(r["cpu_s"] for r in ok)
        page = statistics.median(r["page_run_cpu_s"] for r in ok)
        verdict = "within" if medians[label] <= TARGET_CPU_S else "over"
        runs = ", ".join(f"{r['cpu_s']:.2f}" for r in ok)
        print(
            f"{label}: trajectory open ({ok[0]['n_screenshots']} screenshots, prefetch "
            f"included), server CPU median {medians[label]:.2f} s (runs "
            f"{runs}; {verdict} {TARGET_CPU_S:.1f} s); "
            f"of which the page run {page:.2f} s"
        )
    if len(medians) == 2:
        before, now = medians.values()
        print(f"now / before: {now / before:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

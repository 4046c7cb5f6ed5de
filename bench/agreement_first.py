"""`python -m bench.agreement_first [--data DIR] [--runs 3] [--before REF] [--profile]`: the
server CPU of the first Agreement render on a warm server (issue 39).

Each run is a fresh interpreter (`bench/agreement_first.py --child`, by path, with
``PYTHONPATH`` the code under test) that opens the app's Home page under AppTest (the data
loaded and cached, as on a server that has served its first visitor), waits for any
background work Home started, then switches to the Agreement page and runs it once: the
process CPU (user + system, `resource.getrusage`; the machine is shared, so never wall
time) of that run is the figure, with the modules it imported first and, with
`--profile`, the top cumulative entries of a cProfile. With `--before REF` the same runs
are made, interleaved, with the code of git revision REF (`git archive` into a temp
folder). Without `--data`, the default mirror under `bench/out/scale/x1` (written when
missing). Target: at most 1.0 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TARGET_CPU_S = 1.0


def child(data: str, profile: bool) -> dict:
    import child_cpu  # beside this script (see its docstring)

    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    sys.path.insert(0, os.getcwd())  # the code under test (cwd = its root)
    os.environ["CUAVB_DATA"] = data
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from streamlit.testing.v1 import AppTest

    app = str(Path.cwd() / "app.py")
    at = AppTest.from_file(app, default_timeout=600)
    at.run()
    if at.exception:
        return {"error": f"Home raised: {at.exception[0].value}"[:200]}
    child_cpu.settle(120.0)
    before = set(sys.modules)
    threads = threading.active_count()
    at.switch_page("pages/1_Agreement.py")
    profiles: list = []
    if profile:  # the script runs in its own thread: profile every thread started now
        import cProfile

        plain_run = threading.Thread.run

        def profiled_run(self) -> None:
            prof = cProfile.Profile()
            profiles.append(prof)
            prof.runcall(plain_run, self)

        threading.Thread.run = profiled_run
    c0, t0 = child_cpu.cpu(), time.perf_counter()
    at.run()
    cpu, wall = child_cpu.cpu() - c0, time.perf_counter() - t0
    if at.exception:
        return {"error": f"Agreement raised: {at.exception[0].value}"[:200]}
    new = sorted(m for m in set(sys.modules) - before if "." not in m)
    out = {"cpu_s": cpu, "wall_s": wall, "new_top_modules": new, "threads": threads}
    out["n_new_modules"] = len(set(sys.modules) - before)
    if profiles:
        import io
        import pstats

        buf = io.StringIO()
        stats = pstats.Stats(profiles[0], stream=buf)
        for prof in profiles[1:]:
            stats.add(prof)
        stats.sort_stats("cumulative").print_stats(60)
        out["profile"] = buf.getvalue()
    return out


def run(code: Path, data: str, profile: bool) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(code)}
    args = [sys.executable, str(HERE / "agreement_first.py"), "--child", "--data", data]
    done = subprocess.run(
        args + (["--profile"] if profile else []),
        cwd=code,
        env=env,
        capture_output=True,
        text=True,
    )
    from bench.common import child_figures  # here: a child has no `bench`

    return child_figures(done)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="a mirror folder (default bench/out/scale/x1)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", help="a git revision to measure too (e.g. main)")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.data, args.profile)))
        return 0
    data = args.data
    if data is None:
        folder = ROOT / "bench" / "out" / "scale" / "x1"
        if not (folder / "README.md").is_file():
            subprocess.run([sys.executable, "-m", "lib.mirror", str(folder)], cwd=ROOT, check=True)
        data = str(folder)
    from bench.common import codes_to_measure, interleaved_runs  # a child has no `bench`

    with codes_to_measure(args.before) as codes:
        results = interleaved_runs(codes, args.runs, lambda c: run(c, data, args.profile))
    medians = {}
    for label, rs in results.items():
        cpus = [r["cpu_s"] for r in rs if "cpu_s" in r]
        if not cpus:
            print(f"{label}: error {rs[0].get('error')}")
            continue
        medians[label] = statistics.median(cpus)
        verdict = "within" if medians[label] <= TARGET_CPU_S else "over"
        print(
            f"{label}: first Agreement render, server CPU median {medians[label]:.2f} s "
            f"(runs {', '.join(f'{c:.2f}' for c in cpus)}; {verdict} {TARGET_CPU_S:.1f} s); "
            f"modules imported by it: {statistics.median(r['n_new_modules'] for r in rs)}"
        )
    if len(medians) == 2:
        before, now = medians.values()
        print(f"now / before: {now / before:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

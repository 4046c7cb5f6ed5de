"""`python -m bench.scale [--scales 1 10 100] [--pages ...]`: how the work grows with the data.

Writes light-only mirrors K times the default mirror (`tools.scale_mirror`, cached under
`bench/out/scale/`), then, for every scale, in a fresh process each:
- `load`: the data load alone (the baseline the page figures exclude);
- one per page: the page run the way a deep link runs it (AppTest on the real page
  script, default widgets), after a warm Home run that loaded the data; CPU and wall
  are the page run's, peak RSS the process's;
- `report`: `python -m lib.report` (the pages' numbers, headless) end to end.
Prints one table (CPU s, wall s, peak RSS MB) and the ratio 100x / 10x, with the load
average. Targets (issue 18): at 100x every page <= 5 s CPU, peak <= 1 GB, and cost at most
linear from 10x to 100x.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import OUT_DIR, ROOT

PAGES = {
    "Home": "pages/0_Home.py",
    "Agreement": "pages/1_Agreement.py",
    "Judges": "pages/2_Judges.py",
    "Shifts": "pages/3_Shifts.py",
    "Trajectory": "pages/4_Trajectory.py",
    "Your verifier": "pages/5_Your_verifier.py",
    "Slices": "pages/6_Slices.py",
}
TARGET_CPU_S = 5.0
TARGET_PEAK_MB = 1024.0


def mirror_for(scale: int, base: Path | None) -> Path:
    """The default mirror (written once) and its K-times light copy."""
    root = OUT_DIR / "scale"
    src = base or root / "x1"
    if not (src / "README.md").is_file():
        subprocess.run([sys.executable, "-m", "lib.mirror", str(src)], cwd=ROOT, check=True)
    if scale == 1:
        return src
    dst = root / f"x{scale}"
    if not (dst / "README.md").is_file():
        subprocess.run(
            [sys.executable, "-m", "tools.scale_mirror", str(src), str(dst), "--scale", str(scale)],
            cwd=ROOT, check=True,
        )  # fmt: skip
    return dst


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _uploaded(n_verifiers: int) -> Any:
    """Verdict rows of `n_verifiers` uploaded verifiers on every task, random labels: what a
    session at the cap holds (files of at most 10 verifiers and `row_cap` rows)."""
    import numpy as np
    import pandas as pd

    from lib.uploads import predictions
    from ui.state import get_bench

    tasks = get_bench().tasks
    rng = np.random.default_rng(0)
    table, taken = None, []
    cap = predictions.row_cap(len(tasks))
    per_file = max(1, min(predictions.MAX_VERIFIERS_PER_FILE, cap // len(tasks)))
    for start in range(0, n_verifiers, per_file):
        names = range(start, min(n_verifiers, start + per_file))
        rows = [(f"v{v}", t, s, int(rng.integers(0, 2))) for v in names
                for t, s in zip(tasks["task_id"], tasks["split"], strict=True)]  # fmt: skip
        data = pd.DataFrame(rows, columns=["verifier", "task_id", "split", "outcome"])
        upload = predictions.parse_predictions(
            data.to_csv(index=False).encode(), f"f{start}.csv", tasks, taken
        )
        taken += upload.raters
        table = predictions.add_upload(table, upload)
    return table


def measure_page(
    folder: str, page: str, uploads: int = 0, query: dict[str, str] | None = None
) -> dict[str, Any]:
    """In this (fresh) process: load via a Home run, then time one run of `page`
    (with `uploads` uploaded verifiers in the session, and the link's `query`)."""
    os.environ.update({"CUAVB_DATA": folder, "HF_HUB_OFFLINE": "1", "CUAVB_RAISE_ERRORS": "1"})
    sys.path.insert(0, str(ROOT))
    from streamlit.testing.v1 import AppTest

    from tests.helpers.apptest import APP, open_page
    from ui.state import UPLOADS_KEY

    t0, c0 = time.perf_counter(), time.process_time()
    at = open_page(PAGES["Home"], timeout=600)
    table = _uploaded(uploads) if uploads else None
    t1, c1 = time.perf_counter(), time.process_time()
    peak_before = _peak_mb()  # the load and the uploads' parse, before the page
    if page == "load":
        at = open_page(None, timeout=600)
    else:
        at = AppTest.from_file(str(ROOT / "tests" / APP), default_timeout=600)
        if table is not None:
            at.session_state[UPLOADS_KEY] = table
        at.query_params.update(query or {})
        at.switch_page(PAGES[page])
        at.run()
    t2, c2 = time.perf_counter(), time.process_time()
    errors = [str(e.value)[:200] for e in at.exception]
    return {
        "load_cpu_s": c1 - c0,
        "load_wall_s": t1 - t0,
        "cpu_s": c2 - c1,
        "wall_s": t2 - t1,
        "peak_mb": _peak_mb(),
        "peak_before_page_mb": peak_before,
        "errors": errors,
    }


def _child(args: list[str], env: dict[str, str] | None = None) -> tuple[dict, float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:] or ["?"]}, cpu, wall
    return {"out": done.stdout}, cpu, wall


def measure_report(folder: Path) -> dict[str, Any]:
    """`python -m lib.report` end to end in a child; its own peak RSS from /usr/bin/time."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    args = ["/usr/bin/time", "-f", "PEAK_KB %M", sys.executable, "-m", "lib.report"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(
        [*args, "--data", str(folder), "--format", "json"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    peak = [line for line in done.stderr.splitlines() if line.startswith("PEAK_KB")]
    return {
        "cpu_s": cpu,
        "wall_s": wall,
        "peak_mb": int(peak[-1].split()[1]) / 1024 if peak else None,
        "errors": [] if done.returncode == 0 else done.stderr.strip().splitlines()[-2:],
    }


def run_page(
    folder: Path, page: str, uploads: int = 0, query: list[str] | None = None
) -> dict[str, Any]:
    """One page in a fresh interpreter (`--one`)."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.scale", "--one", str(folder), page,
         "--uploads", str(uploads), "--query", *(query or [])],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"errors": (done.stderr.strip().splitlines() or ["?"])[-2:]}
    return json.loads(lines[-1])


def table(results: dict[int, dict[str, dict]], scales: list[int]) -> str:
    head = "| measure | " + " | ".join(f"{k}x CPU s / wall s / peak MB" for k in scales)
    if len(scales) >= 2:
        head += f" | CPU {scales[-1]}x / {scales[-2]}x"
    lines = [head + " |", "|" + "---|" * (len(scales) + 1 + (len(scales) >= 2))]
    names = list(next(iter(results.values())))
    for name in names:
        cells = []
        for k in scales:
            r = results[k][name]
            if r.get("errors"):
                cells.append("error: " + "; ".join(r["errors"])[:80])
            else:
                cells.append(f"{r['cpu_s']:.2f} / {r['wall_s']:.2f} / {r['peak_mb'] or 0:.0f}")
        if len(scales) >= 2:
            a, b = results[scales[-1]][name], results[scales[-2]][name]
            ok = not a.get("errors") and not b.get("errors") and b["cpu_s"] > 0
            cells.append(f"{a['cpu_s'] / b['cpu_s']:.1f}" if ok else "–")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--pages", nargs="+", default=list(PAGES))
    parser.add_argument("--base", type=Path, default=None, help="mirror to scale (default: new)")
    parser.add_argument("--uploads", type=int, default=0,
                        help="uploaded verifiers in the session (at most 20, the cap)")  # fmt: skip
    parser.add_argument("--query", nargs="*", default=[], metavar="NAME=VALUE",
                        help="URL parameters of every page run, e.g. uploads=20")  # fmt: skip
    parser.add_argument("--one", nargs=2, metavar=("FOLDER", "PAGE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        query = dict(item.split("=", 1) for item in args.query)
        print(json.dumps(measure_page(*args.one, uploads=args.uploads, query=query)))
        return 0
    load = os.getloadavg()
    results: dict[int, dict[str, dict]] = {}
    for k in args.scales:
        folder = mirror_for(k, args.base)
        results[k] = {"load (Home run, data loaded)": run_page(folder, "load")}
        results[k]["load (Home run, data loaded)"] |= {
            "cpu_s": results[k]["load (Home run, data loaded)"].get("load_cpu_s", 0),
            "wall_s": results[k]["load (Home run, data loaded)"].get("load_wall_s", 0),
        }
        for page in args.pages:
            results[k][page] = run_page(folder, page, args.uploads, args.query)
            print(f"x{k} {page}: {results[k][page]}", file=sys.stderr)
        results[k]["report (python -m lib.report)"] = measure_report(folder)
    print(f"load average before: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
          f"after: {' '.join(f'{x:.1f}' for x in os.getloadavg())} (2 cores)")  # fmt: skip
    print(table(results, args.scales))
    bad = [
        (k, name)
        for k in args.scales[-1:]
        for name, r in results[k].items()
        if r.get("errors")
        or (name in args.pages and (r["cpu_s"] > TARGET_CPU_S or r["peak_mb"] > TARGET_PEAK_MB))
    ]
    print("targets met" if not bad else f"over target at {args.scales[-1]}x: {bad}")
    (OUT_DIR / "scale.json").write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

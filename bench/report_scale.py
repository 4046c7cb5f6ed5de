"""`python -m bench.report_scale [--scales 10 100] [--before REF] [--mirrors DIR]`: the
report's peak memory and CPU at K times the data, how its CPU grows, and the section that
costs most (issues 26, 39).

Writes, once (reused when present, under `--mirrors`, default `bench/out/scale`): the
default mirror `x1` and its K-times `same-sites` mirror for each K of `--scales`
(`tools.scale_mirror --way same-sites`: tasks grow within the same 63 websites and 6
reviewers, every copy's texts its own and every copy's continuous scores distinct, so
the Spearman ranks see K times as many distinct values, as a real K-times dataset would;
`--way copies` shares the scores and hides that cost). Then runs the report
(`python -m lib.report --format json`, through `bench/report_sections.py`, which times
each section) on each mirror and `--cluster` in a fresh child process, and prints CPU s
(user + system, getrusage: the machine is shared, so never wall time), peak RSS MB, the
costliest section (CPU and the peak once it is done) and the CPU growth from the smallest
to the largest scale. With `--before REF` the same runs are made, in the same invocation
and on the same mirrors, with the code of git revision REF (extracted by `git archive` into
a temp folder; this checkout is not touched), and the JSON of both is compared byte for
byte. Targets: peak <= 1,000 MB at 100x; CPU growth from 10x to 100x <= 12x.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import OUT_DIR, ROOT, codes_to_measure

TARGET_PEAK_MB = 1000.0
TARGET_GROWTH = 12.0
CHILD = ROOT / "bench" / "report_sections.py"


def mirrors(root: Path, scales: list[int], way: str = "same-sites") -> dict[str, Path]:
    """The K-times `way` mirror of x1 for each K under `root`, written when missing."""
    base = root / "x1"
    if not (base / "README.md").is_file():
        subprocess.run([sys.executable, "-m", "lib.mirror", str(base)], cwd=ROOT, check=True)
    out = {}
    for scale in scales:
        dst = root / f"x{scale}-{way}"
        if scale == 1:
            dst = base
        elif not (dst / "README.md").is_file():
            args = [str(base), str(dst), "--scale", str(scale), "--way", way]
            command = [sys.executable, "-m", "tools.scale_mirror", *args]
            subprocess.run(command, cwd=ROOT, check=True)
        out[f"x{scale}"] = dst
    return out


def run_report(code: Path, folder: Path, cluster: str, out: Path) -> dict:
    """One report of the code in `code` on `folder` in a child; its figures."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(code)}
    args = [sys.executable, str(CHILD), "--data", str(folder), "--cluster", cluster]
    done = subprocess.run(
        [*args, "--out", str(out)], cwd=code, env=env, capture_output=True, text=True
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = done.stderr.strip().splitlines()[-1:]
        return {"error": tail[0][:120] if tail else f"exit {done.returncode}"}
    return json.loads(lines[-1])


def costliest(r: dict) -> str:
    """The section with the most CPU, its CPU and the peak once it was done."""
    if not r.get("sections"):
        return "-"
    name, s = max(r["sections"].items(), key=lambda kv: kv[1]["cpu_s"])
    return f"{name} {s['cpu_s']:.1f} s (peak then {s['peak_mb']:.0f} MB)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--before", help="a git revision to measure too (e.g. main)")
    parser.add_argument("--mirrors", type=Path, default=OUT_DIR / "scale")
    parser.add_argument("--clusters", nargs="+", default=["task"])
    args = parser.parse_args(argv)
    folders = mirrors(args.mirrors, sorted(args.scales))
    results: dict[tuple[str, str, str], dict] = {}
    with codes_to_measure(args.before) as codes, tempfile.TemporaryDirectory() as tmp:
        load = os.getloadavg()
        rows = []
        for name, folder in folders.items():
            for cluster in args.clusters:
                outputs = []
                for label, code in codes.items():
                    out = Path(tmp) / f"{label[:6]}-{name}-{cluster}.json"
                    r = run_report(code, folder, cluster, out)
                    results[(name, cluster, label)] = r
                    outputs.append(out)
                    print(f"{name} {cluster} {label}: {json.dumps(r)}", file=sys.stderr)
                same = ""
                if len(outputs) == 2 and all(o.is_file() for o in outputs):
                    same = "yes" if outputs[0].read_bytes() == outputs[1].read_bytes() else "NO"
                rows.append((name, cluster, same))
        print(
            f"load average before: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; after: "
            + " ".join(f"{x:.1f}" for x in os.getloadavg())
            + f" ({os.cpu_count()} cores)"
        )
        head = " | ".join(f"{label}: CPU s / peak MB / costliest section" for label in codes)
        print(f"| mirror | cluster | {head} |" + (" same JSON |" if len(codes) == 2 else ""))
        print("|---|---|" + "---|" * len(codes) + ("---|" if len(codes) == 2 else ""))
        for name, cluster, same in rows:
            cells = []
            for label in codes:
                r = results[(name, cluster, label)]
                cells.append(
                    f"error: {r['error']}"
                    if "error" in r
                    else f"{r['cpu_s']:.1f} / {r['peak_mb']:.0f} / {costliest(r)}"
                )
            tail = f" | {same} |" if same else " |"
            print(f"| {name} | {cluster} | " + " | ".join(cells) + tail)
        names = list(folders)
        for cluster in args.clusters:
            for label in codes:
                small = results.get((names[0], cluster, label), {})
                large = results.get((names[-1], cluster, label), {})
                if "cpu_s" in small and "cpu_s" in large and len(names) > 1:
                    growth = large["cpu_s"] / small["cpu_s"]
                    verdict = "within" if growth <= TARGET_GROWTH else "over"
                    print(
                        f"{label} ({cluster}): CPU growth {names[0]} -> {names[-1]}: "
                        f"{growth:.1f}x ({verdict} {TARGET_GROWTH:.0f}x); "
                        f"peak at {names[-1]}: {large['peak_mb']:.0f} MB "
                        f"({'within' if large['peak_mb'] <= TARGET_PEAK_MB else 'over'} "
                        f"{TARGET_PEAK_MB:.0f} MB)"
                    )
        if len(codes) == 2:
            before, now = codes
            for name in names:
                for cluster in args.clusters:
                    a, b = results[(name, cluster, before)], results[(name, cluster, now)]
                    if "cpu_s" in a and "cpu_s" in b:
                        print(
                            f"{name} {cluster}: now / before: CPU {b['cpu_s'] / a['cpu_s']:.2f}x, "
                            f"peak {b['peak_mb'] / a['peak_mb']:.2f}x"
                        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`python -m bench.report_scale [--scale 100] [--before REF] [--mirrors DIR]`: the report's
peak memory at K times the data, both ways of scaling (issue 26).

Writes, once (reused when present, under `--mirrors`, default `bench/out/scale`): the
default mirror `x1`, its K-times copies (`tools.scale_mirror --way copies`) and its K-times
`same-sites` mirror (tasks grow within the same 63 websites and 6 reviewers, every copy's
texts and scores its own). Then runs `python -m lib.report --format json` on each (tasks
and `--cluster site`) in a child under `/usr/bin/time`, and prints CPU s, wall s and peak
RSS MB. With `--before REF` the same runs are made, in the same invocation and on the same
mirrors, with the code of git revision REF (extracted by `git archive` into a temp folder;
this checkout is not touched), and the JSON of both is compared byte for byte.
Target: peak <= 1,000 MB at 100x.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import OUT_DIR, ROOT

TARGET_PEAK_MB = 1000.0


def mirrors(root: Path, scale: int) -> dict[str, Path]:
    """x1, copies and same-sites at `scale` under `root`, written when missing."""
    base = root / "x1"
    if not (base / "README.md").is_file():
        subprocess.run([sys.executable, "-m", "lib.mirror", str(base)], cwd=ROOT, check=True)
    out = {"x1": base}
    for way in ("copies", "same-sites"):
        dst = root / f"x{scale}" if way == "copies" else root / f"x{scale}-{way}"
        if not (dst / "README.md").is_file():
            args = [str(base), str(dst), "--scale", str(scale), "--way", way]
            command = [sys.executable, "-m", "tools.scale_mirror", *args]
            subprocess.run(command, cwd=ROOT, check=True)
        out[f"x{scale} {way}"] = dst
    return out


def run_report(code: Path, folder: Path, cluster: str, out: Path) -> dict:
    """One `python -m lib.report` of the code in `code` on `folder`; its figures."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(code)}
    args = ["/usr/bin/time", "-f", "PEAK_KB %M CPU %U %S WALL %e", sys.executable, "-m"]
    args += ["lib.report", "--data", str(folder), "--cluster", cluster, "--format", "json"]
    with open(out, "wb") as sink:
        done = subprocess.run(args, cwd=code, env=env, stdout=sink, stderr=subprocess.PIPE)
    lines = [x for x in done.stderr.decode().splitlines() if x.startswith("PEAK_KB")]
    if done.returncode != 0 or not lines:
        tail = done.stderr.decode().strip().splitlines()[-1:]
        return {"error": tail[0][:120] if tail else f"exit {done.returncode}"}
    f = lines[-1].split()
    return {"peak_mb": int(f[1]) / 1024, "cpu_s": float(f[3]) + float(f[4]), "wall_s": float(f[6])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=100)
    parser.add_argument("--before", help="a git revision to measure too (e.g. HEAD~3)")
    parser.add_argument("--mirrors", type=Path, default=OUT_DIR / "scale")
    parser.add_argument("--clusters", nargs="+", default=["task", "site"])
    args = parser.parse_args(argv)
    folders = mirrors(args.mirrors, args.scale)
    codes = {"now": ROOT}
    with tempfile.TemporaryDirectory(prefix="report-before-") as tmp:
        if args.before:
            archive = subprocess.run(
                ["git", "archive", args.before], cwd=ROOT, capture_output=True, check=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            codes = {f"before ({args.before})": Path(tmp), "now": ROOT}
        load = os.getloadavg()
        rows = []
        for name, folder in folders.items():
            for cluster in args.clusters:
                cells, outputs = [], []
                for label, code in codes.items():
                    out = Path(tmp) / f"{label[:6]}-{name.replace(' ', '_')}-{cluster}.json"
                    r = run_report(code, folder, cluster, out)
                    outputs.append(out)
                    cells.append(
                        f"error: {r['error']}"
                        if "error" in r
                        else f"{r['cpu_s']:.1f} / {r['wall_s']:.1f} / {r['peak_mb']:.0f}"
                    )
                    print(f"{name} {cluster} {label}: {r}", file=sys.stderr)
                same = ""
                if len(outputs) == 2 and all(o.is_file() for o in outputs):
                    same = "yes" if outputs[0].read_bytes() == outputs[1].read_bytes() else "NO"
                rows.append((name, cluster, cells, same))
        print(
            f"load average before: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; after: "
            + " ".join(f"{x:.1f}" for x in os.getloadavg())
            + f" ({os.cpu_count()} cores)"
        )
        head = " | ".join(f"{label}: CPU s / wall s / peak MB" for label in codes)
        print(f"| mirror | cluster | {head} |" + (" same JSON |" if len(codes) == 2 else ""))
        print("|---|---|" + "---|" * len(codes) + ("---|" if len(codes) == 2 else ""))
        worst = 0.0
        for name, cluster, cells, same in rows:
            tail = f" | {same} |" if same else " |"
            print(f"| {name} | {cluster} | " + " | ".join(cells) + tail)
            last = cells[-1].split(" / ")
            if len(last) == 3:
                worst = max(worst, float(last[2]))
        ok = worst <= TARGET_PEAK_MB
        verdict = "within" if ok else "over"
        print(f"largest peak now: {worst:.0f} MB ({verdict} {TARGET_PEAK_MB:.0f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

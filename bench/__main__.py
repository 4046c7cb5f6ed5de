"""`python -m bench [--runs N] [--before REF]`: the server-CPU figures of issue 39, each
in fresh interpreters on a shared machine (CPU time, never wall time):

- the first Agreement render on a warm server (`bench.agreement_first`, default mirror);
- opening a 34-screenshot trajectory on the full-size mirror, prefetch included
  (`bench.trajectory_open`, `data/full`, written when missing).

`--before REF` measures the code of git revision REF beside this checkout, interleaved.
The report at 10x and 100x tasks is `python -m bench.report_scale` (minutes); the app's
memory and step-switch table is `python -m bench.run`.
"""

from __future__ import annotations

import argparse

from bench import agreement_first, trajectory_open


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", help="a git revision to measure too (e.g. main)")
    args = parser.parse_args(argv)
    extra = ["--runs", str(args.runs)] + (["--before", args.before] if args.before else [])
    print("## First Agreement render (server CPU, warm server)", flush=True)
    agreement_first.main(extra)
    print("\n## Trajectory open (server CPU, prefetch included)", flush=True)
    trajectory_open.main(extra)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

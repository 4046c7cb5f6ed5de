"""`python bench/report_sections.py --data DIR [--cluster task|site] --out FILE`: one
`python -m lib.report --format json` run, with each section's CPU and peak memory.

The child of `bench.report_scale` (run by path with ``PYTHONPATH`` set to the code under
test, so an older revision extracted by `git archive` is measured the same way): it calls
`lib.report.main` in this process with every entry of `lib.report.SECTIONS` wrapped in a
timer, writes the report's stdout (the JSON, byte for byte the CLI's) to FILE, and prints
one JSON line to stdout: ``cpu_s`` and ``peak_mb`` of the whole process (getrusage: user +
system CPU, maximum resident set), ``load_cpu_s`` (what is not a section: imports,
loading the data, writing the JSON) and per section ``cpu_s`` and ``peak_mb`` (the
process's peak once the section is done; the section that raised it is the one that
costs the memory).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import sys
import time
from pathlib import Path

# run by path: this folder is sys.path[0]; `lib` must come from PYTHONPATH (the code under
# test), and no module of this folder may shadow another
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--cluster", default="task")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    from lib import report

    sections: dict[str, dict[str, float]] = {}

    def timed(name, fn):
        def run(bench, boot):
            t = time.process_time()
            out = fn(bench, boot)
            sections[name] = {"cpu_s": time.process_time() - t, "peak_mb": _peak_mb()}
            return out

        return run

    for name, fn in list(report.SECTIONS.items()):
        report.SECTIONS[name] = timed(name, fn)
    with open(args.out, "w") as sink, contextlib.redirect_stdout(sink):
        code = report.main(["--data", args.data, "--cluster", args.cluster, "--format", "json"])
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime  # the whole process, as /usr/bin/time counts it
    figures = {
        "exit": code,
        "cpu_s": cpu,
        "peak_mb": _peak_mb(),
        "load_cpu_s": cpu - sum(s["cpu_s"] for s in sections.values()),
        "sections": sections,
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())

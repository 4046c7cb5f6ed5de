"""The Iterations section's cost: 50 versions x 3 runs of one verifier on the demo.

    .venv/bin/python -m bench.iterations [--data SOURCE] [--versions 50] [--runs 3]

Builds a history file from the data's final outcome labels (each version wrong on a random
15 % of tasks, each run on another 3 %), opens Your verifier in AppTest (this process is
the server), renders it once, waits until the process is idle (the background imports
that first page started, `ui.warmup`, are done, as on a server whose visitor takes a
moment to pick the file), then uploads the file and renders the page with the Iterations
section: prints the server CPU of that first render (parse, the page's other sections and
the Iterations section), the Iterations analysis alone (fresh, 2,000 resamples), and the
peak RSS above the RSS before the upload (VmHWM, reset through /proc/self/clear_refs).
Targets (issue 40): at most 2 s of CPU for the page's first render after the upload, at
most +150 MB.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from bench.child_cpu import settle  # noqa: E402
from bench.common import proc_status  # noqa: E402

PAGE = "pages/5_Your_verifier.py"


def history_file(table: pd.DataFrame, versions: int, runs: int, seed: int = 0) -> bytes:
    ref = table[(table["rater"] == "final_human_outcome_label") & table["label"].notna()]
    truth = ref["label"].astype(int).to_numpy()
    rng = np.random.default_rng(seed)
    parts = []
    for v in range(1, versions + 1):
        base = truth ^ (rng.random(truth.size) < 0.15)
        for r in range(1, runs + 1):
            labels = base ^ (rng.random(truth.size) < 0.03)
            parts.append(
                pd.DataFrame(
                    {
                        "verifier": "bench",
                        "version": f"v{v}",
                        "run": r,
                        "split": ref["split"].to_numpy(),
                        "task_id": ref["task_id"].to_numpy(),
                        "outcome": labels.astype(int),
                    }
                )
            )
    return pd.concat(parts).to_csv(index=False).encode()


def _reset_peak() -> None:
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="a source as in CUAVB_DATA (default: a fresh demo mirror)")
    parser.add_argument("--versions", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        if args.data:
            source = args.data
        else:
            from lib import mirror

            source = str(mirror.write_mirror(Path(tmp) / "mirror", full=False, seed=0))
        os.environ["CUAVB_DATA"] = source
        os.environ.setdefault("CUAVB_CACHE_DIR", str(Path(tmp) / "cache"))
        from streamlit.testing.v1 import AppTest

        from lib.analysis import iterations as it
        from lib.data.load import load_bench
        from lib.data.source import resolve
        from lib.uploads import predictions

        bench = load_bench(resolve(source))
        data = history_file(bench.verdicts, args.versions, args.runs)
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
        at.switch_page(PAGE)
        at.run()  # the page without an upload: the data loaded, the caches warm
        assert not at.exception, at.exception
        settle(120.0)  # the warm-up imports the first page started (ui.warmup) done, as
        # on a server whose visitor takes a moment to pick the file: they are not the upload's
        before = proc_status()["VmRSS"]
        _reset_peak()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        at.file_uploader(key="predictions_file").set_value(("bench.csv", data, "text/csv"))
        at.run()
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        peak = proc_status()["VmHWM"]
        assert not at.exception, at.exception
        shown = any("Iterations: versions and repeated runs" in h.value for h in at.header)

        upload = predictions.parse_predictions(data, "bench.csv", bench.tasks)
        c0 = time.process_time()
        result = it.iterations(bench.verdicts, upload.history, upload.raters[0])
        alone = time.process_time() - c0
        load = os.getloadavg()[0]
    print(f"data: {source}; {args.versions} versions x {args.runs} runs = {len(data):,} bytes")
    print(f"Iterations section shown: {shown}; {len(result.versions)} versions scored")
    print(
        f"first render after the upload (parse + every section): cpu {cpu:.2f} s "
        f"(target <= 2 s), wall {wall:.2f} s"
    )
    print(f"the Iterations analysis alone (2,000 resamples): cpu {alone:.2f} s")
    print(
        f"peak RSS {peak:.0f} MB, {peak - before:+.0f} MB over the {before:.0f} MB before the "
        "upload (target <= +150 MB)"
    )
    print(f"load average {load:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()

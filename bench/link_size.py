"""How long a link that carries uploaded verdicts is (issue 36; `lib.uploads.link_codec`).

`python -m bench.link_size [--data SOURCE]` prints the `?v=` payload's length in
characters for 1, 5 and 20 verifiers that all have an outcome, a process label and a
score on every task, on the loaded tasks (the demo's 260 = the real dataset's count) and
on the 10x mirror's task list (each task copied 10 times with ids suffixed `_k`, as
`tools/scale_mirror.py` makes it), against the bound a link may carry (`MAX_CHARS`).
Random labels and scores: the worst case for compression. Also the encode and decode time.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from bench.common import compute_bench
from lib.uploads import link_codec as L
from lib.uploads.predictions import typed_verdicts


def scored_rows(tasks: pd.DataFrame, verifiers: int, seed: int = 0) -> pd.DataFrame:
    """``verifiers`` verifiers x every task: outcome, process (10% missing), a score with
    six decimals on the process row (as an upload with a process column stores it)."""
    rng = np.random.default_rng(seed)
    n = len(tasks)
    frames = []
    for v in range(verifiers):
        base = {"split": tasks["split"].to_numpy(), "task_id": tasks["task_id"].to_numpy()}
        base |= {"rater": f"mine:judge_{v:02d}", "kind": "verifier"}
        process = pd.array(rng.integers(0, 2, n), dtype="Int8")
        process[rng.random(n) < 0.1] = pd.NA
        frames.append(pd.DataFrame(base | {"dimension": "outcome", "label": rng.integers(0, 2, n)}))
        score = rng.random(n).round(6)
        frames.append(
            pd.DataFrame(base | {"dimension": "process", "label": process, "score": score})
        )
    return typed_verdicts(pd.concat(frames, ignore_index=True))


def tenfold(tasks: pd.DataFrame) -> pd.DataFrame:
    copies = [
        tasks.assign(task_id=tasks["task_id"] + ("" if k == 0 else f"_{k}")) for k in range(10)
    ]
    return pd.concat(copies, ignore_index=True)[["split", "task_id"]]


def measure(tasks: pd.DataFrame, label: str) -> list[dict]:
    order = L.task_order(tasks)
    out = []
    for verifiers in (1, 5, 20):
        rows = scored_rows(tasks, verifiers)
        start = time.perf_counter()
        payload = L.encode(rows, order)
        encode_ms = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        L.decode(payload, order) if L.fits(payload) else None
        decode_ms = (time.perf_counter() - start) * 1000
        out.append(
            {
                "tasks": f"{order.n:,} ({label})",
                "verifiers": verifiers,
                "chars": len(payload),
                "fits": L.fits(payload),
                "encode_ms": round(encode_ms, 1),
                "decode_ms": round(decode_ms, 1) if L.fits(payload) else None,
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", help="a source as in CUAVB_DATA (default: a fresh mirror)")
    args = parser.parse_args(argv)
    with compute_bench(args.data) as bench:
        tasks = bench.tasks[["split", "task_id"]]
    results = measure(tasks, "loaded") + measure(tenfold(tasks), "10x mirror")
    print(f"link bound: {L.MAX_CHARS:,} characters (`v=` payload)")
    print("| tasks | verifiers with scores | `v=` characters | fits | encode ms | decode ms |")
    print("|---|---|---|---|---|---|")
    for r in results:
        decode = "-" if r["decode_ms"] is None else r["decode_ms"]
        print(
            f"| {r['tasks']} | {r['verifiers']} | {r['chars']:,} | "
            f"{'yes' if r['fits'] else 'no: Share offers the CSV'} | {r['encode_ms']} | {decode} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

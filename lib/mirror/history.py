"""A sample verifier history: one verifier's 10 versions, the last with 3 repeated runs.

The file a visitor downloads from Your verifier to see the development loop at once
(`lib.analysis.iterations`). Each version is the reference label with planted errors
(false negatives among the reference's successes, false positives among its failures),
so the story is known (on all splits pooled, against the given reference):

| version | errors | the commit rule |
|---|---|---|
| v1-baseline | 40 FN, 25 FP | committed (first) |
| v2-rubric | 28 FN, 25 FP | committed |
| v3-screenshots | 12 FN, 30 FP | kappa rises, FPR rises: not committed |
| v4-evidence | 26 FN, 25 FP | a gain below the noise floor |
| v5-process | 20 FN, 22 FP | committed |
| v6-shorter | 24 FN, 22 FP | kappa fell |
| v7-outcome-first | 14 FN, 20 FP | committed |
| v8-examples | 13 FN, 20 FP | a gain below the noise floor |
| v9-strict | 8 FN, 24 FP | FPR rose |
| v10-final (3 runs) | 8 FN, 17 FP; run 2: 3 more FN, run 3: 3 more FP | committed |

v10's runs disagree on exactly 6 tasks (the unstable ones), and their kappa range is the
noise floor. On data with fewer tasks the counts are scaled down (at least one error each).
No Streamlit, no table layer: a frame of reference labels in, the sample rows out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

VERIFIER = "my_verifier"
STORY: tuple[tuple[str, int, int], ...] = (
    ("v1-baseline", 40, 25),
    ("v2-rubric", 28, 25),
    ("v3-screenshots", 12, 30),
    ("v4-evidence", 26, 25),
    ("v5-process", 20, 22),
    ("v6-shorter", 24, 22),
    ("v7-outcome-first", 14, 20),
    ("v8-examples", 13, 20),
    ("v9-strict", 8, 24),
    ("v10-final", 8, 17),
)
"""(version, false negatives, false positives) at the demo's size (126 successes, 134
failures); the last version has `RUNS` runs."""
RUNS = 3
UNSTABLE = 3
"""Extra misses in run 2 and extra passes in run 3 of the last version (6 unstable tasks)."""
SCALE_AT = 120
"""Positives (and negatives) the counts are written for; fewer scale them down."""


def sample_history(reference: pd.DataFrame, seed: int = 40) -> pd.DataFrame:
    """`reference`: split, task_id, label (1/0; rows without a label are skipped). Returns
    the sample file's rows: verifier, version, run, split, task_id, outcome."""
    ref = reference[reference["label"].notna()].sort_values(["split", "task_id"])
    truth = ref["label"].astype(int).to_numpy()
    rng = np.random.default_rng(seed)
    pos = rng.permutation(np.flatnonzero(truth == 1))
    neg = rng.permutation(np.flatnonzero(truth == 0))

    def scaled(k: int, pool: np.ndarray) -> int:
        return min(len(pool), max(1, round(k * min(1.0, len(pool) / SCALE_AT)))) if k else 0

    def labels(fn: int, fp: int, extra_fn: int = 0, extra_fp: int = 0) -> np.ndarray:
        out = truth.copy()
        out[pos[: scaled(fn, pos)]] = 0
        out[neg[: scaled(fp, neg)]] = 1
        # the unstable tasks: the last of each pool, beyond every version's errors
        out[pos[len(pos) - extra_fn :][:extra_fn]] = 0
        out[neg[len(neg) - extra_fp :][:extra_fp]] = 1
        return out

    parts = []
    for i, (version, fn, fp) in enumerate(STORY):
        runs = RUNS if i == len(STORY) - 1 else 1
        for run in range(1, runs + 1):
            extra = (UNSTABLE if run == 2 else 0, UNSTABLE if run == 3 else 0)
            parts.append(
                pd.DataFrame(
                    {
                        "verifier": VERIFIER,
                        "version": version,
                        "run": run,
                        "split": ref["split"].to_numpy(),
                        "task_id": ref["task_id"].to_numpy(),
                        "outcome": np.where(labels(fn, fp, *extra) == 1, "success", "failure"),
                    }
                )
            )
    return pd.concat(parts, ignore_index=True)

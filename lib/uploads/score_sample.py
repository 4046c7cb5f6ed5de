"""A sample upload of score files, made from the loaded data's own internal score files.

One plausible change, so a first upload shows every view: a stricter backbone re-scores
each internal task the Universal Verifier scored. It lowers some post-image points
(`LOWER_SHARE` of the criteria that have points: by 0.5 or 1, never below 0), recomputes
the totals and `rubric_is_success` (score >= the process threshold), keeps the outcome
verification, and adds the newer output's `error_taxonomy`: a `first_failure_step` on every
task it fails (outcome or process; a step of the trajectory, counted from 0) and
`task_verification` flags (`AMBIGUOUS_SHARE`, `INVALID_SHARE` of the tasks). Files are
`<task_id>.json`, the inner object with its `task_id`. Deterministic for a seed.
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from typing import Any

import numpy as np
import pandas as pd

from lib.table import score_file as sf
from lib.table.gpt_eval import parse_gpt_eval
from lib.vocab import UV_THRESHOLD

LOWER_SHARE = 0.25
AMBIGUOUS_SHARE = 0.05
INVALID_SHARE = 0.03
SEED = 41
NAME = "stricter_backbone"


def stricter(inner: dict[str, Any], n_steps: int, rng: np.random.Generator) -> dict[str, Any]:
    """One score file re-scored by the stricter backbone (a new object)."""
    out = json.loads(json.dumps(inner))
    items = [i for i in out.get("rubric_items") or [] if isinstance(i, dict)]
    for item in items:
        key = "post_image_earned_points" if "post_image_earned_points" in item else "earned_points"
        got = sf.finite_number(item.get(key))
        if got and got > 0 and rng.random() < LOWER_SHARE:
            lowered = max(0.0, got - float(rng.choice([0.5, 1.0])))
            item[key] = lowered
            item[key.replace("earned_points", "justification")] = (
                f"Stricter backbone: the screenshots do not fully show it ({got:g} -> {lowered:g})."
            )
    points = sf.rubric_points(out)
    if points is not None:
        out["rubric_total_earned_points"] = points[0]
        out["rubric_total_max_points"] = points[1]
    score = sf.rubric_score(out)
    if score is not None:
        out["rubric_is_success"] = score >= UV_THRESHOLD
    failed = sf.outcome_verdict(out) == 0 or out.get("rubric_is_success") is False
    taxonomy: dict[str, Any] = {
        "task_verification": {
            "is_ambiguous": bool(rng.random() < AMBIGUOUS_SHARE),
            "is_invalid": bool(rng.random() < INVALID_SHARE),
        }
    }
    if failed and n_steps > 0:
        step = int(rng.integers(max(0, n_steps // 3), n_steps))
        taxonomy["first_point_of_failure"] = {
            "first_failure_step": step,
            "reasoning": f"Stricter backbone: the run goes wrong at step {step}.",
        }
    out["error_taxonomy"] = taxonomy
    return out


def sample_files(tasks: pd.DataFrame, seed: int = SEED) -> dict[str, str]:
    """`<task_id>.json` -> its re-scored score file (JSON text), for every internal task
    whose `gpt_eval_json` holds a rubric."""
    files: dict[str, str] = {}
    columns = ["split", "task_id", "gpt_eval_json", "n_screenshots"]
    for split, task_id, cell, n_shots in tasks[columns].itertuples(index=False):
        if split != "internal":
            continue
        gpt = parse_gpt_eval(cell)
        if not gpt.rubric or gpt.problem:
            continue
        rng = np.random.default_rng([seed, zlib.crc32(str(task_id).encode())])
        n = 0 if pd.isna(n_shots) else int(n_shots)
        inner = stricter(gpt.rubric, n, rng) | {"task_id": str(task_id)}
        files[f"{task_id}.json"] = json.dumps(inner)
    return files


def sample_zip(tasks: pd.DataFrame, seed: int = SEED) -> bytes:
    """The sample as a zip archive (deflated; a few hundred kilobytes on the demo)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in sample_files(tasks, seed).items():
            archive.writestr(f"{NAME}/{name}", text)
    return buffer.getvalue()

"""Universal Verifier score files in the released format, built by hand for the viewer's tests.

The project's mirror writes only the first pass (`earned_points`) and no intermediate steps,
so these helpers patch a copy of it: `two_pass_mirror` gives every internal rubric a
screenshot-grounded pass (about one criterion in five changed, the file's total = the sum of
the post-image points, as `../shared`'s DATASET.md says of the real data),
`evidence_mirror` gives one task the intermediate steps of the verifier's public example
(4 screenshots x 2 criteria, relevance rows [0,0], [9,7], [9,8], [9,8]).
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

from tests.unit.test_viewer import _replace_row, rewrite_task_row

EXAMPLE_RELEVANCE = [[0, 0], [9, 7], [9, 8], [9, 8]]
"""Rows = screenshots 0-3, columns = criteria 0-1 (DATASET.md, the public example)."""
EXAMPLE_GROUPED = {"0": [3, 2, 1], "1": [3, 2, 1]}
"""Step 3 of the example: most relevant first (both criteria start with screenshot 3)."""


PENALTY = {"criterion": "Unsolicited cart change", "description": "Added an item", "points": 1}


def example_steps() -> dict:
    """`rubric_intermediate_mm_rubric_steps` in the example's shape (keys are strings)."""
    return {
        "step1_num_screenshots": len(EXAMPLE_RELEVANCE),
        "step2_relevance_scores": {
            f"screenshot_{k}": {**{str(i): r for i, r in enumerate(row)}, "screenshot_idx": k}
            for k, row in enumerate(EXAMPLE_RELEVANCE)
        },
        "step3_grouped_screenshots": EXAMPLE_GROUPED,
        "step4_evidence_by_criterion": {
            str(c): [
                {
                    "screenshot_idx": k,
                    "screenshot_evidence": f"Criterion {c} evidence seen in screenshot {k}.",
                    "criterion_analysis": f"Analysis of criterion {c} at screenshot {k}.",
                    "discrepancies": "none" if k != 2 else f"Discrepancy {c}-{k}: a filter reset.",
                    "environment_issues_confirmed": k == 1,
                }
                for k in EXAMPLE_GROUPED[str(c)]
            ]
            for c in (0, 1)
        },
        "step5_reality_check": {"0": "Reality check of criterion 0.", "1": "Reality 1."},
        "step6_rescoring_summary": {"0": {"earned": 2, "post_image": 2}},
        "step7_penalty_criteria": [PENALTY],
        "step7_requires_penalty": True,
        "step7_reasoning": "The agent changed the cart without being asked.",
    }


def _inner(cell: str) -> tuple[dict, dict]:
    outer = json.loads(cell)
    return outer, json.loads(outer["gpt_response_text"])


def _pack(outer: dict, inner: dict) -> str:
    return json.dumps({**outer, "gpt_response_text": json.dumps(inner)})


def with_second_pass(inner: dict, rng: random.Random, share: float = 0.2) -> dict:
    """Both passes on every criterion: about `share` of them changed by the screenshots
    (mostly lowered, in 0.5-point steps); the totals rebuilt from the post-image points."""
    items = []
    for item in inner["rubric_items"]:
        earned, top = float(item["earned_points"]), float(item["max_points"])
        post = earned
        if rng.random() < share:
            if earned > 0 and (earned == top or rng.random() < 0.8):
                post = earned - 0.5 * rng.randint(1, int(earned * 2))
            elif earned < top:
                post = earned + 0.5 * rng.randint(1, int((top - earned) * 2))
        items.append(
            {
                **item,
                "post_image_earned_points": post,
                "post_image_justification": f"Grounded: {post:g} of {top:g}.",
                "reality_notes": "Checked against the screenshots.",
                "applicable_evidence": ["screenshot 1", "screenshot 2"],
            }
        )
    total = sum(i["post_image_earned_points"] for i in items)
    maximum = float(inner["rubric_total_max_points"])
    return {
        **inner,
        "rubric_items": items,
        "rubric_total_earned_points": total,
        "rubric_is_success": total / maximum >= 0.8,
    }


def internal_rubric_tasks(bench) -> list[str]:
    """Internal tasks whose score file holds a rubric."""
    out = []
    for task in bench.tasks[bench.tasks.split == "internal"].itertuples():
        try:
            _, inner = _inner(task.gpt_eval_json)
        except (ValueError, TypeError, KeyError):
            continue
        if inner.get("rubric_items"):
            out.append(str(task.task_id))
    return out


def two_pass_mirror(src: Path, dst: Path, seed: int = 29) -> Path:
    """A copy of the mirror `src` whose internal rubrics carry both passes (the score file's
    total, its `score` and `uv_rubric_score` rebuilt from the post-image points)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    shutil.copytree(src, dst)
    rng = random.Random(seed)
    for path in sorted((dst / "trajectories").glob("internal-*.parquet")):
        table = pq.read_table(path)
        cells = table.column("gpt_eval_json").to_pylist()
        scores = table.column("uv_rubric_score").to_pylist()
        for row, cell in enumerate(cells):
            try:
                outer, inner = _inner(cell)
            except (ValueError, TypeError, KeyError):
                continue
            if not inner.get("rubric_items"):
                continue
            inner = with_second_pass(inner, rng)
            score = inner["rubric_total_earned_points"] / inner["rubric_total_max_points"]
            cells[row] = _pack({**outer, "score": score}, inner)
            scores[row] = score
        for name, values in (("gpt_eval_json", cells), ("uv_rubric_score", scores)):
            index = table.schema.get_field_index(name)
            column = pa.array(values, table[name].type)
            table = table.set_column(index, table.schema.field(index), column)
        pq.write_table(table, path)
    return dst


def evidence_mirror(src: Path, dst: Path, task_id: str, steps: dict | None = None) -> Path:
    """A copy of the mirror `src` where `task_id`'s score file carries `steps` (default: the
    example's intermediate steps)."""
    shutil.copytree(src, dst)

    def edit(table, row: int):
        outer, inner = _inner(table.column("gpt_eval_json")[row].as_py())
        inner["rubric_intermediate_mm_rubric_steps"] = example_steps() if steps is None else steps
        return _replace_row(table, "gpt_eval_json", row, _pack(outer, inner))

    rewrite_task_row(dst, "trajectories", task_id, edit)
    return dst

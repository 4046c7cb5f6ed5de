"""A copy of a mirror whose internal rows carry both of the Universal Verifier's passes.

The project's mirror writes only `earned_points` today; the real score file has the
action-only `earned_points` and the screenshot-grounded `post_image_earned_points`, whose
sum is the total (`uv_rubric_score`). This copy keeps every total: each criterion's
written points become its post-image points, and about one criterion in five gets other
action-only points (mostly more: the screenshots lowered them; some less: raised). Used
by the page tests and the screenshot; `without_post_image` makes the opposite copy (one
pass recorded), so the tests hold whichever the project's mirror writes.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

Change = Callable[[str | None, np.random.Generator], str | None]


def _two_passes(cell: str | None, rng: np.random.Generator) -> str | None:
    if not cell:
        return cell
    outer = json.loads(cell)
    text = outer.get("gpt_response_text") or ""
    if not text.strip().startswith("{"):
        return cell
    inner = json.loads(text)
    for item in inner.get("rubric_items") or []:
        got, top = float(item["earned_points"]), float(item["max_points"])
        item["post_image_earned_points"] = got
        item["post_image_justification"] = "Checked against the screenshots."
        if rng.random() < 0.2:
            step = float(rng.choice([0.5, 1.0, 2.0]))
            action = got + step if rng.random() < 0.75 else got - step
            item["earned_points"] = float(min(top, max(0.0, action)))
    outer["gpt_response_text"] = json.dumps(inner)
    return json.dumps(outer)


def _one_pass(cell: str | None, rng: np.random.Generator) -> str | None:
    """The cell with every `post_image_*` field removed (the grounded points become the
    only ones, so the totals still add up)."""
    if not cell:
        return cell
    outer = json.loads(cell)
    text = outer.get("gpt_response_text") or ""
    if not text.strip().startswith("{"):
        return cell
    inner = json.loads(text)
    for item in inner.get("rubric_items") or []:
        if "post_image_earned_points" in item:
            item["earned_points"] = item.pop("post_image_earned_points")
        item.pop("post_image_justification", None)
    outer["gpt_response_text"] = json.dumps(inner)
    return json.dumps(outer)


def with_post_image(source: Path, target: Path, seed: int = 0) -> Path:
    """Copy the mirror ``source`` to ``target`` with both passes on every internal rubric."""
    return _rewrite(source, target, _two_passes, seed)


def without_post_image(source: Path, target: Path) -> Path:
    """Copy the mirror ``source`` to ``target`` with one pass only on every internal rubric
    (what the project's mirror wrote before it learnt both; old real rows too)."""
    return _rewrite(source, target, _one_pass, 0)


def _rewrite(source: Path, target: Path, change: Change, seed: int) -> Path:
    shutil.copytree(source, target)
    rng = np.random.default_rng(seed)
    for path in sorted((target / "trajectories").glob("internal-*.parquet")):
        table = pq.read_table(path)
        column = table.column("gpt_eval_json").to_pylist()
        cells = pa.array([change(c, rng) for c in column], type=pa.string())
        at = table.schema.get_field_index("gpt_eval_json")
        table = table.set_column(at, table.schema.field(at), cells)
        pq.write_table(table, path, write_page_index=True)
    return target

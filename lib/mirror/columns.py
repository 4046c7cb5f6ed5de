"""The Arrow type of every column the mirror writes (both configs), in file order.

Why a module of its own, with pyarrow only: the demo's first page builds its light tables
from these types (`lib.data.demo.light`) without importing `datasets` (seconds), and the
mirror's `datasets` features are derived from the same dict (`lib.mirror.hub.features`),
so the two cannot drift apart.
"""

from __future__ import annotations

import pyarrow as pa

SCREENSHOTS_AFTER = "web_surfer_log"
"""The `screenshots` column (a list of images, not in `TRAJECTORY_TYPES`) follows this one."""

_STR, _INT, _FLOAT = pa.string(), pa.int32(), pa.float32()
TRAJECTORY_TYPES: dict[str, pa.DataType] = {
    "task_id": _STR,
    "instruction": _STR,
    "init_url": _STR,
    "start_timestamp": _STR,
    "end_timestamp": _STR,
    "final_answer": _STR,
    "is_aborted": pa.bool_(),
    "web_surfer_log": _STR,
    "n_screenshots": _INT,
    "gpt_eval_json": _STR,
    "uv_rubric_score": _FLOAT,
    "uv_outcome_success": _INT,
    "mm_is_success": _INT,
    "verifier_is_success": _INT,
    "final_human_outcome_label": _INT,
    "final_human_process_label": _INT,
    "median_human_rubric_score_agnostic": _FLOAT,
    "majority_human_outcome_vote": _INT,
}
"""The mirror's trajectories columns but `screenshots`, in file order, as Arrow types."""
ANNOTATION_TYPES: dict[str, pa.DataType] = {
    "task_id": _STR,
    "annotator": _STR,
    "human_judgement_outcome": _STR,
    "human_judgement_process": _STR,
    "human_process_score": _FLOAT,
    "outcome_comment": _STR,
    "process_comment": _STR,
    "informed_outcome_agreement": _STR,
    "informed_process_agreement": _STR,
    "informed_outcome_comment": _STR,
    "informed_process_comment": _STR,
}

"""The expected columns of both configs, and a check of a loaded split against them.

A column's *kind* is what the code needs, not an exact Arrow type: a mirror written by
another tool may store a nullable int as int64 or float, and that is fine. A missing
column other than `task_id` is tolerated (treated as all missing) and reported; a column
of the wrong kind is an error that names it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # imported where used (a cold start of the first page needs none of it)
    import datasets

ColumnKind = Literal["string", "number", "label", "images"]


TRAJECTORY_COLUMNS: dict[str, ColumnKind] = {
    "task_id": "string",
    "instruction": "string",
    "init_url": "string",
    "start_timestamp": "string",
    "end_timestamp": "string",
    "final_answer": "string",
    "is_aborted": "number",
    "web_surfer_log": "string",
    "screenshots": "images",
    "n_screenshots": "number",
    "gpt_eval_json": "string",
    "uv_rubric_score": "number",
    "uv_outcome_success": "number",
    "mm_is_success": "number",
    "verifier_is_success": "number",
    "final_human_outcome_label": "number",
    "final_human_process_label": "number",
    "median_human_rubric_score_agnostic": "number",
    "majority_human_outcome_vote": "number",
}

ANNOTATION_COLUMNS: dict[str, ColumnKind] = {
    "task_id": "string",
    "annotator": "string",
    "human_judgement_outcome": "label",
    "human_judgement_process": "label",
    "human_process_score": "number",
    "outcome_comment": "string",
    "process_comment": "string",
    "informed_outcome_agreement": "string",
    "informed_process_agreement": "string",
    "informed_outcome_comment": "string",
    "informed_process_comment": "string",
}

COLUMNS = {"trajectories": TRAJECTORY_COLUMNS, "annotations": ANNOTATION_COLUMNS}

_NUMERIC_PREFIXES = ("int", "uint", "float", "double", "bool", "decimal", "halffloat")


@dataclass
class SchemaReport:
    """What a split lacks or gets wrong. Errors make the source unusable."""

    missing: list[str] = field(default_factory=list)
    wrong_type: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.wrong_type and "task_id" not in self.missing


def _feature_kind(feature: object) -> str:
    """Describe a datasets feature as one of our kinds (or its own type name)."""
    import datasets

    if isinstance(feature, datasets.Value):
        dtype = feature.dtype
        if dtype in ("string", "large_string"):
            return "string"
        if dtype.startswith(_NUMERIC_PREFIXES) or dtype == "null":
            return "number"
        return dtype
    if isinstance(feature, datasets.List | datasets.LargeList):
        inner = feature.feature
        if isinstance(inner, datasets.Image):
            return "images"
        if isinstance(inner, dict) and "bytes" in inner:
            return "images"
    return type(feature).__name__


def _accepts(expected: ColumnKind, actual: str) -> bool:
    if expected == "label":
        return actual in ("string", "number")
    if expected == "string":
        return actual in ("string", "number")  # an all-null column may load as a number type
    return expected == actual or (expected == "number" and actual == "null")


def check_features(config: str, features: datasets.Features) -> SchemaReport:
    """Compare a split's features with the expected columns of its config."""
    report = SchemaReport()
    for column, kind in COLUMNS[config].items():
        if column not in features:
            report.missing.append(column)
            continue
        actual = _feature_kind(features[column])
        if not _accepts(kind, actual):
            report.wrong_type.append(f"`{column}` is {actual}, expected {kind}")
    return report

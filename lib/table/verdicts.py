"""The long verdict table: one row per (split, task, rater, stage, dimension).

Every analysis page is a join of this table with itself. Columns:

- `split`, `task_id`
- `rater`: a stable id. Verifiers and task-level references use their column-like ids
  (`uv_outcome_success`, `uv_process`, `om2w_judge`, `final_human_outcome_label`, ...);
  reviewers use their annotator id (`Judge9`) for the blind stage and
  `Judge9@informed` for the informed stage.
- `kind`: `verifier`, `human` (one reviewer) or `reference` (a task-level human label)
- `annotator`: the reviewer id for human rows, else missing
- `stage`: `blind` or `informed` for human rows, else missing
- `dimension`: `outcome` or `process`
- `label`: nullable Int8, 1 / 0 / missing (missing is never 0)
- `score`: a continuous score where one exists (UV rubric score, reviewer process score)
- `raw`: text kept for a missing label that had a value (e.g. `partial`, an unknown
  agreement category, `tie (stored as 0)`)
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from lib.table.gpt_eval import om2w_judge_label, parse_gpt_eval
from lib.table.labels import (
    NOT_GIVEN,
    informed_label,
    parse_agreement,
    parse_label,
    threshold_verdict,
)
from lib.vocab import UV_THRESHOLD

OM2W = "fara7b_om2w_browserbase"
INFORMED_SUFFIX = "@informed"
UPLOAD_PREFIX = "mine:"  # rater ids of verifiers uploaded in a session (lib.uploads.predictions)
COLUMNS = ["split", "task_id", "rater", "kind", "annotator", "stage", "dimension", "label"]
COLUMNS += ["score", "raw"]


@dataclass(frozen=True)
class RaterInfo:
    """How a non-reviewer rater is named on screen and which dimension it judges."""

    title: str
    dimension: str
    kind: str


VERIFIERS: dict[str, RaterInfo] = {
    "uv_outcome_success": RaterInfo("Universal Verifier, outcome", "outcome", "verifier"),
    "uv_process": RaterInfo(
        f"Universal Verifier, process (rubric score ≥ {UV_THRESHOLD})",
        "process",
        "verifier",
    ),
    "mm_is_success": RaterInfo("Legacy multimodal verifier", "outcome", "verifier"),
    "verifier_is_success": RaterInfo("Legacy text-only verifier", "outcome", "verifier"),
    "om2w_judge": RaterInfo("Online-Mind2Web judge (om2w only)", "outcome", "verifier"),
}

REFERENCES: dict[str, RaterInfo] = {
    "final_human_outcome_label": RaterInfo("Humans, final (adjudicated)", "outcome", "reference"),
    "majority_human_outcome_vote": RaterInfo("Humans, blind majority", "outcome", "reference"),
    "final_human_process_label": RaterInfo("Humans, final process", "process", "reference"),
}

RATERS: dict[str, RaterInfo] = {**VERIFIERS, **REFERENCES}

YOUR_LABELS: dict[str, str] = {"outcome": "your_labels", "process": "your_process_labels"}
"""The session's "your labels" reference rater of each dimension (`lib.uploads.labels`):
the visitor's re-label where given, the final label elsewhere; only in a session (or a
report run with `--labels`) that has labels."""
YOUR_LABELS_TITLES: dict[str, str] = {
    "your_labels": "Your labels (outcome; final label elsewhere)",
    "your_process_labels": "Your labels (process; final label elsewhere)",
}


def rater_title(rater: str, threshold: float | None = None) -> str:
    """The one display name of a rater id, on every page, chart, table and CSV.

    Dataset verifiers and task-level labels by title (the process verdict names the
    threshold in use, ``threshold``, when given), a reviewer's blind labels as its id
    `Judge9`, their informed labels as `Judge9 (informed)`, an upload as `my-judge (yours)`.
    """
    if rater == "uv_process" and threshold is not None:
        return f"Universal Verifier, process (rubric score ≥ {threshold:g})"
    if rater in RATERS:
        return RATERS[rater].title
    if rater in YOUR_LABELS_TITLES:
        return YOUR_LABELS_TITLES[rater]
    if rater.endswith(INFORMED_SUFFIX):
        return f"{rater.removesuffix(INFORMED_SUFFIX)} (informed)"
    if rater.startswith(UPLOAD_PREFIX):
        return f"{rater.removeprefix(UPLOAD_PREFIX)} (yours)"
    return rater  # a reviewer's own (blind) labels: the id itself


def _row(task: pd.Series, rater: str, dimension: str, value: object, **extra: object) -> dict:
    parsed = parse_label(value)
    info = RATERS.get(rater)
    return {
        "split": task["split"],
        "task_id": task["task_id"],
        "rater": rater,
        "kind": info.kind if info else "human",
        "annotator": None,
        "stage": None,
        "dimension": dimension,
        "label": parsed.label,
        "score": None,
        "raw": parsed.raw,
        **extra,
    }


def shown_process_verdict(task: pd.Series) -> int | None:
    """The process verdict the informed reviewers were shown: rubric score >= 0.8.

    Fixed at the Universal Verifier's default threshold, whatever another page's
    threshold slider says, because that is what the reviewers saw.
    """
    return threshold_verdict(task.get("uv_rubric_score"), UV_THRESHOLD)


def shown_verdict(task: pd.Series, dimension: str) -> int | None:
    """The Universal Verifier's verdict the informed reviewers were shown (1 / 0 / None).

    Outcome: the verifier's own boolean `uv_outcome_success` (it has no threshold).
    Process: `shown_process_verdict`, i.e. `uv_rubric_score >= 0.8`, fixed whatever
    threshold another page's slider is set to.
    """
    if dimension == "outcome":
        return parse_label(task.get("uv_outcome_success")).label
    if dimension == "process":
        return shown_process_verdict(task)
    raise ValueError(f"unknown dimension {dimension!r}; known: ('outcome', 'process')")


def shown_verdicts(table: pd.DataFrame) -> pd.DataFrame:
    """`shown_verdict` of every task, read from the verdict table: split, task_id, dimension,
    shown (Int8 1/0/NA).

    The same rule as `shown_verdict`, on the table's own rows: the outcome label of
    `uv_outcome_success`, and the `uv_process` *score* against the default threshold
    (not its label, which a threshold slider may have re-labelled on a copy).
    """
    outcome = table.loc[table["rater"] == "uv_outcome_success", ["split", "task_id", "label"]]
    process = table.loc[table["rater"] == "uv_process", ["split", "task_id", "score"]]
    passed = (process["score"] >= UV_THRESHOLD).astype("Int8")
    process = process.assign(label=passed.where(process["score"].notna(), pd.NA))
    frame = pd.concat(
        [
            outcome.assign(dimension="outcome"),
            process[["split", "task_id", "label"]].assign(dimension="process"),
        ],
        ignore_index=True,
    )
    frame = frame.rename(columns={"label": "shown"})[["split", "task_id", "dimension", "shown"]]
    frame["shown"] = frame["shown"].astype("Int8")
    return frame.astype({"split": "string", "task_id": "string", "dimension": "string"})


def _task_rows(task: pd.Series, ties: set[str]) -> list[dict]:
    rows = [_row(task, "uv_outcome_success", "outcome", task.get("uv_outcome_success"))]
    score = task.get("uv_rubric_score")
    score = None if pd.isna(score) else float(score)
    rows.append(_row(task, "uv_process", "process", threshold_verdict(score), score=score))
    rows.append(_row(task, "mm_is_success", "outcome", task.get("mm_is_success")))
    rows.append(_row(task, "verifier_is_success", "outcome", task.get("verifier_is_success")))
    if task["split"] == OM2W:
        parsed = parse_gpt_eval(task.get("gpt_eval_json"))
        rows.append(
            _row(task, "om2w_judge", "outcome", om2w_judge_label(parsed), score=parsed.score)
        )
    rows.append(
        _row(task, "final_human_outcome_label", "outcome", task.get("final_human_outcome_label"))
    )
    majority = _row(
        task, "majority_human_outcome_vote", "outcome", task.get("majority_human_outcome_vote")
    )
    if task["task_id"] in ties and majority["label"] == 0:
        majority["raw"] = "tie (stored as 0)"
    rows.append(majority)
    rows.append(
        _row(task, "final_human_process_label", "process", task.get("final_human_process_label"))
    )
    median = task.get("median_human_rubric_score_agnostic")
    rows[-1]["score"] = None if pd.isna(median) else float(median)
    return rows


def blind_ties(annotations: pd.DataFrame) -> set[str]:
    """Tasks whose blind outcome labels split evenly (the dataset stores the majority as 0)."""
    labels = annotations["human_judgement_outcome"].map(lambda v: parse_label(v).label)
    known = annotations.assign(label=labels).dropna(subset=["label"])
    counts = known.groupby("task_id")["label"].agg(["sum", "count"])
    tied = counts[(counts["count"] >= 2) & (counts["sum"] * 2 == counts["count"])]
    return set(tied.index)


def _review_rows(review: pd.Series, task: pd.Series | None, informed_stage: bool) -> list[dict]:
    base = {"split": review["split"], "task_id": review["task_id"], "kind": "human"}
    base["annotator"] = str(review["annotator"])
    rows = []
    for dimension in ("outcome", "process"):
        blind = parse_label(review.get(f"human_judgement_{dimension}"))
        score = review.get("human_process_score") if dimension == "process" else None
        score = None if score is None or pd.isna(score) else float(score)
        rows.append(
            {**base, "rater": base["annotator"], "stage": "blind", "dimension": dimension}
            | {"label": blind.label, "score": score, "raw": blind.raw}
        )
        if not informed_stage:
            continue
        agreement = parse_agreement(review.get(f"informed_{dimension}_agreement"))
        shown = None if task is None else shown_verdict(task, dimension)
        label = informed_label(agreement, shown)
        rater = base["annotator"] + INFORMED_SUFFIX
        rows.append(
            {**base, "rater": rater, "stage": "informed", "dimension": dimension}
            | {"label": label, "score": None, "raw": agreement if agreement != NOT_GIVEN else None}
        )
    return rows


def splits_with_informed_stage(annotations: pd.DataFrame) -> set[str]:
    """Splits where any review carries an informed agreement (internal has none)."""
    given = pd.Series(False, index=annotations.index)
    for column in ("informed_outcome_agreement", "informed_process_agreement"):
        if column in annotations:
            given |= annotations[column].map(parse_agreement) != NOT_GIVEN
    return set(annotations.loc[given, "split"])


BUILD_CHUNK = 4_000
"""Tasks (then reviews) turned into verdict rows at a time. The rows are plain dicts, about
0.7 KB each: built for all 26,000 tasks of a 100x dataset at once they were a 280 MB peak
of the load (and of `python -m lib.report`); a chunk's are a few MB, then columns."""

_SHOWN_COLUMNS = ("task_id", "uv_outcome_success", "uv_rubric_score")
"""What `shown_verdict` reads of a task for the informed rows (not the texts)."""


def _frame(rows: list[dict]) -> pd.DataFrame:
    """One chunk's rows as the verdict table's columns and dtypes."""
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["label"] = table["label"].astype("Int8")
    table["score"] = table["score"].astype("float64")
    for column in ("split", "task_id", "rater", "kind", "annotator", "stage", "dimension", "raw"):
        table[column] = table[column].astype("string")
    return table


def build(tasks: pd.DataFrame, annotations: pd.DataFrame) -> pd.DataFrame:
    """Build the verdict table from the image-free tasks and annotations frames: every
    task's verifier and reference rows, then every review's blind (and informed) rows, in
    chunks of BUILD_CHUNK tasks or reviews (the same table as in one go, a bounded peak)."""
    ties = blind_ties(annotations)
    parts: list[pd.DataFrame] = []
    # Plain dicts, not `iterrows()` Series (a Series per row was 90% of the build at
    # 26,000 tasks); the row functions read them by key alike.
    for start in range(0, len(tasks), BUILD_CHUNK):
        rows: list[dict] = []
        for task in tasks.iloc[start : start + BUILD_CHUNK].to_dict("records"):
            rows.extend(_task_rows(task, ties))
        parts.append(_frame(rows))
    shown = [c for c in _SHOWN_COLUMNS if c in tasks.columns]
    by_task = {t["task_id"]: t for t in tasks[shown].to_dict("records")}
    informed_splits = splits_with_informed_stage(annotations)
    for start in range(0, len(annotations), BUILD_CHUNK):
        rows = []
        for review in annotations.iloc[start : start + BUILD_CHUNK].to_dict("records"):
            task = by_task.get(review["task_id"])
            rows.extend(_review_rows(review, task, review["split"] in informed_splits))
        parts.append(_frame(rows))
    if not parts:
        return _frame([])
    return pd.concat(parts, ignore_index=True)


def with_uv_threshold(table: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """A copy of the table whose `uv_process` labels use another rubric-score threshold."""
    out = table.copy()
    mask = out["rater"] == "uv_process"
    scores = out.loc[mask, "score"]
    out.loc[mask, "label"] = (scores >= threshold).astype("Int8").where(scores.notna(), pd.NA)
    return out

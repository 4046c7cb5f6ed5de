"""Every verdict on one task, read from the verdict table, plus the rubric and the review cards.

Part of `lib.viewer` (see its docstring); no Streamlit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from lib.table.gpt_eval import GptEval, parse_gpt_eval
from lib.table.labels import NOT_GIVEN, parse_agreement, parse_label
from lib.table.trajlog import ParsedLog
from lib.table.verdicts import RATERS, rater_title
from lib.viewer.text import as_text, truthy
from lib.vocab import NO_ANSWER, UV_THRESHOLD, reviewer_sort_key

# ---------------------------------------------------------------------------
# Verdicts of one task


@dataclass(frozen=True)
class VerdictLine:
    """One row of the verdict table, ready to show."""

    rater: str
    title: str
    kind: str
    dimension: str
    label: int | None
    raw: str | None
    score: float | None

    @property
    def text(self) -> str:
        return label_text(self.label, self.raw)


def label_text(label: int | None, raw: str | None = None) -> str:
    """`success` / `failure`, an unrecognised raw value as itself, else `missing`."""
    if label == 1:
        return "success"
    if label == 0:
        return "failure" + (f" ({raw})" if raw else "")
    return f"missing ({raw})" if raw else "missing"


@dataclass(frozen=True)
class InformedStage:
    """A reviewer's answers after seeing the Universal Verifier's verdict."""

    outcome_agreement: str
    process_agreement: str
    outcome_label: int | None
    process_label: int | None
    outcome_comment: str
    process_comment: str


@dataclass(frozen=True)
class ReviewCard:
    """One reviewer on one task: blind labels, process score, comments, informed stage."""

    annotator: str
    outcome_label: int | None
    outcome_raw: str | None
    process_label: int | None
    process_raw: str | None
    process_score: float | None
    outcome_comment: str
    process_comment: str
    informed: InformedStage | None


@dataclass(frozen=True)
class RubricItem:
    criterion: str
    description: str
    earned: float | None
    max_points: float | None
    justification: str


@dataclass(frozen=True)
class RubricView:
    """The Universal Verifier's own output (internal split's `gpt_eval_json`)."""

    items: tuple[RubricItem, ...]
    total_earned: float | None
    total_max: float | None
    rubric_is_success: bool | None
    outcome_success: bool | None
    outcome_reasoning: str
    primary_intent: str

    def items_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "criterion": i.criterion,
                    "earned": i.earned,
                    "max": i.max_points,
                    "justification": i.justification,
                    "description": i.description,
                }
                for i in self.items
            ],
            columns=["criterion", "earned", "max", "justification", "description"],
        )


@dataclass
class TaskVerdicts:
    """Every judgement of one task, grouped the way the page shows them."""

    verifiers: list[VerdictLine]
    references: list[VerdictLine]
    reviews: list[ReviewCard]
    uv_score: float | None
    uv_threshold: float
    gpt: GptEval
    rubric: RubricView | None
    has_informed: bool

    @property
    def uv_process_label(self) -> int | None:
        return None if self.uv_score is None else int(self.uv_score >= self.uv_threshold)

    def uv_score_text(self) -> str:
        """`0.53 < 0.80: process failure`, or `missing`."""
        if self.uv_score is None:
            return "missing (the Universal Verifier did not run)"
        sign = "≥" if self.uv_process_label else "<"
        verdict = label_text(self.uv_process_label)
        return f"{self.uv_score:.2f} {sign} {self.uv_threshold:.2f}: process {verdict}"


def _float(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    parsed = parse_label(value)
    return None if parsed.label is None else bool(parsed.label)


def parse_rubric(gpt: GptEval) -> RubricView | None:
    """The rubric inside an internal `gpt_eval_json`, or None when there is none."""
    data = gpt.rubric
    if not data:
        return None
    items = []
    for item in data.get("rubric_items") or []:
        if not isinstance(item, dict):
            continue
        items.append(
            RubricItem(
                criterion=as_text(item.get("criterion")),
                description=as_text(item.get("description")),
                earned=_float(item.get("earned_points")),
                max_points=_float(item.get("max_points")),
                justification=as_text(item.get("justification")),
            )
        )
    verification = data.get("rubric_outcome_verification")
    verification = verification if isinstance(verification, dict) else {}
    reasoning = as_text(data.get("outcome_reasoning") or verification.get("reasoning"))
    intent = as_text(data.get("outcome_primary_intent") or verification.get("primary_intent"))
    outcome = data.get("outcome_success", verification.get("output_success"))
    return RubricView(
        items=tuple(items),
        total_earned=_float(data.get("rubric_total_earned_points")),
        total_max=_float(data.get("rubric_total_max_points")),
        rubric_is_success=_bool(data.get("rubric_is_success")),
        outcome_success=_bool(outcome),
        outcome_reasoning=reasoning,
        primary_intent=intent,
    )


def _label_or_none(label: Any) -> int | None:
    return None if pd.isna(label) else int(label)


def _title(rater: str, dimension: str) -> str:
    """The dataset's raters have a title per dimension; others (uploads) get it added."""
    title = rater_title(rater)
    return title if rater in RATERS else f"{title}, {dimension}"


def _line(row: dict[str, Any]) -> VerdictLine:
    label = row["label"]
    score = row["score"]
    raw = row["raw"]
    return VerdictLine(
        rater=str(row["rater"]),
        title=_title(str(row["rater"]), str(row["dimension"])),
        kind=str(row["kind"]),
        dimension=str(row["dimension"]),
        label=None if pd.isna(label) else int(label),
        raw=None if pd.isna(raw) else str(raw),
        score=None if pd.isna(score) else float(score),
    )


def task_verdicts(
    table: pd.DataFrame,
    annotations: pd.DataFrame,
    task: pd.Series,
    threshold: float = UV_THRESHOLD,
) -> TaskVerdicts:
    """Assemble every verdict on one task.

    `table` is the verdict table the page uses (`ui.state.verdicts`: the dataset's rows
    plus this session's uploaded verifiers), so an uploaded verifier appears beside the
    dataset's. Verifiers come in a stable order (the dataset's, then uploads). Reviewer
    cards keep raw labels (e.g. `partial`) and the informed stage only where the split
    has one.
    """
    task_id = str(task["task_id"])
    rows = table[table["task_id"] == task_id]
    known = list(RATERS)
    order = {r: i for i, r in enumerate(known)}

    def sort_key(line: VerdictLine) -> tuple[int, str, str]:
        return (order.get(line.rater, len(known)), line.rater, line.dimension)

    records = rows.to_dict("records")
    verifiers = sorted((_line(r) for r in records if r["kind"] == "verifier"), key=sort_key)
    references = sorted((_line(r) for r in records if r["kind"] == "reference"), key=sort_key)
    humans = [r for r in records if r["kind"] == "human"]
    labels = {(str(r["annotator"]), str(r["stage"]), str(r["dimension"])): r for r in humans}
    has_informed_rows = any(r["stage"] == "informed" for r in humans)
    reviews = [
        _review_card(review, labels, has_informed=has_informed_rows)
        for review in annotations[annotations["task_id"] == task_id].to_dict("records")
    ]
    reviews.sort(key=lambda card: reviewer_sort_key(card.annotator))
    gpt = parse_gpt_eval(task.get("gpt_eval_json"))
    return TaskVerdicts(
        verifiers=verifiers,
        references=references,
        reviews=reviews,
        uv_score=_float(task.get("uv_rubric_score")),
        uv_threshold=threshold,
        gpt=gpt,
        rubric=parse_rubric(gpt),
        has_informed=any(card.informed is not None for card in reviews),
    )


def _raw(value: Any) -> str | None:
    return None if value is None or value is pd.NA or pd.isna(value) else str(value)


def _review_card(
    review: dict[str, Any],
    labels: dict[tuple[str, str, str], dict[str, Any]],
    has_informed: bool,
) -> ReviewCard:
    """One reviewer's card: labels from the verdict table, comments from the review."""
    annotator = as_text(review.get("annotator"))
    outcome = labels.get((annotator, "blind", "outcome"), {})
    process = labels.get((annotator, "blind", "process"), {})
    informed = None
    agreements = {
        d: parse_agreement(review.get(f"informed_{d}_agreement")) for d in ("outcome", "process")
    }
    comments = {d: as_text(review.get(f"informed_{d}_comment")) for d in ("outcome", "process")}
    if has_informed or any(a != NOT_GIVEN for a in agreements.values()) or any(comments.values()):
        informed = InformedStage(
            outcome_agreement=agreements["outcome"],
            process_agreement=agreements["process"],
            outcome_label=_label_or_none(
                labels.get((annotator, "informed", "outcome"), {}).get("label")
            ),
            process_label=_label_or_none(
                labels.get((annotator, "informed", "process"), {}).get("label")
            ),
            outcome_comment=comments["outcome"],
            process_comment=comments["process"],
        )
    return ReviewCard(
        annotator=annotator,
        outcome_label=_label_or_none(outcome.get("label")),
        outcome_raw=_raw(outcome.get("raw")),
        process_label=_label_or_none(process.get("label")),
        process_raw=_raw(process.get("raw")),
        process_score=_float(process.get("score")),
        outcome_comment=as_text(review.get("outcome_comment")),
        process_comment=as_text(review.get("process_comment")),
        informed=informed,
    )


def answer_flags(task: pd.Series, parsed: ParsedLog | None = None) -> list[str]:
    """Warnings about the run's end: `<no_answer>`, aborted, no terminate action."""
    flags = []
    answer = as_text(task.get("final_answer")).strip()
    if answer == NO_ANSWER:
        flags.append("The agent gave no answer (`<no_answer>`): it never terminated.")
    elif not answer:
        flags.append("The final answer is empty.")
    if truthy(task.get("is_aborted")):
        flags.append("The run was aborted before it finished.")
    if parsed is not None and not parsed.is_empty and parsed.terminate_status() is None:
        flags.append("The log has no terminate action.")
    return flags

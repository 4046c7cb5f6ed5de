"""Every verdict on one task, read from the verdict table, plus the rubric and the review cards.

Part of `lib.viewer` (see its docstring); no Streamlit.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from lib.table.gpt_eval import GptEval, parse_gpt_eval
from lib.table.labels import NOT_GIVEN, parse_agreement, parse_label
from lib.table.trajlog import ParsedLog
from lib.table.verdicts import RATERS, rater_title
from lib.viewer.evidence import VerifierEvidence, absent_evidence, parse_evidence
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


ITEMS_MAX = 200
"""Criteria of one rubric read at most (a real rubric has 2-10; a hostile cell could list a
million)."""
EVIDENCE_ITEMS_MAX = 50
"""Entries of a criterion's `applicable_evidence` list shown at most."""
LOWERED = "lowered"
RAISED = "raised"
UNCHANGED = "unchanged"


@dataclass(frozen=True)
class RubricItem:
    """One criterion, scored twice by the Universal Verifier.

    `earned`/`justification`: the first pass, from the agent's actions and answer only.
    `post_earned`/`post_justification`: the second pass, grounded in the screenshots (the
    paper's check against claims the screenshots do not bear out). The score file's total
    is the sum of the second pass, so that is the criterion's score (`points`); a row
    without the post-image fields has only the first (`has_post` False).
    """

    criterion: str
    description: str
    earned: float | None
    max_points: float | None
    justification: str
    post_earned: float | None = None
    post_justification: str = ""
    reality_notes: str = ""
    applicable_evidence: str = ""
    has_post: bool = False

    @property
    def points(self) -> float | None:
        """The criterion's score: the screenshot-grounded points when recorded."""
        return self.post_earned if self.has_post else self.earned

    @property
    def change(self) -> str | None:
        """`lowered` / `raised` / `unchanged` by the screenshots; None with one pass (or a
        pass without a number)."""
        if not self.has_post or self.earned is None or self.post_earned is None:
            return None
        if self.post_earned < self.earned:
            return LOWERED
        if self.post_earned > self.earned:
            return RAISED
        return UNCHANGED


@dataclass(frozen=True)
class RubricView:
    """The Universal Verifier's own output (internal split's `gpt_eval_json`).

    `total_earned`/`total_max` are the score file's own totals; `shown_total` is the sum of
    the criteria's `points` (what the card shows, so it adds up), and the card says when
    the file's total differs from it.
    """

    items: tuple[RubricItem, ...]
    total_earned: float | None
    total_max: float | None
    rubric_is_success: bool | None
    outcome_success: bool | None
    outcome_reasoning: str
    primary_intent: str
    n_items_in_data: int = 0

    @property
    def passes(self) -> str:
        """`two` (every criterion has both passes), `one` (none has the second), `mixed`."""
        with_post = sum(i.has_post for i in self.items)
        if self.items and with_post == len(self.items):
            return "two"
        return "mixed" if with_post else "one"

    @property
    def shown_total(self) -> float | None:
        """The sum of the criteria's points (None when a criterion has no number)."""
        points = [i.points for i in self.items]
        if not points or any(p is None for p in points):
            return None
        return float(sum(points))

    @property
    def shown_max(self) -> float | None:
        """The file's maximum; the sum of the criteria's maxima when it has none."""
        if self.total_max is not None:
            return self.total_max
        maxima = [i.max_points for i in self.items]
        return None if not maxima or None in maxima else float(sum(maxima))

    @property
    def lowered(self) -> list[int]:
        """Criteria (0-based) whose points the screenshots lowered."""
        return [k for k, i in enumerate(self.items) if i.change == LOWERED]

    @property
    def raised(self) -> list[int]:
        """Criteria (0-based) whose points the screenshots raised."""
        return [k for k, i in enumerate(self.items) if i.change == RAISED]

    def items_frame(self) -> pd.DataFrame:
        columns = [
            "criterion",
            "earned",
            "max",
            "justification",
            "description",
            "action_only",
            "screenshots",
            "change",
        ]
        return pd.DataFrame(
            [
                {
                    "criterion": i.criterion,
                    "earned": i.points,
                    "max": i.max_points,
                    "justification": i.post_justification if i.has_post else i.justification,
                    "description": i.description,
                    "action_only": i.earned,
                    "screenshots": i.post_earned if i.has_post else None,
                    "change": i.change,
                }
                for i in self.items
            ],
            columns=columns,
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
    evidence: VerifierEvidence = field(default_factory=absent_evidence)

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


def _evidence_text(value: Any) -> str:
    """`applicable_evidence` as text: a string as is, a list one entry per line (at most
    `EVIDENCE_ITEMS_MAX`), anything else as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, list):
        lines = [v if isinstance(v, str) else _json_text(v) for v in value[:EVIDENCE_ITEMS_MAX]]
        if len(value) > EVIDENCE_ITEMS_MAX:
            lines.append(f"… ({len(value) - EVIDENCE_ITEMS_MAX:,} more entries)")
        return "\n".join(lines)
    return _json_text(value)


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def rubric_item(item: dict[str, Any]) -> RubricItem:
    """One criterion of `rubric_items`; the second pass only when its points are a number."""
    post = _float(item.get("post_image_earned_points"))
    return RubricItem(
        criterion=as_text(item.get("criterion")),
        description=as_text(item.get("description")),
        earned=_float(item.get("earned_points")),
        max_points=_float(item.get("max_points")),
        justification=as_text(item.get("justification")),
        post_earned=post,
        post_justification=as_text(item.get("post_image_justification")),
        reality_notes=_evidence_text(item.get("reality_notes")),
        applicable_evidence=_evidence_text(item.get("applicable_evidence")),
        has_post=post is not None,
    )


def parse_rubric(gpt: GptEval) -> RubricView | None:
    """The rubric inside an internal `gpt_eval_json`, or None when there is none.

    Both passes of every criterion are kept (`RubricItem`); at most `ITEMS_MAX` criteria.
    """
    data = gpt.rubric
    if not data:
        return None
    raw_items = data.get("rubric_items")
    raw_items = raw_items if isinstance(raw_items, list) else []
    items = [rubric_item(item) for item in raw_items[:ITEMS_MAX] if isinstance(item, dict)]
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
        n_items_in_data=len(raw_items),
    )


def two_pass_frame(tasks: pd.DataFrame) -> pd.DataFrame:
    """One row per task whose `gpt_eval_json` holds a rubric: how the screenshots changed it.

    Columns: `split`, `task_id`, `passes` (`two` / `one` / `mixed`), `n_criteria`,
    `n_lowered`, `n_raised`, `lowered` (any criterion lowered), `shown_total`,
    `file_total`, `adds_up` (the file's total equals the sum shown, within 1e-6).
    """
    rows = []
    for task in tasks[["split", "task_id", "gpt_eval_json"]].itertuples(index=False):
        rubric = parse_rubric(parse_gpt_eval(task.gpt_eval_json))
        if rubric is None:
            continue
        shown, recorded = rubric.shown_total, rubric.total_earned
        rows.append(
            {
                "split": task.split,
                "task_id": task.task_id,
                "passes": rubric.passes,
                "n_criteria": len(rubric.items),
                "n_lowered": len(rubric.lowered),
                "n_raised": len(rubric.raised),
                "lowered": bool(rubric.lowered),
                "shown_total": shown,
                "file_total": recorded,
                "adds_up": shown is not None
                and recorded is not None
                and abs(shown - recorded) <= 1e-6,
            }
        )
    columns = ["split", "task_id", "passes", "n_criteria", "n_lowered", "n_raised", "lowered"]
    return pd.DataFrame(rows, columns=[*columns, "shown_total", "file_total", "adds_up"])


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
    rubric = parse_rubric(gpt)
    names = [item.criterion for item in rubric.items] if rubric else []
    return TaskVerdicts(
        verifiers=verifiers,
        references=references,
        reviews=reviews,
        uv_score=_float(task.get("uv_rubric_score")),
        uv_threshold=threshold,
        gpt=gpt,
        rubric=rubric,
        has_informed=any(card.informed is not None for card in reviews),
        evidence=parse_evidence(gpt, names),
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

"""The Universal Verifier's score file, read within bounds: one code path for the dataset's
internal `gpt_eval_json` cells and for uploaded score files.

A score file comes in two shapes: the inner object (`rubric_items`, the totals, the
outcome verification, the intermediate steps), or the dataset cell's wrapper
`{"score": ..., "gpt_response_text": "<the inner object as JSON text>"}`. Both are read
by `read_score_file`; `lib.table.gpt_eval.parse_gpt_eval` checks the inner object of a
dataset cell with the same `check_rubric`.

Bounds (each checked before the work it drives; a file past one is refused as a whole,
with the reason in words):

- size: `MAX_CHARS` characters of text;
- depth: `MAX_DEPTH` levels of nesting (checked by a linear scan, so a deep file gives a
  reason, never `RecursionError`);
- items: `MAX_VALUES` JSON values (objects, arrays and scalars, counted without decoding)
  and `MAX_CRITERIA` criteria in `rubric_items`;
- the relevance matrix (`step2_relevance_scores`): at most `MAX_RELEVANCE_ROWS`
  screenshots, `MAX_RELEVANCE_COLUMNS` criteria and `MAX_RELEVANCE_CELLS` rows x columns
  (the columns a row declares are its largest criterion index + 1, so a sparse row naming
  criterion 9,999 declares 10,000 columns).

Points: every `max_points`, `earned_points` and `post_image_earned_points` must be a finite
number (not a boolean, not text) with 0 <= max <= `MAX_POINTS` and 0 <= earned <= max.
A criterion that breaks this is a *bad criterion*: it is listed (`ScoreFile.bad_criteria`)
and its points are removed from the rubric (set to null), so no sum or score is built from
them (a hostile cell with NaN or 1e308 points made rubric sums infinite). The totals
`rubric_total_*` are kept only when finite and within [0, `MAX_POINTS` x criteria].

Verdicts (`ScoreFile.outcome`, `.process`, `.score`), as the dataset's columns were built
(DATASET.md, "gpt_eval_json"; `docs/uploads.md`):

- outcome: `rubric_outcome_verification.output_success`, else `outcome_success`;
- score: the sum of the post-image points over the sum of `max_points` (`earned_points`
  for a criterion without the post-image field, as old rows have), missing when a
  criterion is bad or the maximum is 0;
- process: `rubric_is_success`, else score >= the process threshold.

No Streamlit; never raises on file content.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from typing import Any

from lib.json_bounds import json_values, refusal
from lib.vocab import UV_THRESHOLD

MAX_CHARS = 5_000_000
"""Characters of one score file (or dataset cell, or its inner JSON text) decoded at most."""
MAX_DEPTH = 24
"""Nesting depth decoded at most (the verifier's output is about 6 deep; a file 64 levels
deep is refused)."""
MAX_VALUES = 200_000
"""JSON values of one score file decoded at most (a real one has a few thousand)."""
MAX_CRITERIA = 200
"""Criteria in `rubric_items` at most (a real rubric has 2-10)."""
MAX_POINTS = 1_000.0
"""Largest `max_points` of one criterion (a real criterion has 1-10)."""
MAX_RELEVANCE_ROWS = 1_000
"""Screenshots in the relevance matrix at most (a trajectory has at most about 100)."""
MAX_RELEVANCE_COLUMNS = MAX_CRITERIA
"""Criteria in the relevance matrix at most."""
MAX_RELEVANCE_CELLS = 50_000
"""Rows x columns of the relevance matrix at most."""

STEPS_KEY = "rubric_intermediate_mm_rubric_steps"
RELEVANCE_KEY = "step2_relevance_scores"
POINT_FIELDS = ("max_points", "earned_points", "post_image_earned_points")


@dataclass(frozen=True)
class BadCriterion:
    """One criterion whose points were not used: its index (from 0), name and reason."""

    index: int
    criterion: str
    reason: str

    def text(self) -> str:
        name = f' "{self.criterion[:60]}"' if self.criterion else ""
        return f"criterion {self.index}{name}: {self.reason}"


@dataclass
class ScoreFile:
    """One score file, read: the checked inner object and the verdicts it gives."""

    rubric: dict[str, Any] = field(default_factory=dict)
    """The inner object, bad criteria's points set to null, bad totals removed."""
    wrapper_score: float | None = None
    """The wrapper's `score` (finite, -1 = not evaluated -> None)."""
    task_id: str | None = None
    """A `task_id` field of the wrapper or the inner object, if any."""
    bad_criteria: list[BadCriterion] = field(default_factory=list)
    problem: str | None = None
    """Why the file was refused as a whole (then `rubric` is empty), in words."""

    @property
    def ok(self) -> bool:
        return self.problem is None and bool(self.rubric)

    @property
    def outcome(self) -> int | None:
        return outcome_verdict(self.rubric)

    @property
    def score(self) -> float | None:
        return None if self.bad_criteria else rubric_score(self.rubric)

    def process(self, threshold: float = UV_THRESHOLD) -> int | None:
        return process_verdict(self.rubric, self.score, threshold)

    def bad_text(self, limit: int = 5) -> str:
        """The bad criteria in words (at most `limit`, then how many more)."""
        shown = "; ".join(b.text() for b in self.bad_criteria[:limit])
        more = len(self.bad_criteria) - limit
        return shown + (f"; and {more} more" if more > 0 else "")


# ---------------------------------------------------------------------------------------
# Decoding within bounds


def decode(text: str) -> tuple[Any, str | None]:
    """JSON text -> (value, None), or (None, why it was not decoded) past a bound."""
    refused = refusal(text, MAX_CHARS, MAX_DEPTH)
    if refused:
        return None, refused
    n_values = json_values(text, MAX_VALUES)
    if n_values > MAX_VALUES:
        return None, f"too many values (more than {MAX_VALUES:,}; a score file has a few thousand)"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg}, line {exc.lineno})"
    except (ValueError, RecursionError) as exc:  # e.g. an integer of more than 4300 digits
        return None, f"not JSON ({str(exc)[:80] or type(exc).__name__})"


def finite_number(value: Any) -> float | None:
    """A finite float from a JSON number, or None (booleans and text are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer past the float range
        return None
    return number if math.isfinite(number) else None


def _point_problem(item: dict[str, Any]) -> str | None:
    """Why a criterion's points cannot be used, or None."""
    values = {}
    for name in POINT_FIELDS:
        if name not in item or item[name] is None:
            continue
        number = finite_number(item[name])
        if number is None:
            return f"{name} is not a finite number ({_shown(item[name])})"
        values[name] = number
    mx = values.get("max_points")
    if mx is not None and not 0 <= mx <= MAX_POINTS:
        return f"max_points {mx:g} is outside [0, {MAX_POINTS:g}]"
    for name in POINT_FIELDS[1:]:
        got = values.get(name)
        if got is None:
            continue
        if got < 0:
            return f"{name} {got:g} is negative"
        if mx is not None and got > mx:
            return f"{name} {got:g} is more than max_points {mx:g}"
    return None


def _shown(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, float) else repr(value)
    return text if len(text) <= 30 else text[:29] + "…"


def _relevance_problem(steps: Any) -> str | None:
    """Why the relevance matrix is past its bounds, or None (absent or malformed is fine:
    the evidence reader says what it cannot read)."""
    if not isinstance(steps, dict):
        return None
    matrix = steps.get(RELEVANCE_KEY)
    if not isinstance(matrix, dict | list):
        return None
    rows = list(matrix.values()) if isinstance(matrix, dict) else matrix
    columns = 0
    for row in rows[: MAX_RELEVANCE_ROWS + 1]:
        keys = (
            row.keys() if isinstance(row, dict) else range(len(row) if isinstance(row, list) else 0)
        )
        for key in keys:
            index = key if isinstance(key, int) else int(key) if str(key).isdigit() else None
            if index is not None and len(str(index)) <= 9:
                columns = max(columns, index + 1)
            elif index is not None:
                columns = max(columns, 10**9)
    if (
        len(rows) > MAX_RELEVANCE_ROWS
        or columns > MAX_RELEVANCE_COLUMNS
        or (len(rows) * columns > MAX_RELEVANCE_CELLS)
    ):
        return (
            f"the relevance matrix is {len(rows):,} screenshots x {columns:,} criteria; at most "
            f"{MAX_RELEVANCE_ROWS:,} x {MAX_RELEVANCE_COLUMNS:,} and {MAX_RELEVANCE_CELLS:,} "
            "cells are read"
        )
    return None


def check_rubric(inner: dict[str, Any]) -> tuple[dict[str, Any], list[BadCriterion], str | None]:
    """The inner object checked: (a copy with bad points nulled, the bad criteria, why the
    whole object is refused or None). The input is not changed."""
    items = inner.get("rubric_items")
    if items is not None and not isinstance(items, list):
        return {}, [], "rubric_items is not a list"
    items = items or []
    if len(items) > MAX_CRITERIA:
        return {}, [], f"{len(items):,} criteria; at most {MAX_CRITERIA} are read"
    why = _relevance_problem(inner.get(STEPS_KEY))
    if why:
        return {}, [], why
    bad: list[BadCriterion] = []
    clean_items: list[Any] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            bad.append(BadCriterion(i, "", "not an object"))
            clean_items.append(item)
            continue
        problem = _point_problem(item)
        if problem is None:
            clean_items.append(item)
            continue
        name = item.get("criterion")
        bad.append(BadCriterion(i, name if isinstance(name, str) else "", problem))
        clean_items.append({**item, **{k: None for k in POINT_FIELDS if k in item}})
    clean = dict(inner)
    if "rubric_items" in inner:
        clean["rubric_items"] = clean_items
    ceiling = MAX_POINTS * max(len(items), 1)
    for total in ("rubric_total_earned_points", "rubric_total_max_points"):
        if total in clean:
            number = finite_number(clean[total])
            if number is None or not 0 <= number <= ceiling:
                clean[total] = None
    return clean, bad, None


# ---------------------------------------------------------------------------------------
# Both shapes


def read_score_file(text: str) -> ScoreFile:
    """One score file's text, either shape, within every bound of the module docstring."""
    value, why = decode(text)
    if why:
        return ScoreFile(problem=why)
    return read_score_object(value)


def read_score_object(value: Any) -> ScoreFile:
    """A decoded score file (either shape; already within the text bounds)."""
    if not isinstance(value, dict):
        return ScoreFile(problem="not a JSON object")
    result = ScoreFile(task_id=_task_id(value))
    inner: Any = value
    if "gpt_response_text" in value:
        result.wrapper_score = wrapper_score(value.get("score"))
        text = value.get("gpt_response_text")
        if not isinstance(text, str) or not text.strip().startswith("{"):
            return replace(result, problem="gpt_response_text holds no JSON object")
        inner, why = decode(text.strip())
        if why:
            return replace(result, problem=f"gpt_response_text: {why}")
        if not isinstance(inner, dict):
            return replace(result, problem="gpt_response_text is not a JSON object")
        result.task_id = result.task_id or _task_id(inner)
    clean, bad, why = check_rubric(inner)
    if why:
        return replace(result, problem=why)
    if not any(k in clean for k in ("rubric_items", "outcome_success", "rubric_is_success",
                                     "rubric_outcome_verification")):  # fmt: skip
        return replace(result, problem="no rubric_items and no verdict: not a score file")
    return replace(result, rubric=clean, bad_criteria=bad)


def _task_id(obj: dict[str, Any]) -> str | None:
    value = obj.get("task_id")
    if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
        return str(value).strip()[:1000]
    return None


def wrapper_score(value: Any) -> float | None:
    """The wrapper's `score`: a finite number other than -1 ("not evaluated"), else None."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    score = finite_number(value)
    return None if score is None or score == -1 else score


# ---------------------------------------------------------------------------------------
# Verdicts


def _flag(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "success", "failure"):
        return int(value.strip().lower() in ("true", "success"))
    return None


def outcome_verdict(rubric: dict[str, Any]) -> int | None:
    """`rubric_outcome_verification.output_success`, else `outcome_success` (1/0/None)."""
    check = rubric.get("rubric_outcome_verification")
    if isinstance(check, dict):
        flag = _flag(check.get("output_success"))
        if flag is not None:
            return flag
    return _flag(rubric.get("outcome_success"))


def rubric_points(rubric: dict[str, Any]) -> tuple[float, float] | None:
    """(earned, max) over the criteria: the post-image points (`earned_points` where a
    criterion has no post-image field); None when a criterion lacks a usable number."""
    items = rubric.get("rubric_items")
    if not isinstance(items, list) or not items:
        return None
    earned = maximum = 0.0
    for item in items:
        if not isinstance(item, dict):
            return None
        key = "post_image_earned_points" if "post_image_earned_points" in item else "earned_points"
        got, mx = finite_number(item.get(key)), finite_number(item.get("max_points"))
        if got is None or mx is None:
            return None
        earned, maximum = earned + got, maximum + mx
    return earned, maximum


def rubric_score(rubric: dict[str, Any]) -> float | None:
    """Earned / max over the post-image points, or None (no rubric, a bad point, max 0)."""
    points = rubric_points(rubric)
    if points is None or points[1] <= 0:
        return None
    return points[0] / points[1]


def process_verdict(
    rubric: dict[str, Any], score: float | None, threshold: float = UV_THRESHOLD
) -> int | None:
    """`rubric_is_success`, else score >= `threshold` (None without either)."""
    flag = _flag(rubric.get("rubric_is_success"))
    if flag is not None:
        return flag
    return None if score is None else int(score >= threshold)


# ---------------------------------------------------------------------------------------
# Where it went wrong (the released verifier's newer output)

MAX_STEP = 10_000
"""Largest first failure step read (a trajectory has at most about 100 steps)."""


def failure_step(rubric: dict[str, Any]) -> int | None:
    """`error_taxonomy.first_point_of_failure.first_failure_step`: a step index counted from
    0 as the dataset's steps are (a whole number in [0, `MAX_STEP`]), else None."""
    taxonomy = rubric.get("error_taxonomy")
    point = taxonomy.get("first_point_of_failure") if isinstance(taxonomy, dict) else None
    value = finite_number(point.get("first_failure_step")) if isinstance(point, dict) else None
    if value is None or value != int(value) or not 0 <= value <= MAX_STEP:
        return None
    return int(value)


def task_flags(rubric: dict[str, Any]) -> tuple[bool, bool]:
    """(`is_ambiguous`, `is_invalid`) of `error_taxonomy.task_verification` (False if absent)."""
    taxonomy = rubric.get("error_taxonomy")
    check = taxonomy.get("task_verification") if isinstance(taxonomy, dict) else None
    if not isinstance(check, dict):
        return False, False
    return _flag(check.get("is_ambiguous")) == 1, _flag(check.get("is_invalid")) == 1

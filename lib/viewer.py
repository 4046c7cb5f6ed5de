"""The trajectory viewer's logic: which tasks to offer, which view a URL means, what to show.

Pure functions over the Bench's image-free frames (no Streamlit), so every rule the page
follows is unit-tested:

- a *catalog* (one row per trajectory with what the picker filters on) and
  `filter_tasks` (search, disagreement, reviewer, human outcome, family, steps,
  screenshots);
- URL resolution: `resolve_task` and `resolve_step` turn `?task=..&step=..` into a valid
  view plus `Notice`s that say what was corrected (an unknown task id, a step out of
  range): a shared link always opens *something* and says why it differs;
- `Trajectory`: the parsed log aligned with the stored screenshots, and what is odd about
  the pairing (log-only, empty log, more actions than screenshots or the reverse);
- `task_verdicts`: every verdict on one task (verifier rows of the verdict table, uploads
  included; the Universal Verifier rubric; the om2w judge's text; each reviewer's blind
  and informed stage);
- `escape_markdown`: dataset text is shown as text, never as Markdown or HTML;
- images: `check_png` (header and checksums, no pixel decode), `action_layer` (the
  action alone on a transparent PNG that the page lays over the untouched screenshot),
  `render_thumb`, and `drawn_png` (the screenshot with the action, for a download).
"""

from __future__ import annotations

import difflib
import io
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from PIL import Image

from lib import images, overlay
from lib.gpt_eval import GptEval, parse_gpt_eval
from lib.labels import NOT_GIVEN, UV_PROCESS_THRESHOLD, parse_agreement, parse_label
from lib.schema import SPLIT_SHORT
from lib.trajlog import SCREEN, ParsedLog, Step, StepView, align, describe, parse_log
from lib.verdicts import INFORMED_SUFFIX, RATERS, rater_title

NO_ANSWER = "<no_answer>"
HUMAN_REFERENCE = {"outcome": "final_human_outcome_label", "process": "final_human_process_label"}
"""The human label a verifier is compared with when filtering for disagreements."""

OUTCOME_CHOICES = ("success", "failure", "missing")
SCREENSHOT_CHOICES = ("any", "with", "without")
FILMSTRIP_SIZE = 8

CATALOG_COLUMNS = (
    "split",
    "task_id",
    "instruction",
    "family",
    "n_actions",
    "n_screenshots",
    "n_positions",
    "log_problems",
    "aborted",
    "no_answer",
    "reviewers",
    "human_outcome",
    "uv_outcome",
    "label",
)

_INTERNAL_ID = re.compile(r"^(?P<family>.+?)(?:_data)?(?:_\d+)+$")


# ---------------------------------------------------------------------------
# Text safety


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&\"'^])")


def escape_markdown(text: Any) -> str:
    """Dataset text made inert for `st.markdown`: every Markdown/HTML character escaped.

    Each ASCII punctuation mark that Markdown, GitHub-flavoured extensions, Streamlit's
    directives (`:red[..]`, `:material/..:`), LaTeX (`$`) or HTML (`<`, `&`) could act
    on is backslash-escaped (CommonMark renders `\\x` as a literal `x`). Line breaks
    become hard breaks so multi-line text keeps its lines. None/NaN give "".
    """
    if text is None or (isinstance(text, float) and math.isnan(text)) or text is pd.NA:
        return ""
    escaped = _MD_SPECIAL.sub(r"\\\1", str(text))
    lines = escaped.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "  \n".join(lines)


def as_text(value: Any) -> str:
    """A cell as display text: "" for None/NaN/NA, else `str(value)`."""
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return ""
    return str(value)


# ---------------------------------------------------------------------------
# Catalog and filters


def family_of(task_id: str) -> str:
    """Site (om2w: `Adidas--11857213` -> `Adidas`) or task family (internal:
    `alltrails_find_23`, `espn_scores_data_19_3` -> `alltrails_find`, `espn_scores`)."""
    task_id = str(task_id)
    if "--" in task_id:
        return task_id.split("--", 1)[0]
    match = _INTERNAL_ID.match(task_id)
    return match.group("family") if match else task_id


def _labels_by_task(table: pd.DataFrame, rater: str) -> dict[str, int | None]:
    rows = table[table["rater"] == rater]
    return {
        str(t): (None if pd.isna(label) else int(label))
        for t, label in zip(rows["task_id"], rows["label"], strict=True)
    }


def build_catalog(
    tasks: pd.DataFrame, annotations: pd.DataFrame, table: pd.DataFrame
) -> pd.DataFrame:
    """One row per trajectory with what the picker shows and filters on (CATALOG_COLUMNS).

    Parses every log once (260 short logs: a few ms); cache the result per source.
    """
    reviewers = (
        annotations.groupby("task_id")["annotator"]
        .agg(lambda names: ", ".join(sorted({str(n) for n in names}, key=_judge_order)))
        .to_dict()
    )
    human = _labels_by_task(table, HUMAN_REFERENCE["outcome"])
    uv = _labels_by_task(table, "uv_outcome_success")
    rows = []
    for task in tasks.itertuples(index=False):
        parsed = parse_log(getattr(task, "web_surfer_log", ""))
        shots = int(getattr(task, "n_screenshots_stored", 0) or 0)
        answer = as_text(getattr(task, "final_answer", "")).strip()
        task_id = str(task.task_id)
        rows.append(
            {
                "split": task.split,
                "task_id": task_id,
                "instruction": as_text(getattr(task, "instruction", "")),
                "family": family_of(task_id),
                "n_actions": parsed.n_actions,
                "n_screenshots": shots,
                "n_positions": len(align(parsed, shots)),
                "log_problems": parsed.n_problems,
                "aborted": _flag(getattr(task, "is_aborted", None)),
                "no_answer": answer == NO_ANSWER,
                "reviewers": reviewers.get(task_id, ""),
                "human_outcome": human.get(task_id),
                "uv_outcome": uv.get(task_id),
                "label": task_label(task_id, task.split, getattr(task, "instruction", "")),
            }
        )
    catalog = pd.DataFrame(rows, columns=list(CATALOG_COLUMNS))
    for column in ("human_outcome", "uv_outcome"):
        catalog[column] = catalog[column].astype("Int8")
    return catalog


def task_label(task_id: str, split: str, instruction: Any, width: int = 70) -> str:
    """`Adidas--11857213 · om2w · Find the cheapest…`: one line for the task picker."""
    words = " ".join(as_text(instruction).split())
    words = words if len(words) <= width else words[: width - 1] + "…"
    return f"{task_id} · {SPLIT_SHORT.get(split, split)} · {words}"


def _judge_order(name: str) -> tuple[int, str]:
    """`Judge3` before `Judge11` (numeric order), other names after."""
    digits = re.sub(r"\D", "", name)
    return (int(digits) if digits else 10**9, name)


def _flag(value: Any) -> bool:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return False
    return bool(value)


@dataclass(frozen=True)
class TaskFilter:
    """What the picker narrows the task list by. Defaults keep every task.

    `disagree_with`: a verifier rater id; keep tasks where it and the human reference
    of the same dimension (`HUMAN_REFERENCE`) both have a label and the labels differ.
    `human_outcome`: one of OUTCOME_CHOICES, on `final_human_outcome_label`.
    `min_steps`/`max_steps`: bounds on the number of logged actions (inclusive).
    `screenshots`: one of SCREENSHOT_CHOICES.
    """

    query: str = ""
    disagree_with: str | None = None
    reviewer: str | None = None
    human_outcome: str | None = None
    families: tuple[str, ...] = ()
    min_steps: int | None = None
    max_steps: int | None = None
    screenshots: str = "any"

    @property
    def active(self) -> bool:
        """True when any filter (search included) would drop a task."""
        return self != TaskFilter()


def disagreeing_tasks(table: pd.DataFrame, verifier: str) -> set[str]:
    """Tasks where `verifier` and the human reference disagree (both labels present)."""
    out: set[str] = set()
    rows = table[table["rater"] == verifier]
    for dimension in rows["dimension"].dropna().unique():
        reference = HUMAN_REFERENCE.get(str(dimension))
        if reference is None:
            continue
        mine = rows[rows["dimension"] == dimension][["task_id", "label"]]
        ref = table[(table["rater"] == reference) & (table["dimension"] == dimension)]
        both = mine.merge(ref[["task_id", "label"]], on="task_id", suffixes=("_v", "_h"))
        both = both.dropna(subset=["label_v", "label_h"])
        out |= set(both.loc[both["label_v"] != both["label_h"], "task_id"].astype(str))
    return out


def search_mask(catalog: pd.DataFrame, query: str) -> pd.Series:
    """Rows whose task id or instruction contains every word of `query` (case-insensitive)."""
    mask = pd.Series(True, index=catalog.index)
    haystack = (catalog["task_id"].astype(str) + "\n" + catalog["instruction"].astype(str)).str
    for word in query.lower().split():
        mask &= haystack.lower().str.contains(word, regex=False)
    return mask


def filter_tasks(
    catalog: pd.DataFrame,
    flt: TaskFilter,
    splits: Iterable[str] | None = None,
    table: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The catalog rows that pass `flt` (and belong to `splits`), in catalog order."""
    mask = pd.Series(True, index=catalog.index)
    if splits is not None:
        mask &= catalog["split"].isin(list(splits))
    if flt.query.strip():
        mask &= search_mask(catalog, flt.query)
    if flt.disagree_with:
        if table is None:
            raise ValueError("filtering on disagreement needs the verdict table")
        mask &= catalog["task_id"].isin(disagreeing_tasks(table, flt.disagree_with))
    if flt.reviewer:
        names = catalog["reviewers"].str.split(", ")
        mask &= names.map(lambda found: flt.reviewer in found)
    if flt.human_outcome:
        mask &= _outcome_mask(catalog["human_outcome"], flt.human_outcome)
    if flt.families:
        mask &= catalog["family"].isin(flt.families)
    if flt.min_steps is not None:
        mask &= catalog["n_actions"] >= flt.min_steps
    if flt.max_steps is not None:
        mask &= catalog["n_actions"] <= flt.max_steps
    if flt.screenshots == "with":
        mask &= catalog["n_screenshots"] > 0
    elif flt.screenshots == "without":
        mask &= catalog["n_screenshots"] == 0
    elif flt.screenshots != "any":
        raise ValueError(f"screenshots must be one of {SCREENSHOT_CHOICES}: {flt.screenshots!r}")
    return catalog[mask.astype(bool)]


def _outcome_mask(labels: pd.Series, choice: str) -> pd.Series:
    if choice == "success":
        return (labels == 1).fillna(False)
    if choice == "failure":
        return (labels == 0).fillna(False)
    if choice == "missing":
        return labels.isna()
    raise ValueError(f"human_outcome must be one of {OUTCOME_CHOICES}: {choice!r}")


# ---------------------------------------------------------------------------
# URL -> a valid view


@dataclass(frozen=True)
class Notice:
    """Something the page must say about how it read the URL (`level`: info / warning)."""

    level: str
    text: str


def resolve_task(
    catalog: pd.DataFrame,
    asked: str | None,
    split_option: str = "all",
    candidates: Sequence[str] = (),
) -> tuple[str | None, list[Notice]]:
    """The task to show for `?task=` and what to tell the reader about it.

    - no `task`: the first candidate (the filtered list), else the first task of the
      chosen split, else the first task at all;
    - a known id: that task, whatever split the sidebar shows (ids are unique across
      splits), with an info notice when it belongs to another split;
    - an unknown id: the closest id (difflib) or the default, with a warning.
    Returns (None, []) only when the catalog is empty.
    """
    if catalog.empty:
        return None, []
    ids = catalog["task_id"].astype(str).tolist()
    split_of = dict(zip(ids, catalog["split"].astype(str), strict=True))
    default = _default_task(catalog, split_option, candidates)
    asked = (asked or "").strip()
    if not asked:
        return default, []
    if asked in split_of:
        notices = []
        if split_option not in ("all", split_of[asked]):
            notices.append(
                Notice(
                    "info",
                    f"Task {asked} belongs to the split {split_of[asked]}, "
                    f"not to {split_option} chosen in the sidebar; it is shown anyway.",
                )
            )
        return asked, notices
    close = difflib.get_close_matches(asked, ids, n=1, cutoff=0.6)
    chosen = close[0] if close else default
    why = "the closest task id" if close else "the first task of the list"
    text = f"There is no task {asked} in this data. Showing {chosen} ({why}) instead."
    return chosen, [Notice("warning", text)]


def _default_task(catalog: pd.DataFrame, split_option: str, candidates: Sequence[str]) -> str:
    if candidates:
        return str(candidates[0])
    in_split = catalog[catalog["split"] == split_option]
    return str((in_split if not in_split.empty else catalog)["task_id"].iloc[0])


def resolve_step(asked: Any, n_positions: int) -> tuple[int, Notice | None]:
    """The step to show for `?step=` in a trajectory with `n_positions` steps.

    Missing -> 0 silently. Not an integer -> 0, and a step out of range -> the nearest
    valid step, each with a warning that names the valid range.
    """
    last = max(int(n_positions), 1) - 1
    if asked is None or (isinstance(asked, str) and not asked.strip()):
        return 0, None
    try:
        step = int(str(asked).strip())
    except ValueError:
        return 0, Notice("warning", f"Step {asked!r} is not a number; showing step 0.")
    if 0 <= step <= last:
        return step, None
    nearest = min(max(step, 0), last)
    text = (
        f"Step {step} is out of range: this trajectory has steps 0 to {last}. "
        f"Showing step {nearest}."
    )
    return nearest, Notice("warning", text)


# ---------------------------------------------------------------------------
# One trajectory


@dataclass
class Trajectory:
    """A task's parsed log aligned with its stored screenshots (`lib.trajlog.align`).

    `n_screenshots` is the real length of the stored list; `n_screenshots_declared` the
    `n_screenshots` column, which may disagree.
    """

    split: str
    task_id: str
    row: int
    n_screenshots: int
    n_screenshots_declared: int | None
    parsed: ParsedLog
    views: list[StepView] = field(default_factory=list)

    @property
    def n_positions(self) -> int:
        return len(self.views)

    @property
    def log_only(self) -> bool:
        """No screenshot at all: the viewer shows the log alone."""
        return self.n_screenshots == 0

    def view(self, position: int) -> StepView:
        """The view at a position, clamped into range."""
        return self.views[min(max(int(position), 0), self.n_positions - 1)]

    def notes(self) -> list[str]:
        """Plain sentences on what is unusual about this trajectory's log and screenshots."""
        notes = []
        n_actions, shots = self.parsed.n_actions, self.n_screenshots
        if shots == 0:
            notes.append(
                "No screenshots are stored for this trajectory (common in the internal "
                "split): this is a log-only view."
            )
        if self.parsed.is_empty:
            notes.append(
                "The action log is empty or holds no readable action: only the screenshots "
                "can be shown, without actions."
                if shots
                else "The action log is empty and there are no screenshots: nothing to step "
                "through."
            )
        if self.parsed.bad_lines:
            lines = ", ".join(str(n) for n, _ in self.parsed.bad_lines[:5])
            more = "…" if len(self.parsed.bad_lines) > 5 else ""
            notes.append(
                f"{len(self.parsed.bad_lines)} log line(s) could not be read as actions "
                f"(line {lines}{more}) and were skipped."
            )
        if shots and n_actions and n_actions >= shots:
            notes.append(
                f"The log has {n_actions} actions but only {shots} screenshots "
                f"(expected {n_actions + 1}): steps {shots} to {self.n_positions - 1} "
                "have no screenshot."
            )
        elif shots and n_actions and shots > n_actions + 1:
            notes.append(
                f"There are {shots} screenshots but only {n_actions} actions in the log "
                f"(expected {shots - 1}): steps {n_actions + 1} to {shots - 1} have no "
                "action."
            )
        declared = self.n_screenshots_declared
        if declared is not None and declared != shots:
            notes.append(
                f"The n_screenshots column says {declared}, but {shots} screenshots are stored."
            )
        return notes


def load_trajectory(task: pd.Series | Any) -> Trajectory:
    """Parse and align one tasks row (a `bench.tasks` row)."""
    shots = int(_get(task, "n_screenshots_stored", 0) or 0)
    declared = _get(task, "n_screenshots", None)
    declared = None if declared is None or pd.isna(declared) else int(declared)
    parsed = parse_log(_get(task, "web_surfer_log", ""))
    return Trajectory(
        split=str(_get(task, "split", "")),
        task_id=str(_get(task, "task_id", "")),
        row=int(_get(task, "row", 0)),
        n_screenshots=shots,
        n_screenshots_declared=declared,
        parsed=parsed,
        views=align(parsed, shots),
    )


def _get(row: Any, name: str, default: Any) -> Any:
    if isinstance(row, pd.Series | dict):
        return row.get(name, default)
    return getattr(row, name, default)


def filmstrip_window(position: int, n_positions: int, size: int = FILMSTRIP_SIZE) -> range:
    """`size` consecutive positions around `position`, shifted to stay inside the range."""
    size = max(1, min(size, n_positions))
    start = min(max(position - size // 2, 0), max(n_positions - size, 0))
    return range(start, start + size)


def step_caption(view: StepView, n_positions: int) -> str:
    """One line that says what this step shows: which screenshot and which action."""
    last = n_positions - 1
    shot = (
        f"screenshot {view.screenshot_index}"
        if view.screenshot_index is not None
        else "no screenshot"
    )
    if view.action is not None:
        what = f"action {view.action.index}: {describe(view.action)}"
    elif view.screenshot_index is not None and view.screenshot_index > 0:
        what = "no action (the page after the last action)"
    else:
        what = "no action"
    return f"Step {view.position} of 0–{last} · {shot} · {what}"


def step_fields(step: Step | None) -> dict[str, str]:
    """The fields shown beside the screenshot: tool, summary, URL, time, problems."""
    if step is None:
        return {}
    fields = {"tool": step.tool}
    if step.is_alias:
        fields["tool"] += f" (logged as {step.raw_tool})"
    fields["summary"] = describe(step)
    if step.url:
        fields["url"] = step.url + (
            "  (last known URL, a guess)" if step.url_source == "tracked" else ""
        )
    if step.timestamp:
        fields["time"] = step.timestamp
    if step.problems:
        fields["problems"] = "; ".join(step.problems)
    return fields


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
    threshold: float = UV_PROCESS_THRESHOLD,
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
    informed_rows = [r for r in records if str(r["rater"]).endswith(INFORMED_SUFFIX)]
    informed_labels = {
        (str(r["annotator"]), str(r["dimension"])): _label_or_none(r["label"])
        for r in informed_rows
    }
    reviews = [
        _review_card(review, informed_labels, has_informed=bool(informed_rows))
        for review in annotations[annotations["task_id"] == task_id].to_dict("records")
    ]
    reviews.sort(key=lambda card: _judge_order(card.annotator))
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


def _review_card(
    review: dict[str, Any], informed_labels: dict[tuple[str, str], int | None], has_informed: bool
) -> ReviewCard:
    annotator = as_text(review.get("annotator"))
    outcome = parse_label(review.get("human_judgement_outcome"))
    process = parse_label(review.get("human_judgement_process"))
    informed = None
    agreements = {
        d: parse_agreement(review.get(f"informed_{d}_agreement")) for d in ("outcome", "process")
    }
    comments = {d: as_text(review.get(f"informed_{d}_comment")) for d in ("outcome", "process")}
    if has_informed or any(a != NOT_GIVEN for a in agreements.values()) or any(comments.values()):
        informed = InformedStage(
            outcome_agreement=agreements["outcome"],
            process_agreement=agreements["process"],
            outcome_label=informed_labels.get((annotator, "outcome")),
            process_label=informed_labels.get((annotator, "process")),
            outcome_comment=comments["outcome"],
            process_comment=comments["process"],
        )
    return ReviewCard(
        annotator=annotator,
        outcome_label=outcome.label,
        outcome_raw=outcome.raw,
        process_label=process.label,
        process_raw=process.raw,
        process_score=_float(review.get("human_process_score")),
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
    if _flag(task.get("is_aborted")):
        flags.append("The run was aborted before it finished.")
    if parsed is not None and not parsed.is_empty and parsed.terminate_status() is None:
        flags.append("The log has no terminate action.")
    return flags


# ---------------------------------------------------------------------------
# Images (bytes in, bytes out; the page caches the results)
#
# The step view shows the stored PNG untouched (no decode, no re-encode: the browser
# scales it) with a transparent layer on top that holds only the drawn action. Drawing
# on the screenshot itself would cost a full decode and re-encode per step (about
# 200 ms for a detailed 1440x900 PNG); the layer costs about 12 ms and a few kB.

PLACEHOLDER_SIZE = (720, 450)
THUMB_WIDTH = 200


@dataclass(frozen=True)
class ShotCheck:
    """Whether stored bytes can be shown as an image, found without decoding pixels.

    `size` is the image's (width, height) when `problem` is None.
    """

    size: tuple[int, int] | None
    problem: str | None = None


def check_png(png: bytes | None, index: int | None) -> ShotCheck:
    """Read the header and verify the chunks' checksums (about 1 ms, no pixel decode).

    Catches missing, empty, non-image and truncated bytes, so a corrupt screenshot gets
    a placeholder instead of a broken image in the browser.
    """
    if index is None:
        return ShotCheck(None, "No screenshot is stored for this step.")
    if not png:
        return ShotCheck(None, f"Screenshot {index} is empty in the data.")
    try:
        with Image.open(io.BytesIO(png)) as image:
            size = image.size
            image.verify()
    except Exception as exc:  # PIL raises many types for bad bytes
        reason = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
        return ShotCheck(None, f"Screenshot {index} cannot be decoded as an image ({reason}).")
    return ShotCheck(size)


def action_layer(step: Step | None, size: tuple[int, int]) -> bytes | None:
    """A transparent PNG of `size` with only `step`'s action drawn (None: nothing to draw).

    Uses the same drawing as `lib.overlay.draw_action`, so marker, labels and badges look
    the same as on a downloaded overlaid screenshot.
    """
    if step is None:
        return None
    canvas = Image.new("RGBA", images.overlay_size(size), (0, 0, 0, 0))
    overlay._draw_step(canvas, step, SCREEN)
    return overlay._encode(canvas)


def placeholder_png(text: str) -> bytes:
    """A grey stand-in image for a missing or corrupt screenshot."""
    return overlay.placeholder(text, PLACEHOLDER_SIZE)


def drawn_png(png: bytes | None, step: Step | None, index: int | None) -> bytes:
    """The screenshot with the action drawn into it (for a download), or a placeholder."""
    check = check_png(png, index)
    if check.problem or not png:
        return placeholder_png(check.problem or "no image")
    try:
        return overlay.draw_action(png, step)
    except overlay.CorruptImage as exc:
        return placeholder_png(f"Screenshot {index} cannot be decoded ({exc})")


def render_thumb(png: bytes | None, index: int, width: int = THUMB_WIDTH) -> bytes:
    """A filmstrip thumbnail; a small placeholder when the bytes are missing or corrupt."""
    size = (width, round(width * SCREEN[1] / SCREEN[0]))
    if not png:
        return overlay.placeholder("no image", size)
    try:
        return overlay.thumbnail(png, width)
    except overlay.CorruptImage:
        return overlay.placeholder(f"{index}: corrupt", size)

"""The picker's catalog (one row per trajectory) and the filters over it.

Part of `lib.viewer` (see its docstring); no Streamlit.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from lib.table import pairs
from lib.table.trajlog import align, parse_log
from lib.viewer.text import as_text, truthy
from lib.vocab import HUMAN_REFERENCE, NO_ANSWER, reviewer_sort_key, short_split

log = logging.getLogger(__name__)


OUTCOME_CHOICES = ("success", "failure", "missing")
SCREENSHOT_CHOICES = ("any", "with", "without")

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
        .agg(lambda names: ", ".join(sorted({str(n) for n in names}, key=reviewer_sort_key)))
        .to_dict()
    )
    human = _labels_by_task(table, HUMAN_REFERENCE["outcome"])
    uv = _labels_by_task(table, "uv_outcome_success")
    rows = []
    for task in tasks.itertuples(index=False):
        try:
            rows.append(_catalog_row(task, reviewers, human, uv))
        except Exception:  # one unreadable row is listed bare, never fails the catalog
            log.exception("catalog row of %r", getattr(task, "task_id", "?"))
            rows.append(_bare_row(task))
    catalog = pd.DataFrame(rows, columns=list(CATALOG_COLUMNS))
    for column in ("human_outcome", "uv_outcome"):
        catalog[column] = catalog[column].astype("Int8")
    return catalog


def _catalog_row(task: Any, reviewers: dict, human: dict, uv: dict) -> dict[str, Any]:
    """One trajectory's catalog row (the log parsed once)."""
    parsed = parse_log(getattr(task, "web_surfer_log", ""))
    shots = int(getattr(task, "n_screenshots_stored", 0) or 0)
    answer = as_text(getattr(task, "final_answer", "")).strip()
    task_id = str(task.task_id)
    return {
        "split": task.split,
        "task_id": task_id,
        "instruction": as_text(getattr(task, "instruction", "")),
        "family": family_of(task_id),
        "n_actions": parsed.n_actions,
        "n_screenshots": shots,
        "n_positions": len(align(parsed, shots)),
        "log_problems": parsed.n_problems,
        "aborted": truthy(getattr(task, "is_aborted", None)),
        "no_answer": answer == NO_ANSWER,
        "reviewers": reviewers.get(task_id, ""),
        "human_outcome": human.get(task_id),
        "uv_outcome": uv.get(task_id),
        "label": task_label(task_id, task.split, getattr(task, "instruction", "")),
    }


def _bare_row(task: Any) -> dict[str, Any]:
    """A row that still lets the task be picked (its page then says what is wrong)."""
    task_id = str(getattr(task, "task_id", ""))
    split = str(getattr(task, "split", ""))
    return {
        **dict.fromkeys(CATALOG_COLUMNS),
        "split": split,
        "task_id": task_id,
        "instruction": "",
        "family": family_of(task_id),
        "n_actions": 0,
        "n_screenshots": int(getattr(task, "n_screenshots_stored", 0) or 0),
        "n_positions": 1,
        "log_problems": 1,
        "aborted": False,
        "no_answer": False,
        "reviewers": "",
        "label": f"{task_id} · {short_split(split)}",
    }


def task_label(task_id: str, split: str, instruction: Any, width: int = 70) -> str:
    """`Adidas--11857213 · om2w · Find the cheapest…`: one line for the task picker."""
    words = " ".join(as_text(instruction).split())
    words = words if len(words) <= width else words[: width - 1] + "…"
    return f"{task_id} · {short_split(split)} · {words}"


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
    for dimension in table.loc[table["rater"] == verifier, "dimension"].dropna().unique():
        reference = HUMAN_REFERENCE.get(str(dimension))
        if reference is None:
            continue
        both = pairs.pair(table, verifier, reference, str(dimension), how="inner")
        differ = (both["label_a"] != both["label_b"]).fillna(False).astype(bool)
        out |= set(both.loc[differ, "task_id"].astype(str))
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

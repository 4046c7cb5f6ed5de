"""One trajectory: the parsed log aligned with the stored screenshots, step captions.

Part of `lib.viewer` (see its docstring); no Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from lib.table.trajlog import ParsedLog, Step, StepView, align, describe, parse_log

FILMSTRIP_SIZE = 8

# ---------------------------------------------------------------------------
# One trajectory


@dataclass
class Trajectory:
    """A task's parsed log aligned with its stored screenshots (`lib.table.trajlog.align`).

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
    n_screenshots_in_data: int | None = None  # the list's real length, when over the cap

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
            lines = "; ".join(f"{n}: {why}" for n, why in self.parsed.bad_lines[:5])
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
        stored = max(shots, self.n_screenshots_in_data or 0)
        if stored > shots:
            notes.append(
                f"This trajectory stores {stored:,} screenshots: only the first {shots} are shown."
            )
        declared = self.n_screenshots_declared
        if declared is not None and declared != stored:
            notes.append(
                f"The n_screenshots column says {declared}, but {stored:,} screenshots are stored."
            )
        return notes


def load_trajectory(task: pd.Series | Any) -> Trajectory:
    """Parse and align one tasks row (a `bench.tasks` row)."""
    shots = int(_get(task, "n_screenshots_stored", 0) or 0)  # capped by lib.data.load
    in_data = _get(task, "n_screenshots_in_data", None)
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
        n_screenshots_in_data=None if in_data is None or pd.isna(in_data) else int(in_data),
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
    return f"Step {view.position + 1} of {last + 1} · {shot} · {what}"  # 1-based, for people


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

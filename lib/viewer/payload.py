"""What the in-browser stepper (`ui.stepper`) is handed once per trajectory: every step as
plain JSON-able fields, so stepping needs no server round trip.

Part of `lib.viewer` (see its docstring); no Streamlit. Every string here comes from the
dataset and is untrusted: the component sets it with `textContent` / attribute setters
only. Texts are capped so a 1 MB thought cannot make a 1 MB payload per step.
"""

from __future__ import annotations

import json
from typing import Any

from lib.trajlog import SCREEN, Step, describe, parse_coordinate
from lib.viewer.steps import Trajectory, step_caption

THOUGHTS_MAX = 20_000
"""Characters of a step's thoughts handed to the browser at most (then "… (N more)")."""
ARGS_MAX = 20_000
"""Characters of a step's arguments (as indented JSON) at most."""
FIELD_MAX = 2_000
"""Characters of a short field (URL, time, typed text, a problem) at most."""
PAYLOAD_STEPS_MAX = 2_000
"""Steps handed to the browser at most (a log of 100,000 lines must not hang the page)."""

_DRAG_STARTS = ("start_coordinate", "startCoordinate", "from_coordinate", "start")


def cap(text: object, limit: int) -> str:
    """`text` as a string cut to `limit` characters, saying how much was cut."""
    value = "" if text is None else str(text)
    if len(value) <= limit:
        return value
    return value[:limit] + f"… ({len(value) - limit:,} more characters)"


def alt_text(position: int, last: int, step: Step | None, shot: int | None) -> str:
    """The screenshot's alt text: step number and action (what a screen reader says)."""
    what = f"action: {describe(step)}" if step is not None else "no action"
    shown = f"screenshot {shot}" if shot is not None else "no screenshot"
    return cap(f"Step {position + 1} of {last + 1}, {shown}, {what}", 300)  # 1-based


def drag_start(step: Step) -> tuple[int, int] | None:
    """Where a drag began, when the arguments name a start point besides `coordinate`."""
    if step.coordinate is None:
        return None
    for name in _DRAG_STARTS:
        if name in step.arguments:
            return parse_coordinate(step.arguments[name])
    return None


def step_record(traj: Trajectory, position: int) -> dict[str, Any]:
    """One position of the trajectory as the component's JSON fields."""
    view = traj.view(position)
    last = traj.n_positions - 1
    step = view.action
    record: dict[str, Any] = {
        "p": view.position,
        "shot": view.screenshot_index,
        "caption": cap(step_caption(view, traj.n_positions), FIELD_MAX),
        "alt": alt_text(view.position, last, step, view.screenshot_index),
    }
    if step is None:
        record["note"] = (
            "This screenshot shows the page after the agent's last action."
            if view.screenshot_index
            else "The log has no action for this step."
        )
        return record
    on_screen = step.coordinate is not None and (
        0 <= step.coordinate[0] < SCREEN[0] and 0 <= step.coordinate[1] < SCREEN[1]
    )
    record.update(
        {
            "index": step.index,
            "tool": cap(step.tool, 200),
            "raw_tool": cap(step.raw_tool, 200) if step.is_alias else "",
            "summary": cap(describe(step), FIELD_MAX),
            "xy": list(step.coordinate) if step.coordinate else None,
            "off": bool(step.coordinate) and not on_screen,
            "from": list(start) if (start := drag_start(step)) else None,
            "text": cap(step.text, 300) if step.text is not None else None,
            "enter": step.press_enter,
            "replace": step.delete_existing_text,
            "keys": cap("+".join(step.keys or []), 200),
            "scroll": step.scroll_pixels,
            "status": cap(step.arguments.get("status", ""), 100)
            if step.tool == "terminate"
            else "",
            "thoughts": cap(step.thoughts, THOUGHTS_MAX),
            "url": cap(step.url, FIELD_MAX),
            "url_tracked": step.url_source == "tracked",
            "time": cap(step.timestamp, 200),
            "args": cap(
                json.dumps(step.arguments or {}, indent=2, ensure_ascii=False, default=str),
                ARGS_MAX,
            ),
            "problems": [cap(p, FIELD_MAX) for p in step.problems[:20]],
        }
    )
    return record


def stepper_data(
    traj: Trajectory,
    step: int,
    shots: list[str | None],
    problems: list[str | None],
    thumbs: list[str | None] | None = None,
    jump: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """Everything the component needs for one trajectory, handed over once.

    `shots[k]` is a URL the browser can fetch for screenshot k (or None with
    `problems[k]` saying why); `thumbs` the filmstrip's (the screenshots themselves
    when None). `step` is where to open; `jump` = (sequence number, step) asks an
    already open component to move (a table row picked on the server).
    """
    n = min(traj.n_positions, PAYLOAD_STEPS_MAX)
    return {
        "task": traj.task_id,
        "split": traj.split,
        "step": min(max(int(step), 0), n - 1),
        "screen": list(SCREEN),
        "steps": [step_record(traj, p) for p in range(n)],
        "cut": traj.n_positions - n,
        "shots": list(shots),
        "problems": list(problems),
        "thumbs": list(thumbs if thumbs is not None else shots),
        "jump": list(jump) if jump else None,
        "name": cap(traj.task_id, 120),
    }

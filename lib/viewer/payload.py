"""What the in-browser stepper (`ui.stepper`) is handed once per trajectory: every step as
plain JSON-able fields, so stepping needs no server round trip.

Part of `lib.viewer` (see its docstring); no Streamlit. Every string here comes from the
dataset and is untrusted: the component sets it with `textContent` / attribute setters
only. Texts are capped so a 1 MB thought cannot make a 1 MB payload per step.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from lib.table.trajlog import Step, describe, parse_coordinate
from lib.viewer.steps import Trajectory, step_caption
from lib.vocab import SCREEN

THOUGHTS_MAX = 20_000
"""Characters of a step's thoughts handed to the browser at most (then "… (N more)")."""
ARGS_MAX = 20_000
"""Characters of a step's arguments (as indented JSON) at most."""
FIELD_MAX = 2_000
"""Characters of a short field (URL, time, typed text, a problem) at most."""
PROBLEMS_MAX = 20
"""Problems of one step listed at most."""
PAYLOAD_STEPS_MAX = 2_000
"""Steps handed to the browser at most (a log of 100,000 lines must not hang the page)."""
PAYLOAD_BYTES_MAX = 8_000_000
"""JSON bytes (as Streamlit encodes them: ASCII with escapes) of one trajectory's payload
at most. The per-step caps above are the most one step gets; a long trajectory shares
this budget, so each step's texts are cut shorter (issue 32: 2,000 steps of long
thoughts sent 121 MB over the websocket, and the server held it while encoding)."""
STEP_BUDGET_FULL = 70_000
"""Characters per step at which every cap is the full one (`caps_for` reaches them all)."""
STEP_BUDGET_MIN = 300
"""Characters of text per step kept at the least, however many steps (the budget is
then checked in bytes and halved until it fits)."""


@dataclass(frozen=True)
class Caps:
    """How many characters each text of one step may keep (`caps_for`)."""

    thoughts: int = THOUGHTS_MAX
    args: int = ARGS_MAX
    field: int = FIELD_MAX
    problems: int = PROBLEMS_MAX

    @property
    def trimmed(self) -> bool:
        return self != FULL


FULL = Caps()


def caps_for(budget: int) -> Caps:
    """Caps for a budget of `budget` characters per step: thoughts 40 %, arguments 30 %,
    each short field 5 % (the full caps when the budget allows them)."""
    budget = max(int(budget), STEP_BUDGET_MIN)
    return Caps(
        thoughts=min(THOUGHTS_MAX, budget * 4 // 10),
        args=min(ARGS_MAX, budget * 3 // 10),
        field=min(FIELD_MAX, max(60, budget // 20)),
        problems=min(PROBLEMS_MAX, max(2, budget // 2_000)),
    )


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


def step_record(traj: Trajectory, position: int, caps: Caps = FULL) -> dict[str, Any]:
    """One position of the trajectory as the component's JSON fields, texts cut to `caps`."""
    view = traj.view(position)
    last = traj.n_positions - 1
    step = view.action
    record: dict[str, Any] = {
        "p": view.position,
        "shot": view.screenshot_index,
        "caption": cap(step_caption(view, traj.n_positions), caps.field),
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
            "tool": cap(step.tool, min(200, caps.field)),
            "raw_tool": cap(step.raw_tool, min(200, caps.field)) if step.is_alias else "",
            "summary": cap(describe(step), caps.field),
            "xy": list(step.coordinate) if step.coordinate else None,
            "off": bool(step.coordinate) and not on_screen,
            "from": list(start) if (start := drag_start(step)) else None,
            "text": cap(step.text, min(300, caps.field)) if step.text is not None else None,
            "enter": step.press_enter,
            "replace": step.delete_existing_text,
            "keys": cap("+".join(step.keys or []), min(200, caps.field)),
            "scroll": step.scroll_pixels,
            "status": cap(step.arguments.get("status", ""), 100)
            if step.tool == "terminate"
            else "",
            "thoughts": cap(step.thoughts, caps.thoughts),
            "url": cap(step.url, caps.field),
            "url_tracked": step.url_source == "tracked",
            "time": cap(step.timestamp, min(200, caps.field)),
            "args": cap(
                json.dumps(step.arguments or {}, indent=2, ensure_ascii=False, default=str),
                caps.args,
            ),
            "problems": [cap(p, caps.field) for p in step.problems[: caps.problems]],
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
    evidence: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything the component needs for one trajectory, handed over once.

    `shots[k]` is a URL the browser can fetch for screenshot k (or None with
    `problems[k]` saying why); `thumbs` the filmstrip's (the screenshots themselves
    when None). `step` is where to open; `jump` = (sequence number, step) asks an
    already open component to move (a table row picked on the server). `evidence`: the
    verifier's chosen screenshots per criterion (`lib.viewer.stepper_evidence`), or None.
    """
    n = min(traj.n_positions, PAYLOAD_STEPS_MAX)
    payload = {
        "task": traj.task_id,
        "split": traj.split,
        "step": min(max(int(step), 0), n - 1),
        "screen": list(SCREEN),
        "steps": [],
        "cut": traj.n_positions - n,
        "shots": list(shots),
        "problems": list(problems),
        "thumbs": list(thumbs if thumbs is not None else shots),
        "jump": list(jump) if jump else None,
        "name": cap(traj.task_id, 120),
        "trim": "",
        "evidence": evidence,
    }
    budget = max(PAYLOAD_BYTES_MAX // max(n, 1), STEP_BUDGET_MIN)
    if budget < STEP_BUDGET_FULL:  # start from the first step's encoded size per character
        sample = step_record(traj, 0, caps_for(budget))
        chars = sum(len(v) for v in sample.values() if isinstance(v, str)) or 1
        budget = int(budget * min(1.0, chars / len(json.dumps(sample))))
    while True:
        caps = FULL if budget >= STEP_BUDGET_FULL else caps_for(budget)
        payload["steps"] = [step_record(traj, p, caps) for p in range(n)]
        payload["trim"] = trim_note(caps, n)
        size = len(json.dumps(payload))  # as Streamlit encodes it (ensure_ascii)
        if size <= PAYLOAD_BYTES_MAX or budget <= STEP_BUDGET_MIN:
            return payload
        budget = max(STEP_BUDGET_MIN, int(budget * PAYLOAD_BYTES_MAX / size * 0.9))


def trim_note(caps: Caps, n_steps: int) -> str:
    """What the stepper says when a long trajectory's texts are cut shorter than usual."""
    if not caps.trimmed:
        return ""
    return (
        f"This trajectory has {n_steps:,} steps: to keep the page light, each step's thoughts "
        f"are cut at {caps.thoughts:,} characters, its arguments at {caps.args:,} and other "
        f"texts at {caps.field:,} (the cut says how much is left out)."
    )

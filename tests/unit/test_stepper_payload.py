"""What the in-browser stepper is handed is bounded by what it shows (issue 32): a long
trajectory shares one byte budget (texts cut, and said so), a normal one is untouched."""

from __future__ import annotations

import json

from lib import viewer
from lib.table.trajlog import align, parse_log
from lib.viewer import payload
from lib.viewer.steps import Trajectory
from ui.viewer.steps import TABLE_CHARS_MAX, TABLE_TEXT_COLUMNS, table_cell_max


def _trajectory(n_steps: int, chars: int, text: str = 'é中"\\\n') -> Trajectory:
    lines = []
    for k in range(n_steps):
        args = {"action": "left_click", "coordinate": [k % 1440, 5], "thoughts": text * chars}
        args["state_description"] = text * chars
        lines.append(json.dumps({"action": "left_click", "arguments": args, "url": "u" * chars}))
    parsed = parse_log("\n".join(lines))
    assert parsed.n_actions == n_steps
    return Trajectory("om2w", "t", 0, 30, 30, parsed, align(parsed, 30))


def test_a_2000_step_trajectory_of_long_texts_fits_the_budget_and_says_so() -> None:
    traj = _trajectory(2_000, 4_000)  # 20,000 characters of escapes-heavy text per field
    data = viewer.stepper_data(traj, 0, ["/m/a.png"] * 30, [None] * 30)
    size = len(json.dumps(data))
    assert size <= payload.PAYLOAD_BYTES_MAX <= 20_000_000
    assert len(data["steps"]) == 2_000 and data["cut"] == 0
    assert "2,000 steps" in data["trim"] and "cut at" in data["trim"]
    thoughts = data["steps"][0]["thoughts"]
    assert "more characters)" in thoughts and len(thoughts) < 20_000
    assert all(s["tool"] == "left_click" for s in data["steps"][:2_000])


def test_a_short_trajectory_keeps_the_full_caps() -> None:
    traj = _trajectory(20, 100, "plain words ")
    data = viewer.stepper_data(traj, 0, ["/m/a.png"] * 30, [None] * 30)
    assert data["trim"] == ""
    assert data["steps"][0]["thoughts"] == "plain words " * 100
    assert data["steps"][0]["url"] == "u" * 100


def test_caps_grow_with_the_budget_up_to_the_full_ones() -> None:
    small, large = payload.caps_for(1_000), payload.caps_for(payload.STEP_BUDGET_FULL)
    assert small.thoughts < large.thoughts == payload.THOUGHTS_MAX
    assert large.args == payload.ARGS_MAX and large.field == payload.FIELD_MAX
    assert not payload.FULL.trimmed and small.trimmed


def test_the_steps_table_shares_its_text_budget() -> None:
    assert table_cell_max(10) == 20_000
    cell = table_cell_max(2_000)
    assert cell >= 100 and 2_000 * len(TABLE_TEXT_COLUMNS) * cell <= TABLE_CHARS_MAX

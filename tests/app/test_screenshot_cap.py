"""Issue 26: a row whose screenshot list holds 3 million (null) entries.

Before, the Trajectory page built a step, a URL and a check per entry: 26 s of CPU, 1.8 GB
and a 167 MB payload for the browser. Now what a trajectory shows is capped at
`MAX_SHOTS` from the list lengths alone (`lib.data.load.capped_counts`), the real length is kept
and said, and nothing per entry reaches the page (CPU and memory: bench/dataset_bombs.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st

from lib.data.load import load_bench
from lib.data.parquet import MAX_SHOTS
from lib.data.source import resolve
from tests.helpers.apptest import open_page, texts
from tests.helpers.screenshot_bomb import build_bomb_mirror

N = 3_000_000
PAGE = "pages/4_Trajectory.py"


@pytest.fixture(scope="module")
def bomb(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("bomb") / "mirror"
    return folder, build_bomb_mirror(mirror_dir, folder, N)


def test_the_bench_caps_what_a_trajectory_shows_and_keeps_the_real_length(bomb, bench) -> None:
    folder, task_id = bomb
    big = load_bench(resolve(str(folder)))
    row = big.task(task_id)
    assert row is not None
    assert row["n_screenshots_stored"] == MAX_SHOTS and row["n_screenshots_in_data"] == N
    others = big.tasks[big.tasks["task_id"] != task_id].set_index("task_id")
    before = bench.tasks.set_index("task_id").loc[others.index]
    assert (others["n_screenshots_stored"] == before["n_screenshots_stored"]).all()
    assert (others["n_screenshots_in_data"] == before["n_screenshots_stored"]).all()
    (warning,) = [w for w in big.warnings if "screenshots" in w]
    assert task_id in warning and f"{N:,}" in warning and f"first {MAX_SHOTS}" in warning


def test_the_trajectory_page_shows_the_cap_and_says_so(bomb, monkeypatch) -> None:
    """The page renders (no exception), hands the stepper MAX_SHOTS screenshots, not 3 M,
    and says how many are stored and how many are shown."""
    folder, task_id = bomb
    monkeypatch.setenv("CUAVB_DATA", str(folder))
    st.cache_data.clear()
    at = open_page(PAGE, timeout=300, split="internal", task=task_id)
    assert not at.exception, [e.value for e in at.exception]
    (component,) = [
        c for c in at.get("bidi_component") if c.proto.component_name == "cuavb_stepper"
    ]
    sent = json.loads(component.proto.json)
    assert len(sent["shots"]) == MAX_SHOTS and len(sent["problems"]) == MAX_SHOTS
    assert len(component.proto.json) < 2_000_000  # was 167 MB
    shown = texts(at)
    assert f"This trajectory stores {N:,} screenshots: only the first {MAX_SHOTS}" in shown
    assert f"but {N:,} screenshots are stored" in shown  # the declared count is compared

"""One log line nested 100,000 levels deep (issue 32): that trajectory says why, every
other one opens as before. Before, `json.loads` raised `RecursionError` while the
catalog parsed every log, and the Trajectory page failed for every trajectory."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lib import viewer
from lib.data.load import load_bench
from lib.data.source import resolve
from lib.table.gpt_eval import parse_gpt_eval
from tests.app.test_viewer_page import data
from tests.helpers.apptest import open_page, texts
from tests.unit.test_viewer import _replace_row, rewrite_task_row, special_tasks

PAGE = "pages/4_Trajectory.py"
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture(scope="module")
def deep(bench, mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A mirror where one om2w trajectory's log line 2 (and its gpt_eval_json) is 100,000
    levels deep; its other lines are kept."""
    kinds = special_tasks(bench)
    task_id, other = kinds["om2w_normal"], kinds["internal_normal"]
    dst = tmp_path_factory.mktemp("deep") / "m"
    shutil.copytree(mirror_dir, dst)

    def edit(table, row: int):
        lines = table.column("web_surfer_log")[row].as_py().split("\n")
        lines.insert(1, DEEP)
        table = _replace_row(table, "web_surfer_log", row, "\n".join(lines))
        return _replace_row(table, "gpt_eval_json", row, DEEP)

    rewrite_task_row(dst, "trajectories", task_id, edit)
    original = bench.task(task_id)
    return {"dir": dst, "task": task_id, "other": other, "original": original}


def test_the_deep_line_is_one_bad_line_and_the_rest_of_the_log_is_kept(deep, bench) -> None:
    loaded = load_bench(resolve(str(deep["dir"])))
    traj = viewer.load_trajectory(loaded.task(deep["task"]))
    before = viewer.load_trajectory(deep["original"])
    assert traj.parsed.bad_lines == [(2, "nested too deeply (more than 32 levels)")]
    assert [s.tool for s in traj.parsed.steps] == [s.tool for s in before.parsed.steps]
    assert "nested too deeply" in parse_gpt_eval(DEEP).problem
    catalog = viewer.build_catalog(loaded.tasks, loaded.annotations, loaded.verdicts)
    expected = viewer.build_catalog(bench.tasks, bench.annotations, bench.verdicts)
    assert len(catalog) == len(expected)
    mine = catalog.set_index("task_id").loc[deep["task"]]
    assert mine["n_actions"] == before.parsed.n_actions
    assert mine["log_problems"] == before.parsed.n_problems + 1
    rest = catalog[catalog.task_id != deep["task"]].reset_index(drop=True)
    same = expected[expected.task_id != deep["task"]].reset_index(drop=True)
    assert rest.drop(columns=["uv_outcome"]).equals(same.drop(columns=["uv_outcome"]))


def test_every_other_trajectory_opens_and_the_deep_one_says_why(
    deep, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUAVB_DATA", str(deep["dir"]))
    at = open_page(PAGE, task=deep["other"], step="1")
    assert not at.exception
    assert not at.error
    sent = data(at)
    assert sent["task"] == deep["other"] and sent["step"] == 1
    assert all(url for url in sent["shots"])

    at = open_page(PAGE, task=deep["task"], step="0")
    assert not at.exception
    sent = data(at)
    assert sent["task"] == deep["task"]
    assert "1 log line(s) could not be read as actions (line 2: nested too deeply" in texts(at)
    assert all(url for url in sent["shots"])
    # the steps are the log's other actions, in order
    before = viewer.load_trajectory(deep["original"])
    assert [s.get("tool") for s in sent["steps"][: before.parsed.n_actions]] == [
        s.tool for s in before.parsed.steps
    ]

"""The Universal Verifier's evidence in the viewer (issue 29): relevance heatmap, chosen
screenshots, the jump rule, evidence per criterion, penalties; absent or malformed steps
said to be absent, never an error; every count bounded.

The example is the verifier's public score file's shape (DATASET.md): 4 screenshots x 2
criteria, relevance rows [0,0], [9,7], [9,8], [9,8], step 3 starting with screenshot 3.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lib import viewer
from lib.table.gpt_eval import GptEval
from tests.app.test_viewer_page import data
from tests.helpers.apptest import open_page, shown
from tests.helpers.uv_score_file import EXAMPLE_RELEVANCE, PENALTY, evidence_mirror, example_steps
from tests.unit.test_viewer import special_tasks

PAGE = "pages/4_Trajectory.py"
NAMES = ["Search performed", "Results shown"]


def _evidence(steps, names=NAMES) -> viewer.VerifierEvidence:
    return viewer.parse_evidence(
        GptEval(rubric={"rubric_intermediate_mm_rubric_steps": steps}), names
    )


def test_the_example_reads_as_its_relevance_rows() -> None:
    ev = _evidence(example_steps())
    assert ev.present and not ev.problems and not ev.absent
    assert ev.relevance_matrix() == EXAMPLE_RELEVANCE
    assert [c.label for c in ev.criteria] == ["1 · Search performed", "2 · Results shown"]
    assert [c.chosen for c in ev.criteria] == [(3, 2, 1), (3, 2, 1)]
    assert [c.best for c in ev.criteria] == [3, 3]
    first = ev.criteria[0].entries[0]
    assert (first.screenshot, first.evidence) == (3, "Criterion 0 evidence seen in screenshot 3.")
    assert ev.criteria[0].entries[1].discrepancies == "Discrepancy 0-2: a filter reset."
    assert ev.criteria[0].entries[2].environment_issues == "yes"
    assert ev.criteria[0].reality_check == "Reality check of criterion 0."
    assert ev.requires_penalty is True and ev.penalties[0].title == PENALTY["criterion"]
    assert dict(ev.penalties[0].fields) == {"description": "Added an item", "points": "1"}
    assert ev.n_screenshots_declared == 4


def test_most_relevant_rule() -> None:
    # without a grouping: the highest relevance, ties to the later screenshot (the example
    # gives 3 for both criteria either way)
    steps = example_steps()
    del steps["step3_grouped_screenshots"]
    ev = _evidence(steps)
    assert [c.best for c in ev.criteria] == [3, 3] and all(not c.chosen for c in ev.criteria)
    assert viewer.most_relevant((), {0: 0, 1: 9, 2: 9, 3: 9}) == 3
    assert viewer.most_relevant((), {0: 5, 1: 9, 2: 2}) == 1
    assert viewer.most_relevant((2, 3), {3: 10}) == 2  # the verifier's own order wins
    assert viewer.most_relevant((), {}) is None


def test_absent_and_malformed_steps_are_said_never_raised() -> None:
    none = viewer.parse_evidence(GptEval(rubric={"rubric_items": []}), [])
    assert not none.present and none.absent and not none.problems
    bad = _evidence("not an object")
    assert not bad.present and "not read" in bad.problems[0]
    weird = _evidence(
        {
            "step2_relevance_scores": {
                "screenshot_0": {"0": "7", "1": None, "x": 3, "screenshot_idx": 0},
                "screenshot_1": [1, 2],
                "screenshot_x": {"0": 5},
                "screenshot_2": {"0": float("nan"), "1": True, "2": 4},
                "screenshot_99999999": {"0": 1},
            },
            "step3_grouped_screenshots": {"0": ["2", 2, -1, "a", {"screenshot_idx": 0}], "z": [1]},
            "step4_evidence_by_criterion": [["plain text entry"], {"screenshot_idx": "nope"}],
            "step7_penalty_criteria": "one string penalty",
            "step7_requires_penalty": "maybe",
        }
    )
    assert weird.present
    assert weird.relevance.to_dict("records") == [
        {"criterion": 0, "screenshot": 0, "relevance": 7.0},
        {"criterion": 2, "screenshot": 2, "relevance": 4.0},
    ]
    assert weird.criteria[0].chosen == (2, 0) and weird.criteria[0].best == 2
    assert weird.criteria[0].entries[0].evidence == "plain text entry"
    assert weird.criteria[1].entries[0].screenshot is None
    assert weird.penalties[0].title == "one string penalty" and weird.requires_penalty is None
    assert any("relevance matrix" in p for p in weird.problems)
    assert any("not criterion numbers" in p for p in weird.problems)


def test_every_count_is_bounded() -> None:
    ev_mod = viewer.evidence
    huge = {
        "step2_relevance_scores": {
            f"screenshot_{k}": {**{str(c): 5 for c in range(500)}, "screenshot_idx": k}
            for k in range(5000)
        },
        "step3_grouped_screenshots": {str(c): list(range(1000)) for c in range(500)},
        "step4_evidence_by_criterion": {"0": [{"screenshot_evidence": "x" * 10**6}] * 1000},
        "step7_penalty_criteria": [{"criterion": "p", **{str(i): i for i in range(100)}}] * 1000,
    }
    ev = _evidence(huge, [])
    assert ev.relevance["screenshot"].max() < ev_mod.SHOTS_MAX
    assert ev.relevance["criterion"].max() < ev_mod.CRITERIA_MAX
    assert len(ev.criteria) <= ev_mod.CRITERIA_MAX
    assert max(len(c.chosen) for c in ev.criteria) == ev_mod.CHOSEN_MAX
    assert len(ev.criteria[0].entries) == ev_mod.ENTRIES_MAX
    assert len(ev.criteria[0].entries[0].evidence) < ev_mod.TEXT_MAX + 40
    assert len(ev.penalties) == ev_mod.PENALTIES_MAX
    assert len(ev.penalties[0].fields) <= ev_mod.FIELDS_MAX


def test_the_stepper_gets_each_criterion_and_its_step() -> None:
    ev = _evidence(example_steps())
    marks = viewer.stepper_evidence(ev, n_positions=4, n_screenshots=4)
    assert [
        (c["i"], c["chosen"], c["best"], c["step"], c["stored"]) for c in marks["criteria"]
    ] == [
        (0, [3, 2, 1], 3, 3, True),
        (1, [3, 2, 1], 3, 3, True),
    ]
    assert marks["relevance"]["1"] == {"0": 9.0, "1": 7.0}
    short = viewer.stepper_evidence(ev, n_positions=3, n_screenshots=0)
    assert [(c["step"], c["stored"]) for c in short["criteria"]] == [(None, False)] * 2


# --------------------------------------------------------------------------- the page


@pytest.fixture(scope="module")
def example(bench, mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    task_id = special_tasks(bench)["internal_normal"]
    dst = evidence_mirror(mirror_dir, tmp_path_factory.mktemp("evidence") / "m", task_id)
    return {"dir": dst, "task": task_id}


def _chart_values(at) -> list[dict]:
    charts = at.get("vega_lite_chart")
    assert charts, "no Altair chart on the page"
    from streamlit import dataframe_util

    (dataset,) = charts[0].proto.datasets  # Streamlit sends the chart's data as Arrow
    frame = dataframe_util.convert_arrow_bytes_to_pandas_df(dataset.data.data)
    assert "relevance" in json.loads(charts[0].proto.spec)["layer"][0]["encoding"]["color"]["field"]
    return frame.to_dict("records")


def test_the_page_shows_the_heatmap_values_and_hands_the_stepper_the_marks(
    example, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUAVB_DATA", str(example["dir"]))
    at = open_page(PAGE, task=example["task"], step="0")
    assert not at.exception and not at.error
    rows = _chart_values(at)
    got = {(int(r["screenshot"]), int(r["criterion"])): float(r["relevance"]) for r in rows}
    want = {(k, c): float(r) for k, row in enumerate(EXAMPLE_RELEVANCE) for c, r in enumerate(row)}
    assert got == want
    assert {(int(r["screenshot"]), int(r["criterion"])) for r in rows if r["chosen"]} == {
        (k, c) for k in (1, 2, 3) for c in (0, 1)
    }
    sent = data(at)["evidence"]
    assert [c["step"] for c in sent["criteria"]] == [3, 3]
    labels = [e.label for e in at.expander]
    assert any("chosen screenshots 3, 2, 1" in shown(label) for label in labels)
    plain = [t.value for t in at.text]
    assert "Criterion 1 evidence seen in screenshot 2." in plain
    assert "Discrepancy 1-2: a filter reset." in plain
    assert "The agent changed the cart without being asked." in plain
    body = "\n".join(shown(e.value) for e in at.markdown)
    assert "Unsolicited cart change" in body


def _without_steps(bench) -> str:
    """An internal task with a rubric and screenshots whose score file has no steps (the
    mirror leaves them out on a few rows, as on real rows whose file lacks them)."""
    for task in bench.tasks[bench.tasks.split == "internal"].itertuples():
        text = task.gpt_eval_json or ""
        steps = "rubric_intermediate_mm_rubric_steps" in text
        if "rubric_items" in text and not steps and task.n_screenshots_stored:
            return task.task_id
    raise AssertionError("the mirror has no internal row without the verifier's steps")


def test_a_row_without_the_steps_says_so(use_mirror: Path, bench) -> None:
    task_id = _without_steps(bench)
    at = open_page(PAGE, task=task_id)
    assert not at.exception and not at.error
    assert any("not recorded for this task" in c.value for c in at.caption)
    assert data(at)["evidence"] is None
    assert not at.get("vega_lite_chart") or all(
        "relevance" not in c.proto.spec for c in at.get("vega_lite_chart")
    )


def test_hostile_and_long_evidence_text_is_shown_as_text(
    bench, mirror_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dataset text in the evidence (criterion names come from the rubric, the rest from
    the steps) shows as its own text; a long text gets its expander inside the
    criterion's expander; nothing raises."""
    from tests.unit.test_viewer import HOSTILE

    task_id = special_tasks(bench)["internal_normal"]
    steps = example_steps()
    long = "Long evidence " + "x" * 5000
    steps["step4_evidence_by_criterion"]["0"][0]["screenshot_evidence"] = long
    steps["step4_evidence_by_criterion"]["1"][0]["discrepancies"] = HOSTILE
    steps["step7_penalty_criteria"] = [{"criterion": HOSTILE, HOSTILE[:20]: HOSTILE}]
    steps["step5_reality_check"]["0"] = HOSTILE
    mirror = evidence_mirror(mirror_dir, tmp_path / "m", task_id, steps)
    monkeypatch.setenv("CUAVB_DATA", str(mirror))
    at = open_page(PAGE, task=task_id, step="0")
    assert not at.exception and not at.error
    plain = [t.value for t in at.text]
    assert HOSTILE in plain
    assert any(t.startswith("Long evidence xxx") and len(t) < 3100 for t in plain)
    assert any(t.startswith("Long evidence") and len(t) > 5000 for t in plain)  # expander
    markdown = "\n".join(e.value for e in at.markdown)
    assert "<script>" not in markdown and "](javascript" not in markdown
    assert HOSTILE in "\n".join(shown(e.value) for e in at.markdown)  # the penalty's title

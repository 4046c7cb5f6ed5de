"""AppTest of score-file uploads on the Your verifier page (issue 41): a zip of the mirror's
internal score files, several JSON files at once, and a hostile archive."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.helpers import score_zips as Z
from tests.helpers.apptest import open_page, shown
from ui.state import UPLOADS_KEY
from ui.your_verifier import MANY_KEY, UPLOADER_KEY

PAGE = "pages/5_Your_verifier.py"


def _raters(at: AppTest) -> list[str]:
    rows = at.session_state[UPLOADS_KEY] if UPLOADS_KEY in at.session_state else None  # noqa: SIM401
    return [] if rows is None else list(dict.fromkeys(rows["rater"]))


def test_a_zip_of_score_files_adds_a_verifier(use_mirror: Path, bench) -> None:
    at = open_page(PAGE)
    data = Z.cells_zip(bench.tasks)
    n = len(Z.internal_cells(bench.tasks))
    at.file_uploader(key=UPLOADER_KEY).set_value(("uv_again.zip", data, "application/zip"))
    at = at.run()
    assert not at.exception
    assert f"(score files): {n} rows read, **{n} used**, 0 dropped" in shown(at.success[0].value)
    assert _raters(at) == ["mine:uv_again"]
    words = "carries their verdicts and failure steps, not the rubric detail"
    assert any(words in c.value for c in at.caption)


def test_several_json_files_and_a_hostile_zip(use_mirror: Path, bench) -> None:
    at = open_page(PAGE)
    cells = list(Z.internal_cells(bench.tasks).items())[:3]
    files = [(f"{t}.json", c.encode(), "application/json") for t, c in cells]
    files.append(("../evil.json", b"{nope", "application/json"))
    at.file_uploader(key=MANY_KEY).set_value(files)
    at = at.run()
    assert not at.exception
    assert "3 used**, 1 dropped" in shown(at.success[0].value)
    assert _raters(at) == ["mine:score_files"]
    at.file_uploader(key=UPLOADER_KEY).set_value(("bomb.zip", Z.zip_bomb(150), "application/zip"))
    at = at.run()
    assert not at.exception
    (error,) = at.error
    assert "Nothing was loaded" in shown(error.value) and "zip bomb" in shown(error.value)
    assert _raters(at) == ["mine:score_files"]  # the earlier verifier is kept


TRAJECTORY = "pages/4_Trajectory.py"


def test_the_trajectory_page_shows_the_uploaded_rubric_with_both_passes(
    use_mirror: Path, bench
) -> None:
    import json
    import re

    def inner_of(cell: str) -> dict:
        return json.loads(json.loads(cell)["gpt_response_text"])

    def lowerable(inner: dict) -> list[dict]:
        return [i for i in inner["rubric_items"] if i.get("post_image_earned_points", 0) >= 1]

    cells = Z.internal_cells(bench.tasks)
    steps = "rubric_intermediate_mm_rubric_steps"
    task_id = next(t for t, c in cells.items() if lowerable(inner_of(c)) and steps in c)
    inner = inner_of(cells[task_id])
    item = lowerable(inner)[0]
    item["post_image_earned_points"] -= 1  # a stricter backbone lowers one criterion
    item["post_image_justification"] = "STRICTER: the screenshot does not show it."
    data = Z.zip_of({f"{task_id}.json": json.dumps(inner)})
    at = open_page(PAGE)
    at.file_uploader(key=UPLOADER_KEY).set_value(("stricter.zip", data, "application/zip"))
    at = at.run()
    assert not at.exception and _raters(at) == ["mine:stricter"]
    at.query_params["task"] = task_id
    at.switch_page(TRAJECTORY)
    at = at.run()
    assert not at.exception
    titles = [shown(e.label) for e in at.expander]
    uv = [t for t in titles if t.startswith("Universal Verifier rubric:")]
    mine = [t for t in titles if t.startswith("stricter (yours) rubric:")]
    assert len(uv) == 1 and len(mine) == 1
    total = re.compile(r"rubric: ([\d.]+) of ([\d.]+) points \(screenshot-grounded\)")
    (uv_total, uv_max), (my_total, my_max) = (total.search(t).groups() for t in (uv[0], mine[0]))
    assert float(my_total) == float(uv_total) - 1 and my_max == uv_max
    assert "STRICTER: the screenshot does not show it." in [t.value for t in at.text]
    subheaders = [shown(h.value) for h in at.subheader]
    assert "stricter (yours): evidence" in subheaders  # its intermediate steps
    assert "The Universal Verifier's evidence" in subheaders


def test_inside_the_verifier_offers_the_uploaded_verifier(use_mirror: Path, bench) -> None:
    at = open_page(PAGE, split="internal")  # score files exist for internal tasks only
    data = Z.cells_zip(bench.tasks)
    at.file_uploader(key=UPLOADER_KEY).set_value(("uv_again.zip", data, "application/zip"))
    at = at.run()
    at.switch_page("pages/7_Inside_the_verifier.py")
    at = at.run()
    assert not at.exception

    def tables() -> list:  # links carry the session's state (`v=`): not compared; the
        # dataset stores uv_rubric_score as float32: equal to 6 decimals
        frames = [d.value.drop(columns=["link"], errors="ignore") for d in at.dataframe]
        heads.update(c for f in frames for c in f.columns)
        # a cell's task table heads the verifier's columns by its name (else "UV ...")
        frames = [f.rename(columns=lambda c: c.replace("uv_again (yours) ", "UV ")) for f in frames]
        return [f.round(6).to_json() for f in frames]

    heads: set = set()

    uv = tables()
    assert len(uv) >= 2
    (choice,) = [s for s in at.selectbox if s.key == "inside_verifier"]
    assert choice.options == ["Universal Verifier", "uv_again (yours)"]
    at = choice.set_value("uv_again (yours)").run()
    assert not at.exception
    lead = "uv_again (yours) scores each rubric criterion"
    assert any(lead in shown(m.value) for m in at.markdown)
    assert "uv_again (yours)" in [shown(h.value) for h in at.subheader]  # its quadrant
    heads.clear()
    mine = tables()
    assert mine == uv  # the dataset's own score files: the same numbers, task for task
    assert "uv_again (yours) rubric score" in heads and "UV rubric score" not in heads

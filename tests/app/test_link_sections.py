"""AppTest: a link carries more than the verdicts (`?v=`, `lib.uploads.link_codec`'s
optional sections): the visitor's own labels (issue 42) and the uploaded verifiers'
versions and runs (issue 40). Each opens in a fresh session, with nothing on the server;
a damaged section loads nothing and says why in one line."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from lib.analysis import iterations as it
from lib.uploads import history_section, link_codec
from tests.helpers.apptest import open_page, texts
from ui.state import HISTORY_KEY, LABELS_KEY, UPLOADS_KEY

AUDIT = "pages/8_Audit.py"
YOURS = "pages/5_Your_verifier.py"
AGREEMENT = "pages/1_Agreement.py"


def _payload(at) -> str:
    payload = at.query_params.get(link_codec.PARAM)
    payload = payload[0] if isinstance(payload, list) else payload
    assert payload and link_codec.fits(payload)
    return payload


def _held(at, key: str) -> pd.DataFrame | None:
    return at.session_state[key] if key in at.session_state else None  # noqa: SIM401


def _canon(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    return frame[columns].astype(str).sort_values(columns).reset_index(drop=True)


def test_your_labels_travel_in_the_link(use_mirror: Path) -> None:
    """Labels uploaded on Audit (no predictions) put a `v=` in the URL; a fresh session
    opened with it has the same labels, and Agreement offers 'your labels'."""
    at = open_page(AUDIT)
    sample = (use_mirror / "sample_labels.csv").read_bytes()
    at.file_uploader(key="audit_upload").set_value(("labels.csv", sample, "text/csv"))
    at.run()
    assert not at.exception
    mine = _held(at, LABELS_KEY)
    assert mine is not None and len(mine) > 0
    payload = _payload(at)

    fresh = open_page(AGREEMENT, v=payload)
    assert not fresh.exception
    got = _held(fresh, LABELS_KEY)
    cols = ["split", "task_id", "dimension", "label"]
    assert got is not None
    pd.testing.assert_frame_equal(_canon(got, cols), _canon(mine, cols))
    assert _held(fresh, UPLOADS_KEY) is None  # the link held labels only
    options = [o for s in fresh.selectbox for o in s.options]
    assert any("your labels" in str(o).lower() for o in options), options


def test_versions_and_runs_travel_in_the_link(use_mirror: Path, bench) -> None:
    """The sample history uploaded on Your verifier: a fresh session opened with the link
    has the same version-runs, and its Iterations section shows them."""
    history_csv = it.sample_history(bench.verdicts).to_csv(index=False).encode()
    at = open_page(YOURS)
    at.file_uploader(key="predictions_file").set_value(
        ("sample_history.csv", history_csv, "text/csv")
    )
    at.run()
    assert not at.exception
    mine = _held(at, HISTORY_KEY)
    assert mine is not None and len(mine) > 0
    payload = _payload(at)

    fresh = open_page(YOURS, v=payload)
    fresh = fresh.run(timeout=120)
    assert not fresh.exception
    got = _held(fresh, HISTORY_KEY)
    cols = ["rater", "version", "order", "run", "split", "task_id", "dimension", "label"]
    assert got is not None
    pd.testing.assert_frame_equal(_canon(got, cols), _canon(mine, cols))
    page = texts(fresh)
    assert "**10 versions**" in page and "6 unstable task(s)" in page


def test_a_damaged_history_section_loads_nothing(use_mirror: Path, bench) -> None:
    """A link whose history section does not decode refuses the whole link in one line."""
    from ui.state import task_order

    order = task_order(bench)
    empty = pd.DataFrame(columns=["split", "task_id", "rater", "dimension", "label"])
    payload = link_codec.encode(empty, order, extra=[(link_codec.HISTORY, b"\x78\x9c junk")])
    with pytest.raises(link_codec.LinkError, match="version history"):
        link_codec.decode(payload, order)
    at = open_page(AGREEMENT, v=payload)
    assert not at.exception
    lines = [w.value for w in at.warning if "were not loaded" in w.value]
    assert len(lines) == 1 and "\n" not in lines[0]
    assert _held(at, HISTORY_KEY) is None and _held(at, UPLOADS_KEY) is None
    assert history_section.MAX_BYTES >= 2**20  # the section's own bound is checked first


def test_failure_steps_travel_in_the_link(use_mirror: Path, bench) -> None:
    """The sample score files uploaded on Your verifier: a fresh session opened with the
    link has every failure step (not the rubric detail), and the Trajectory page hands the
    stepper the mark of a task the stricter backbone fails."""
    import json

    from lib.uploads.score_sample import sample_files, sample_zip
    from ui.state import FAILURE_STEPS_KEY, FLAGGED_KEY, SCORE_FILES_KEY

    at = open_page(YOURS)
    at.file_uploader(key="predictions_file").set_value(
        ("stricter_backbone.zip", sample_zip(bench.tasks), "application/zip")
    )
    at.run(timeout=120)
    assert not at.exception
    payload = _payload(at)
    expected = {}  # independent: the steps straight from the sample's JSON
    for text in sample_files(bench.tasks).values():
        inner = json.loads(text)
        point = inner["error_taxonomy"].get("first_point_of_failure")
        if point is not None:
            expected[inner["task_id"]] = point["first_failure_step"]
    assert len(expected) > 5
    assert at.session_state[FAILURE_STEPS_KEY] == {"mine:stricter_backbone": expected}

    decoded = link_codec.decode(payload, link_codec.task_order(bench.tasks))
    assert decoded.sections["failure_steps"]["steps"] == {"mine:stricter_backbone": expected}
    flagged = {  # independent: the flags straight from the sample's JSON
        json.loads(t)["task_id"]
        for t in sample_files(bench.tasks).values()
        if any(json.loads(t)["error_taxonomy"]["task_verification"].values())
    }
    assert decoded.sections["failure_steps"]["flagged"] == {"mine:stricter_backbone": flagged}

    task, step = next(iter(sorted(expected.items())))
    fresh = open_page("pages/4_Trajectory.py", timeout=120, v=payload, task=task)
    assert not fresh.exception
    assert _held(fresh, SCORE_FILES_KEY) is None  # the rubric detail stays behind
    assert fresh.session_state[FAILURE_STEPS_KEY] == {"mine:stricter_backbone": expected}
    assert fresh.session_state[FLAGGED_KEY] == {"mine:stricter_backbone": flagged}
    (component,) = [
        c for c in fresh.get("bidi_component") if c.proto.component_name == "cuavb_stepper"
    ]
    handed = json.loads(component.proto.json)
    assert handed["failures"] == [{"name": "stricter_backbone (yours)", "step": step}]


def test_a_damaged_failure_steps_section_is_refused(bench) -> None:
    """The failure-steps section round-trips and refuses, in one line, what it cannot read."""
    order = link_codec.task_order(bench.tasks)
    empty = pd.DataFrame(columns=["split", "task_id", "rater", "dimension", "label"])
    steps = {"mine:a": {order.ids[0]: 0, order.ids[-1]: 300}, "mine:b": {}}
    flagged = {"mine:a": {order.ids[0]}, "mine:c": {order.ids[1]}}
    section = link_codec.encode_failure_steps(steps, order, flagged)
    payload = link_codec.encode(empty, order, extra=[(link_codec.FAILURE_STEPS, section)])
    got = link_codec.decode(payload, order).sections["failure_steps"]
    assert got == {"steps": {"mine:a": steps["mine:a"]}, "flagged": flagged}
    for bad in (section[:-1], section + b"\x00", b"\x15", b"\x01\x01a" + b"\xff" * 4):
        payload = link_codec.encode(empty, order, extra=[(link_codec.FAILURE_STEPS, bad)])
        with pytest.raises(link_codec.LinkError, match="failure steps"):
            link_codec.decode(payload, order)

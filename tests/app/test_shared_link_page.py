"""AppTest: links carry the uploaded verdicts (`?v=`, issue 36). An upload puts them in
the URL and writes nothing on the server; the link opens them in a fresh session on any
page; a damaged link, one from another revision and an old `?mine=` link each say why in
one line and load nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lib.uploads import link_codec
from tests.helpers.apptest import open_page, texts
from ui.state import UPLOADS_KEY

PAGE = "pages/5_Your_verifier.py"
AGREEMENT = "pages/1_Agreement.py"


def _files(root: Path) -> set[tuple[str, int]]:
    return {(str(p), p.stat().st_size) for p in root.rglob("*") if p.is_file()}


def _raters(at) -> list[str]:
    rows = at.session_state[UPLOADS_KEY] if UPLOADS_KEY in at.session_state else None  # noqa: SIM401
    return [] if rows is None else list(dict.fromkeys(rows["rater"]))


@pytest.fixture
def shared(use_mirror: Path) -> tuple[str, list[str]]:
    """Upload the sample on Your verifier; return the URL's `v=` and the raters. Sharing
    writes no file: the cache folder is listed before and after."""
    cache = Path(os.environ["CUAVB_CACHE_DIR"])
    at = open_page(PAGE)
    before = _files(cache)
    sample = (use_mirror / "sample_predictions.csv").read_bytes()
    at.file_uploader(key="predictions_file").set_value(("s.csv", sample, "text/csv"))
    at.run()
    assert not at.exception
    payload = at.query_params.get(link_codec.PARAM)
    payload = payload[0] if isinstance(payload, list) else payload
    assert payload and link_codec.fits(payload)
    assert "holds your validated verdicts themselves (not your file)" in texts(at)
    at.run()  # again: the link stays, still nothing written
    assert _files(cache) == before
    assert not (cache / "shared-uploads").exists()
    return payload, _raters(at)


def test_a_link_opens_the_uploads_in_a_fresh_session(shared) -> None:
    payload, raters = shared
    assert raters == ["mine:my_verifier_v1", "mine:my_verifier_v2"]
    at = open_page(AGREEMENT, v=payload)
    assert not at.exception
    assert _raters(at) == raters
    assert "my_verifier_v1 (yours)" in [o for s in at.selectbox for o in s.options]


def test_a_damaged_link_loads_nothing_and_says_why(shared) -> None:
    payload, _ = shared
    flipped = payload[:40] + ("A" if payload[40] != "A" else "B") + payload[41:]
    for bad, words in ((flipped, "damaged"), (payload[:60], "damaged")):
        at = open_page(AGREEMENT, v=bad)
        assert not at.exception
        lines = [w.value for w in at.warning if "were not loaded" in w.value]
        assert len(lines) == 1 and words in lines[0] and "\n" not in lines[0]
        assert _raters(at) == []
        at.run()  # still said on the next run, still nothing loaded
        assert any("were not loaded" in w.value for w in at.warning) and _raters(at) == []


def test_an_old_server_stored_link_says_it_is_gone(use_mirror: Path) -> None:
    at = open_page(AGREEMENT, mine="ab" * 32)
    assert not at.exception
    assert [w.value for w in at.warning if "earlier version" in w.value] == [link_codec.OLD_LINK]
    assert _raters(at) == []


def test_a_false_positive_opens_with_that_verifier_first_and_why(shared, bench) -> None:
    """The viewer link of an error list (`why=fp:<rater>`, `v=`) in a fresh session: the
    line that says why, that verifier's verdict first; kept while on that task."""
    payload, raters = shared
    rater = raters[0]
    rows = link_codec.decode(payload, link_codec.task_order(bench.tasks)).rows
    mine = rows[(rows["rater"] == rater) & (rows["dimension"] == "outcome")]
    human = bench.verdicts[bench.verdicts["rater"] == "final_human_outcome_label"]
    both = mine.merge(human, on=["split", "task_id"], suffixes=("", "_h"))
    task = both[(both["label"] == 1) & (both["label_h"] == 0)]["task_id"].iloc[0]
    at = open_page("pages/4_Trajectory.py", task=task, why=f"fp:{rater}", v=payload)
    assert not at.exception
    line = "False positive of my_verifier_v1 (yours): it says success; the humans' final "
    line += "label says failure"
    assert line in texts(at)
    at.run()  # the next run keeps it (Copy link reads the URL: why= stays in it)
    assert line in texts(at)
    why = at.query_params.get("why")
    assert (why[0] if isinstance(why, list) else why) == f"fp:{rater}"
    # a `why=` naming no verifier of the task is ignored, never echoed
    at = open_page("pages/4_Trajectory.py", task=task, why="fp:mine:nobody", v=payload)
    assert not at.exception and "False positive of" not in texts(at)


def _only_v(at) -> None:
    """What a sidebar page switch leaves in the URL: the bound split and the uploads."""
    for name in list(at.query_params):
        if name not in ("v", "split"):
            del at.query_params[name]


def test_each_page_remembers_its_choices_through_the_sidebar(shared) -> None:
    """Agreement: choose the uploaded verifier; Slices: choose its verifier; back to
    Agreement and Slices through the sidebar: both choices are still there."""
    payload, raters = shared
    at = open_page(AGREEMENT, v=payload)
    at.selectbox(key="agreement_verifier").set_value(raters[1]).run()
    assert not at.exception
    _only_v(at)
    at.switch_page("pages/6_Slices.py")
    at.run()
    assert not at.exception
    at.selectbox(key="slices_verifier").set_value(raters[0]).run()
    _only_v(at)
    at.switch_page(AGREEMENT)
    at.run()
    assert not at.exception
    assert at.selectbox(key="agreement_verifier").value == raters[1]
    _only_v(at)
    at.switch_page("pages/6_Slices.py")
    at.run()
    assert at.selectbox(key="slices_verifier").value == raters[0]


def test_verdicts_too_long_for_a_link_are_offered_as_a_file(use_mirror: Path, monkeypatch) -> None:
    """Beyond `link_codec.MAX_CHARS` (lowered here so the sample is over it) the URL gets no
    `v=`, and the Share popover says so in one warning and offers the verdicts as a CSV in
    the upload format (its read-back: test_link_codec.py::test_upload_csv_reads_back)."""
    monkeypatch.setattr(link_codec, "MAX_CHARS", 200)
    at = open_page(PAGE)
    sample = (use_mirror / "sample_predictions.csv").read_bytes()
    at.file_uploader(key="predictions_file").set_value(("s.csv", sample, "text/csv"))
    at.run()
    assert not at.exception
    assert _raters(at) == ["mine:my_verifier_v1", "mine:my_verifier_v2"]
    assert link_codec.PARAM not in at.query_params
    over = [w.value for w in at.warning if "more than the 200 a link may carry" in w.value]
    assert len(over) == 1 and "links from this session do not hold them" in over[0]
    buttons = [b for b in at.get("download_button") if b.proto.id.endswith("share_csv")]
    assert len(buttons) == 1
    assert buttons[0].proto.label == "Download your verdicts (CSV, upload format)"
    assert "This link:" not in texts(at)  # no link is offered that would not hold them

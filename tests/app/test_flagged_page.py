"""AppTest: the tasks an uploaded verifier's score files flag as ambiguous or invalid can be
excluded from its numbers (`?flagged=exclude`, `ui.flagged`), on Your verifier and on
Agreement (the choice kept between the two pages), and the page says how many."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

from lib.uploads.score_sample import sample_zip
from tests.helpers.apptest import open_page, texts
from ui.params import AGREEMENT_FLAGGED, YOUR_FLAGGED
from ui.your_verifier import UPLOADER_KEY

YOURS = "pages/5_Your_verifier.py"
AGREEMENT = "pages/1_Agreement.py"


def _n_flagged(data: bytes) -> int:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        files = [json.loads(archive.read(n)) for n in archive.namelist()]
    return sum(any(f["error_taxonomy"]["task_verification"].values()) for f in files)


def test_excluding_flagged_tasks_on_your_verifier_and_agreement(use_mirror: Path, bench) -> None:
    data = sample_zip(bench.tasks)
    n = _n_flagged(data)
    at = open_page(YOURS, timeout=120)
    at.file_uploader(key=UPLOADER_KEY).set_value(("stricter_backbone.zip", data, "application/zip"))
    at = at.run()
    assert not at.exception
    radio = at.radio(key=YOUR_FLAGGED.key)
    assert radio.value == "include"
    assert f"{n} task verdict(s) flagged ambiguous or invalid" in texts(at)
    radio.set_value("exclude")
    at = at.run()
    assert not at.exception
    note = f"{n} tasks excluded (flagged ambiguous or invalid by stricter_backbone)."
    assert note in texts(at)
    assert at.query_params.get(YOUR_FLAGGED.name) in ("exclude", ["exclude"])
    payload = at.query_params.get("v")
    payload = payload[0] if isinstance(payload, list) else payload

    # a fresh session opened with the link: the flags travel with it (failure-steps section)
    fresh = open_page(AGREEMENT, timeout=120, v=payload, flagged="exclude")
    assert not fresh.exception
    assert fresh.radio(key=AGREEMENT_FLAGGED.key).value == "exclude"
    assert note in texts(fresh)
    bogus = open_page(AGREEMENT, timeout=120, v=payload, flagged="bogus-value")
    assert not bogus.exception
    warnings = [w.value for w in bogus.warning if "flagged=" in w.value]
    assert len(warnings) == 1 and "bogus-value" not in warnings[0]  # said, not quoted
    assert bogus.radio(key=AGREEMENT_FLAGGED.key).value == "include"

    at.switch_page(AGREEMENT)
    at = at.run()
    assert not at.exception
    assert at.radio(key=AGREEMENT_FLAGGED.key).value == "exclude"  # kept between the pages
    assert note in texts(at)
    at.radio(key=AGREEMENT_FLAGGED.key).set_value("include")
    at = at.run()
    assert not at.exception
    assert note not in texts(at)
    assert at.query_params.get(YOUR_FLAGGED.name) in (None, [], [None])

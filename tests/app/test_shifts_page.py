"""AppTest of the Shifts page: om2w numbers, the internal split, URL choices and bad links."""

from __future__ import annotations

from pathlib import Path

import pytest

from lib.analysis import shifts
from lib.vocab import Bootstrap
from tests.helpers.apptest import open_page, shown, texts

PAGE = "pages/3_Shifts.py"
OM2W = "fara7b_om2w_browserbase"


@pytest.fixture(scope="module")
def paired(bench):
    return shifts.paired_reviews(bench.verdicts, bench.annotations)


def _charts(at) -> list:
    return at.get("vega_lite_chart")


def test_om2w_shows_the_flip_matrix_and_numbers(use_mirror: Path, paired) -> None:
    at = open_page(PAGE, split=OM2W)
    assert not at.exception
    assert at.title[0].value.startswith("Shifts")
    assert len(_charts(at)) == 2  # flip matrix + per-reviewer dumbbell
    flips = shifts.reviewer_shift(paired, "outcome", boot=Bootstrap(10)).flips
    metrics = {m.label: m for m in at.metric}
    assert metrics["Labels flipped"].value == f"{flips.flip_rate.value:.0%}"
    assert metrics["Toward the verifier"].value == f"{flips.toward_verifier} of {flips.flips}"
    assert "→" in metrics["Kappa with the verifier"].value
    assert "→" in metrics["Kappa between reviewers"].value
    text = texts(at)
    assert f"n = {flips.eligible} reviews" in text and "split: om2w" in text
    assert "percentile bootstrap over tasks (" in text and "2,000 resamples, seed 0)" in text
    assert "McNemar" in text
    cases = at.dataframe[-1].value
    assert len(cases) == flips.flips
    assert cases["trajectory"].str.startswith(f"Trajectory?split={OM2W}&task=").all()
    assert {"blind comment", "informed comment", "verifier verdict shown"} <= set(cases.columns)


def test_the_derivation_rule_is_stated(use_mirror: Path) -> None:
    at = open_page(PAGE, split=OM2W)
    assert shifts.derivation_markdown() in texts(at)


def test_internal_split_says_it_had_no_informed_stage(use_mirror: Path) -> None:
    at = open_page(PAGE, split="internal")
    assert not at.exception
    assert at.sidebar.selectbox(key="split").value == "internal"
    assert "internal split had no informed stage" in texts(at)
    assert len(_charts(at)) == 0
    assert len(at.metric) == 0 and len(at.dataframe) == 0


def test_switching_to_internal_in_the_sidebar(use_mirror: Path) -> None:
    at = open_page(PAGE)
    at.sidebar.selectbox(key="split").set_value("internal").run()
    assert not at.exception
    assert "internal split had no informed stage" in texts(at)
    assert len(_charts(at)) == 0


def test_both_splits_analyse_om2w_and_say_so(use_mirror: Path) -> None:
    at = open_page(PAGE)
    assert not at.exception
    assert "only om2w had an informed stage" in texts(at)
    assert len(_charts(at)) == 2


def test_choices_come_from_the_url(use_mirror: Path, paired) -> None:
    who = shifts.reviewers(paired)[0]
    at = open_page(PAGE, split=OM2W, dimension="process", reviewer=who)
    assert not at.exception
    assert at.radio(key="shifts_dimension").value == "process"
    assert at.selectbox(key="shifts_reviewer").value == who
    flips = shifts.reviewer_shift(paired, "process", who, boot=Bootstrap(10)).flips
    assert {m.label: m.value for m in at.metric}["Labels flipped"] == (
        f"{flips.flip_rate.value:.0%}"
    )
    cases = at.dataframe[-1].value
    assert set(cases["reviewer"]) <= {who} and len(cases) == flips.flips
    assert f"Process labels of {who}" in [h.value for h in at.header]


def test_a_change_is_written_to_the_url(use_mirror: Path) -> None:
    at = open_page(PAGE, split=OM2W)
    at.radio(key="shifts_dimension").set_value("process").run()
    assert not at.exception
    assert at.query_params["dimension"] == "process"
    at.radio(key="shifts_dimension").set_value("outcome").run()
    assert "dimension" not in at.query_params  # the default is not written


def test_bogus_url_values_are_explained(use_mirror: Path) -> None:
    at = open_page(PAGE, split=OM2W, dimension="sideways", reviewer="Judge999")
    assert not at.exception
    warnings = " ".join(shown(w.value) for w in at.warning)
    assert "dimension **sideways**" in warnings and "reviewer **Judge999**" in warnings
    assert at.radio(key="shifts_dimension").value == "outcome"
    assert at.selectbox(key="shifts_reviewer").value == shifts.ALL
    assert len(_charts(at)) == 2

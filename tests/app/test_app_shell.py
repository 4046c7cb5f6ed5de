"""AppTest of the shell: navigation, sidebar, home page, bad sources and bad links."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.apptest import open_page, shown, texts


def test_home_summarises_the_data(use_mirror: Path) -> None:
    at = open_page()
    assert not at.exception
    assert at.title[0].value == "CUAVerifierBench explorer"
    overview = at.dataframe[0].value
    assert overview.set_index("split")["trajectories"].to_dict() == {"om2w": 106, "internal": 154}
    assert overview.set_index("split")["reviews"].to_dict() == {"om2w": 215, "internal": 154}
    reviewers = at.dataframe[1].value
    assert reviewers["total"].sum() == 369
    assert reviewers["reviewer"].str.match(r"Judge\d+$").all()
    balance = at.dataframe[2].value
    final = balance[(balance.rater == "Humans, final (adjudicated)") & (balance.split == "om2w")]
    assert (
        int(final["success"].iloc[0] + final["failure"].iloc[0] + final["missing"].iloc[0]) == 106
    )
    assert at.sidebar.selectbox(key="split").value == "all"
    assert "Local mirror" in texts(at.sidebar)
    assert "Synthetic demo data" in texts(at)  # the session mirror is made by lib.mirror


def test_split_from_the_url(use_mirror: Path) -> None:
    at = open_page(split="internal")
    assert at.sidebar.selectbox(key="split").value == "internal"
    overview = at.dataframe[0].value
    assert overview["split"].tolist() == ["internal"]


def test_bogus_split_in_the_url_is_explained(use_mirror: Path) -> None:
    at = open_page(split="nonsense")
    assert not at.exception
    assert "nonsense" in at.sidebar.warning[0].value
    assert at.sidebar.selectbox(key="split").value == "all"
    assert len(at.dataframe[0].value) == 2


def test_broken_source_gives_a_message(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CUAVB_DATA", str(tmp_path / "missing"))
    at = open_page()
    assert not at.exception
    assert "cannot be used" in at.error[0].value and "missing" in at.error[0].value
    assert at.sidebar.selectbox(key="split").value == "all"  # the frame still draws


def test_offline_without_a_source_shows_the_demo_banner(
    mirror_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CUAVB_DATA", raising=False)
    at = open_page()
    assert not at.exception
    banner = [m.value for m in at.markdown if "Synthetic demo data, not the benchmark" in m.value]
    assert len(banner) == 1 and "HF_HUB_OFFLINE" in shown(banner[0])
    assert "demo" in texts(at.sidebar).lower()


def test_a_failing_page_shows_a_message_not_a_traceback(
    use_mirror: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lib.analysis import home as summary

    def boom(*_args, **_kwargs):
        raise RuntimeError("simulated bug")

    monkeypatch.delenv("CUAVB_RAISE_ERRORS")
    monkeypatch.setattr(summary, "split_overview", boom)
    at = open_page()
    assert not at.exception
    assert "Something went wrong on this page" in at.error[0].value
    assert at.sidebar.selectbox(key="split").value == "all"


def test_deep_link_to_a_page_runs_the_frame(use_mirror: Path) -> None:
    """Switching before the first run takes the cold-start legacy path: the guard must
    still draw the shared sidebar around the page."""
    at = open_page("pages/0_Home.py", split="internal")
    assert not at.exception
    assert at.sidebar.selectbox(key="split").value == "internal"
    assert at.title[0].value == "CUAVerifierBench explorer"

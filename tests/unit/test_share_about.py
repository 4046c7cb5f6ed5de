"""The Copy link address (`lib.uploads.share_link`) and the About text (`lib.about`)."""

from __future__ import annotations

import subprocess

from lib import about
from lib.uploads.share_link import share_link


def test_in_a_space_the_link_is_the_direct_address() -> None:
    link = share_link(
        "Judges",
        {"split": "internal", "a": "Judge 9&x"},
        space_host="someone-cuavb.hf.space",
        browser_url="https://huggingface.co/spaces/someone/cuavb",
    )
    assert link == "https://someone-cuavb.hf.space/Judges?split=internal&a=Judge+9%26x"


def test_elsewhere_the_link_is_on_the_browsers_origin() -> None:
    link = share_link(
        "Trajectory", {"task": "t1", "step": "2"}, browser_url="http://localhost:8501/Home"
    )
    assert link == "http://localhost:8501/Trajectory?task=t1&step=2"
    assert share_link("", {}, browser_url="https://x.streamlit.app/") == "https://x.streamlit.app/"
    assert share_link("Shifts", {}, browser_url="https://h/", base_path="/app/") == (
        "https://h/app/Shifts"
    )


def test_without_a_known_address_the_link_is_relative_and_a_bad_host_is_ignored() -> None:
    assert share_link("Slices", {"v": "1"}) == "/Slices?v=1"
    assert share_link("Slices", {}, space_host="evil.com/x?y=") == "/Slices"
    assert share_link("Slices", {}, browser_url="javascript:alert(1)") == "/Slices"


def test_about_names_dataset_paper_citation_licence_and_revision(monkeypatch) -> None:
    about.app_revision.cache_clear()
    monkeypatch.setenv(about.REVISION_ENV, "")
    head = subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"], cwd=about.ROOT, capture_output=True, text=True
    ).stdout.strip()
    text = about.about_markdown()
    assert about.DATASET_CARD in text and "arxiv.org/abs/2604.06240" in text
    assert "@misc{" in text and "eprint        = {2604.06240}" in text
    assert "author        = {Corby Rosset and Pratyusha Sharma and" in text
    assert text.count("{") == text.count("}"), "the BibTeX braces must balance"
    assert "Licence of the dataset: MIT" in text
    assert f"`{head or 'unknown'}`" in text
    about.app_revision.cache_clear()
    monkeypatch.setenv(about.REVISION_ENV, "ABCDEF1234567890")
    assert about.app_revision() == "abcdef123456"
    about.app_revision.cache_clear()
    monkeypatch.setenv(about.REVISION_ENV, "not a sha; rm -rf")
    assert about.app_revision() in (head, "unknown")
    about.app_revision.cache_clear()

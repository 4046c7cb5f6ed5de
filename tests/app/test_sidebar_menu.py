"""AppTest: the sidebar's page links carry the uploads (`?v=`, issue 36) and the split.

Streamlit's own page list writes bare hrefs, so a page opened from it in a new tab
(middle-click) lost the uploads; `ui.nav.menu` draws the list with `st.page_link`, each
link carrying the view's `split`, `cluster` and `v` (`ui.nav.KEEP`)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs

from lib.uploads import link_codec
from tests.helpers.apptest import open_page
from ui.nav import PAGES
from ui.state import UPLOADS_KEY

PAGE = "pages/5_Your_verifier.py"


def _menu(at) -> list[tuple[str, str, dict[str, list[str]]]]:
    """(label, page, query) of every page link in the sidebar."""
    return [
        (e.proto.label, e.proto.page, parse_qs(e.proto.query_string))
        for e in at.sidebar.get("page_link")
    ]


def _one(value) -> str:
    return value[0] if isinstance(value, list) else value


def test_without_uploads_the_links_carry_only_the_split(use_mirror: Path) -> None:
    at = open_page("pages/1_Agreement.py", split="internal")
    assert not at.exception
    menu = _menu(at)
    assert [label for label, _, _ in menu] == [p.title for p in PAGES]
    assert [page for _, page, _ in menu] == [p.url_path for p in PAGES]  # Home: /Home
    assert all(query == {"split": ["internal"]} for _, _, query in menu), menu


def test_after_an_upload_every_link_carries_v(use_mirror: Path) -> None:
    at = open_page(PAGE, split="internal", task="ignored-by-the-menu")
    sample = (use_mirror / "sample_predictions.csv").read_bytes()
    at.file_uploader(key="predictions_file").set_value(("s.csv", sample, "text/csv"))
    at.run()
    assert not at.exception
    payload = _one(at.query_params.get(link_codec.PARAM))
    assert payload and link_codec.fits(payload)
    menu = _menu(at)
    assert len(menu) == len(PAGES)
    for label, _, query in menu:
        assert query.get("v") == [payload], label
        assert query.get("split") == ["internal"], label
        assert "task" not in query, label  # a page's own choices stay behind
    # the link opens the uploads in a fresh session (what a new tab is)
    _, _, query = next(m for m in menu if m[0] == "Agreement")
    fresh = open_page("pages/1_Agreement.py", **{k: v[0] for k, v in query.items()})
    assert not fresh.exception
    rows = fresh.session_state[UPLOADS_KEY]
    assert list(dict.fromkeys(rows["rater"])) == ["mine:my_verifier_v1", "mine:my_verifier_v2"]


def test_the_pages_own_links_to_other_pages_carry_v(use_mirror: Path) -> None:
    """Your verifier's "Everywhere else" links (in the run of the upload itself) and
    Home's list of pages carry the uploads too."""
    at = open_page(PAGE)
    sample = (use_mirror / "sample_predictions.csv").read_bytes()
    at.file_uploader(key="predictions_file").set_value(("s.csv", sample, "text/csv"))
    at.run()
    payload = _one(at.query_params.get(link_codec.PARAM))
    body = [parse_qs(e.proto.query_string) for e in at.main.get("page_link")]
    assert len(body) >= 4 and all(q.get("v") == [payload] for q in body), body
    home = open_page(None, v=payload)
    assert not home.exception
    body = [parse_qs(e.proto.query_string) for e in home.main.get("page_link")]
    assert len(body) == len(PAGES) - 1 and all(q.get("v") == [payload] for q in body), body

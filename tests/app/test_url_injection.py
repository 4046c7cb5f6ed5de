"""Every URL parameter a page echoes is echoed inert (AppTest, Markdown source level).

A crafted link such as `?split=x%60%20!%5Bi%5D(http%3A%2F%2Fplanted.invalid%2Fu.png)%20%60y`
used to break out of the backticks of a warning and render a remote image and working
links inside the app's own message. Here every page is opened with hostile values in
every parameter it reads; the Markdown it sends (warnings, captions, markdown, headers)
must contain each value only as `ui.safe_text.inert` makes it, and nothing that would
render a link or an image. The same links are opened in chromium on the hostile mirror by
tests/browser/test_browser_hostile_pages.py (no element or request pointing at the planted host).

Your verifier's Iterations section (Reference, Split, From, To) is drawn only when an
uploaded verifier has versions: that page is opened with a real `?v=` carrying the sample
history (`LINKED`), so those parameters are read and their echo checked; `v` itself is
never echoed (a damaged one is said in a fixed line, tested in test_link_sections.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers.apptest import open_page, shown
from tests.helpers.history_link import sample_history_payload
from tests.helpers.hostile_payloads import PLANTED_HOST, payloads
from ui.frame import PAGES
from ui.params import PAGE_PARAMS, SIDEBAR
from ui.safe_text import inert

PAYLOADS = payloads()
CASES = {  # page file -> every parameter it reads, from the registry (ui.params)
    page: tuple(p.name for p in (*SIDEBAR, *declared)) for page, declared in PAGE_PARAMS.items()
}
FREE_TEXT = {
    page: {p.name for p in (*SIDEBAR, *declared) if p.free_text or not p.echoed}
    for page, declared in PAGE_PARAMS.items()
}
HOSTILE = " ".join(PAYLOADS[n] for n in ("backtick_breakout", "link", "html_img", "bare_url"))
"""One value carrying the issue's backtick breakout, a phishing link, an HTML image and a
bare URL (one AppTest run per page checks all of them)."""
LINKED = {"pages/5_Your_verifier.py"}
"""Pages opened with a real uploads link (`?v=` with the sample history) instead of a hostile
`v`: their history-only controls (`ui.params.ITERATIONS`) are drawn only then."""


def hostile_query(params: tuple[str, ...], payload: str) -> dict[str, str]:
    """Each parameter gets the payload, tagged with its name so each echo is told apart."""
    return {name: f"{name}:{payload}" for name in params}


def markdown_sources(at: AppTest) -> list[str]:
    """The Markdown source of everything that renders Markdown, sidebar included."""
    kinds = (at.markdown, at.caption, at.warning, at.info, at.error, at.success)
    kinds += (at.subheader, at.header, at.title)
    values = [str(e.value) for kind in kinds for e in kind]
    values += [str(e.label) for e in at.expander]
    return values


@pytest.mark.parametrize("page", list(CASES))
def test_url_values_are_echoed_inert(use_mirror: Path, bench, page: str) -> None:
    query = hostile_query(CASES[page], HOSTILE)
    carried = {"v": sample_history_payload(bench)} if page in LINKED else {}
    query.update(carried)
    at = open_page(page, timeout=90, **query)
    assert not at.exception
    if carried:  # the section is drawn, so its parameters were read and must be explained
        assert any("Iterations" in str(h.value) for h in at.header), "no Iterations section"
    sources = markdown_sources(at)
    for source in sources:
        assert PLANTED_HOST not in source, source  # the '.' is escaped when inert
        assert "](http" not in source and "<img" not in source, source
        assert not any(query[n] in source for n in query if n not in carried), source
    warnings = "\n".join(str(w.value) for w in (*at.warning, *at.info))
    for name, value in query.items():
        if name in carried:
            continue
        if name == "task":  # the viewer's notice quotes the task id; others quote as-is
            assert inert(value) in "\n".join(sources), name
            continue
        if name in FREE_TEXT[page]:  # a search: in its box only; `v`, `why`: never echoed
            continue
        assert inert(value, 300) in warnings, (name, warnings[:500])
        assert value in shown(warnings)  # and the reader sees the value itself


def test_every_page_is_in_the_registry() -> None:
    """A new page must declare its parameters (even none) to be covered here."""
    assert set(PAGE_PARAMS) == {spec.file for spec in PAGES}


def test_the_issue_link_renders_no_image_on_any_page(use_mirror: Path) -> None:
    """The exact link of the issue: `?split=` with the backtick breakout."""
    value = "x` ![i](http://example.invalid/u.png) `y"
    for page in CASES:
        at = open_page(page, timeout=90, split=value)
        assert not at.exception
        (warning,) = [w.value for w in at.warning if "split" in str(w.value)]
        assert inert(value, 300) in warning and "](http" not in warning

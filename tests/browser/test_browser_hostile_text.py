"""Real browser: the hostile corpus through every text path renders inert (Streamlit 1.67).

The app (tests/helpers/apps/hostile_text_app.py) shows each payload in st.markdown, st.caption,
alerts, a selectbox (label and option), a radio option, an expander label, a dataframe and
`show_long_text`. A local HTTP listener counts hits on the corpus's 127.0.0.1 URLs and the
page records every request, so "no fetch" is observed, not assumed. `?mode=raw` shows the
same payloads unescaped: the same checks must then fire, which proves they can fail.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page

from tests.helpers.browser import streamlit_server, wait_for_run
from tests.helpers.hostile_payloads import PLANTED_HOST, payloads
from ui.safe_text import plain, strip_joiners

pytestmark = pytest.mark.browser

MARKUP = """(port) => {
  const planted = (u) => !!u && (u.includes('planted.invalid') || u.includes('127.0.0.1:' + port));
  const c = {planted: 0, katex: 0, icons: 0, colour: 0, tags: 0};
  for (const e of document.querySelectorAll('[src], [href]'))
    if (planted(e.getAttribute('src')) || planted(e.getAttribute('href'))) c.planted++;
  c.katex = document.querySelectorAll('.katex').length;
  const md = '[class*=st-key-p_] [data-testid=stMarkdownContainer]';
  c.icons = document.querySelectorAll(
    `${md} :is(span[role=img], [data-testid=stIconMaterial])`).length;
  c.colour = document.querySelectorAll(`${md} :is(span[style], .stMarkdownBadge)`).length;
  const tags = document.querySelectorAll(
    `${md} :is(a, img, iframe, script, style, code, h1, h2, table, blockquote, ul, ol, pre,
     strong, em, del, small, hr)`);
  c.tags = tags.length;
  c.tag_names = [...new Set([...tags].map((e) => e.tagName))];
  c.radio_markup = document.querySelectorAll(
    '[data-testid=stRadio] [role=radiogroup] :is(a, img, code, strong, .katex)').length;
  const rich = ':is(a, img, code, strong, em, span[style], .katex, span[role=img])';
  c.table_markup = document.querySelectorAll(`[data-testid=stTable] td ${rich}`).length;
  c.button_markup = document.querySelectorAll(
    `[data-testid=stButton] [data-testid=stMarkdownContainer] ${rich}`).length;
  c.multiselect_markup = document.querySelectorAll(`[data-testid=stMultiSelect] ${rich}`).length;
  c.select_markup = document.querySelectorAll(
    '[data-testid=stSelectbox] [data-baseweb=select] :is(a, img, code, strong, .katex)').length;
  return c;
}"""


@pytest.fixture(scope="module")
def hostile_url(listener: tuple[int, list[str]]) -> Iterator[str]:
    port, _ = listener
    env = {"HOSTILE_PORT": str(port)}
    with streamlit_server(env, script="tests/helpers/apps/hostile_text_app.py") as url:
        yield url


def _load(page: Page, url: str, port: int) -> tuple[dict, list[str]]:
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(url)
    wait_for_run(page, 120_000)
    page.wait_for_timeout(1500)  # let images start loading, if any were rendered
    planted = [r for r in requests if PLANTED_HOST in r or f"127.0.0.1:{port}/" in r]
    return page.evaluate(MARKUP, str(port)), planted


def test_raw_payloads_do_trip_every_check(
    hostile_url: str, listener: tuple[int, list[str]], page: Page
) -> None:
    """Unescaped, the corpus renders images, links, KaTeX, colours and icons and fetches."""
    port, hits = listener
    hits.clear()
    found, planted = _load(page, f"{hostile_url}/?mode=raw", port)
    assert found["planted"] > 0 and found["katex"] > 0 and found["colour"] > 0
    assert found["icons"] > 0 and {"A", "IMG", "CODE", "H1", "TABLE"} <= set(found["tag_names"])
    assert found["radio_markup"] > 0  # radio option labels parse Markdown
    assert found["select_markup"] == 0  # selectbox option labels do not
    assert found["table_markup"] > 0 and found["button_markup"] > 0  # st.table cells, buttons do
    assert found["multiselect_markup"] == 0  # multiselect options do not
    assert planted and hits
    emoji = page.locator(".st-key-p_emoji_shortcode [data-testid=stMarkdown]").first
    assert "\U0001f604" in emoji.inner_text()  # :smile: became an emoji: the text check sees it


def test_safe_rendering_is_inert_and_fetches_nothing(
    hostile_url: str, listener: tuple[int, list[str]], page: Page
) -> None:
    port, hits = listener
    hits.clear()
    found, planted = _load(page, f"{hostile_url}/?mode=safe", port)
    assert found == {
        "planted": 0,
        "katex": 0,
        "icons": 0,
        "colour": 0,
        "tags": found["tags"],  # counted below: only the template's own **bold**
        "tag_names": ["STRONG"],
        "radio_markup": 0,
        "table_markup": 0,
        "button_markup": 0,
        "multiselect_markup": 0,
        "select_markup": 0,
    }
    corpus = payloads(port)
    assert found["tags"] == len(corpus)  # one <strong> per safe_text.warning template
    assert planted == [] and hits == []
    for name, payload in corpus.items():
        shown = page.locator(f".st-key-p_{name} [data-testid=stMarkdown]").first.inner_text()
        expected = " ".join(plain(payload, 2000).split())
        assert " ".join(strip_joiners(shown).split()) == expected, name

"""`ui.safe_text`: every hostile payload renders as its own characters and nothing else.

The renderer is markdown-it-py with GFM-like rules and linkify (bare URLs, `www.`, e-mails),
an independent CommonMark implementation; the real browser check (Streamlit's own renderer,
KaTeX, emoji, Material icons, directives) is tests/browser/test_browser_hostile_text.py.
"""

from __future__ import annotations

import html
import re

import pytest
from markdown_it import MarkdownIt

from tests.helpers.hostile_payloads import MARK, payloads
from ui.safe_text import (
    JOINER,
    REPLACEMENT,
    inert,
    inert_format,
    more_marker,
    plain,
    strip_joiners,
    truncate,
)

MD = MarkdownIt("gfm-like", {"linkify": True, "html": True})
PAYLOADS = payloads(8765)
ALLOWED_TAGS = {"p"}


def _render(source: str) -> tuple[set[str], str]:
    out = MD.render(source)
    tags = set(re.findall(r"<\s*([a-zA-Z0-9]+)", out))
    text = html.unescape(re.sub(r"<[^>]*>", "", out))
    return tags, text


def _squash(text: str) -> str:
    return " ".join(text.split())


def test_the_renderer_sees_markup_in_raw_payloads() -> None:
    """The check is able to fail: raw payloads do produce links, images and HTML."""
    bad = set()
    for payload in PAYLOADS.values():
        tags, _ = _render(payload)
        bad |= tags - ALLOWED_TAGS
    assert {"a", "img", "code", "h1", "table", "iframe", "script"} <= bad


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_inert_renders_only_the_payload_text(name: str) -> None:
    payload = PAYLOADS[name]
    tags, text = _render(inert(payload))
    assert tags <= ALLOWED_TAGS, (name, tags)
    assert _squash(strip_joiners(text)) == _squash(plain(payload))


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_plain_keeps_every_printable_character(name: str) -> None:
    payload = PAYLOADS[name]
    shown = plain(payload)
    assert len(shown) == len(payload)  # one for one: replaced, never dropped
    for raw, seen in zip(payload, shown, strict=True):
        assert seen == raw or seen in (" ", REPLACEMENT)


def test_controls_and_bidi_are_replaced_visibly() -> None:
    text = "a\u202eb\u2066c\u200fd\x00e\x1bf\u200bg\ufeffh"
    assert plain(text) == "a\ufffdb\ufffdc\ufffdd\ufffde\ufffdf\ufffdg\ufffdh"
    assert plain("a\nb\tc\r\nd\u2028e") == "a b c  d e"
    assert "\u202e" not in inert(text)


def test_autolink_and_shortcode_patterns_are_broken_by_joiners() -> None:
    out = inert("http://x.com www.x.com a@b.com :smile: :material/home:")
    assert "://" not in out and "www." not in out.lower()
    assert f"\\:{JOINER}" in out and f"\\@{JOINER}" in out
    assert not re.search(r":[\w/+-]+:", out.replace("\\", ""))
    assert "WWW" + JOINER in inert("WWW.x.org")


def test_truncation_is_visible_and_counted() -> None:
    assert truncate("abcdef", 4) == ("abcd", 2)
    assert truncate("abc", 4) == ("abc", 0)
    assert plain("abcdef", 4) == "abcd " + more_marker(2)
    assert more_marker(1) == "… (1 more character)"
    assert more_marker(1234) == "… (1,234 more characters)"
    big = "x" * 1_000_000
    shown = inert(big, 300)
    assert len(shown) < 400 and "999,700 more characters" in _render(shown)[1]


def test_inert_format_escapes_values_not_the_template() -> None:
    out = inert_format("**Unknown** split {}: using {x}.", "a`b", x="[l](http://h.invalid)")
    tags, text = _render(out)
    assert "strong" in tags and "a" not in tags and "code" not in tags
    assert _squash(strip_joiners(text)) == "Unknown split a`b: using [l](http://h.invalid)."


def test_non_strings_and_none() -> None:
    assert inert(None) == ""
    assert inert(3.5) == "3\\.5"
    assert plain(b"a\x00b") == "a\ufffdb"
    assert MARK in plain(PAYLOADS["image"])


def test_inert_format_refuses_placeholders_in_code_spans() -> None:
    with pytest.raises(ValueError, match="code span"):
        inert_format("Unknown split `{}`.", "x")

"""One way to show untrusted text (dataset strings, URL values, uploads, file names).

Every string that did not come from our own source code can carry markup: a reviewer id
like ``![x](http://host/u.png)`` makes the viewer's browser fetch a remote image (their
IP leaks), a backtick breaks out of a code span, ``$...$`` renders KaTeX, ``:red[...]``
and ``:material/home:`` render colour and icons, a bare URL becomes a working link (a
phishing link inside the app's own warning box) and a right-to-left override reverses
the text around it. So such strings are shown in exactly one of two ways:

- **inside Markdown** (``st.markdown``, ``st.caption``, alerts, widget labels, expander
  labels, radio options): through :func:`inert`, which makes the text literal;
- **in a widget that does not parse Markdown**: through :func:`plain`, which only
  replaces control/bidi characters and truncates.

How :func:`inert` works, and why each step is needed (each verified by rendering in
chromium, ``tests/browser/test_browser_hostile_text.py``, Streamlit 1.67):

1. Control characters (Unicode Cc except tab/newline/CR, Cf such as the bidi overrides
   U+202A-202E, U+2066-2069, U+200E/200F, U+061C and zero-width characters, lone
   surrogates) become a visible U+FFFD; tab, CR, LF and U+2028/2029 become one space,
   so a value cannot start a heading, list, quote, table or code block on a new line.
2. Every ASCII punctuation character is backslash-escaped (CommonMark allows escaping
   any of them). That neutralises everything that is syntax: code spans, emphasis,
   links and images (inline, reference and ``<autolink>``), raw HTML and entities
   (``\\<``, ``\\&``), ``$`` math (remark-math honours escapes) and ``:name[...]``
   directives (Streamlit's colour, background and badge syntax).
3. Some Streamlit/GFM features match *text* after parsing, so escapes do not stop them:
   GFM's bare-URL and e-mail autolinking (``https?://``, ``www.``, ``x@y.z``), emoji
   shortcodes (``:smile:``, ``:streamlit:``), Material icons (``:material/home:``) and
   Streamlit's typographic symbols (``<- -> <-> -- >= <= ~=`` become arrows, dashes and
   relations). A WORD JOINER (U+2060, zero width, no line break) is inserted after every
   ``:``, ``@``, ``<``, ``-``, ``>`` and ``~`` and inside ``www.``; none of those patterns
   match across it.

Which Streamlit widgets parse Markdown (verified in chromium with the payload corpus,
``tests/helpers/apps/hostile_text_app.py``; Streamlit 1.67):

- Markdown (use :func:`inert`): ``st.markdown``, ``st.caption``, ``st.write`` of a
  string, ``st.title``/``header``/``subheader``, ``st.info`` / ``warning`` / ``error`` /
  ``success``, ``st.expander`` label, ``st.radio`` option labels (``format_func``),
  every widget ``label`` (``st.selectbox("**x**", ...)``), ``st.button`` and
  ``st.page_link`` labels, ``st.metric`` label and value, and **``st.table`` cells**
  (images in a cell are fetched: tested).
- Plain text (use :func:`plain`): ``st.selectbox`` and ``st.multiselect`` option labels
  (``format_func``; tested), ``st.dataframe`` cells (a canvas grid; tested), ``st.text``,
  ``st.code``, ``st.json``, ``st.text_area`` values.

The pure functions need no running app; the ``st`` wrappers at the bottom import
Streamlit lazily.
"""

from __future__ import annotations

import re
import string
import unicodedata
from typing import Any

REPLACEMENT = "\ufffd"
"""Shown instead of a control or bidi character: visible, so nothing is lost silently."""

JOINER = "\u2060"
"""WORD JOINER: zero width and no line break; breaks text-level autolink/emoji patterns."""


DEFAULT_MAX = 300
"""Characters of an untrusted value shown inline by the wrappers before truncation."""

_PUNCT = frozenset(string.punctuation)
_SPACES = frozenset("\t\n\r\u2028\u2029\x0b\x0c\x85")
_JOIN_AFTER = frozenset(":@<->~")
_IN_CODE_SPAN = re.compile(r"`[^`]*\{[^{}]*\}[^`]*`")
_WWW = re.compile(r"(?i)(www)(\\\.)")


def _clean_char(ch: str) -> str:
    if ch in _SPACES:
        return " "
    if unicodedata.category(ch) in ("Cc", "Cf", "Cs"):
        return REPLACEMENT
    return ch


def _as_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


_ABSOLUTE_PATH = re.compile(r"(?<![\w:/.~<>-])/(?:[^\s/'\"(),;:]+/)+([^\s/'\"(),;:]*)")


def without_server_paths(text: str) -> str:
    """`text` (an error's technical detail) without the server's paths: the cache folder
    and the home folder named (`<cache>`, `~`), any other absolute path cut to its last
    name (`…/name`). A visitor has no use for them and should not learn the server's
    layout; the terminal log keeps them whole. URLs are kept (`https://host/a/b`)."""
    from pathlib import Path

    from lib.data.remote import cache_root

    for path, name in ((str(cache_root()), "<cache>"), (str(Path.home()), "~")):
        if len(path) > 1:
            text = text.replace(path, name)
    return _ABSOLUTE_PATH.sub(lambda m: f"…/{m[1]}", text)


def truncate(text: str, max_chars: int | None) -> tuple[str, int]:
    """`(head, n_more)`: the first `max_chars` characters and how many were cut (0 if none)."""
    if max_chars is None or len(text) <= max_chars:
        return text, 0
    return text[: max(max_chars, 0)], len(text) - max(max_chars, 0)


def more_marker(n_more: int) -> str:
    """The visible marker after a truncated value: `… (1,234 more characters)`."""
    return f"… ({n_more:,} more character{'s' if n_more != 1 else ''})"


def plain(text: object, max_chars: int | None = None) -> str:
    """Text for widgets that do not parse Markdown: controls/bidi replaced, maybe truncated.

    Use it for selectbox/multiselect option labels, dataframe cells, `st.text`/`st.code`.
    Never put its result into Markdown: use :func:`inert` there.
    """
    head, n_more = truncate(_as_text(text), max_chars)
    cleaned = "".join(_clean_char(ch) for ch in head)
    return cleaned + (" " + more_marker(n_more) if n_more else "")


def inert(text: object, max_chars: int | None = None) -> str:
    """Markdown source that renders exactly as `plain(text, max_chars)` and nothing else.

    No link, image, HTML, code, math, emoji, icon, colour, heading, list or table can come
    out of it (see the module docstring for each step). Word joiners (U+2060) are the only
    characters added besides backslashes; a reader sees none of them.
    """
    head, n_more = truncate(_as_text(text), max_chars)
    out: list[str] = []
    for ch in head:
        ch = _clean_char(ch)
        if ch in _PUNCT:
            out.append("\\" + ch)
            if ch in _JOIN_AFTER:
                out.append(JOINER)
        else:
            out.append(ch)
    # `www.` is `www\.` once escaped: the joiner goes between `www` and the backslash.
    escaped = _WWW.sub(lambda m: m.group(1) + JOINER + m.group(2), "".join(out))
    if n_more:
        escaped += " " + more_marker(n_more).replace("(", "\\(").replace(")", "\\)")
    return escaped


def inert_format(
    template: str, *args: Any, max_chars: int | None = DEFAULT_MAX, **kwargs: Any
) -> str:
    """`template.format(...)` with every argument made inert; the template is trusted Markdown.

    `inert_format("Unknown split **{}**: showing all.", value)`. Values are truncated to
    `max_chars` (default 300) so one huge value cannot make a message page-sized.
    A placeholder inside a code span (`` `{}` ``) is refused: backslash escapes do not
    apply inside code, so the escaped value would show its backslashes (use **{}**).
    """
    if _IN_CODE_SPAN.search(template):
        raise ValueError(f"placeholder inside a code span in {template!r}: use **{{}}**")
    safe_args = [inert(a, max_chars) for a in args]
    safe_kwargs = {k: inert(v, max_chars) for k, v in kwargs.items()}
    return template.format(*safe_args, **safe_kwargs)


def strip_joiners(text: str) -> str:
    """Rendered text without the joiners :func:`inert` adds (for tests and copy helpers)."""
    return text.replace(JOINER, "")


# ---------------------------------------------------------------------------------------
# Streamlit wrappers: the template is our Markdown, the values are made inert.
# ---------------------------------------------------------------------------------------


def markdown(template: str, *args: Any, **kwargs: Any) -> None:
    """`st.markdown` of `inert_format(template, *args, **kwargs)`."""
    import streamlit as st

    st.markdown(inert_format(template, *args, **kwargs))


def caption(template: str, *args: Any, **kwargs: Any) -> None:
    """`st.caption` of `inert_format(template, *args, **kwargs)`."""
    import streamlit as st

    st.caption(inert_format(template, *args, **kwargs))


def info(template: str, *args: Any, **kwargs: Any) -> None:
    """`st.info` of `inert_format(template, *args, **kwargs)`."""
    import streamlit as st

    st.info(inert_format(template, *args, **kwargs))


def warning(template: str, *args: Any, **kwargs: Any) -> None:
    """`st.warning` of `inert_format(template, *args, **kwargs)`."""
    import streamlit as st

    st.warning(inert_format(template, *args, **kwargs))


def error(template: str, *args: Any, **kwargs: Any) -> None:
    """`st.error` of `inert_format(template, *args, **kwargs)`."""
    import streamlit as st

    st.error(inert_format(template, *args, **kwargs))


def success(template: str, *args: Any, **kwargs: Any) -> None:
    """`st.success` of `inert_format(template, *args, **kwargs)`."""
    import streamlit as st

    st.success(inert_format(template, *args, **kwargs))


FULL_TEXT_MAX = 100_000
"""Characters of a long text sent to the browser at most, even inside the expander."""


def show_long_text(label: str, text: object, preview_chars: int = 600) -> None:
    """A long untrusted text: a plain preview, and the whole text in an expander.

    `st.text` does not parse Markdown and keeps line breaks. The whole text is only sent
    to the browser when it is longer than the preview (inside a collapsed expander, so the
    page height stays that of the preview). `label` is trusted Markdown (our own words).
    """
    import streamlit as st

    raw = _as_text(text)
    if len(raw) <= preview_chars:
        st.text(_keep_lines(raw))
        return
    st.text(_keep_lines(raw[:preview_chars]) + _more_or_empty(len(raw) - preview_chars))
    with st.expander(f"{label}: all {len(raw):,} characters"):
        st.text(_keep_lines(raw[:FULL_TEXT_MAX]) + _more_or_empty(len(raw) - FULL_TEXT_MAX))


def _more_or_empty(n_more: int) -> str:
    return " " + more_marker(n_more) if n_more > 0 else ""


def _keep_lines(text: str) -> str:
    """`plain` for multi-line text: keeps newlines, replaces other controls."""
    return "\n".join(plain(line) for line in text.split("\n"))

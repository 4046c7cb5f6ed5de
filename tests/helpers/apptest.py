"""Helpers for AppTest: open the app, or a page as a deep link, like a browser would."""

from __future__ import annotations

import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.helpers.slack import scaled
from ui.safe_text import strip_joiners

APP = str(Path(__file__).resolve().parents[2] / "app.py")  # absolute: AppTest would resolve
# a relative path against the calling file


def open_page(page_file: str | None = None, timeout: float = 60, **query: str) -> AppTest:
    """Run the app with a URL's query params; with `page_file`, switch to it first.

    Switching before the first run is what a cold deep link does (the guard path).
    """
    at = AppTest.from_file(APP, default_timeout=scaled(timeout))
    at.query_params.update(query)
    if page_file:
        at.switch_page(page_file)
    return at.run()


def shown(markdown: object) -> str:
    """Roughly what a reader sees of Markdown source: backslash escapes and the word joiners
    of `ui.safe_text.inert` removed (emphasis markers are kept)."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", strip_joiners(str(markdown)))


def texts(at: AppTest) -> str:
    """All markdown, caption and alert text of a run as a reader sees it (`shown`), for
    substring assertions."""
    parts = [e.value for e in at.markdown] + [e.value for e in at.caption]
    parts += [e.value for kind in (at.error, at.warning, at.info, at.success) for e in kind]
    parts += [e.value for kind in (at.subheader, at.header, at.title) for e in kind]
    return "\n".join(shown(p) for p in parts)

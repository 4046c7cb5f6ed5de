"""Page-level URL state: a widget seeded from `?name=` and mirrored back into the URL.

Every choice a page offers goes into the URL so a link reproduces the view. The rule,
the same on every page: the URL wins only when it changed from outside (a deep link,
Back/forward); otherwise the widget keeps the user's choice. We know which by remembering
what this page last wrote (`write`). A value the page cannot use is handed back to the
page, which explains it, and the widget falls back to its default.

Not ``bind="query-params"``: a bound selectbox with ``format_func`` keeps the formatted
label in the URL and ignores an id such as ``Judge9`` (measured), and a bound key must
not be passed to ``st.switch_page(query_params=...)``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

import streamlit as st


def _seen(widget: str) -> str:
    return f"_url_seen_{widget}"


def _check(valid: Collection[str] | Callable[[str], bool]) -> Callable[[str], bool]:
    return valid if callable(valid) else (lambda value: value in valid)


def changed(name: str, widget: str) -> bool:
    """Whether ``?name=`` changed from outside since this page last wrote it (or the widget
    has no value yet); remembers the URL's value, so it answers True once per change.

    For a page that resolves the URL's value itself (the viewer explains an unknown task
    or clamps a step) and only needs to know when to re-seed its widget.
    """
    asked = st.query_params.get(name)
    if widget in st.session_state and asked == st.session_state.get(_seen(widget)):
        return False  # unchanged since this page wrote it: keep the user's choice
    st.session_state[_seen(widget)] = asked
    return True


def read(
    name: str,
    widget: str,
    valid: Collection[str] | Callable[[str], bool],
    default: Any,
    parse: Callable[[str], Any] = str,
) -> str | None:
    """Seed the widget ``widget`` from ``?name=`` when the URL changed from outside.

    Returns the value the link asked for when it cannot be used (not in ``valid``), so
    the page can say why; the widget then shows ``default``. A URL without the parameter
    means the default. Call it before the widget is drawn.
    """
    if not changed(name, widget):
        return None
    asked = st.query_params.get(name)
    if asked is not None and _check(valid)(asked):
        st.session_state[widget] = parse(asked)
        return None
    st.session_state[widget] = default
    return asked


def fallback(widget: str, valid: Collection[str], default: Any) -> Any | None:
    """Reset a widget whose kept value is no longer offered (another split or dimension).

    Returns the dropped value (None if it was still valid), so the page can say so.
    """
    value = st.session_state.get(widget)
    if widget in st.session_state and value not in valid:
        st.session_state[widget] = default
        return value
    return None


def write(
    name: str,
    widget: str,
    value: str,
    default: str | None = None,
    also: Mapping[str, str] | None = None,
) -> None:
    """Mirror a widget's value into ``?name=``; absent when it equals ``default`` (if given).

    ``also``: other parameters that change with this one (the viewer's ``step=0`` on a new
    task), written in the same update so the change is one history entry, and only when
    ``?name=`` itself changes.
    """
    if default is not None and value == default:
        st.query_params.pop(name, None)
    elif st.query_params.get(name) != value:
        if also:
            st.query_params.update({name: value, **also})
        else:
            st.query_params[name] = value
    st.session_state[_seen(widget)] = st.query_params.get(name)

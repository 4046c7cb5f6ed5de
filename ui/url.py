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

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import streamlit as st


def _seen(widget: str) -> str:
    return f"_url_seen_{widget}"


def _kept(widget: str) -> str:
    """Session state: the value this page last wrote for ``widget`` (not a widget key, so
    Streamlit keeps it while the page is not shown: `read` restores it on return)."""
    return f"_url_kept_{widget}"


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


def _touched_key(widget: str) -> str:
    return f"_url_touched:{widget}"


def touched(widget: str) -> Callable[[], None]:
    """An ``on_change`` callback marking that the visitor just moved ``widget``.

    Why: a rerun carries the browser's query string as it was when the rerun was asked
    for. Keys pressed fast (a slider's arrows, on a busy server) ask for the next run
    before the browser has applied the URL the last run wrote, so that run sees an old
    ``?name=`` and `read` would take it for a change from outside (Back, a pasted link)
    and put the widget back: measured, the slider showed 0.17 while the URL said 0.19.
    """

    def mark() -> None:
        st.session_state[_touched_key(widget)] = True

    return mark


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
    means the default, except when the page is entered again in this session (through
    the sidebar: its widgets were gone meanwhile): then the page's last choice is restored
    if still valid (each page remembers its own choices, issue 36). Call it before the
    widget is drawn.
    """
    if st.session_state.pop(_touched_key(widget), False):
        return None  # the visitor's move wins over a URL that lags behind it (`touched`)
    entering = widget not in st.session_state
    if not changed(name, widget):
        return None
    asked = st.query_params.get(name)
    kept = st.session_state.get(_kept(widget))
    if asked is None and entering and kept is not None and _check(valid)(kept):
        st.session_state[widget] = parse(kept)
        return None
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
    st.session_state[_kept(widget)] = value


# --- one URL-bound widget: declared once (ui.params), read, explained, drawn, written -----

BAD_VALUE = "The link asks for {noun} **{asked}**: {why}; showing **{shown}**."
"""The one wording for a URL value a page cannot use (values pass through `inert`)."""


def explain(
    noun: str,
    asked: str | None,
    shown: str,
    why: str = "not a choice here",
    known: Sequence[str] = (),
    where: Any = None,
) -> None:
    """Say, in `BAD_VALUE`'s wording, that the link's value is not used and what is shown;
    ``known``: the values a link can use here (ids, listed after it); ``where``: the
    container (default: the page)."""
    if asked is None:
        return
    from ui.safe_text import inert

    text = BAD_VALUE.format(noun=noun, asked=inert(asked, 300), why=why, shown=inert(shown, 300))
    if known:
        text += f" Known: {inert(', '.join(known), 2000)}."
    (where if where is not None else st).warning(text, icon=":material/link_off:")


SHARED_GONE = (
    "Uploaded verifiers live in the browser session that uploaded them and in the links it "
    "gives (`?v=`: the link holds the verdicts themselves)."
)
"""Said wherever a link names an upload this session does not have."""


def upload_gone(asked: str) -> str | None:
    """The reason for an uploaded verifier's id (`mine:…`) this session does not have:
    where uploads live and how to get them back (None for any other value)."""
    from lib.table.verdicts import UPLOAD_PREFIX

    if not asked.startswith(UPLOAD_PREFIX):
        return None
    return (
        f"no such upload in this browser session. {SHARED_GONE} To see it, open a link "
        "its owner copied from the app (it carries `?v=`), or upload the file again on "
        "*Your verifier*"
    )


def choice(
    param: Any,
    options: Sequence[str],
    default: str,
    *,
    where: Any = None,
    format_func: Callable[[str], str] = str,
    why: Callable[[str], str] | None = None,
    show: bool = True,
    omit_default: bool = True,
    say_stale: bool | Callable[[str, str], str] = False,
    help: str | None = None,
) -> str:
    """One URL-bound choice (`ui.params.Param`): read ``?name=``, explain a value not in
    ``options``, fall back when the kept choice is no longer offered, draw the widget
    (``param.kind``: ``select`` or ``radio``; none when ``show`` is False) in ``where``
    and write the choice back (absent at ``default`` unless ``omit_default`` is False).

    ``why(asked)`` words why a value is unusable (default: "not a choice here");
    ``say_stale``: say so, in one info line, when a kept choice is dropped (another split or
    dimension); a function ``(dropped, shown) -> Markdown`` words that line itself (it must
    pass both through `ui.safe_text.inert`), True the generic "not offered here".
    """
    options = list(options)
    asked = read(param.name, param.key, options, default)
    if asked is not None:
        reason = upload_gone(asked) or (why(asked) if why else "not a choice here")
        explain(param.noun, asked, format_func(default), reason, options)
    stale = fallback(param.key, options, default)
    if say_stale and stale is not None and asked is None:
        from ui.safe_text import inert

        if callable(say_stale):
            st.info(say_stale(str(stale), format_func(default)))
        else:
            st.info(f"**{inert(str(stale), 300)}** is not offered here; showing "
                    f"**{inert(format_func(default), 300)}**.")  # fmt: skip
    box = where if where is not None else st
    if show and param.kind == "radio":
        value = box.radio(
            param.label,
            options,
            key=param.key,
            format_func=format_func,
            horizontal=True,
            help=help,
            on_change=touched(param.key),
        )
    elif show:
        value = box.selectbox(
            param.label,
            options,
            key=param.key,
            format_func=format_func,
            help=help,
            on_change=touched(param.key),
        )
    else:
        value = st.session_state[param.key]
    write(param.name, param.key, str(value), None if not omit_default else str(default))
    return value


def _number_check(low: float, high: float, whole: bool) -> Callable[[str], bool]:
    pattern = re.compile(r"[0-9]{1,6}" if whole else r"[0-9]{1,6}(\.[0-9]{1,6})?")

    def valid(text: str) -> bool:
        # ASCII digits only: str.isdigit() accepts '²', which int() then refuses
        return bool(pattern.fullmatch(text)) and low <= float(text) <= high

    return valid


def number(
    param: Any,
    low: float,
    high: float,
    default: float,
    *,
    where: Any = None,
    step: float = 1,
    help: str | None = None,
    omit_default: bool = True,
) -> float:
    """A URL-bound number (`ui.params.Param`, ``kind`` ``number`` or ``slider``): a whole
    number when ``step`` is 1 (``?min_n=10``), else two decimals (``?threshold=0.75``).
    Anything but plain ASCII digits in [low, high] is explained and ``default`` shown."""
    whole = step == 1
    parse: Callable[[str], Any] = int if whole else (lambda text: round(float(text), 2))
    text = (lambda v: str(int(v))) if whole else (lambda v: f"{float(v):.2f}")
    asked = read(param.name, param.key, _number_check(low, high, whole), default, parse=parse)
    kind = "a whole number" if whole else "a number"
    explain(param.noun, asked, text(default), f"not {kind} from {low:g} to {high:g}")
    box = where if where is not None else st
    if param.kind == "slider":
        value = box.slider(
            param.label, low, high, step=step, key=param.key, help=help,
            on_change=touched(param.key),
        )  # fmt: skip
    else:
        value = box.number_input(
            param.label, low, high, step=step, key=param.key, help=help,
            on_change=touched(param.key),
        )  # fmt: skip
    write(param.name, param.key, text(value), None if not omit_default else text(default))
    return int(value) if whole else float(value)

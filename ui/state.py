"""The loaded data, shared by every session: one cached Bench per data source."""

from __future__ import annotations

import functools
import inspect
import os
import pickle
import threading
import time
from collections.abc import Callable
from contextlib import nullcontext, suppress
from typing import TYPE_CHECKING, Any, TypeVar

import pandas as pd
import streamlit as st

from lib.bounded_cache import BoundedCache
from lib.data import source as sources
from lib.data.load import Bench, load_bench
from lib.table.verdicts import VERIFIERS
from lib.uploads import labels as my_labels
from lib.uploads import predictions
from ui import url
from ui.url import SHARED_GONE

if TYPE_CHECKING:
    from lib.uploads.shared import Shared

FALLBACK_TTL = 60.0
"""Seconds a demo stand-in for an unreachable Hub is reused before the Hub is tried again
(a single hiccup at cold start must not pin every later visitor to the demo)."""
_ATTEMPT: dict[str, int] = {}
_FALLBACK_SINCE: dict[tuple[str, int], float] = {}
_ATTEMPT_LOCK = threading.Lock()


@st.cache_resource(max_entries=2, show_spinner=False)
def _bench(spec: str, attempt: int = 0) -> Bench:
    """Load once per source spec (and attempt: `retry_hub` or an expired fallback makes a
    new one); the progress bar lives inside so cache hits replay it empty."""
    tune_allocator()  # before the load: its frees are the first to be handed back
    bar = st.progress(0.0, text="Opening the data source…")

    def progress(fraction: float, text: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=text)

    try:
        return load_bench(sources.resolve(spec), progress)
    finally:
        bar.empty()
        give_back_memory()
        start_memory_trimmer()


ALLOCATOR = {"M_ARENA_MAX": (-8, 2), "M_MMAP_THRESHOLD": (-3, 4 << 20),
             "M_TRIM_THRESHOLD": (-1, 1 << 20)}  # fmt: skip
"""glibc `mallopt` settings (name: (parameter number, value)) applied by `tune_allocator`."""


def tune_allocator() -> dict[str, bool]:
    """Keep glibc's heaps returnable: fixed mmap and trim thresholds, at most two arenas.

    By default glibc raises its mmap threshold (up to 32 MB) and its trim threshold (up to
    64 MB) each time a large block is freed, and gives every new thread an arena of its
    own, up to 8 per core; Streamlit runs each script run in a new thread. `malloc_trim`
    then hands back free pages inside the arenas, but not the free top of a thread's
    arena: after six sessions closed, the server held ~100 MB free in 16 arenas and 106 MB
    more RSS than the warm server (`bench.sessions --hostile 1`, bench/README.md). Fixed
    thresholds (set explicitly, glibc stops adjusting them) let every free of a large block
    trim its arena's top, and blocks of 4 MB or more come from mmap and go back whole.
    The arena cap acts only while fewer than 9 arenas exist (glibc fixes its limit then):
    on the measured server 16 existed already, so the thresholds are what counts there.
    Returns which settings glibc accepted (none off glibc)."""
    import ctypes

    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc: its own allocator, nothing to tune
        return dict.fromkeys(ALLOCATOR, False)
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return {name: mallopt(number, value) == 1 for name, (number, value) in ALLOCATOR.items()}


def give_back_memory() -> None:
    """Hand memory freed by a load back to the system: pyarrow's pool keeps freed blocks
    and glibc its arenas (at 100x the loaded process held 600 MB of RSS, 420 MB after
    this; the page peaks then start from the lower figure)."""
    import ctypes

    import pyarrow

    pyarrow.default_memory_pool().release_unused()
    with suppress(OSError, AttributeError):  # not glibc: nothing to trim
        ctypes.CDLL("libc.so.6").malloc_trim(0)


TRIM_EVERY = 30.0
"""Seconds between two `give_back_memory` calls of the trimmer thread."""
_TRIMMER: list[threading.Thread] = []


def start_memory_trimmer(every: float = TRIM_EVERY) -> None:
    """Once per process, a daemon thread that hands freed memory back every ``every``
    seconds. Sessions end without a script run (a closed tab runs no code), so what they
    freed would stay in glibc's arenas and pyarrow's pool; this returns it (measured by
    `bench.sessions --hostile`). It never calls Streamlit."""
    with _ATTEMPT_LOCK:
        if _TRIMMER:
            return

        def trim() -> None:
            while True:
                time.sleep(every)
                with suppress(Exception):  # best effort: never let the thread die loudly
                    give_back_memory()

        _TRIMMER.append(threading.Thread(target=trim, name="cuavb-memory-trim", daemon=True))
        _TRIMMER[0].start()


def source_spec() -> str:
    """The configured source: `CUAVB_DATA`, or "" for the default Hub id."""
    return os.environ.get(sources.ENV_VAR, "").strip()


def is_fallback(bench: Bench) -> bool:
    """True when the demo stands in for a default Hub that could not be used."""
    return bench.source.is_demo and not bench.source.named


def retry_hub(spec: str | None = None) -> None:
    """Forget the demo fallback: the next `get_bench` tries the Hub again ("Try the Hub
    again" button, and automatically FALLBACK_TTL seconds after the fallback)."""
    spec = source_spec() if spec is None else spec
    with _ATTEMPT_LOCK:
        _ATTEMPT[spec] = _ATTEMPT.get(spec, 0) + 1


def get_bench() -> Bench:
    """The Bench of the configured source. Raises SourceError with a user-facing message.

    A fallback to the demo is kept for FALLBACK_TTL seconds only, never for good: then a
    background probe asks the Hub for its revision (`_probe_hub`), and only when the Hub
    answers does a later run load it. No visitor waits for a Hub that is still down."""
    spec = source_spec()
    attempt = _ATTEMPT.get(spec, 0)
    bench = _bench(spec, attempt)
    if is_fallback(bench):
        with _ATTEMPT_LOCK:
            since = _FALLBACK_SINCE.setdefault((spec, attempt), time.monotonic())
            expired = time.monotonic() - since > FALLBACK_TTL and _ATTEMPT.get(spec, 0) == attempt
            probing = spec in _PROBES and _PROBES[spec].is_alive()
            if expired and not probing:
                _PROBES[spec] = threading.Thread(
                    target=_probe_hub, args=(spec, attempt), name="cuavb-hub-probe", daemon=True
                )
                _PROBES[spec].start()
    return bench


_PROBES: dict[str, threading.Thread] = {}


def _probe_hub(spec: str, attempt: int) -> None:
    """In a background thread (never calls Streamlit): one revision request to the Hub.
    It answers: the next run loads the Hub (`retry_hub`). It does not: the fallback is
    kept another FALLBACK_TTL, and the terminal says so once per probe at most at INFO."""
    import logging

    from lib.data import hub

    log = logging.getLogger(__name__)
    repo = sources.resolve(spec).location
    try:
        hub.resolve_revision(repo)
    except Exception as exc:  # any failure: still unusable (the message only, no object kept)
        with _ATTEMPT_LOCK:
            _FALLBACK_SINCE[(spec, attempt)] = time.monotonic()
        log.info("Hub %s still unusable (%s): keeping the built-in demo", repo, exc)
        return
    with _ATTEMPT_LOCK:
        current = _ATTEMPT.get(spec, 0) == attempt
    if current:
        log.warning("Hub %s answers again: the next page load reads it", repo)
        retry_hub(spec)


F = TypeVar("F", bound=Callable[..., Any])
MB = 1024 * 1024
BOUNDED_CACHES: dict[str, BoundedCache] = {}
"""Every `bounded_cache` by function name (the benchmark and tests read their sizes)."""


@st.cache_data(max_entries=1, show_spinner=False)
def _generation() -> str:
    """A token that changes when `st.cache_data.clear()` runs: the bounded caches key on
    it, so clearing Streamlit's caches (a deploy's "Clear cache", the tests) clears them."""
    return os.urandom(8).hex()


def bounded_cache(
    max_entries: int, max_bytes: int, show_spinner: str | bool = False
) -> Callable[[F], F]:
    """Like `st.cache_data(max_entries=...)`, shared by every session, and also bounded in
    bytes (`lib.bounded_cache.BoundedCache`): for results whose size depends on a
    visitor's uploads. Arguments named with a leading ``_`` are not part of the key (as
    in Streamlit); the others are keyed by their pickled value."""

    def wrap(fn: F) -> F:
        cache = BOUNDED_CACHES[fn.__qualname__] = BoundedCache(max_entries, max_bytes)
        signature = inspect.signature(fn)
        held = {"generation": ""}

        @functools.wraps(fn)
        def cached(*args: Any, **kwargs: Any) -> Any:
            generation = _generation()
            if generation != held["generation"]:
                cache.clear()
                held["generation"] = generation
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            public = [(k, v) for k, v in bound.arguments.items() if not k.startswith("_")]
            key = pickle.dumps(public, protocol=pickle.HIGHEST_PROTOCOL)

            def compute() -> Any:  # the spinner only on a miss
                with st.spinner(show_spinner) if show_spinner else nullcontext():
                    return fn(*args, **kwargs)

            return cache.get_or_compute(key, compute)

        cached.cache = cache  # type: ignore[attr-defined]
        return cached  # type: ignore[return-value]

    return wrap


UPLOADS_KEY = "uploaded_verdicts"
"""Session-state key of the verdict rows of verifiers uploaded in this browser session."""


LABELS_KEY = "my_labels"
"""Session-state key of this session's own labels (`lib.uploads.labels`: the Audit page's
re-labels and an uploaded labels file)."""


def session_labels() -> pd.DataFrame | None:
    """This session's own labels (split, task_id, dimension, label, note), or None."""
    held = st.session_state.get(LABELS_KEY)
    return held if held is not None and len(held) else None


def verdicts(bench: Bench) -> pd.DataFrame:
    """The verdict table every page uses: the dataset's rows plus this session's uploads,
    plus the "your labels" reference raters when the session has labels of its own.

    Uploaded verifiers live in `st.session_state` only (never on disk, never shared with
    another session); they are ordinary `kind == "verifier"` rows. Your labels are
    ordinary `kind == "reference"` rows (`lib.table.verdicts.YOUR_LABELS`).
    """
    table = predictions.with_uploaded(bench.verdicts, [st.session_state.get(UPLOADS_KEY)])
    return my_labels.with_your_labels(table, session_labels())


def verifier_ids(table: pd.DataFrame, dimension: str | None = None) -> list[str]:
    """Verifier rater ids in a stable order: the dataset's first, then uploads."""
    rows = table[table["kind"] == "verifier"]
    if dimension:
        rows = rows[rows["dimension"] == dimension]
    present = list(dict.fromkeys(rows["rater"].tolist()))
    known = [r for r in VERIFIERS if r in present]
    return known + [r for r in present if r not in VERIFIERS]


SHARED_PARAM = "mine"
SHARED_KEY = "_shared_upload"
"""Session state: (hash, the uploads frame it holds) of the shared upload in this session."""
SHARED_NOTE_KEY = "_shared_upload_note"
"""Session state: (hash, what loading it left out), said while the link's upload is held."""
VISITOR_KEY = "_share_visitor"
XSRF_COOKIE = "_streamlit_xsrf"


def xsrf_token(cookie: str) -> bytes:
    """The token inside Tornado's XSRF cookie (`2|mask|masked token|time`: the mask is new
    on every page load, the token is the browser's), or b"" when it is not one.

    >>> xsrf_token("2|01020304|0b0d0f09|1700000000").hex()
    '0a0f0c0d'
    >>> xsrf_token("nonsense")
    b''
    """
    import binascii

    parts = cookie.strip("\"'").split("|")
    if len(parts) != 4 or parts[0] != "2" or len(parts[2]) > 256:
        return b""
    try:
        mask, masked = binascii.a2b_hex(parts[1]), binascii.a2b_hex(parts[2])
    except (binascii.Error, ValueError):
        return b""
    if len(mask) != 4 or not masked:
        return b""
    return bytes(b ^ mask[i % 4] for i, b in enumerate(masked))


def visitor_id() -> str:
    """Who shares, for `lib.uploads.shared`' quotas and rate limits: one id per browser
    when Streamlit's XSRF cookie came with the session (every tab of a browser sends the
    same token, checked in chromium, so a fresh tab is the same visitor), else one per
    browser session. Only a
    hash of the cookie is kept, never shown. A visitor who clears its cookies becomes a
    new one: the store's own rules (protected recent links, the server's rate) cover that."""
    import hashlib
    import secrets

    held = st.session_state.get(VISITOR_KEY)
    if isinstance(held, str) and held:
        return held
    cookie = None
    with suppress(Exception):  # no context (bare mode) or no cookies: a session id
        cookie = st.context.cookies.get(XSRF_COOKIE)
    token = xsrf_token(cookie) if isinstance(cookie, str) else b""
    if token:
        visitor = "browser:" + hashlib.sha256(token).hexdigest()[:24]
    else:
        visitor = "session:" + secrets.token_hex(12)
    st.session_state[VISITOR_KEY] = visitor
    return visitor


def _left_out_note(verifiers: int, loaded: int, left_out: int, held: int) -> str:
    """What a capped link load says (numbers only: nothing from the file)."""
    cap = predictions.MAX_VERIFIERS_PER_SESSION
    already = f", {held} already in this session" if held else ""
    return (
        f"**This link's shared upload holds {verifiers:,} verifiers; a browser session holds "
        f"at most {cap}**{already}: {loaded:,} were loaded (the first in the file's order) "
        f"and **{left_out:,} were left out**. Ask whoever shared it for smaller links "
        f"(at most {cap} verifiers each)."
    )


def load_shared() -> None:
    """`?mine=<hash>`: add a shared upload (`lib.uploads.shared`) to this session's
    uploads, once per hash, and keep the hash in the URL while the session's uploads are
    the shared ones (so a link copied from any page carries them). Called by the frame
    before every page. A malformed or unknown hash is explained; nothing else changes.
    Bounded like an upload: at most `MAX_VERIFIERS_PER_SESSION` verifiers in the session
    whatever the stored file holds (`shared_uploads.load_capped`), and the page says how
    many were left out.
    """
    from lib.uploads import shared as shared_uploads

    asked = st.query_params.get(SHARED_PARAM)
    held = st.session_state.get(SHARED_KEY)
    uploads = st.session_state.get(UPLOADS_KEY)
    if held is not None and held[1] is not uploads:  # uploaded or removed since: not shared
        if asked == held[0]:
            st.query_params.pop(SHARED_PARAM, None)  # the link would not show this set
            asked = None
        held = st.session_state[SHARED_KEY] = None
        st.session_state.pop(SHARED_NOTE_KEY, None)
    if asked is None:
        if held is not None:
            st.query_params[SHARED_PARAM] = held[0]  # keep the link complete on every page
        return
    if held is not None and held[0] == asked:
        note = st.session_state.get(SHARED_NOTE_KEY)
        if note and note[0] == asked:
            st.warning(note[1], icon=":material/filter_alt:")
        return
    if not shared_uploads.valid_hash(asked):
        url.explain("shared upload", asked, "none", "not a shared-upload id (64 hex digits)")
        return
    taken = set(uploads["rater"].astype(str)) if uploads is not None and len(uploads) else set()
    room = predictions.MAX_VERIFIERS_PER_SESSION - len(taken)
    loaded = shared_uploads.load_capped(asked, room=room, taken=taken)
    if loaded is None:
        st.warning(
            "**This link's shared upload is not stored on this server any more** (or never "
            f"was). {SHARED_GONE} Ask whoever shared it for the file, or for a new link "
            "after they share it again from *Your verifier*.",
            icon=":material/link_off:",
        )
        return
    rows = predictions.typed_verdicts(loaded.rows)
    if taken:
        rows = pd.concat([uploads, rows], ignore_index=True)
    st.session_state[UPLOADS_KEY] = rows
    st.session_state[SHARED_KEY] = (asked, rows)
    st.session_state.pop(SHARED_NOTE_KEY, None)
    if loaded.left_out:
        kept = loaded.rows["rater"].nunique()
        note = _left_out_note(loaded.verifiers, kept, loaded.left_out, len(taken))
        st.session_state[SHARED_NOTE_KEY] = (asked, note)
        st.warning(note, icon=":material/filter_alt:")


def shared_hash() -> str | None:
    """The hash of this session's shared upload while the session's uploads are still the
    shared ones (links then carry `?mine=`), else None."""
    held = st.session_state.get(SHARED_KEY)
    if held is None or held[1] is not st.session_state.get(UPLOADS_KEY):
        return None
    return held[0]


def share_uploads() -> Shared:
    """Store this session's uploads (`lib.uploads.shared.share`, as this `visitor_id`), put
    `?mine=` in the URL and remember it; return the stored share (its hash, and a notice
    when the visitor's quota dropped its oldest links). Uploads already shared as they are
    are not stored again. Raises `lib.uploads.shared.ShareError`."""
    from lib.uploads import shared as shared_uploads

    uploads = st.session_state.get(UPLOADS_KEY)
    if uploads is None or not len(uploads):
        raise shared_uploads.ShareError("no uploaded verifier in this session")
    already = shared_hash()
    if already is not None:
        return shared_uploads.Shared(already)
    shared = shared_uploads.share(predictions.typed_verdicts(uploads), visitor_id())
    st.session_state[SHARED_KEY] = (shared.digest, uploads)
    st.query_params[SHARED_PARAM] = shared.digest
    return shared

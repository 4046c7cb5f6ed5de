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
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from lib.bounded_cache import BoundedCache
from lib.data import source as sources
from lib.data.load import Bench, load_bench
from lib.table.verdicts import VERIFIERS
from lib.uploads import labels as my_labels
from lib.uploads import predictions

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

    from lib.data.remote import hub

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
SCORE_FILES_KEY = "uploaded_score_files"
"""Session-state key of uploaded score files: rater id -> task id -> the score file as a
dataset cell (`lib.uploads.score_files.ScoreUpload.cells`), for the rubric cards."""

HISTORY_KEY = "uploaded_history"
"""Session-state key of the uploaded verifiers' versions and runs (`Upload.history` rows of
the files with `version` / `run` columns), read by the Iterations section and the viewer."""


FAILURE_STEPS_KEY = "uploaded_failure_steps"
"""Session-state key of the uploaded verifiers' first failure steps: rater id -> task id ->
step (from their score files, or from a link's failure-steps section: the Trajectory page's
marks, which a link carries while the rubric detail stays in the session)."""
FLAGGED_KEY = "uploaded_flagged_tasks"
"""Session-state key of the tasks each uploaded verifier's score files flag as ambiguous or
invalid: rater id -> task ids (from the files, or from a link's failure-steps section)."""
_LINK_STEPS_KEY = "_link_failure_steps"
"""Session state: the failure steps the held link payload was built from (identity)."""


def live_failure_steps() -> dict[str, dict[str, int]]:
    """The failure steps of the uploaded verifiers still loaded."""
    steps = st.session_state.get(FAILURE_STEPS_KEY) or {}
    uploads = st.session_state.get(UPLOADS_KEY)
    loaded = set() if uploads is None else set(uploads["rater"].astype(str))
    return {r: v for r, v in steps.items() if r in loaded and v}


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


LINK_KEY = "_link_payload"
"""Session state: (the uploads frame, the history, the labels, their `?v=` payload, even when
too long for a link)."""
LINK_OWN_KEY = "_link_own"
"""Session state: digests of the payloads this session wrote into the URL (a rerun may
carry an older one, and Back/forward does: those are not links from outside)."""
LINK_REFUSED_KEY = "_link_refused"
"""Session state: (digest of a `?v=` that could not be loaded, the line that says why)."""
_ORDERS: dict[int, tuple[pd.DataFrame, Any]] = {}


def task_order(bench: Bench) -> Any:
    """`lib.uploads.link_codec.task_order` of the bench's tasks (kept per loaded bench)."""
    from lib.uploads import link_codec

    held = _ORDERS.get(id(bench.tasks))
    if held is None or held[0] is not bench.tasks:
        if len(_ORDERS) > 4:
            _ORDERS.clear()
        held = _ORDERS[id(bench.tasks)] = (bench.tasks, link_codec.task_order(bench.tasks))
    return held[1]


def _digest(payload: str) -> str:
    import hashlib

    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def full_payload(bench: Bench | None = None) -> str | None:
    """This session's uploads, their versions and runs, and its own labels as a `?v=`
    payload (None when the session has none of them), even when it is too long for a link
    (`lib.uploads.link_codec.fits`)."""
    from lib.uploads import history_section, labels_section, link_codec

    uploads = st.session_state.get(UPLOADS_KEY)
    history = st.session_state.get(HISTORY_KEY)
    labels = session_labels()
    has_uploads = uploads is not None and len(uploads) > 0
    has_history = has_uploads and history is not None and len(history) > 0
    if not has_uploads and labels is None:
        return None
    held = st.session_state.get(LINK_KEY)
    key = (uploads, history if has_history else None, labels)
    steps_held = st.session_state.get(FAILURE_STEPS_KEY) if has_uploads else None
    stale = held is None or len(held) != 4
    stale = stale or st.session_state.get(_LINK_STEPS_KEY) is not steps_held
    if stale or any(a is not b for a, b in zip(held[:3], key, strict=True)):
        order = task_order(bench if bench is not None else get_bench())
        extra: list[tuple[int, bytes]] = []
        if labels is not None:
            # over the section's bound: the link carries the verdicts only
            with suppress(labels_section.SectionError):
                extra.append((link_codec.LABELS, labels_section.encode(labels)))
        if has_history:
            extra.append((link_codec.HISTORY, history_section.encode(history)))
        rows = uploads if has_uploads else _no_uploads()
        payload = link_codec.encode(rows, order, extra)
        steps = live_failure_steps() if has_uploads else {}
        flagged = (st.session_state.get(FLAGGED_KEY) or {}) if has_uploads else {}
        flagged = {r: v for r, v in flagged.items() if r in set(uploads["rater"].astype(str))}
        if steps or any(flagged.values()):  # they travel when the link still fits with them
            with suppress(link_codec.LinkError):
                section = link_codec.encode_failure_steps(steps, order, flagged)
                longer = link_codec.encode(
                    rows, order, [*extra, (link_codec.FAILURE_STEPS, section)]
                )
                if link_codec.fits(longer) or not link_codec.fits(payload):
                    payload = longer
        held = (*key, payload)
        st.session_state[LINK_KEY] = held
        st.session_state[_LINK_STEPS_KEY] = steps_held
    return held[3]


def _no_uploads() -> pd.DataFrame:
    """An empty uploads frame (a link that carries only the visitor's labels)."""
    from lib.table.verdicts import COLUMNS

    return pd.DataFrame({c: pd.Series(dtype=object) for c in COLUMNS})


def link_payload(bench: Bench | None = None) -> str | None:
    """The `?v=` payload every link this session writes carries (None: no uploads, or
    too long for a link: the Share popover says so and offers the file)."""
    from lib.uploads import link_codec

    payload = full_payload(bench)
    return payload if payload is not None and link_codec.fits(payload) else None


def links_query(bench: Bench | None = None) -> dict[str, str]:
    """The query a link to another page carries (`ui.nav.KEEP`: split, cluster, `v=`),
    with this session's uploads even before the URL has them (an upload made in this run:
    `sync_link` writes `v=` in the next)."""
    from ui.nav import menu_query

    own = link_payload(bench)
    return menu_query({**st.query_params.to_dict(), **({"v": own} if own else {})})


def _remember_own(payload: str) -> None:
    own = st.session_state.setdefault(LINK_OWN_KEY, [])
    digest = _digest(payload)
    if digest not in own:
        own.append(digest)
        del own[:-50]


_OLD_STORE_GONE: list[bool] = []


def forget_old_store() -> None:
    """Once per process: delete `CUAVB_CACHE_DIR/shared-uploads`, the server-side store of
    the links this replaced (nothing reads it any more)."""
    import shutil

    from lib.data.remote import cache_root

    with _ATTEMPT_LOCK:
        if _OLD_STORE_GONE:
            return
        _OLD_STORE_GONE.append(True)
    shutil.rmtree(cache_root() / "shared-uploads", ignore_errors=True)


def sync_link(bench: Bench) -> None:
    """Before every page (the frame): `?v=` and this session's uploads agree.

    A `?v=` from outside (a link opened) is decoded (`lib.uploads.link_codec`, bounded
    before any work) and its verdicts become this session's uploads; a link that cannot be
    used loads nothing and says why in one line. Otherwise the URL carries this session's
    uploads, so every link copied from any page holds them. An old `?mine=<hash>` link
    (server-stored uploads) is said to be gone in one line.
    """
    from lib.uploads import link_codec

    forget_old_store()
    if st.query_params.get(link_codec.OLD_PARAM) is not None:
        st.warning(link_codec.OLD_LINK, icon=":material/link_off:")
    asked = st.query_params.get(link_codec.PARAM)
    own = link_payload(bench)
    if asked is not None and asked != own:
        digest = _digest(asked)
        refused = st.session_state.get(LINK_REFUSED_KEY)
        if digest in st.session_state.get(LINK_OWN_KEY, []):
            asked = None  # this session's own older payload (a lagging rerun, Back)
        elif refused is not None and refused[0] == digest:
            if own is None:
                st.warning(refused[1], icon=":material/link_off:")
                return
            asked = None
        else:
            try:
                decoded = link_codec.decode(asked, task_order(bench))
            except link_codec.LinkError as exc:
                line = f"**This link's uploaded verdicts were not loaded:** {exc}."
                st.session_state[LINK_REFUSED_KEY] = (digest, line)
                st.warning(line, icon=":material/link_off:")
                if own is None:
                    return
                asked = None
            else:
                rows = decoded.rows if len(decoded.rows) else None
                history = decoded.sections.get("history")
                labels = decoded.sections.get("labels")
                carried = decoded.sections.get("failure_steps") or {}
                steps = carried.get("steps") or {}
                history = history if history is not None and len(history) else None
                labels = labels if labels is not None and len(labels) else None
                st.session_state[UPLOADS_KEY] = rows
                st.session_state[HISTORY_KEY] = history
                if labels is not None:
                    st.session_state[LABELS_KEY] = labels
                else:
                    st.session_state.pop(LABELS_KEY, None)
                st.session_state[FAILURE_STEPS_KEY] = steps
                st.session_state[FLAGGED_KEY] = carried.get("flagged") or {}
                st.session_state[_LINK_STEPS_KEY] = steps
                st.session_state[LINK_KEY] = (rows, history, labels, asked)
                _remember_own(asked)
                return
    if own is None:
        if asked is None and st.query_params.get(link_codec.PARAM) is not None:
            st.query_params.pop(link_codec.PARAM, None)
        return
    if st.query_params.get(link_codec.PARAM) != own:
        st.query_params[link_codec.PARAM] = own
    _remember_own(own)

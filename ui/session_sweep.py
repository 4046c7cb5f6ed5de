"""Files of sessions Streamlit has forgotten: dropped, so a closed tab's do not stay forever.

A closed tab's session is kept for reconnection (Streamlit's session storage: 2 minutes,
reaped lazily), and when it leaves the storage it is dropped without being shut down: the
media files its last run registered (the stepper's screenshots, up to
`ui.viewer.media.MEDIA_BYTES_MAX` per trajectory) and the files it uploaded stay in the
runtime's managers, keyed by a session id nobody will use again. `sweep` (called at the
start of every script run, in the script thread) finds the ids those managers hold that
are neither connected nor stored, and once an id has been seen gone by two sweeps
`SWEEP_EVERY` seconds apart (a reconnecting session moves between the two maps), drops
its references; files no live session shares then go.
"""

from __future__ import annotations

import threading
import time
from contextlib import nullcontext, suppress
from typing import Any

SWEEP_EVERY = 30.0
"""Seconds between two sweeps (a sweep is a few dictionary lookups per session id)."""

_LOCK = threading.Lock()
_SUSPECTS: set[str] = set()
"""Session ids found gone by the last sweep: dropped if the next one finds them gone too."""
_LAST = [float("-inf")]


def held_session_ids(rt: Any) -> set[str]:
    """Session ids the media and uploaded-file managers hold files for."""
    media = rt.media_file_mgr
    with media._lock:
        ids = set(media._files_by_session_and_coord)
    uploads = rt.uploaded_file_mgr
    with getattr(uploads, "_lock", nullcontext()):
        ids |= set(getattr(uploads, "file_storage", {}))
    return ids


def known(rt: Any, session_id: str) -> bool:
    """True while Streamlit knows the session: connected, or stored for reconnection.

    Asked under the session manager's storage lock, which it holds while it moves a
    session between the two."""
    mgr = rt._session_mgr
    with getattr(mgr, "_storage_lock", nullcontext()):
        return mgr.get_session_info(session_id) is not None


def drop(rt: Any, session_id: str) -> None:
    """What `AppSession.shutdown` would have released for this session."""
    rt.uploaded_file_mgr.remove_session_files(session_id)
    rt.media_file_mgr.clear_session_refs(session_id)
    with suppress(AttributeError):
        rt.dataframe_source_mgr.clear_all_for_session(session_id)


def sweep(rt: Any = None, now: float | None = None) -> list[str]:
    """Drop the files of sessions found gone twice in a row; returns their ids.

    Does nothing outside a Streamlit server (no runtime) and more often than
    SWEEP_EVERY; best effort: a Streamlit whose internals differ sweeps nothing."""
    now = time.monotonic() if now is None else now
    with _LOCK:
        if now - _LAST[0] < SWEEP_EVERY:
            return []
        _LAST[0] = now
    try:
        if rt is None:
            from streamlit import runtime

            if not runtime.exists():
                return []
            rt = runtime.get_instance()
        gone = {sid for sid in held_session_ids(rt) if not known(rt, sid)}
        with _LOCK:
            dropped = sorted(gone & _SUSPECTS)
            _SUSPECTS.clear()
            _SUSPECTS.update(gone - set(dropped))
        for sid in dropped:
            drop(rt, sid)
        if dropped:
            rt.media_file_mgr.remove_orphaned_files()
        return dropped
    except Exception:  # never let housekeeping break a visitor's page
        return []

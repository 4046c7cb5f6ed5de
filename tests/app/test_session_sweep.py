"""`ui.session_sweep`: the media files and uploads of a session Streamlit has forgotten
(closed tab, dropped from its reconnection storage without a shutdown) are released,
while those of connected and stored sessions stay. Real Streamlit managers (in-memory
media storage, uploaded-file manager); only the session manager is a stand-in."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest
from streamlit.runtime import media_file_manager as mfm
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.uploaded_file_manager import UploadedFileRec

from ui import session_sweep


class Sessions:
    """The two maps of Streamlit's session manager: connected, stored for reconnection."""

    def __init__(self, known: set[str]) -> None:
        self.known = known
        self._storage_lock = threading.Lock()

    def get_session_info(self, session_id: str) -> object | None:
        return object() if session_id in self.known else None


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    media = mfm.MediaFileManager(MemoryMediaFileStorage("/media"))
    uploads = MemoryUploadedFileManager("/upload")
    for sid in ("live", "stored", "gone"):
        monkeypatch.setattr(mfm, "_get_session_id", lambda sid=sid: sid)
        media.add(f"screenshot of {sid}".encode() * 1000, "image/png", "viewer.shot.0")
        media.add(b"shared thumbnail", "image/png", "viewer.thumb.0")  # same bytes for all
        uploads.add_file(sid, UploadedFileRec(f"f-{sid}", "p.csv", "text/csv", b"x" * 5000))
    monkeypatch.setattr(session_sweep, "_SUSPECTS", set())
    monkeypatch.setattr(session_sweep, "_LAST", [float("-inf")])
    return SimpleNamespace(
        media_file_mgr=media, uploaded_file_mgr=uploads, _session_mgr=Sessions({"live", "stored"})
    )


def _files(rt: SimpleNamespace) -> int:
    return len(rt.media_file_mgr._storage._files_by_id)


def test_a_forgotten_session_s_files_go_after_two_sweeps(runtime: SimpleNamespace) -> None:
    every = session_sweep.SWEEP_EVERY
    assert _files(runtime) == 4  # three screenshots, one thumbnail shared by all
    assert session_sweep.sweep(runtime, now=0.0) == []  # seen gone once: kept
    assert session_sweep.sweep(runtime, now=every / 2) == []  # too soon: no sweep
    assert session_sweep.held_session_ids(runtime) == {"live", "stored", "gone"}
    assert session_sweep.sweep(runtime, now=every) == ["gone"]
    assert session_sweep.held_session_ids(runtime) == {"live", "stored"}
    assert _files(runtime) == 3  # its screenshot went; the shared thumbnail stays
    assert runtime.uploaded_file_mgr.get_files("gone", ["f-gone"]) == []
    assert runtime.uploaded_file_mgr.get_files("live", ["f-live"])  # the others keep theirs
    assert runtime.uploaded_file_mgr.get_files("stored", ["f-stored"])


def test_a_session_that_comes_back_between_sweeps_keeps_its_files(
    runtime: SimpleNamespace,
) -> None:
    every = session_sweep.SWEEP_EVERY
    runtime._session_mgr.known = {"live"}  # "stored" is between the two maps
    assert session_sweep.sweep(runtime, now=0.0) == []
    runtime._session_mgr.known = {"live", "stored"}  # it reconnected
    assert session_sweep.sweep(runtime, now=every) == ["gone"]
    assert "stored" in session_sweep.held_session_ids(runtime)


def test_no_runtime_no_sweep() -> None:
    assert session_sweep.sweep(now=1e12) == []  # plain Python (tests, AppTest): nothing

"""The viewer's screenshot fetch (ui/fetch.py) in AppTest: progress, a failure that says
which screenshots and why, Retry, then the image. The network is replaced by a byte
source over local files whose range reads fail once (the real HTTP path is covered by
tests/unit/test_hub.py); everything else (ShotStore, its jobs, the cache, the page decode) is
the real code."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lib.data.remote import HubError, LocalFolder
from tests.helpers.apptest import shown
from tests.helpers.shot_store import om2w_store
from tools.relayout import relayout_as

OM2W = "fara7b_om2w_browserbase"
STATE: dict = {}


class FlakyFiles(LocalFolder):
    """A remote-like byte source over local shards: the first `failures` reads break off."""

    kind = "hub"

    def __init__(self, folder: Path, failures: int) -> None:
        super().__init__(folder)
        self.failures, self.calls = failures, 0

    def read(self, name: str, start: int, end: int) -> bytes:
        self.calls += 1
        if self.calls <= self.failures:
            raise HubError("the connection to the Hub broke off.", "RemoteProtocolError: test")
        return super().read(name, start, end)

    def local_file(self, name: str) -> Path | None:
        return None


def script() -> None:
    import hashlib

    import streamlit as st

    from tests.app.test_hub_fetch_ui import STATE
    from ui.fetch import ensure_screenshots

    bench, split, row, count = STATE["args"]
    if ensure_screenshots(bench, split, row, count):
        png = bench.screenshot_png(split, row, 0)
        st.text(hashlib.sha256(png).hexdigest() if png else "none")
    st.text("the rest of the page")


@pytest.fixture
def flaky_bench(bench, mirror_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path / "cache"))
    folder = relayout_as(mirror_dir, tmp_path / "rg12", "current", 12)
    files = FlakyFiles(folder, failures=1)
    store = om2w_store(folder, files)
    return replace(bench, shots=store), folder, files


def test_failure_names_screenshots_then_retry_shows_the_image(flaky_bench) -> None:
    fbench, folder, files = flaky_bench
    row = 30
    count = int(
        fbench.tasks[(fbench.tasks.split == OM2W) & (fbench.tasks.row == row)].iloc[0][
            "n_screenshots_stored"
        ]
    )
    STATE["args"] = (fbench, OM2W, row, count)
    at = AppTest.from_function(script, default_timeout=30).run()
    assert not at.exception
    assert f"Screenshots 0–{count - 1} of this trajectory could not be fetched" in at.error[0].value
    assert "group 3 of trajectories/" in shown(at.error[0].value)
    assert "broke off" in at.expander[0].text[0].value
    assert at.text[-1].value == "the rest of the page"
    assert not list((folder.parent / "cache").rglob("*.shots"))  # nothing half-written kept

    at.button(key="fetch_retry").click().run()
    assert not at.exception and len(at.error) == 0
    import pyarrow.parquet as pq

    table = pq.read_table(folder / f"trajectories/{OM2W}-00000-of-00002.parquet")
    expected = table.column("screenshots")[row].values[0]["bytes"].as_py()
    assert at.text[0].value == hashlib.sha256(expected).hexdigest()
    assert files.calls == 2
    assert list((folder.parent / "cache").rglob("*.shots"))  # this row (and page neighbours)


class FullDisk(LocalFolder):
    """A byte source whose reads fail on our own disk, naming the server's paths."""

    kind = "hub"

    def __init__(self, folder: Path, where: str) -> None:
        super().__init__(folder)
        self.where = where

    def read(self, name: str, start: int, end: int) -> bytes:
        from lib.data.remote import LocalDiskError

        raise LocalDiskError(
            f"cannot write the screenshot cache ([Errno 28] No space left on device: "
            f"'{self.where}/shots/ab.tmp'; mounted from '/srv/cuavb-disk/volume7/ab.tmp')"
        )

    def local_file(self, name: str) -> Path | None:
        return None


def test_a_disk_error_shows_no_server_path(
    bench, mirror_dir: Path, tmp_path: Path, monkeypatch, caplog
) -> None:
    """Issue 39: "Technical detail" of a local disk error says what failed, without the
    server's cache folder or any other absolute path; the terminal log has them whole."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(cache))
    folder = relayout_as(mirror_dir, tmp_path / "rg12", "current", 12)
    fbench = replace(bench, shots=om2w_store(folder, FullDisk(folder, str(cache))))
    STATE["args"] = (fbench, OM2W, 30, 1)
    with caplog.at_level("WARNING"):
        at = AppTest.from_function(script, default_timeout=30).run()
    assert not at.exception
    detail = "\n".join(t.value for t in at.expander[0].text)
    assert "No space left on device" in detail and "ab.tmp" in detail
    everything = detail + "\n".join(e.value for e in at.error)
    assert str(tmp_path) not in everything and "/srv/" not in everything, everything
    assert "<cache>/shots/ab.tmp" in detail
    assert str(cache) in caplog.text and "/srv/cuavb-disk" in caplog.text

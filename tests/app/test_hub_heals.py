"""Issue 19 items that tests/unit/test_hub.py does not try yet: a Hub ignoring `Range` on a
screenshot fetch, a dripping Hub at cold start, a cache disk that cannot take a download,
every row of the `v4.0` layout byte-identical, the bounds of prefetch (two rows at most,
replaced by the next call) and the demo banner's "Try the Hub again".

The Hub cases run the loader in a client process against the local Hub with its fault
injection, as tests/unit/test_hub.py does; prefetch runs in process on a local folder.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.helpers.shot_store import om2w_store
from tests.unit.test_hub import (
    FAST,
    OM2W,
    _all_pngs,
    _client,
    _every_om2w_row,
    _page_ranges,
    _png,
)
from tools.local_hub import Faults, Hub, serving
from tools.relayout import relayout_as


@pytest.fixture(scope="module")
def current(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test mirror as `datasets` writes it, 12 rows per row group."""
    return relayout_as(mirror_dir, tmp_path_factory.mktemp("heal") / "mirror", "current", 12)


def test_a_hub_ignoring_range_fails_a_screenshot_fetch_early(current: Path, tmp_path) -> None:
    """A 200 with the whole file to a ranged screenshot read: an error naming the cause,
    after a bounded number of bytes per attempt (not the whole shard, not shown)."""
    server = Hub(current)
    with serving(server) as url:
        assert _client(url, tmp_path, [["load"]])["kind"] == "hub"  # light data cached
        server.clear_log()
        server.faults = Faults(ignore_range=True)
        result = _client(url, tmp_path, [["load"], ["fetch", OM2W, 30]], **FAST)
    assert "ignored the byte range" in result["fetch_errors"][0]
    shard = current / "trajectories" / f"{OM2W}-00000-of-00002.parquet"
    sent = [e.bytes_sent for e in server.log if e.path.endswith(shard.name)]
    assert sent and max(sent) < 8 << 20 and sum(sent) < shard.stat().st_size


def test_a_dripping_hub_at_cold_start_fails_by_the_deadline(current: Path, tmp_path) -> None:
    """A footer sent one byte every 0.2 s: the cold start gives up by its deadline and names
    the cause, instead of keeping every session waiting."""
    server = Hub(current)
    server.faults = Faults(drip_pattern=f"{OM2W}-00000", drip_interval=0.2)
    env = {"CUAVB_HUB_MIN_DEADLINE": "1", "CUAVB_HUB_MIN_RATE": "1e9", **FAST}
    started = time.monotonic()
    with serving(server) as url:
        result = _client(url, tmp_path, [["load", "microsoft/CUAVerifierBench"]], **env)
    assert time.monotonic() - started < 30
    assert "too slowly" in result["error"]


def test_a_trickled_footer_falls_back_with_its_reason_within_a_minute(
    current: Path, mirror_dir: Path, tmp_path
) -> None:
    """Issue 26, default deadlines (20 s, 250 kB/s): the 64 KiB footer read of the first
    shard trickles one byte per 0.5 s. Its deadline follows the 64 KiB asked (20 s), not
    the 64 MB whole-read cap (272 s before): the default source shows the demo, with the
    reason, well within a minute."""
    server = Hub(current)
    server.faults = Faults(drip_pattern=f"{OM2W}-00000", drip_interval=0.5)
    started = time.monotonic()
    with serving(server) as url:
        result = _client(url, tmp_path, [["load"]], CUAVB_DEMO_DIR=str(mirror_dir.parent))
    elapsed = time.monotonic() - started
    assert result["kind"] == "demo", result
    assert "too slowly" in result["note"] and "after the deadline" in result["detail"]
    assert elapsed < 60, f"{elapsed:.0f} s"


def test_a_download_the_cache_disk_cannot_take_blames_the_disk(
    mirror_dir: Path, tmp_path: Path
) -> None:
    """v4.0 (no page index): the row group is downloaded to the cache; a cache that cannot
    be written gives an error naming the local disk, not the Hub."""
    folder = relayout_as(mirror_dir, tmp_path / "v40", "v4.0")
    blocker = tmp_path / "cache-is-a-file"
    blocker.write_text("not a folder")
    server = Hub(folder)
    with serving(server) as url:
        steps = [["load"], ["fetch", "internal", 5]]
        result = _client(url, tmp_path, steps, CUAVB_CACHE_DIR=str(blocker), **FAST)
        assert result["kind"] == "hub"
        assert "local screenshot cache failed, not the Hub" in result["fetch_errors"][0]
        ok = _client(url, tmp_path, [["load"], ["shot", "internal", 5, 0]])  # a usable disk
    assert ok["shots"] == [_png(folder, "internal", 5, 0)]


def test_v40_every_row_is_byte_identical_and_each_shard_fetched_once(
    mirror_dir: Path, tmp_path: Path
) -> None:
    """The `v4.0` layout (one row group per shard, no page index): every trajectory of om2w
    equals a plain pyarrow read, at one download per shard (then all cached)."""
    folder = relayout_as(mirror_dir, tmp_path / "v40", "v4.0")
    server, result = _every_om2w_row(folder, tmp_path)
    assert result["all"] == _all_pngs(folder, OM2W)
    big = [r for r in _page_ranges(server) if r[2] - r[1] > 65536]
    assert sorted(name for name, _, _ in big) == [
        f"{OM2W}-00000-of-00002.parquet",
        f"{OM2W}-00001-of-00002.parquet",
    ]
    paths = result["paths"]  # never the page path, never the whole shard
    assert all(p.startswith("row group 1 (fallback: no offset index)") for p in paths), paths


def test_prefetch_is_bounded_and_replaced_by_the_next_call(
    current: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At most two rows are queued; a new call (the user moved on) drops what was queued
    and not started. The first fetch is held until the second call is made."""
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path))
    store = om2w_store(current)
    started, release = threading.Event(), threading.Event()
    real = store._fetch

    def held(job, loc, fallback):
        started.set()
        assert release.wait(10)
        return real(job, loc, fallback)

    monkeypatch.setattr(store, "_fetch", held)
    store.prefetch(OM2W, [3, 4, 5])  # 5 is beyond the bound
    assert started.wait(10)  # row 3 is in flight, row 4 queued
    store.prefetch(OM2W, [10, 11])  # moved on: row 4 is dropped
    release.set()
    store.prefetcher.join(30)
    assert not store.prefetcher.is_alive()
    ready = {r: store.ready(OM2W, r) for r in (3, 4, 5, 10, 11)}
    assert ready == {3: True, 4: False, 5: False, 10: True, 11: True}
    assert store.fetch_path(OM2W, 10).startswith("prefetched: page index")


def test_the_demo_banner_offers_try_the_hub_again(
    mirror_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An unreachable default Hub: the demo banner carries "Try the Hub again", and the
    button makes the next run try the Hub at once (a new load, not the cached fallback)."""
    from tests.helpers.apptest import open_page, texts
    from ui import state

    monkeypatch.delenv("CUAVB_DATA", raising=False)
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path / "empty-cache"))
    at = open_page()
    assert not at.exception
    assert "Synthetic demo data, not the benchmark" in texts(at)
    first = state.get_bench()
    before = state._ATTEMPT.get("", 0)
    at.button(key="retry_hub").click().run()
    assert not at.exception
    assert state._ATTEMPT.get("", 0) == before + 1
    assert state.get_bench() is not first  # loaded again, not the cached fallback
    assert "Synthetic demo data, not the benchmark" in texts(at)  # still offline

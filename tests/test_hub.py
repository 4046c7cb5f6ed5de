"""The local Hub's protocol, and the lazy loader against it in a separate process.

The client runs in a subprocess (`tests/hub_client.py`) because huggingface_hub reads
HF_ENDPOINT and HF_HUB_OFFLINE at import. The server runs in this process, so the test
reads its request log and sets its faults directly.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tools.local_hub import Faults, Hub, serving
from tools.relayout import relayout

ROOT = Path(__file__).resolve().parents[1]
OM2W = "fara7b_om2w_browserbase"
REPO = "microsoft/CUAVerifierBench"


@pytest.fixture(scope="module")
def small_groups(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test mirror with 12 rows per row group (several groups per shard)."""
    return relayout(mirror_dir, tmp_path_factory.mktemp("rg12") / "mirror", 12)


@pytest.fixture
def hub(small_groups: Path) -> Iterator[tuple[Hub, str]]:
    server = Hub(small_groups)
    with serving(server) as url:
        yield server, url


def _request(url: str, method: str = "GET", headers: dict | None = None):
    req = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


# -- the server's protocol -----------------------------------------------------------------
def test_resolve_head_range_and_errors(hub, small_groups: Path) -> None:
    server, url = hub
    name = f"trajectories/{OM2W}-00000-of-00002.parquet"
    data = (small_groups / name).read_bytes()
    base = f"{url}/datasets/{REPO}/resolve"
    status, headers, body = _request(f"{base}/main/{name}", "HEAD")
    assert status == 200 and body == b""
    assert headers["Content-Length"] == str(len(data)) and headers["Accept-Ranges"] == "bytes"
    assert headers["X-Repo-Commit"] == server.sha and len(server.sha) == 40
    assert headers["ETag"].startswith('"') and not any(
        k.lower().startswith("x-xet") for k in headers
    )
    status, headers, body = _request(f"{base}/{server.sha}/{name}", headers={"Range": "bytes=4-99"})
    assert status == 206 and body == data[4:100]
    assert headers["Content-Range"] == f"bytes 4-99/{len(data)}"
    status, headers, body = _request(f"{base}/main/{name}", headers={"Range": "bytes=-8"})
    assert status == 206 and body == data[-8:] and body.endswith(b"PAR1")
    status, headers, _ = _request(f"{base}/main/no/such.parquet")
    assert status == 404 and headers["X-Error-Code"] == "EntryNotFound"
    status, headers, _ = _request(f"{base}/0123456789abcdef0123456789abcdef01234567/{name}")
    assert status == 404 and headers["X-Error-Code"] == "RevisionNotFound"
    status, headers, _ = _request(f"{url}/datasets/someone/else/resolve/main/{name}")
    assert status == 404 and headers["X-Error-Code"] == "RepoNotFound"
    logged = [(e.method, e.range, e.status, e.bytes_sent) for e in server.log]
    assert logged[:3] == [
        ("HEAD", None, 200, 0),
        ("GET", "bytes=4-99", 206, 96),
        ("GET", "bytes=-8", 206, 8),
    ]


def test_info_tree_and_paths_info(hub) -> None:
    server, url = hub
    status, _, body = _request(f"{url}/api/datasets/{REPO}/revision/main")
    info = json.loads(body)
    assert status == 200 and info["sha"] == server.sha and info["lastModified"]
    assert "README.md" in {s["rfilename"] for s in info["siblings"]}
    _, _, body = _request(f"{url}/api/datasets/{REPO}/tree/main/annotations?recursive=true")
    assert {e["path"] for e in json.loads(body)} == {
        f"annotations/{OM2W}-00000-of-00001.parquet",
        "annotations/internal-00000-of-00001.parquet",
    }
    req = urllib.request.Request(
        f"{url}/api/datasets/{REPO}/paths-info/main",
        data=b"paths=README.md&paths=nope",
        method="POST",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    with urllib.request.urlopen(req) as response:
        assert [e["path"] for e in json.loads(response.read())] == ["README.md"]


def test_faults(hub) -> None:
    server, url = hub
    target = f"{url}/datasets/{REPO}/resolve/main/README.md"
    server.faults = Faults(status=503, fail_requests=[1])
    assert _request(target)[0] == 503
    assert _request(target)[0] == 200
    server.faults = Faults(drop_pattern="README", drop_count=1, drop_after=10)
    # urllib raises IncompleteRead or a socket error, depending on timing
    with pytest.raises(Exception), urllib.request.urlopen(target) as response:  # noqa: B017
        response.read()
    assert (server.log[-1].status, server.log[-1].bytes_sent) == (-1, 10)
    assert _request(target)[0] == 200


# -- the loader, in its own process ----------------------------------------------------------
def _client(url: str, cache: Path, steps: list, offline: bool = False, **env: str) -> dict:
    environment = {
        **os.environ,
        "HF_ENDPOINT": url,
        "HF_HUB_OFFLINE": "1" if offline else "0",
        "HF_HOME": str(cache / "hf"),
        "CUAVB_CACHE_DIR": str(cache / "cuavb"),
        "HF_HUB_DISABLE_XET": "1",
        **env,
    }
    environment.pop("CUAVB_DATA", None)
    run = subprocess.run(
        [sys.executable, "-m", "tests.hub_client", json.dumps(steps)],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    line = [x for x in run.stdout.splitlines() if x.startswith("RESULT ")]
    assert line, run.stderr[-3000:]
    return json.loads(line[-1][len("RESULT ") :])


def _ours(server: Hub) -> list:
    """The log without huggingface_hub's own once-a-day `/api/agent-harnesses` lookup
    (it detects AI-agent shells for its user agent; not a data request of ours)."""
    return [e for e in server.log if e.path != "/api/agent-harnesses"]


def _ranges(entries) -> list[tuple[str, int, int]]:
    """(file name, first byte, last byte + 1) of every range GET of a parquet file."""
    out = []
    for e in entries:
        if "/resolve/" in e.path and e.range and e.path.endswith(".parquet"):
            first, last = e.range.split("=")[1].split("-")
            out.append((e.path.rsplit("/", 1)[-1], int(first or -1), int(last or -1) + 1))
    return out


def _shot_chunks(folder: Path) -> dict[str, list[tuple[int, int]]]:
    """Per trajectories shard: the byte range of each row group's PNG bytes chunk."""
    out = {}
    for shard in sorted((folder / "trajectories").glob("*.parquet")):
        meta = pq.ParquetFile(shard).metadata
        groups = []
        for g in range(meta.num_row_groups):
            rg = meta.row_group(g)
            cols = {rg.column(j).path_in_schema: rg.column(j) for j in range(rg.num_columns)}
            c = cols["screenshots.list.element.bytes"]
            start = c.data_page_offset  # a chunk starts at its dictionary page if it has one
            if c.has_dictionary_page and c.dictionary_page_offset:
                start = min(start, c.dictionary_page_offset)
            groups.append((start, start + c.total_compressed_size))
        out[shard.name] = groups
    return out


def _png(folder: Path, split: str, row: int, index: int) -> str:
    shards = sorted((folder / "trajectories").glob(f"{split}-*.parquet"))
    for shard in shards:
        table = pq.read_table(shard, columns=["screenshots"])
        if row < table.num_rows:
            image = table.column("screenshots")[row].values[index]
            return hashlib.sha256(image["bytes"].as_py()).hexdigest()
        row -= table.num_rows
    raise AssertionError("row out of range")


def test_cold_start_reads_light_data_then_one_row_group(hub, small_groups, tmp_path) -> None:
    server, url = hub
    split, row, index = OM2W, 30, 1  # row 30 lies in row group 2 (rows 24-35) of shard 0
    first = _client(url, tmp_path, [["load"]])
    assert first["kind"] == "hub" and first["revision"] == server.sha and first["n_tasks"] == 260
    before = list(server.log)
    chunks = _shot_chunks(small_groups)
    total = sum((small_groups / "trajectories" / n).stat().st_size for n in chunks)
    assert sum(e.bytes_sent for e in before) < total / 10
    suffixes = [e.range for e in before if e.range and e.range.startswith("bytes=-")]
    assert suffixes == ["bytes=-65536"] * 4  # one footer read per trajectories shard
    for name, first_byte, end in _ranges(before):  # no PNG byte before a screenshot is asked
        if first_byte < 0:
            continue  # the 64 KiB footer read (may end with the last chunk's tail)
        for start, stop in chunks[name]:
            if stop - start < 65536:
                continue  # an (almost) empty chunk between light ones is read along
            assert end <= start + 64 or first_byte >= stop, (name, first_byte, end, start, stop)
    whole = [e.path for e in before if "/resolve/" in e.path and not e.range]
    assert all("annotations/" in p or p.endswith("README.md") for p in whole)

    server.clear_log()
    second = _client(url, tmp_path, [["load"], ["shot", split, row, index]])
    assert second["shots"] == [_png(small_groups, split, row, index)]
    fetched = _ranges(server.log)
    assert len([e for e in _ours(server) if "/api/" in e.path]) == 1  # the revision check only
    assert len(fetched) == 1  # the light data came from the disk cache
    name, first_byte, end = fetched[0]
    start, stop = chunks[name][2]
    assert name == f"{OM2W}-00000-of-00002.parquet" and first_byte <= start and stop <= end
    assert end - first_byte < stop - start + 4096  # that row group only (+ its path leaf)

    server.clear_log()
    third = _client(url, tmp_path, [["load"], ["shot", split, row, index], ["shot", split, 29, 0]])
    assert third["shots"][0] == second["shots"][0]
    assert third["shots"][1] == _png(small_groups, split, 29, 0)  # same group: no fetch
    assert _ranges(server.log) == []
    assert [e.path for e in _ours(server)] == [f"/api/datasets/{REPO}/revision/main"]

    server.clear_log()
    offline = _client(url, tmp_path, [["load"], ["shot", split, row, index]], offline=True)
    assert offline["kind"] == "hub" and offline["shots"] == second["shots"]
    assert server.log == []


def test_large_group_downloads_the_shard_once(mirror_dir: Path, tmp_path: Path) -> None:
    """One row group per shard above the limit: the whole shard is fetched, then reused."""
    server = Hub(mirror_dir)
    with serving(server) as url:
        steps = [["load"], ["shot", "internal", 5, 0], ["shot", "internal", 60, 0]]
        result = _client(url, tmp_path, steps, CUAVB_GROUP_LIMIT_MB="1")
    whole = [
        e for e in server.log if e.path.endswith("internal-00000-of-00002.parquet") and not e.range
    ]
    assert len(whole) == 1 and whole[0].bytes_sent > 1_000_000
    assert result["shots"] == [
        _png(mirror_dir, "internal", 5, 0),
        _png(mirror_dir, "internal", 60, 0),
    ]


def test_503_first_request(hub, tmp_path: Path, mirror_dir: Path) -> None:
    server, url = hub
    first = "^/api/datasets/"  # our first request (after huggingface_hub's own registry)
    server.faults = Faults(status=503, fail_pattern=first, fail_count=1)
    named = _client(url, tmp_path, [["load", REPO]])
    assert "HTTP 503" in named["error"] and REPO in named["error"]
    server.faults = Faults(status=503, fail_pattern=first, fail_count=1)
    default = _client(url, tmp_path, [["load"]], CUAVB_DEMO_DIR=str(mirror_dir.parent))
    assert default["kind"] == "demo" and "HTTP 503" in default["note"]
    assert "503" in default["detail"]


def test_unknown_revision(hub, tmp_path: Path) -> None:
    _, url = hub
    result = _client(url, tmp_path, [["load", REPO]], CUAVB_REVISION="no-such-rev")
    assert "revision `no-such-rev` does not exist" in result["error"]


def test_dropped_connection_then_retry(hub, small_groups: Path, tmp_path: Path) -> None:
    server, url = hub
    assert _client(url, tmp_path, [["load"]])["kind"] == "hub"  # light data, cached
    server.faults = Faults(drop_pattern=f"{OM2W}-00001", drop_count=1, drop_after=50_000)
    split, row = OM2W, 53 + 13  # second shard, row group 1
    steps = [["load"], ["fetch", split, row], ["shot", split, row, 0], ["fetch", split, row]]
    steps.append(["shot", split, row, 0])
    result = _client(url, tmp_path, steps)
    assert "connection to the Hub broke off" in result["fetch_errors"][0]
    assert "expected" in result["fetch_errors"][0]  # the technical detail is kept
    assert result["shots"][0] is None  # not retried behind the viewer's back
    assert result["fetch_errors"][1] == ""  # the retry worked
    assert result["shots"][1] == _png(small_groups, split, row, 0)
    leftovers = [p.name for p in (tmp_path / "cuavb").rglob("*.tmp")]
    assert leftovers == []

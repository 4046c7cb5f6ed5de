"""The local Hub's protocol, and the lazy loader against it in a separate process.

The client runs in a subprocess (`tests/helpers/hub_client.py`) because huggingface_hub reads
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
from tools.relayout import relayout, relayout_as

ROOT = Path(__file__).resolve().parents[2]
OM2W = "fara7b_om2w_browserbase"
REPO = "microsoft/CUAVerifierBench"


@pytest.fixture(scope="module")
def small_groups(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test mirror with 12 rows per row group (several groups per shard), written as
    `datasets` writes (content-defined chunking, page index)."""
    return relayout_as(mirror_dir, tmp_path_factory.mktemp("rg12") / "mirror", "current", 12)


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
        [sys.executable, "-m", "tests.helpers.hub_client", json.dumps(steps)],
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


def _page_ranges(server: Hub) -> list[tuple[str, int, int]]:
    """Range GETs of trajectories shards that are not footer (suffix) reads."""
    return [r for r in _ranges(server.log) if r[1] >= 0]


def _png_ranges(server: Hub, folder: Path) -> list[tuple[str, int, int]]:
    """Range GETs that start inside a (non-trivial) PNG-bytes chunk of a row group."""
    chunks = _shot_chunks(folder)
    return [
        (name, a, b)
        for name, a, b in _page_ranges(server)
        if any(s <= a < e for s, e in chunks[name] if e - s > 65536)
    ]


def _all_pngs(folder: Path, split: str) -> list[list[str | None]]:
    """sha256 of every screenshot of every row of a split, by a plain pyarrow read."""
    out = []
    for shard in sorted((folder / "trajectories").glob(f"{split}-*.parquet")):
        column = pq.read_table(shard, columns=["screenshots"]).column(0)
        for cell in column:
            items = cell.values if cell.is_valid else []
            out.append(
                [
                    hashlib.sha256(i["bytes"].as_py()).hexdigest() if i["bytes"].as_py() else None
                    for i in items
                ]
            )
    return out


def _every_om2w_row(folder: Path, cache: Path) -> tuple[Hub, dict]:
    """Serve ``folder``, load once (the light data is then cached), clear the log and read
    every om2w screenshot: the log then holds the screenshot reads alone."""
    server = Hub(folder)
    with serving(server) as url:
        _client(url, cache, [["load"]])
        server.clear_log()
        result = _client(url, cache, [["load"], ["all", OM2W]])
    return server, result


def test_cold_start_reads_light_data_then_one_page_range(
    hub, small_groups, tmp_path, mirror_dir
) -> None:
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
    second = _client(url, tmp_path, [["load"], ["fetch", split, row], ["shot", split, row, index]])
    assert second["shots"] == [_png(small_groups, split, row, index)]
    assert second["paths"][0].startswith("page index: 1 range")
    assert len([e for e in _ours(server) if "/api/" in e.path]) == 1  # the revision check only
    pages = [r for r in _page_ranges(server) if r[2] - r[1] > 4096]
    assert len(pages) == 1  # one range for the PNG pages (+ a tiny offset-index read)
    name, first_byte, end = pages[0]
    start, stop = chunks[name][2]
    assert name == f"{OM2W}-00000-of-00002.parquet" and start <= first_byte and end <= stop
    assert end - first_byte < (stop - start) / 2  # its pages, not the row group

    server.clear_log()
    steps = [["load"], ["shot", split, row, index], ["shot", split, row, 0]]
    third = _client(url, tmp_path, steps)
    assert third["shots"][0] == second["shots"][0]
    assert third["shots"][1] == _png(small_groups, split, row, 0)
    assert _ranges(server.log) == []  # a cached open makes no request
    assert [e.path for e in _ours(server)] == [f"/api/datasets/{REPO}/revision/main"]

    server.clear_log()
    offline = _client(url, tmp_path, [["load"], ["shot", split, row, index]], offline=True)
    assert offline["kind"] == "hub" and offline["shots"] == second["shots"]
    assert server.log == []


@pytest.mark.parametrize("layout", ["current", "dict"])
def test_every_row_is_byte_identical_by_the_page(
    layout: str, mirror_dir: Path, tmp_path: Path
) -> None:
    """current / dict layouts in 12-row groups: every trajectory of om2w is one page range
    (dict: + its group's dictionary page once), PNGs equal a plain pyarrow read."""
    folder = relayout_as(mirror_dir, tmp_path / layout, layout, 12)
    server, result = _every_om2w_row(folder, tmp_path)
    assert result["all"] == _all_pngs(folder, OM2W)
    with_shots = sum(1 for r in result["all"] if r)
    big = _png_ranges(server, folder)
    groups = 2 * 5  # two shards of 53 rows in 12-row groups
    assert 0 < len(big) <= with_shots + (groups if layout == "dict" else 0)
    paths = [p for p, r in zip(result["paths"], result["all"], strict=True) if r]
    assert all(p.startswith("page index") for p in paths), paths  # never a fallback
    reads = sum(p.startswith("page index: 1 range") for p in paths)
    assert reads <= len(big) <= reads + (groups if layout == "dict" else 0)  # + dictionary pages
    assert max(end - start for _, start, end in big) < 3_000_000


def test_v40_layout_fetches_the_group_once(mirror_dir: Path, tmp_path: Path) -> None:
    """One row group per shard, no page index (datasets < 4.1): the group's screenshot
    chunk is downloaded once and every trajectory of it is cached from that download."""
    folder = relayout_as(mirror_dir, tmp_path / "v40", "v4.0")
    server = Hub(folder)
    with serving(server) as url:
        steps = [["load"], ["fetch", "internal", 5], ["fetch", "internal", 60]]
        steps += [["shot", "internal", 5, 0], ["shot", "internal", 60, 0]]
        result = _client(url, tmp_path, steps)
    big = [r for r in _page_ranges(server) if r[2] - r[1] > 1_000_000]  # light reads are smaller
    assert len(big) == 1 and big[0][0] == "internal-00000-of-00002.parquet"
    assert "row group 1 (fallback: no offset index)" in result["paths"][0]
    assert result["paths"][1].startswith("row group 1 (fallback")  # cached by that download
    assert result["shots"] == [_png(folder, "internal", 5, 0), _png(folder, "internal", 60, 0)]


def test_large_group_without_page_index_downloads_the_shard_once(
    mirror_dir: Path, tmp_path: Path
) -> None:
    """A group above the limit and no page index: the whole shard, once."""
    folder = relayout(mirror_dir, tmp_path / "nopi", None, page_index=False)
    server = Hub(folder)
    with serving(server) as url:
        steps = [["load"], ["shot", "internal", 5, 0], ["shot", "internal", 60, 0]]
        result = _client(url, tmp_path, steps, CUAVB_GROUP_LIMIT_MB="1")
    whole = [
        e for e in server.log if e.path.endswith("internal-00000-of-00002.parquet") and not e.range
    ]
    assert len(whole) == 1 and whole[0].bytes_sent > 1_000_000
    assert result["shots"] == [_png(folder, "internal", 5, 0), _png(folder, "internal", 60, 0)]
    assert not list((tmp_path / "cuavb").rglob("*.download"))  # the shard is not kept


def test_a_broken_shard_download_resumes_from_the_bytes_received(
    mirror_dir: Path, tmp_path: Path
) -> None:
    """The whole-shard fallback cut after 300,000 bytes: the retry asks only for the rest
    (a range from the byte where the connection broke), not the whole shard again."""
    from lib.data.remote.hub import RESUME_OVERLAP

    folder = relayout(mirror_dir, tmp_path / "nopi", None, page_index=False)
    shard = "internal-00000-of-00002.parquet"
    size = (folder / "trajectories" / shard).stat().st_size
    server = Hub(folder)
    with serving(server) as url:
        _client(url, tmp_path, [["load"]])  # light data first: its reads are not cut
        server.faults = Faults(drop_pattern=shard, drop_count=1, drop_after=300_000)
        steps = [["load"], ["shot", "internal", 5, 0]]
        result = _client(url, tmp_path, steps, CUAVB_GROUP_LIMIT_MB="1", **FAST)
    gets = [e for e in server.log if e.path.endswith(shard) and e.method == "GET"]
    cut = next(i for i, e in enumerate(gets) if e.status == -1)
    assert gets[cut].range is None and gets[cut].bytes_sent == 300_000
    resumed = gets[cut + 1]
    # from the break on, plus the last RESUME_OVERLAP bytes again (compared, not glued)
    again = 300_000 - RESUME_OVERLAP
    assert resumed.range == f"bytes={again}-{size - 1}" and resumed.status == 206
    assert resumed.bytes_sent == size - again
    assert result["shots"] == [_png(folder, "internal", 5, 0)]
    assert not list((tmp_path / "cuavb").rglob("*.tmp"))


def test_two_sessions_one_fetch_and_prefetch(hub, small_groups: Path, tmp_path: Path) -> None:
    server, url = hub
    _client(url, tmp_path, [["load"]])
    server.clear_log()
    # rows 30, 5, 20 and 45 lie in four different row groups (12 rows each)
    steps = [["load"], ["together", OM2W, 30], ["prefetch", OM2W, 5, [20, 45]]]
    steps += [["shot", OM2W, 20, 0], ["shot", OM2W, 45, 0]]
    result = _client(url, tmp_path, steps)
    assert result["together"] == [_png(small_groups, OM2W, 30, 0)] * 2
    assert result["prefetched"] == [True, True]
    assert result["shots"] == [_png(small_groups, OM2W, 20, 0), _png(small_groups, OM2W, 45, 0)]
    # row 30 once for two sessions, row 5, then 20 and 45 prefetched: opening them is free
    assert len(_png_ranges(server, small_groups)) == 4


FAST = {"CUAVB_HUB_BACKOFF": "0.05"}
INFO = "/api/datasets/"


def test_a_flaky_or_hostile_hub_at_cold_start(hub, tmp_path: Path, mirror_dir: Path) -> None:
    """One client process, one scenario per fault (fresh cache each): a single 503 and a 429
    are retried (Retry-After honoured); a persistent 503, malformed repo info, a forged
    sha, a server ignoring Range and a lying Content-Length fail with the reason named."""
    _, url = hub
    forged = ["../../../../escape", "/tmp/x", "A" * 40]
    scenarios = [
        ["one 503", {"status": 503, "fail_pattern": f"^{INFO}", "fail_count": 1}, FAST, REPO],
        [
            "429 footer",
            {"status": 429, "fail_pattern": f"{OM2W}-00001", "fail_count": 1, "retry_after": "1"},
            FAST,
            REPO,
        ],
        [
            "503 always",
            {"status": 503, "fail_pattern": f"^{INFO}", "fail_count": 99},
            {**FAST, "CUAVB_HUB_ATTEMPTS": "2"},
            REPO,
        ],
        [
            "503 default",
            {"status": 503, "fail_pattern": f"^{INFO}", "fail_count": 99},
            {**FAST, "CUAVB_HUB_ATTEMPTS": "2", "CUAVB_DEMO_DIR": str(mirror_dir.parent)},
            None,
        ],
        ["malformed", {"info_body": "{not json"}, {**FAST, "CUAVB_HUB_ATTEMPTS": "2"}, REPO],
        [
            "slow info",
            {"info_delay": 1.5},
            {**FAST, "CUAVB_HUB_ATTEMPTS": "2", "CUAVB_HUB_INFO_TIMEOUT": "0.5"},
            REPO,
        ],
        [
            "slow info default",
            {"info_delay": 1.5},
            {
                **FAST,
                "CUAVB_HUB_ATTEMPTS": "2",
                "CUAVB_HUB_INFO_TIMEOUT": "0.5",
                "CUAVB_DEMO_DIR": str(mirror_dir.parent),
            },
            None,
        ],
        *[[f"forged {i}", {"forged_sha": sha}, FAST, REPO] for i, sha in enumerate(forged)],
        ["no range", {"ignore_range": True}, FAST, REPO],
        ["lying length", {"lie_length": 1000}, {**FAST, "CUAVB_HUB_ATTEMPTS": "2"}, REPO],
    ]
    steps = [["scenario", *s] for s in scenarios]
    out = _client(url, tmp_path, steps, SCENARIO_ROOT=str(tmp_path))["scenarios"]

    def infos(name: str) -> list[int]:
        return [e["status"] for e in out[name]["log"] if e["path"].startswith(INFO)]

    assert out["one 503"]["kind"] == "hub" and infos("one 503")[:2] == [503, 200]
    hits = [e for e in out["429 footer"]["log"] if f"{OM2W}-00001" in e["path"]]
    assert out["429 footer"]["kind"] == "hub"
    assert hits[0]["status"] == 429 and hits[1]["status"] == 206
    assert hits[1]["t"] - hits[0]["t"] >= 0.9  # waited as asked, not the 0.05 s backoff
    assert "HTTP 503" in out["503 always"]["error"] and REPO in out["503 always"]["error"]
    assert infos("503 always") == [503, 503]  # retried once (CUAVB_HUB_ATTEMPTS=2), then named
    assert out["503 default"]["kind"] == "demo" and "HTTP 503" in out["503 default"]["note"]
    assert "malformed" in out["malformed"]["error"] and len(infos("malformed")) == 2
    # repo info slower than its timeout: retried, then named; the default source shows the
    # demo (for a minute only: tests/unit/test_load.py) instead of waiting on every visitor
    assert "timeout" in out["slow info"]["error"] and REPO in out["slow info"]["error"]
    assert out["slow info default"]["kind"] == "demo"
    for i in range(len(forged)):
        result = out[f"forged {i}"]
        assert "invalid revision id" in result["error"]
        assert not [p for p in Path(result["cache"]).rglob("*") if p.is_file()]
    assert not (tmp_path.parent / "escape").exists() and not Path("/tmp/x").exists()
    assert "ignored the byte range" in out["no range"]["error"]
    ranged = [e for e in out["no range"]["log"] if e["range"]]
    assert len(ranged) <= 4 and max(e["bytes_sent"] for e in ranged) < 8 << 20
    assert "broke off" in out["lying length"]["error"]


def test_a_dripping_hub_fails_by_the_deadline_then_retry_clears(
    hub, small_groups: Path, tmp_path: Path
) -> None:
    server, url = hub
    assert _client(url, tmp_path, [["load"]])["kind"] == "hub"
    server.faults = Faults(drip_pattern=f"{OM2W}-00001", drip_interval=0.2)
    split, row = OM2W, 53 + 13
    env = {"CUAVB_HUB_MIN_DEADLINE": "1", "CUAVB_HUB_MIN_RATE": "1e9"}
    steps = [["load"], ["fetch", split, row]]
    started = __import__("time").monotonic()
    result = _client(url, tmp_path, steps, **env)
    assert __import__("time").monotonic() - started < 30
    assert "too slowly" in result["fetch_errors"][0]
    server.faults = Faults()
    steps = [["load"], ["fetch", split, row], ["shot", split, row, 0]]
    again = _client(url, tmp_path, steps, **env)
    assert again["fetch_errors"] == [""]
    assert again["shots"] == [_png(small_groups, split, row, 0)]


def test_dropped_connection_is_retried(hub, small_groups: Path, tmp_path: Path) -> None:
    server, url = hub
    assert _client(url, tmp_path, [["load"]])["kind"] == "hub"  # light data, cached
    server.faults = Faults(drop_pattern=f"{OM2W}-00001", drop_count=1, drop_after=50_000)
    split, row = OM2W, 53 + 13  # second shard, row group 1
    steps = [["load"], ["fetch", split, row], ["shot", split, row, 0]]
    result = _client(url, tmp_path, steps, **FAST)
    assert result["fetch_errors"] == [""]
    assert result["shots"] == [_png(small_groups, split, row, 0)]
    assert [e.status for e in server.log if f"{OM2W}-00001" in e.path][-2:] == [-1, 206]
    leftovers = [p.name for p in (tmp_path / "cuavb").rglob("*.tmp")]
    assert leftovers == []


def test_persistent_drops_name_the_hub_then_retry_works(
    hub, small_groups: Path, tmp_path: Path
) -> None:
    server, url = hub
    assert _client(url, tmp_path, [["load"]])["kind"] == "hub"
    server.faults = Faults(drop_pattern=f"{OM2W}-00001", drop_count=3, drop_after=50_000)
    split, row = OM2W, 53 + 13
    steps = [["load"], ["fetch", split, row], ["shot", split, row, 0], ["fetch", split, row]]
    steps.append(["shot", split, row, 0])
    result = _client(url, tmp_path, steps, CUAVB_HUB_ATTEMPTS="2", **FAST)
    assert "connection to the Hub broke off" in result["fetch_errors"][0]
    assert "expected" in result["fetch_errors"][0] or "Error" in result["fetch_errors"][0]
    assert result["shots"][0] is None  # not retried behind the viewer's back
    assert result["fetch_errors"][1] == ""  # the Retry worked (the third drop, then success)
    assert result["shots"][1] == _png(small_groups, split, row, 0)


def test_damaged_caches_are_misses(hub, small_groups: Path, tmp_path: Path) -> None:
    """A truncated light-cache parquet, a truncated locations.json, a truncated and an
    empty screenshot entry: each is read again from the Hub, never trusted or shown."""
    server, url = hub
    split, row = OM2W, 30
    _client(url, tmp_path, [["load"], ["shot", split, row, 0], ["shot", split, 31, 0]])
    light = next((tmp_path / "cuavb").rglob("locations.json")).parent
    table = next(light.glob("trajectories--*.parquet"))
    table.write_bytes(table.read_bytes()[:100])
    shots = tmp_path / "cuavb" / "shots"
    entries = [next(shots.rglob(f"*00000-of-00002.parquet.g2.r{r}.shots")) for r in (6, 7)]
    entries[0].write_bytes(entries[0].read_bytes()[:1000])
    entries[1].write_bytes(b"")
    server.clear_log()
    steps = [["load"], ["shot", split, row, 0], ["shot", split, 31, 0]]
    result = _client(url, tmp_path, steps)
    assert result["shots"] == [_png(small_groups, split, row, 0), _png(small_groups, split, 31, 0)]
    assert len([r for r in _ranges(server.log) if r[1] < 0]) == 4  # footers read again
    assert len(_png_ranges(server, small_groups)) == 2
    (light / "locations.json").write_text('{"shards": [')
    server.clear_log()
    assert _client(url, tmp_path, [["load"]])["kind"] == "hub"
    assert len([r for r in _ranges(server.log) if r[1] < 0]) == 4


def test_unwritable_cache_still_loads_and_shows(hub, small_groups: Path, tmp_path: Path) -> None:
    _server, url = hub
    blocker = tmp_path / "cache-is-a-file"
    blocker.write_text("not a folder")
    steps = [["load"], ["fetch", OM2W, 30], ["shot", OM2W, 30, 0]]
    result = _client(url, tmp_path, steps, CUAVB_CACHE_DIR=str(blocker))
    assert result["kind"] == "hub" and result["fetch_errors"] == [""]
    assert result["shots"] == [_png(small_groups, OM2W, 30, 0)]


def test_old_light_caches_are_removed(hub, tmp_path: Path) -> None:
    server, url = hub
    light = tmp_path / "cuavb" / "hub" / REPO.replace("/", "--") / "light"
    old = [light / f"{c * 40}-v2" for c in "abc"]
    for folder in old:
        folder.mkdir(parents=True)
        (folder / "locations.json").write_text("{}")
    stranger = light / "not-ours"
    stranger.mkdir()
    (stranger / "keep.txt").write_text("x")
    _client(url, tmp_path, [["load"]])
    left = sorted(p.name for p in light.iterdir())
    assert f"{server.sha}-v2" in left and "not-ours" in left
    assert sum(1 for p in old if p.exists()) == 1  # the newest other revision is kept

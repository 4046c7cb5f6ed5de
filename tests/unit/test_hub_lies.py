"""A Hub (or a proxy before it) that lies about the bytes it sends (issue 39).

The stand-in Hub (`tools.local_hub`) tells each lie a broken proxy or CDN tells: a
`Content-Range` that claims a smaller file, a chunked body cut short but ended cleanly, a
resumed range spliced from another offset, extra bytes beyond the range or the file, a
body whose sha256 is not the `X-Linked-Etag`. Each read of `lib.data.remote.hub.HubFiles`
(`fetch` of a range, a suffix, a whole file; `download` of a part or a whole file, resumed
or not) must fail with a `HubError` after its retries, return nothing and leave nothing in
the cache folder; a lie told once is retried and the right bytes come back.

The server and the client run in this process: the client's URL is pointed at the
server, and huggingface_hub's offline switch (read at import) is turned off here.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from lib.data.remote import hub as hubs
from tools.local_hub import DEFAULT_REPO, Faults, Hub, serving

NAME = "data/big.parquet"
SIZE = 1_000_000


@pytest.fixture
def lying(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Hub, hubs.HubFiles]]:
    import huggingface_hub.constants

    folder = tmp_path / "repo"
    (folder / "data").mkdir(parents=True)
    (folder / NAME).write_bytes(os.urandom(SIZE))
    (folder / "README.md").write_bytes(b"# a card\n" * 3000)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("CUAVB_HUB_BACKOFF", "0.01")
    monkeypatch.setenv("CUAVB_HUB_ATTEMPTS", "3")
    server = Hub(folder, linked=False)
    with serving(server) as url:
        files = hubs.HubFiles(DEFAULT_REPO, hubs.Revision(server.sha))
        base = f"{url}/datasets/{DEFAULT_REPO}/resolve/{server.sha}"
        files.url = lambda path: f"{base}/{path}"  # type: ignore[method-assign]
        yield server, files


def _data(server: Hub, name: str = NAME) -> bytes:
    return (server.folder / name).read_bytes()


def _cache_is_empty(folder: Path) -> None:
    left = [p.name for p in folder.rglob("*") if p.is_file()] if folder.exists() else []
    assert left == []


def _fails(call, *args, **kwargs) -> hubs.HubError:
    with pytest.raises(hubs.HubError) as caught:
        call(*args, **kwargs)
    return caught.value


def _gets(server: Hub, name: str = NAME) -> list[tuple[str | None, int]]:
    return [(e.range, e.status) for e in server.log if e.method == "GET" and name in e.path]


def test_an_honest_hub_gives_every_byte(lying, tmp_path: Path) -> None:
    server, files = lying
    data = _data(server)
    assert files.fetch(NAME, (10, 500_010)) == (data[10:500_010], SIZE)
    assert files.fetch(NAME, (-1000, 0)) == (data[-1000:], SIZE)
    assert files.whole(NAME) == data and files.whole("README.md") == _data(server, "README.md")
    dest = tmp_path / "cache" / "part"
    files.download(NAME, dest, 1000, 900_000, size=SIZE)
    assert dest.read_bytes() == data[1000:900_000]
    server.linked = True  # as the Hub answers for an LFS file: size and sha256 stated
    files.download(NAME, dest, size=SIZE)
    assert dest.read_bytes() == data and files.whole(NAME) == data


def test_a_content_range_claiming_a_smaller_file(lying, tmp_path: Path) -> None:
    """1 MB asked, `Content-Range: bytes 0-99/100` and 100 bytes: an error, not 100 bytes."""
    server, files = lying
    server.faults = Faults(short_size=100)
    error = _fails(files.fetch, NAME, (0, 500_000))
    assert error.retryable and "0-99/100" in str(error)
    assert len(_gets(server)) == 3  # retried (CUAVB_HUB_ATTEMPTS=3), then named
    cache = tmp_path / "cache"
    _fails(files.download, NAME, cache / "part", 0, 500_000)
    _fails(files.download, NAME, cache / "whole", size=SIZE)  # the footer said 1 MB
    _cache_is_empty(cache)
    # a suffix read cannot know the size, but a size stated before (or by X-Linked-Size) can
    server.faults = Faults()
    ranges = files.ranges(NAME)
    assert ranges.size() == SIZE
    server.faults = Faults(short_size=100)
    assert "1000000" in str(_fails(files.fetch, NAME, (-1000, 0)))
    server.linked = True
    fresh = hubs.HubFiles(files.repo_id, files.revision)
    fresh.url = files.url  # type: ignore[method-assign]
    assert "X-Linked-Size" in str(_fails(fresh.ranges(NAME).size))
    # told once: the retry gets the right bytes
    server.faults = Faults(short_size=100, lie_count=1)
    assert files.fetch(NAME, (0, 500_000))[0] == _data(server)[:500_000]


def test_a_chunked_body_cut_short(lying, tmp_path: Path) -> None:
    """No Content-Length to tell, half the file, a clean last chunk: an error."""
    server, files = lying
    server.faults = Faults(chunked_cut=0.5)
    assert "broke off" in _fails(files.whole, NAME).plain
    assert [e.method for e in server.log if e.method == "HEAD"] == ["HEAD"]  # the size, once
    _fails(files.whole, "README.md")
    _fails(files.fetch, NAME, (1000, 200_000))
    cache = tmp_path / "cache"
    _fails(files.download, NAME, cache / "whole")
    _fails(files.download, NAME, cache / "part", 1000, 200_000)
    _cache_is_empty(cache)
    server.faults = Faults(chunked_cut=0.5, lie_count=1)
    assert files.whole(NAME) == _data(server)


def test_a_resume_spliced_at_the_wrong_offset(lying, tmp_path: Path) -> None:
    """A download cut at 300 kB resumes with a range; the Hub answers it with bytes from
    1000 further on, labelled as asked. The overlap asked again does not match: the download
    starts over instead of gluing; a lie every time fails and leaves nothing."""
    server, files = lying
    data = _data(server)
    cut = 300_000
    server.faults = Faults(drop_pattern="big", drop_count=99, drop_after=cut, splice_shift=1000)
    cache = tmp_path / "cache"
    _fails(files.download, NAME, cache / "whole", size=SIZE)
    resumed = f"bytes={cut - hubs.RESUME_OVERLAP}-{SIZE - 1}"
    # cut, resumed (spliced: refused), started over (cut again): 3 attempts, then named
    assert [r for r, _ in _gets(server)] == [None, resumed, None]
    _fails(files.download, NAME, cache / "part", 0, 800_000)
    _cache_is_empty(cache)
    # a spliced resume once: the download starts over and gets every byte right
    server.clear_log()
    server.faults = Faults(drop_pattern="big", drop_count=1, drop_after=cut, splice_shift=1000)
    files.download(NAME, cache / "whole", size=SIZE)
    assert (cache / "whole").read_bytes() == data
    assert _gets(server) == [(None, -1), (resumed, 206), (None, 200)]
    # an honest resume keeps the bytes it has: one range from the overlap on
    server.clear_log()
    server.faults = Faults(drop_pattern="big", drop_count=1, drop_after=cut)
    files.download(NAME, cache / "part", 0, 800_000)
    assert (cache / "part").read_bytes() == data[:800_000]
    assert _gets(server)[-1] == (f"bytes={cut - hubs.RESUME_OVERLAP}-799999", 206)


def test_extra_bytes(lying, tmp_path: Path) -> None:
    """Bytes beyond the range or the file, Content-Length counting them: an error."""
    server, files = lying
    server.faults = Faults(extra_bytes=10)
    _fails(files.fetch, NAME, (0, 1000))
    _fails(files.fetch, NAME, (-1000, 0))
    cache = tmp_path / "cache"
    _fails(files.download, NAME, cache / "part", 0, 1000)
    _fails(files.download, NAME, cache / "whole", size=SIZE)
    server.linked = True  # a whole file's size is stated apart from Content-Length
    _fails(files.whole, NAME)
    _fails(files.download, NAME, cache / "whole")
    _cache_is_empty(cache)


def test_a_body_that_is_not_the_stated_sha256(lying, tmp_path: Path) -> None:
    """The right length, other bytes: a whole file is compared with `X-Linked-Etag`."""
    server, files = lying
    server.linked = True
    server._sha256[NAME] = hashlib.sha256(b"another file").hexdigest()
    assert "sha256" in str(_fails(files.whole, NAME))
    cache = tmp_path / "cache"
    _fails(files.download, NAME, cache / "whole", size=SIZE)
    _fails(files.download, NAME, cache / "whole")
    _cache_is_empty(cache)
    data = _data(server)
    assert files.fetch(NAME, (0, 1000))[0] == data[:1000]  # a part has no hash to check


def test_the_loader_keeps_nothing_from_a_lying_hub(mirror_dir: Path, tmp_path: Path) -> None:
    """End to end (the loader in its own process, as test_hub.py runs it): a Hub whose
    every parquet range claims a 100-byte file, or whose README comes chunked and cut,
    fails the load with the reason named, and the cache holds no data file (only the
    revision's refs, written when it resolved). With `X-Linked-Size` (as the Hub sends for
    LFS files) the very first suffix read is caught; without it, the 100 bytes are no
    parquet footer, and the loader says so."""
    from tests.unit.test_hub import _client

    env = {"CUAVB_HUB_BACKOFF": "0.01", "CUAVB_HUB_ATTEMPTS": "2"}
    short = {"short_size": 100, "lie_pattern": r"\.parquet"}
    chunked = {"chunked_cut": 0.5, "lie_pattern": "README"}
    out = {}
    for linked in (True, False):
        server = Hub(mirror_dir, linked=linked)
        scenarios = [[f"short {linked}", short, env, DEFAULT_REPO]]
        scenarios += [[f"chunked {linked}", chunked, env, DEFAULT_REPO]]
        with serving(server) as url:
            steps = [["scenario", *s] for s in scenarios]
            out |= _client(url, tmp_path, steps, SCENARIO_ROOT=str(tmp_path))["scenarios"]
    assert "damaged or incomplete" in out["short True"]["error"]
    assert "not a readable parquet file" in out["short False"]["error"]
    assert "broke off" in out["chunked True"]["error"] and "README" in out["chunked False"]["error"]
    for name, result in out.items():
        kept = [p for p in Path(result["cache"]).rglob("*") if p.is_file()]
        assert [p for p in kept if "refs" not in p.parts] == [], name

"""`tests.helpers.mirror_cache`: the test mirror is built once per machine and generator
version, reused after, rebuilt when damaged or when the generator changes, and built once
when several processes ask at the same time (xdist workers). The builds here are tiny
stand-ins for the mirror, in a temporary `CUAVB_TEST_CACHE`."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from tests.helpers import mirror_cache as MC


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv(MC.CACHE_ENV, str(root))
    return root


def _counting_build(calls: list[Path]):
    def build(path: Path) -> None:
        calls.append(path)
        (path / "sub").mkdir(parents=True)
        (path / "README.md").write_text("mirror\n")
        (path / "sub" / "data.parquet").write_bytes(b"x" * 1000)

    return build


def test_the_root_is_the_env_or_the_home_cache(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv(MC.CACHE_ENV, raising=False)
    assert MC.cache_root() == Path.home() / ".cache" / "cuavb-dashboard-tests"
    monkeypatch.setenv(MC.CACHE_ENV, str(tmp_path / "elsewhere"))
    assert MC.cache_root() == tmp_path / "elsewhere"


def test_built_once_then_reused(cache) -> None:
    calls: list[Path] = []
    first = MC.cached("m", _counting_build(calls), key="k1")
    second = MC.cached("m", _counting_build(calls), key="k1")
    assert first == second == cache / "k1" / "m"
    assert len(calls) == 1
    assert calls[0] != first  # built aside, then renamed into place
    assert (first / "sub" / "data.parquet").stat().st_size == 1000
    assert MC.intact(first)
    assert [p.name for p in (cache / "k1").iterdir() if "tmp" in p.name] == []


def test_a_new_key_builds_a_new_entry(cache) -> None:
    calls: list[Path] = []
    MC.cached("m", _counting_build(calls), key="k1")
    MC.cached("m", _counting_build(calls), key="k2")
    assert len(calls) == 2 and (cache / "k1" / "m").is_dir() and (cache / "k2" / "m").is_dir()


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: (p / "sub" / "data.parquet").unlink(),
        lambda p: (p / "sub" / "data.parquet").write_bytes(b"x" * 10),  # truncated
        lambda p: (p / MC.MANIFEST).unlink(),  # a build that died before its manifest
        lambda p: (p / MC.MANIFEST).write_text("{not json"),
    ],
    ids=["file-missing", "file-truncated", "no-manifest", "bad-manifest"],
)
def test_a_damaged_entry_is_rebuilt(cache, damage) -> None:
    calls: list[Path] = []
    path = MC.cached("m", _counting_build(calls), key="k")
    damage(path)
    assert not MC.intact(path)
    again = MC.cached("m", _counting_build(calls), key="k")
    assert again == path and len(calls) == 2 and MC.intact(again)
    assert (again / "sub" / "data.parquet").stat().st_size == 1000


def test_a_file_added_later_does_not_count_as_damage(cache) -> None:
    calls: list[Path] = []
    path = MC.cached("m", _counting_build(calls), key="k")
    (path / "demo.lock").write_text("")
    assert MC.cached("m", _counting_build(calls), key="k") == path and len(calls) == 1


def test_a_failed_build_leaves_nothing_and_the_next_call_builds(cache) -> None:
    def broken(path: Path) -> None:
        path.mkdir(parents=True)
        (path / "half").write_text("x")
        raise RuntimeError("out of disk")

    with pytest.raises(RuntimeError):
        MC.cached("m", broken, key="k")
    assert not (cache / "k" / "m").exists()
    assert [p.name for p in (cache / "k").iterdir()] == ["m.lock"]
    calls: list[Path] = []
    assert MC.intact(MC.cached("m", _counting_build(calls), key="k")) and len(calls) == 1


def _worker(root: str, log: str, out: str) -> None:
    import os

    os.environ[MC.CACHE_ENV] = root

    def slow_build(path: Path) -> None:
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        path.mkdir(parents=True)
        time.sleep(0.5)  # long enough for the others to arrive while it builds
        (path / "README.md").write_text("mirror\n")

    found = MC.cached("m", slow_build, key="k")
    Path(out).write_text(f"{found}\n{MC.intact(found)}")


def test_parallel_callers_build_once(cache, tmp_path) -> None:
    log = tmp_path / "builds.log"
    context = multiprocessing.get_context("fork")
    outs = [tmp_path / f"out{i}" for i in range(4)]
    procs = [context.Process(target=_worker, args=(str(cache), str(log), str(out))) for out in outs]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    assert len(log.read_text().split()) == 1
    assert {o.read_text() for o in outs} == {f"{cache / 'k' / 'm'}\nTrue"}


def test_the_key_follows_the_generator(monkeypatch, tmp_path) -> None:
    from lib.data import source

    (tmp_path / "lib" / "mirror").mkdir(parents=True)
    module = tmp_path / "lib" / "mirror" / "build.py"
    module.write_text("X = 1\n")
    monkeypatch.setattr(MC, "ROOT", tmp_path)
    first = MC.generator_key()
    assert first.startswith(f"v{source.DEMO_VERSION}-")
    assert MC.generator_key() == first
    module.write_text("X = 2\n")  # the generator's code changed, its version did not
    second = MC.generator_key()
    assert second != first
    monkeypatch.setattr(source, "DEMO_VERSION", source.DEMO_VERSION + 1)
    assert MC.generator_key() not in (first, second)


def test_the_suite_mirror_is_the_cached_one(mirror_dir: Path) -> None:
    from lib.data import source

    assert mirror_dir == MC.cache_root() / MC.generator_key() / "demo" / mirror_dir.name
    assert source.demo_dir() == mirror_dir
    assert MC.intact(mirror_dir.parent) and (mirror_dir / "README.md").is_file()

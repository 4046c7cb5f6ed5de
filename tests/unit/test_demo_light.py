"""The demo's first page before its mirror is written (issue 30): the tables generated in
the server are the ones the finished mirror holds, and a trajectory opened meanwhile is
drawn with the mirror's own bytes (`lib.data.demo.light`, `lib.data.demo.shots`)."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pyarrow.compute as pc
import pytest

from lib.data import source
from lib.data.demo import builder as demo_build
from lib.data.demo import light as demo_light
from lib.data.demo.shots import DRAWN, DemoShots
from lib.data.load import _open_local, _read_all, load_bench
from lib.data.parquet import COUNT_COLUMN
from lib.data.remote import LocalFolder


@pytest.fixture(scope="module")
def splits() -> dict:
    return demo_light.generate(source.DEMO_SEED)


@contextmanager
def builder_lock(folder: Path) -> Iterator[None]:
    """Hold `folder`'s build lock as a running builder would: no other builder starts."""
    path = demo_build.lock_file(folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def test_the_written_out_types_are_the_mirror_features() -> None:
    from lib.mirror.hub import features

    trajectories, annotations = (f.arrow_schema for f in features())
    expected = [(f.name, f.type) for f in trajectories if f.name != "screenshots"]
    assert list(demo_light.TRAJECTORY_TYPES.items()) == expected
    assert list(demo_light.ANNOTATION_TYPES.items()) == [(f.name, f.type) for f in annotations]


def test_generated_tables_equal_what_the_loader_reads_from_the_mirror(
    mirror_dir: Path, splits: dict
) -> None:
    read, _locations = _read_all(LocalFolder(mirror_dir), None)
    made = demo_light.tables(splits)
    assert set(made) == set(read)
    for key, table in made.items():
        assert table.equals(read[key].replace_schema_metadata(None)), key
    counts = made[("trajectories", "internal")].column(COUNT_COLUMN)
    assert pc.sum(counts).as_py() > 0 and pc.min(counts).as_py() == 0


def test_the_light_bench_is_the_mirror_bench(
    mirror_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No mirror on disk (and a builder holding the lock, so none is started here): the
    demo loads from generated tables, the same frames as the mirror, with a sample file
    of the same bytes; the progress bar rises."""
    monkeypatch.setenv(source.DEMO_DIR_ENV, str(tmp_path))
    demo = source.demo_dir()
    seen: list[float] = []
    with builder_lock(demo):
        light = load_bench(source.resolve("demo"), lambda f, _t: seen.append(f))
    full = load_bench(source.resolve(str(mirror_dir)))
    assert isinstance(light.shots, DemoShots) and not (demo / "README.md").exists()
    pd.testing.assert_frame_equal(light.tasks, full.tasks)
    pd.testing.assert_frame_equal(light.annotations, full.annotations)
    pd.testing.assert_frame_equal(light.verdicts, full.verdicts)
    sample = light.folder / "sample_predictions.csv"
    assert sample.read_bytes() == (mirror_dir / "sample_predictions.csv").read_bytes()
    assert seen == sorted(seen) and len(set(seen)) >= 3, seen


def _real(mirror_dir: Path):
    return _open_local(mirror_dir, None)[1]


def test_a_trajectory_opened_before_the_mirror_is_drawn_with_its_bytes(
    mirror_dir: Path, tmp_path: Path, splits: dict
) -> None:
    """Drawn on demand (with a job the viewer polls, counting screenshots), the PNGs are
    the mirror's; a row without screenshots has none; a neighbour is drawn by prefetch."""
    shots = DemoShots(tmp_path / "not-built-yet", splits, lambda: _real(mirror_dir))
    real = _real(mirror_dir)
    tasks = load_bench(source.resolve(str(mirror_dir))).tasks
    some = tasks[tasks.n_screenshots_stored > 0].head(3)
    for split, row in zip(some.split, some.row, strict=True):
        assert not shots.ready(split, row) and shots.thumbs(split, row) is None
        job = shots.start(split, row)
        assert job is not None and job.counts_items
        shots.wait(split, row)
        assert job.finished
        assert not job.error and job.total_bytes == job.done_bytes > 0
        assert shots.ready(split, row) and shots.fetch_path(split, row) == DRAWN
        assert shots.pngs(split, row) == real.pngs(split, row)
        assert len(shots.thumbs(split, row)) == shots.stored_count(split, row)
    empty = tasks[tasks.n_screenshots_stored == 0].iloc[0]
    assert shots.pngs(empty.split, int(empty.row)) == []
    assert shots.start("internal", 10_000) is None and shots.pngs("internal", 10_000) is None
    nxt = some.iloc[-1]
    shots.prefetch(nxt.split, [int(nxt.row) + 1])
    shots.prefetcher.join(60)
    assert shots.ready(nxt.split, int(nxt.row) + 1)


def test_once_the_mirror_is_written_it_answers(mirror_dir: Path, splits: dict) -> None:
    """With the mirror's README on disk, rows not drawn yet come from the mirror's store,
    and the generated runs are dropped."""
    shots = DemoShots(mirror_dir, splits, lambda: _real(mirror_dir))
    assert shots.real() is not None and shots._splits is None
    real = _real(mirror_dir)
    assert shots.pngs("internal", 0) == real.pngs("internal", 0)
    assert shots.fetch_path("internal", 0) != DRAWN


def test_a_builder_starts_only_when_none_runs(tmp_path: Path, mirror_dir: Path) -> None:
    assert not demo_build.start_background(mirror_dir)  # built
    folder = tmp_path / "demo"
    with builder_lock(folder):
        assert demo_build.building(folder)
        assert not demo_build.start_background(folder)
    assert not demo_build.building(folder)

"""The demo's first page before its mirror is written (issue 30): the tables generated in
the server are the ones the finished mirror holds (`lib.data.demo.light`), and a trajectory
opened meanwhile shows the builder's progress, then the mirror's bytes
(`lib.data.shots.PendingShots`)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pandas as pd
import pyarrow.compute as pc
import pytest

from lib.data import source
from lib.data.demo import builder as demo_build
from lib.data.demo import light as demo_light
from lib.data.load import _open_local, _read_all, load_bench
from lib.data.parquet import COUNT_COLUMN
from lib.data.remote import LocalFolder
from lib.data.shots import PendingShots, pending
from lib.file_lock import exclusive


@pytest.fixture(scope="module")
def splits() -> dict:
    return demo_light.generate(source.DEMO_SEED)


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
    with exclusive(demo_build.lock_file(demo)):  # as a running builder holds it
        light = load_bench(source.resolve("demo"), lambda f, _t: seen.append(f))
    full = load_bench(source.resolve(str(mirror_dir)))
    assert isinstance(light.shots, PendingShots) and not (demo / "README.md").exists()
    pd.testing.assert_frame_equal(light.tasks, full.tasks)
    pd.testing.assert_frame_equal(light.annotations, full.annotations)
    pd.testing.assert_frame_equal(light.verdicts, full.verdicts)
    sample = light.folder / "sample_predictions.csv"
    assert sample.read_bytes() == (mirror_dir / "sample_predictions.csv").read_bytes()
    assert seen == sorted(seen) and len(set(seen)) >= 3, seen


def _real(mirror_dir: Path):
    return _open_local(mirror_dir, None)[1]


def _pending(folder: Path, writing=lambda: True, restart=lambda: None) -> PendingShots:
    return PendingShots(
        folder / "README.md",
        lambda: _real(folder),
        progress=lambda: demo_build.read_progress(folder),
        writing=writing,
        restart=restart,
    )


def _until(check, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_trajectory_opened_before_the_mirror_shows_the_builders_progress_then_fills_in(
    mirror_dir: Path, tmp_path: Path
) -> None:
    """Opened before the mirror is written: a job the viewer polls, whose progress is the
    builder's (trajectories drawn), no screenshot yet; once the mirror is on disk the same
    job ends and the row's PNGs are the mirror's; prefetch then works as for any mirror."""
    folder = tmp_path / "demo"
    folder.parent.mkdir(parents=True, exist_ok=True)
    shots = _pending(folder)
    real = _real(mirror_dir)
    tasks = load_bench(source.resolve(str(mirror_dir))).tasks
    some = tasks[tasks.n_screenshots_stored > 0].head(2)
    (split, row), (split2, row2) = zip(some.split, some.row, strict=True)
    assert shots.store() is None and not shots.ready(split, row)
    assert shots.thumbs(split, row) is None and shots.pngs(split, row, fetch=False) is None
    job = shots.start(split, row)
    assert job is not None and job.counts_items and shots.start(split, row) is job
    assert shots.job(split, row) is job and shots.fetch_path(split, row) == ""
    demo_build._write_progress(demo_build.progress_file(folder), 13, 260, "drawing")
    _until(lambda: (job.done_bytes, job.total_bytes) == (13, 260))
    assert not job.finished and not shots.ready(split, row)

    staging = tmp_path / "staging"  # the builder's last step: the mirror appears whole
    shutil.copytree(mirror_dir, staging)
    staging.rename(folder)
    _until(lambda: job.finished)
    assert not job.error and job.path
    assert shots.ready(split, row) and shots.pngs(split, row) == real.pngs(split, row)
    assert len(shots.thumbs(split, row)) == len(real.pngs(split, row))
    assert shots.fetch_path(split, row) != ""
    assert shots.pngs(split2, row2) == real.pngs(split2, row2)  # after: the mirror's store
    shots.prefetch(split, [row + 1])
    shots.store().prefetcher.join(60)
    assert shots.ready(split, row + 1)


def test_a_stopped_builder_ends_the_wait_with_an_error_and_retry_restarts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pending, "GRACE", 0.3)
    restarted: list[int] = []
    shots = _pending(tmp_path / "demo", writing=lambda: False, restart=lambda: restarted.append(1))
    job = shots.wait("internal", 0, timeout=60)
    assert job is not None and job.finished and "not being generated" in job.error
    assert shots.job("internal", 0) is job and not restarted
    again = shots.start("internal", 0)  # the viewer's Retry
    assert again is not job and restarted == [1]


def test_once_the_mirror_is_written_it_answers(mirror_dir: Path) -> None:
    """With the mirror's README on disk, every call goes to the mirror's store."""
    shots = _pending(mirror_dir)
    assert shots.store() is not None
    real = _real(mirror_dir)
    assert shots.pngs("internal", 0) == real.pngs("internal", 0)
    assert shots.fetch_path("internal", 0) != ""


def test_a_builder_starts_only_when_none_runs(tmp_path: Path, mirror_dir: Path) -> None:
    assert not demo_build.start_background(mirror_dir)  # built
    folder = tmp_path / "demo"
    with exclusive(demo_build.lock_file(folder)):  # as a running builder holds it
        assert demo_build.building(folder)
        assert not demo_build.start_background(folder)
    assert not demo_build.building(folder)

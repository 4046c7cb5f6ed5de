"""The demo built by its own process (`lib.data.demo.builder`): the same bytes as
`lib.mirror.write_mirror(folder, seed=0)`, and a progress bar that moves (issue 30)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from lib.data.demo import builder as demo_build


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_the_built_demo_is_the_mirror_and_its_progress_moves(
    mirror_dir: Path, tmp_path: Path
) -> None:
    """`build` (what the server calls) runs `python -m lib.data.demo.builder`; the files are
    byte-identical to the session's mirror (written in-process by `write_mirror`, seed 0),
    and the progress it reported rose through many values to 1.0, in order."""
    seen: list[float] = []
    folder = demo_build.build(tmp_path / "demo", lambda f, _text: seen.append(f))
    assert _digests(folder) == _digests(mirror_dir)
    assert seen == sorted(seen) and seen[0] == 0.0 and seen[-1] == 1.0
    assert len(set(seen)) >= 5, seen  # not stuck at 0 while the screenshots are drawn
    assert not demo_build.progress_file(folder).exists()
    assert demo_build.build(folder) == folder  # built: returns at once


def test_progress_file_is_read_defensively(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    assert demo_build.read_progress(folder) is None
    demo_build.progress_file(folder).write_text("{not json")
    assert demo_build.read_progress(folder) is None
    demo_build._write_progress(demo_build.progress_file(folder), 13, 260, "drawing")
    assert demo_build.read_progress(folder) == (13, 260, "drawing")
    assert demo_build.fraction(0, 260) == demo_build.START
    assert demo_build.fraction(260, 260) == demo_build.START + demo_build.SPAN


def test_reading_a_source_moves_the_bar_forward_only(mirror_dir: Path) -> None:
    """Both configs x both splits: the fractions rise (they used to restart at 0)."""
    from lib.data.load import load_bench
    from lib.data.source import resolve

    seen: list[float] = []
    load_bench(resolve(str(mirror_dir)), lambda f, _text: seen.append(f))
    assert seen == sorted(seen) and len(set(seen)) == 4, seen

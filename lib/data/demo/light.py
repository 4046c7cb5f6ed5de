"""The demo's first page without its screenshots: the light tables, made in the server.

Why: the demo mirror (`lib.data.demo.builder`) costs ~15 s of CPU, 80 % of it drawing the 516
PNG screenshots, and the first page needs none of them. So when the mirror is not on
disk yet, the server derives the tables the loader would read from it (every column but
the PNGs, plus each row's number of screenshots) straight from the generator
(`lib.mirror.build.build_split`, ~0.5 s for both splits), starts the builder in the
background (niced) and shows the first page at once. A trajectory opened before the
mirror is written shows the builder's progress and fills in when it is written
(`lib.data.shots.PendingShots`). The generator is deterministic, so the tables are the
ones the finished mirror holds (checked by `tests/unit/test_demo_light.py`).

The Arrow types are the mirror's `datasets` features (`lib.mirror.hub.features`), written
out here: importing `datasets` costs ~0.8 s of CPU the first page does not need; a test
holds the two equal.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from lib.data.parquet import COUNT_COLUMN
from lib.mirror.columns import ANNOTATION_TYPES, TRAJECTORY_TYPES
from lib.vocab import SPLITS

if TYPE_CHECKING:
    from lib.mirror.build import SplitData

log = logging.getLogger(__name__)
Progress = Callable[[float, str], None]

Tables = dict[tuple[str, str], pa.Table]


def light_folder(demo: Path) -> Path:
    """Beside the demo mirror: what the light Bench keeps on disk (the sample file)."""
    return demo.with_name(demo.name + ".light")


def generate(seed: int, progress: Progress | None = None) -> dict[str, SplitData]:
    """Both splits' generated data (what the mirror is written from), in split order."""
    from lib.mirror.build import build_split

    out = {}
    for i, split in enumerate(SPLITS):
        if progress:
            progress(
                i / len(SPLITS),
                f"Generating the synthetic demo's tables (once per server): {split}…",
            )
        out[split] = build_split(split, seed, False)
    return out


def tables(splits: dict[str, SplitData]) -> Tables:
    """The tables `lib.data.load` reads from the finished mirror: (config, split) -> Arrow table,
    trajectories without the PNGs and with `COUNT_COLUMN` (the stored list's length)."""
    out: Tables = {}
    for split, data in splits.items():
        traj = {name: pa.array(data.traj[name], kind) for name, kind in TRAJECTORY_TYPES.items()}
        traj[COUNT_COLUMN] = pa.array([len(f) for f in data.frames], pa.int64())
        out[("trajectories", split)] = pa.table(traj)
        ann = {name: pa.array(data.ann[name], kind) for name, kind in ANNOTATION_TYPES.items()}
        out[("annotations", split)] = pa.table(ann)
    return out


def write_sample(folder: Path, splits: dict[str, SplitData], seed: int) -> None:
    """`sample_predictions.csv` in `folder` (the Your verifier page offers it), atomically;
    a disk that refuses it only loses the sample button."""
    from lib.mirror.hub import write_sample_predictions

    path = folder / "sample_predictions.csv"
    if path.is_file():
        return
    tmp = folder / f".sample_predictions.{os.getpid()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_sample_predictions(tmp, splits, seed)
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("the demo's sample predictions were not written to %s: %s", folder, exc)
        with suppress(OSError):
            tmp.unlink()

"""`tools.scale_mirror`: a K-times light mirror loads like any mirror, with K x the tasks."""

from __future__ import annotations

from pathlib import Path

from lib.clusters import cluster_ids
from lib.data import load_bench
from lib.source import resolve
from tools.scale_mirror import main


def test_a_three_times_mirror_has_three_times_everything_but_pictures(
    mirror_dir: Path, tmp_path: Path, bench
) -> None:
    assert main([str(mirror_dir), str(tmp_path / "x3"), "--scale", "3"]) == 0
    big = load_bench(resolve(str(tmp_path / "x3")))
    assert len(big.tasks) == 3 * len(bench.tasks)
    assert len(big.annotations) == 3 * len(bench.annotations)
    assert big.tasks["task_id"].is_unique
    assert big.tasks["n_screenshots_stored"].sum() == 3 * bench.tasks["n_screenshots_stored"].sum()
    sites = set(cluster_ids(bench.tasks["task_id"], "site"))
    assert set(cluster_ids(big.tasks["task_id"], "site")) == sites  # copies stay on their site
    assert big.screenshot_png(big.tasks["split"].iloc[0], 0, 0) is None  # light only
    assert len(big.verdicts) == 3 * len(bench.verdicts)

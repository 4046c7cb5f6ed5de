"""`tools.scale_mirror`: a K-times light mirror loads like any mirror, with K x the tasks."""

from __future__ import annotations

from pathlib import Path

from lib.data.load import load_bench
from lib.data.source import resolve
from lib.table.clusters import cluster_ids
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


def test_the_same_sites_way_gives_every_copy_its_own_texts_and_scores(
    mirror_dir: Path, tmp_path: Path, bench
) -> None:
    """`--way same-sites` (issue 26): tasks grow within the same websites/families and
    reviewers, and no two copies share a text or a score (so pyarrow cannot share their
    strings), while every verdict is the one `copies` gives."""
    import pandas as pd

    from tools.scale_mirror import FREE_TEXT, JSON_TEXT, SCORES

    assert main([str(mirror_dir), str(tmp_path / "s3"), "--scale", "3", "--way", "same-sites"]) == 0
    assert main([str(mirror_dir), str(tmp_path / "c3"), "--scale", "3"]) == 0
    same = load_bench(resolve(str(tmp_path / "s3")))
    copies = load_bench(resolve(str(tmp_path / "c3")))
    assert set(cluster_ids(same.tasks["task_id"], "site")) == set(
        cluster_ids(bench.tasks["task_id"], "site")
    )
    assert set(same.annotations["annotator"]) == set(bench.annotations["annotator"])

    def distinct_texts(column: pd.Series) -> int:
        values = column.dropna()
        return values[~values.isin(["", "<no_answer>"])].nunique()  # these two stay as they are

    for frame, base in ((same.tasks, bench.tasks), (same.annotations, bench.annotations)):
        for column in sorted((FREE_TEXT | JSON_TEXT) & set(frame.columns)):
            assert distinct_texts(frame[column]) == 3 * distinct_texts(base[column]), column
        for column in sorted(SCORES & set(frame.columns)):
            values = frame[column].dropna()
            assert values.between(0, 1).all()
            assert values.nunique() == 3 * base[column].dropna().nunique(), column
    keys = ["split", "task_id", "rater", "dimension"]
    a = same.verdicts.sort_values(keys).reset_index(drop=True)
    b = copies.verdicts.sort_values(keys).reset_index(drop=True)
    pd.testing.assert_series_equal(a["label"], b["label"])  # the same verdicts
    pd.testing.assert_frame_equal(a[keys], b[keys])

"""Data source resolution and the loader: Hub layout, local mirror, broken sources, fallback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lib.data import source as sources
from lib.data.load import load_bench
from lib.data.source import SourceError, resolve

OM2W = "fara7b_om2w_browserbase"


def test_resolve_kinds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUAVB_DATA", raising=False)
    default = resolve()
    assert (default.kind, default.location, default.named) == ("hub", sources.HUB_ID, False)
    assert resolve("someone/OtherBench").kind == "hub"
    assert resolve(str(tmp_path)).kind == "local"
    assert resolve("/no/such/folder").kind == "local"
    assert resolve("demo").kind == "demo"
    monkeypatch.setenv("CUAVB_DATA", str(tmp_path))
    assert resolve().location == str(tmp_path.resolve())


def test_local_mirror_loads_image_free(bench) -> None:
    assert bench.tasks.groupby("split").size().to_dict() == {OM2W: 106, "internal": 154}
    assert bench.annotations.groupby("split").size().to_dict() == {OM2W: 215, "internal": 154}
    assert "screenshots" not in bench.tasks.columns
    assert not bench.warnings
    stored = bench.tasks["n_screenshots_stored"]
    assert (stored == 0).sum() >= 60  # the internal second shard has no screenshots
    assert (bench.tasks["n_screenshots"].fillna(-1) == stored).mean() > 0.9


def test_counts_match_a_full_read(bench, mirror_dir: Path) -> None:
    """The counts read from the path leaf equal the list lengths of a full pyarrow read."""
    import pyarrow.compute as pc

    for split in ("internal", OM2W):
        shards = sorted((mirror_dir / "trajectories").glob(f"{split}-*.parquet"))
        full = pa.concat_tables(
            pq.read_table(s, columns=["task_id", "screenshots"]) for s in shards
        )
        expected = pc.fill_null(pc.list_value_length(full.column("screenshots")), 0).to_pylist()
        mine = bench.tasks[bench.tasks.split == split].sort_values("row")
        assert mine["n_screenshots_stored"].tolist() == expected
        assert mine["task_id"].tolist() == full.column("task_id").to_pylist()
        row = int(mine[mine.n_screenshots_stored > 0].iloc[-1]["row"])
        cell = full.column("screenshots")[row].values
        assert bench.screenshot_png(split, row, len(cell) - 1) == cell[-1]["bytes"].as_py()


def test_one_screenshot_read_on_demand(bench) -> None:
    task = bench.tasks[bench.tasks["n_screenshots_stored"] > 1].iloc[0]
    png = bench.screenshot_png(task["split"], int(task["row"]), 1)
    assert png is not None and png[:8] == b"\x89PNG\r\n\x1a\n"
    assert png != bench.screenshot_png(task["split"], int(task["row"]), 0)
    assert bench.screenshot_png(task["split"], int(task["row"]), 10_000) is None
    assert bench.screenshot_png(task["split"], int(task["row"]), -1) is None
    assert bench.screenshot_png("nope", 0, 0) is None
    empty = bench.tasks[bench.tasks["n_screenshots_stored"] == 0].iloc[0]
    assert bench.screenshot_png(empty["split"], int(empty["row"]), 0) is None


def test_task_lookup(bench) -> None:
    first = bench.tasks.iloc[3]
    assert bench.task(first["task_id"])["row"] == first["row"]
    assert bench.task("no-such-task") is None


def _copy(mirror: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(mirror, target, ignore=shutil.ignore_patterns("sample_*"))
    return target


def _rewrite(shard: Path, change) -> None:
    table = pq.read_table(shard)
    pq.write_table(change(table), shard)


def test_missing_folder_is_a_clear_error() -> None:
    with pytest.raises(SourceError, match="not found"):
        load_bench(resolve("/no/such/mirror"))


def test_folder_without_dataset(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no dataset"):
        load_bench(resolve(str(tmp_path)))


def test_missing_config(mirror_dir: Path, tmp_path: Path) -> None:
    folder = _copy(mirror_dir, tmp_path)
    readme = (folder / "README.md").read_text()
    start = readme.index("- config_name: annotations")
    end = readme.index("---", start)
    (folder / "README.md").write_text(readme[:start] + readme[end:])
    shutil.rmtree(folder / "annotations")
    with pytest.raises(SourceError, match="annotations"):
        load_bench(resolve(str(folder)))


def test_missing_column_is_tolerated_and_reported(mirror_dir: Path, tmp_path: Path) -> None:
    folder = _copy(mirror_dir, tmp_path)
    for shard in (folder / "annotations").glob("*.parquet"):
        _rewrite(shard, lambda t: t.drop_columns(["outcome_comment"]).replace_schema_metadata(None))
    bench = load_bench(resolve(str(folder)))
    assert any("outcome_comment" in w for w in bench.warnings)
    assert bench.annotations["outcome_comment"].isna().all()
    assert len(bench.annotations) == 369


def test_missing_task_id_is_an_error(mirror_dir: Path, tmp_path: Path) -> None:
    folder = _copy(mirror_dir, tmp_path)
    for shard in (folder / "annotations").glob("*.parquet"):
        _rewrite(shard, lambda t: t.drop_columns(["task_id"]).replace_schema_metadata(None))
    with pytest.raises(SourceError, match="task_id"):
        load_bench(resolve(str(folder)))


def test_rows_without_task_id_are_dropped_and_counted(mirror_dir: Path, tmp_path: Path) -> None:
    folder = _copy(mirror_dir, tmp_path)
    shard = folder / "annotations" / "internal-00000-of-00001.parquet"
    _rewrite(shard, lambda t: t.drop_columns(["task_id"]))  # the builder fills it with nulls
    bench = load_bench(resolve(str(folder)))
    assert any("154 reviews without a task id" in w for w in bench.warnings)
    assert len(bench.annotations) == 215


def test_wrong_type_names_the_column(mirror_dir: Path, tmp_path: Path) -> None:
    folder = _copy(mirror_dir, tmp_path)
    shard = folder / "annotations" / f"{OM2W}-00000-of-00001.parquet"

    def to_text(table: pa.Table) -> pa.Table:
        i = table.schema.get_field_index("human_process_score")
        values = pa.array([str(v) for v in table.column(i).to_pylist()])
        table = table.set_column(i, "human_process_score", values)
        return table.replace_schema_metadata(None)

    _rewrite(shard, to_text)
    with pytest.raises(SourceError, match="human_process_score"):
        load_bench(resolve(str(folder)))


def test_unreadable_file(mirror_dir: Path, tmp_path: Path) -> None:
    folder = _copy(mirror_dir, tmp_path)
    (folder / "annotations" / "internal-00000-of-00001.parquet").write_bytes(b"not parquet")
    with pytest.raises(SourceError, match=r"annotations.*[Pp]arquet") as error:
        load_bench(resolve(str(folder)))
    assert "magic bytes" in str(error.value) or "internal-00000" in str(error.value)


def test_offline_default_falls_back_to_demo(mirror_dir: Path, monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("CUAVB_DATA", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path / "empty-cache"))
    bench = load_bench(resolve())
    assert bench.source.is_demo and not bench.source.named
    assert "HF_HUB_OFFLINE" in bench.source.note
    assert bench.folder == mirror_dir  # the session mirror is the demo mirror


def test_named_hub_id_offline_is_an_error(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path / "empty-cache"))
    with pytest.raises(SourceError, match="someone/Missing"):
        load_bench(resolve("someone/Missing"))


def test_a_file_is_not_a_folder(tmp_path: Path) -> None:
    file = tmp_path / "data.parquet"
    file.write_bytes(b"x")
    with pytest.raises(SourceError, match="is a file, not a folder"):
        load_bench(resolve(str(file)))


def test_unreadable_folder_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PermissionError from stat (an unreadable parent folder) becomes a plain message."""
    folder = tmp_path / "locked"
    folder.mkdir()

    def denied(self: Path) -> bool:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "is_file", denied)
    with pytest.raises(SourceError, match="cannot be read"):
        load_bench(resolve(str(folder)))


def test_truncated_shard_names_split_and_file(mirror_dir: Path, tmp_path: Path) -> None:
    folder = _copy(mirror_dir, tmp_path)
    shard = folder / "trajectories" / "internal-00000-of-00002.parquet"
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    with pytest.raises(SourceError, match=r"`trajectories` / `internal`.*internal-00000-of-00002"):
        load_bench(resolve(str(folder)))


def test_several_row_groups_read_the_same(bench, mirror_dir: Path, tmp_path: Path) -> None:
    """A mirror re-laid-out into 12-row groups gives the same frames and the same PNGs."""
    from tools.relayout import relayout

    folder = relayout(mirror_dir, tmp_path / "rg12", 12)
    assert pq.ParquetFile(next((folder / "trajectories").glob("*.parquet"))).num_row_groups > 1
    other = load_bench(resolve(str(folder)))
    columns = ["split", "task_id", "row", "n_screenshots_stored"]
    assert other.tasks[columns].equals(bench.tasks[columns])
    for split, row in ((OM2W, 30), ("internal", 60), (OM2W, 100)):
        count = int(
            bench.tasks.query("split == @split and row == @row")["n_screenshots_stored"].iloc[0]
        )
        for index in (0, count - 1):
            assert other.screenshot_png(split, row, index) == bench.screenshot_png(
                split, row, index
            )


def test_a_demo_fallback_is_not_kept_for_good(mirror_dir: Path, monkeypatch, tmp_path) -> None:
    """The demo standing in for an unreachable default Hub is reused for FALLBACK_TTL
    seconds only; then a background probe (or "Try the Hub again", at once) tries the Hub."""
    from ui import state

    monkeypatch.delenv("CUAVB_DATA", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path / "empty-cache"))
    first = state.get_bench()
    assert state.is_fallback(first)
    assert state.get_bench() is first  # within the interval: the same cached object
    monkeypatch.setattr(state, "FALLBACK_TTL", 0.0)
    assert state.get_bench() is first  # expired: probed in the background, not in the run
    state._PROBES[""].join(30)
    assert state.get_bench() is first  # the probe found the Hub still down (offline)
    monkeypatch.setattr(state, "FALLBACK_TTL", 3600.0)
    state.retry_hub()
    second = state.get_bench()
    assert second is not first and state.is_fallback(second)  # the button: loaded at once

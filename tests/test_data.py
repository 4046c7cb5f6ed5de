"""Data source resolution and the loader: Hub layout, local mirror, broken sources, fallback."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lib import source as sources
from lib.data import load_bench
from lib.source import SourceError, resolve

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
    for split, ds in bench.trajectories.items():
        assert "screenshots" in ds.column_names and len(ds) == (bench.tasks.split == split).sum()
    stored = bench.tasks["n_screenshots_stored"]
    assert (stored == 0).sum() >= 60  # the internal second shard has no screenshots
    assert (bench.tasks["n_screenshots"].fillna(-1) == stored).mean() > 0.9


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


def test_offline_default_falls_back_to_demo(mirror_dir: Path, monkeypatch) -> None:
    monkeypatch.delenv("CUAVB_DATA", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    source, folder = sources.materialize(resolve())
    assert source.is_demo and not source.named
    assert "HF_HUB_OFFLINE" in source.note
    assert folder == mirror_dir  # the session mirror is the demo mirror


def test_named_hub_id_offline_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(SourceError, match="someone/Missing"):
        load_bench(resolve("someone/Missing"))


def test_hub_download_reports_progress(mirror_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[float] = []

    def fake_snapshot_download(repo_id: str, **kwargs) -> str:
        bar = kwargs["tqdm_class"](total=4, file=io.StringIO())
        for _ in range(4):
            bar.update(1)
        bar.close()
        return str(mirror_dir)

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    bench = load_bench(resolve("microsoft/CUAVerifierBench"), lambda f, _t: seen.append(f))
    assert bench.source.kind == "hub" and len(bench.tasks) == 260
    assert seen[:4] == [0.25, 0.5, 0.75, 1.0]

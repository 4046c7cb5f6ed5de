"""Load both configs x both splits of a source into one `Bench`.

Memory rule (DESIGN.md): the screenshots stay in the memory-mapped Arrow files of the
`datasets` cache. Every pandas frame here is image-free, and one screenshot's PNG bytes
are read on demand through Arrow without decoding or rewriting anything.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import datasets
import pandas as pd
import pyarrow.compute as pc

from lib import source as sources
from lib import verdicts
from lib.schema import COLUMNS, SPLITS, check_features

SCREENSHOTS = "screenshots"


@dataclass
class Bench:
    """Everything the pages need from one source, built once and shared read-only.

    `tasks`: one row per trajectory (all splits; `split`, and `row` = position in that
    split's Dataset). `annotations`: one row per (task, reviewer). `verdicts`: the long
    verdict table of `lib.verdicts`. `warnings`: problems that did not stop loading.
    """

    source: sources.Source
    folder: Path
    trajectories: dict[str, datasets.Dataset]
    tasks: pd.DataFrame
    annotations: pd.DataFrame
    verdicts: pd.DataFrame
    warnings: list[str] = field(default_factory=list)

    def task(self, task_id: str) -> pd.Series | None:
        """The tasks row for an id, or None when the id is unknown."""
        hits = self.tasks.index[self.tasks["task_id"] == task_id]
        return None if len(hits) == 0 else self.tasks.loc[hits[0]]

    def screenshot_png(self, split: str, row: int, index: int) -> bytes | None:
        """The stored PNG bytes of one screenshot, or None if there is no such image.

        Reads one list element through Arrow: no PIL decode, no copy of the row's
        other screenshots into Python objects.
        """
        ds = self.trajectories.get(split)
        if ds is None or SCREENSHOTS not in ds.column_names or not 0 <= row < len(ds):
            return None
        cell = ds.with_format("arrow")[row][SCREENSHOTS][0]
        if not cell.is_valid or not 0 <= index < len(cell.values):
            return None
        image = cell.values[index]
        data = image["bytes"].as_py() if "bytes" in image.type.names else None
        return data or None


def cache_dir_for(folder: Path) -> Path:
    """An Arrow cache folder keyed by the source files' paths, sizes and mtimes.

    `datasets` keys the cache of a local folder by its name and config, so a mirror
    regenerated in the same place (or two test copies called alike) would silently reuse
    stale Arrow files. A fingerprint of the files makes each version its own cache.
    """
    digest = hashlib.sha1(str(folder.resolve()).encode())
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            stat = path.stat()
            digest.update(f"{path.relative_to(folder)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return Path(datasets.config.HF_DATASETS_CACHE) / "cuavb" / digest.hexdigest()[:16]


def _causes(exc: BaseException) -> str:
    """The exception and its causes in one line: `datasets` wraps the useful part."""
    parts = []
    while exc is not None and len(parts) < 4:
        parts.append(f"{type(exc).__name__}: {exc}")
        exc = exc.__cause__ or exc.__context__
    return " <- ".join(parts)


def _load_split(folder: Path, config: str, split: str) -> datasets.Dataset:
    where = f"`{config}` / `{split}` in `{folder}`"
    try:
        ds = datasets.load_dataset(
            str(folder), config, split=split, cache_dir=str(cache_dir_for(folder))
        )
    except ValueError as exc:
        text = str(exc)
        if "BuilderConfig" in text or "Config name" in text:
            raise sources.SourceError(f"The source has no config `{config}` ({text}).") from exc
        if "split" in text.lower():
            raise sources.SourceError(f"The source has no split {where}: {text}") from exc
        raise sources.SourceError(f"Cannot read {where}: {text}") from exc
    except Exception as exc:  # broken parquet, missing files, odd README: all unusable
        raise sources.SourceError(f"Cannot read {where}: {_causes(exc)}") from exc
    report = check_features(config, ds.features)
    if not report.ok:
        problems = report.wrong_type + [f"`{c}` is missing" for c in report.missing]
        raise sources.SourceError(f"Unexpected columns in {where}: " + "; ".join(problems))
    return ds


def _light_frame(
    ds: datasets.Dataset, config: str, split: str, warnings: list[str]
) -> pd.DataFrame:
    """Image-free pandas frame of a split, with missing columns added as all-null."""
    light = [c for c in ds.column_names if c != SCREENSHOTS]
    frame = ds.select_columns(light).to_pandas()
    for column in COLUMNS[config]:
        if column != SCREENSHOTS and column not in frame.columns:
            warnings.append(f"{config}/{split}: column `{column}` is missing; treated as empty.")
            frame[column] = pd.NA
    frame.insert(0, "split", split)
    frame["task_id"] = frame["task_id"].astype("string")
    return frame


def _stored_screenshot_counts(ds: datasets.Dataset) -> pd.Series:
    """Length of each row's screenshot list, read from the Arrow offsets only."""
    if SCREENSHOTS not in ds.column_names:
        return pd.Series([0] * len(ds), dtype="int64")
    lengths = pc.list_value_length(ds.data.column(SCREENSHOTS))
    return pd.Series(lengths.to_pandas()).fillna(0).astype("int64")


def _dedupe(frame: pd.DataFrame, keys: list[str], what: str, warnings: list[str]) -> pd.DataFrame:
    """Drop rows without a task id and repeated keys (first kept), saying how many."""
    no_id = frame["task_id"].isna() | (frame["task_id"].fillna("").str.strip() == "")
    if no_id.any():
        warnings.append(f"{int(no_id.sum())} {what} without a task id dropped.")
        frame = frame.loc[~no_id]
    duplicated = frame.duplicated(keys, keep="first")
    if duplicated.any():
        sample = ", ".join(frame.loc[duplicated, "task_id"].astype(str).head(5))
        warnings.append(f"{int(duplicated.sum())} duplicate {what} dropped (e.g. {sample}).")
    return frame.loc[~duplicated]


def load_bench(
    source: sources.Source | None = None, progress: sources.Progress | None = None
) -> Bench:
    """Load a source (default: `CUAVB_DATA` or the Hub) into a Bench.

    Raises SourceError with a user-facing message when the source is unusable.
    """
    source, folder = sources.materialize(source or sources.resolve(), progress)
    if not (folder / "README.md").exists() and not any(folder.glob("*/*.parquet")):
        raise sources.SourceError(f"`{folder}` holds no dataset (no README.md, no parquet).")
    warnings: list[str] = []
    trajectories: dict[str, datasets.Dataset] = {}
    task_frames, annotation_frames = [], []
    for i, split in enumerate(SPLITS):
        if progress:
            progress(i / len(SPLITS), f"Loading split {split}…")
        ds = _load_split(folder, "trajectories", split)
        trajectories[split] = ds
        frame = _light_frame(ds, "trajectories", split, warnings)
        frame["row"] = range(len(frame))
        frame["n_screenshots_stored"] = _stored_screenshot_counts(ds).to_numpy()
        task_frames.append(frame)
        annotations = _load_split(folder, "annotations", split)
        annotation_frames.append(_light_frame(annotations, "annotations", split, warnings))
    tasks = _dedupe(pd.concat(task_frames, ignore_index=True), ["task_id"], "tasks", warnings)
    annotations = pd.concat(annotation_frames, ignore_index=True)
    annotations = _dedupe(annotations, ["split", "task_id", "annotator"], "reviews", warnings)
    unknown = ~annotations["task_id"].isin(set(tasks["task_id"]))
    if unknown.any():
        sample = ", ".join(annotations.loc[unknown, "task_id"].astype(str).head(5))
        warnings.append(f"{int(unknown.sum())} reviews name unknown tasks (e.g. {sample}).")
    tasks = tasks.reset_index(drop=True)
    annotations = annotations.reset_index(drop=True)
    table = verdicts.build(tasks, annotations)
    return Bench(source, folder, trajectories, tasks, annotations, table, warnings)

"""Load both configs x both splits of a source into one `Bench`, reading only what is needed.

Memory and speed rule: the first page needs every column except the PNG
bytes, plus each trajectory's number of stored screenshots. `lib.data.parquet.lazy_parquet` reads
exactly that from each trajectories shard (footer + light column chunks), the same way
for a Hub revision (HTTP ranges, `lib.data.remote.hub`) and a local folder (seek + read): no Arrow
cache is rebuilt, no PNG is read. Screenshots are fetched per trajectory on demand
(`lib.data.shots.store`). For the Hub the light data is cached on disk per commit sha, so a
restart makes one request (the revision check) and an offline start none.

Which files form which split comes from the README front matter (`configs:` ->
`data_files`), as `datasets` reads it; without a README, `<config>/<split>-*`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import hashlib
import io
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from lib.data import front_matter, light_cache
from lib.data import source as sources
from lib.data.parquet import (
    COUNT_COLUMN,
    MAX_SHOTS,
    ShardError,
    declared_features,
    read_light,
)
from lib.data.remote import ByteSource, HubSource, LocalFolder
from lib.data.remote import hub as hubs
from lib.data.schema import COLUMNS, check_features
from lib.data.shots import Location, PendingShots, Shots, ShotStore
from lib.table import verdicts
from lib.vocab import CONFIGS, SPLITS

log = logging.getLogger(__name__)
SCREENSHOTS = "screenshots"


@dataclass
class Bench:
    """Everything the pages need from one source, built once and shared read-only.

    `tasks`: one row per trajectory (all splits; `split`, `row` = position in that
    split, `n_screenshots_stored` = screenshots shown: the stored list's length, at most
    `MAX_SHOTS`; `n_screenshots_in_data` = its real length). `annotations`: one
    row per (task, reviewer). `verdicts`: the long verdict table of `lib.table.verdicts`.
    `warnings`: problems that did not stop loading. `revision`: the Hub commit (None for
    a folder). `shots`: where screenshot bytes come from (see `screenshot_png`).
    """

    source: sources.Source
    folder: Path
    tasks: pd.DataFrame
    annotations: pd.DataFrame
    verdicts: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    shots: Shots | None = None
    revision: hubs.Revision | None = None

    def task(self, task_id: str) -> pd.Series | None:
        """The tasks row for an id, or None when the id is unknown."""
        hits = self.tasks.index[self.tasks["task_id"] == task_id]
        return None if len(hits) == 0 else self.tasks.loc[hits[0]]

    def screenshot_png(self, split: str, row: int, index: int) -> bytes | None:
        """The stored PNG bytes of one screenshot, or None if there is none (or it could
        not be fetched: `ui.fetch` shows why). The first call for a trajectory fetches its
        pages (blocking); the viewer starts that fetch earlier, with progress.
        """
        if self.shots is None or index < 0:
            return None
        images = self.shots.pngs(split, row)
        if images is None or index >= len(images):
            return None
        return images[index]

    def thumbnail_png(self, split: str, row: int, index: int) -> bytes | None:
        """A filmstrip thumbnail (200 px wide PNG) of one screenshot, made in the fetch
        worker and cached beside the PNGs; None when missing, corrupt or not fetched yet."""
        if self.shots is None or index < 0:
            return None
        thumbs = self.shots.thumbs(split, row)
        if thumbs is None or index >= len(thumbs):
            return None
        return thumbs[index]

    def fetch_path(self, split: str, row: int) -> str:
        """How this trajectory's screenshots were obtained (page index, row group, shard,
        disk cache), for the viewer's technical detail; "" when not fetched yet."""
        return "" if self.shots is None else self.shots.fetch_path(split, row)


def cache_dir_for(folder: Path) -> Path:
    """Kept for bench/run.py: the Arrow cache folder the old loader used (no longer written)."""
    import datasets  # late: the light path never needs `datasets`

    digest = hashlib.sha1(str(folder.resolve()).encode())
    return Path(datasets.config.HF_DATASETS_CACHE) / "cuavb" / digest.hexdigest()[:16]


def _causes(exc: BaseException) -> str:
    """The exception and its causes in one line: `datasets` wraps the useful part."""
    parts = []
    while exc is not None and len(parts) < 4:
        parts.append(f"{type(exc).__name__}: {exc}")
        exc = exc.__cause__ or exc.__context__
    return " <- ".join(parts)


def _light_frame(
    table: pa.Table, columns: list[str], config: str, split: str, warnings: list[str]
) -> pd.DataFrame:
    """Image-free pandas frame of a split, with missing columns added as all-null."""
    frame = table.to_pandas()
    for column in COLUMNS[config]:
        if column != SCREENSHOTS and column not in frame.columns:
            warnings.append(f"{config}/{split}: column `{column}` is missing; treated as empty.")
            frame[column] = pd.NA
    frame.insert(0, "split", split)
    frame["task_id"] = frame["task_id"].astype("string")
    return frame


def _dedupe(frame: pd.DataFrame, keys: list[str], what: str, warnings: list[str]) -> pd.DataFrame:
    """Drop rows without a task id and repeated keys (first kept), saying how many."""
    no_id = frame["task_id"].isna() | (frame["task_id"].fillna("").str.strip() == "")
    if no_id.any():
        warnings.append(f"{int(no_id.sum())} {what} without a task id dropped.")
        frame = frame.loc[~no_id]
    duplicated = frame.duplicated(keys, keep="first")
    if not duplicated.any():
        return frame  # no copy of the whole frame (at 100x tasks, +200 MB of peak)
    sample = ", ".join(frame.loc[duplicated, "task_id"].astype(str).head(5))
    warnings.append(f"{int(duplicated.sum())} duplicate {what} dropped (e.g. {sample}).")
    return frame.loc[~duplicated]


def data_files(readme: str | None, names: list[str]) -> dict[str, dict[str, list[str]]]:
    """config -> split -> shard names, from the README front matter like `datasets` does.

    `data_files` may be a glob, a list of globs, a mapping split -> glob(s) or a list of
    `{split, path}` items (`_split_patterns`); a config without `data_files` or a missing
    README means the default `<config>/<split>-*` pattern for the known splits.
    """

    def _patterns(value: object) -> list[str]:
        """The globs of one `path` / `data_files` value: a string or a (nested) list of strings.

        Anything else (`path: 5`, a mapping) gives no pattern, so that split matches no file
        and the loader says so, instead of a TypeError on every page.
        """
        if isinstance(value, str):
            return [value]
        if isinstance(value, list):
            return [p for item in value for p in _patterns(item)]
        return []

    def _split_patterns(spec: object) -> dict[str, list[str]]:
        """split -> globs of one config's `data_files`, in every form `datasets` accepts:
        a glob (`"data/*.parquet"`, the `train` split), a list of globs (`train`), a mapping
        `{split: glob or globs}`, or a list of `{split, path}` items."""
        if isinstance(spec, str):
            return {"train": [spec]}
        if isinstance(spec, dict):
            return {str(split): _patterns(value) for split, value in spec.items()}
        out: dict[str, list[str]] = {}
        if isinstance(spec, list):
            for item in spec:
                if isinstance(item, dict):
                    split = str(item.get("split", "train"))
                    out.setdefault(split, []).extend(_patterns(item.get("path", [])))
                else:
                    out.setdefault("train", []).extend(_patterns(item))
        return out

    configs: list[dict] = []
    try:
        meta = front_matter.parse(readme)  # within a size, node and alias budget
    except front_matter.FrontMatterError as exc:
        raise sources.SourceError(f"{str(exc)[:1].upper()}{str(exc)[1:300]}") from exc
    if isinstance(meta, dict) and isinstance(meta.get("configs"), list):
        configs = [c for c in meta["configs"] if isinstance(c, dict)]
    if not configs:
        configs = [
            {"config_name": c, "data_files": [{"split": s, "path": f"{c}/{s}-*"} for s in SPLITS]}
            for c in CONFIGS
        ]
    out: dict[str, dict[str, list[str]]] = {}
    for config in configs:
        splits: dict[str, list[str]] = {}
        for split, patterns in _split_patterns(config.get("data_files") or []).items():
            matched = [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns)]
            splits[split] = sorted(matched)
        out[str(config.get("config_name", "default"))] = splits
    return out


def _null_fill(table: pa.Table, features) -> pa.Table:
    """Add declared-but-absent columns as nulls, as the `datasets` builder does."""
    for name, feature in features.items():
        if name not in table.column_names and name != SCREENSHOTS:
            try:
                arrow_type = feature.pa_type if hasattr(feature, "pa_type") else pa.string()
            except Exception:
                arrow_type = pa.string()
            table = table.append_column(name, pa.nulls(table.num_rows, arrow_type))
    return table


def _read_split(
    files: ByteSource, config: str, split: str, shards: list[str]
) -> tuple[pa.Table, list[Location]]:
    """Read one split's light table (all shards in order) and each row's screenshot location."""
    where = f"`{config}` / `{split}` in {files.where()}"
    if not shards:
        raise sources.SourceError(f"The source has no split {where} (no data files match).")
    tables: list[pa.Table] = []
    locations: list[Location] = []
    for name in shards:
        try:
            if config == "trajectories":
                light = _read_light(files, name)
                table, shard_features = light.table, light.features
                for g, group in enumerate(light.shard.groups):
                    locations += [Location(light.shard, g, i) for i in range(group.rows)]
            else:
                raw = pq.read_table(io.BytesIO(files.whole(name)))
                table = raw.replace_schema_metadata(None)
                shard_features = declared_features(raw.schema)
        except hubs.HubError:
            raise
        except ShardError as exc:
            raise sources.SourceError(f"Cannot read {where}: {exc}") from exc
        except Exception as exc:  # a corrupt or truncated file: name it
            raise sources.SourceError(
                f"Cannot read {where}: `{Path(name).name}` is not a readable parquet file "
                f"({_causes(exc)})."
            ) from exc
        table = _null_fill(table, shard_features)
        report = check_features(config, shard_features)
        if not report.ok:
            problems = report.wrong_type + [f"`{c}` is missing" for c in report.missing]
            raise sources.SourceError(f"Unexpected columns in {where}: " + "; ".join(problems))
        tables.append(table.replace_schema_metadata(None))
    try:
        merged = pa.concat_tables(tables, promote_options="permissive")
    except pa.ArrowInvalid as exc:
        raise sources.SourceError(f"The shards of {where} disagree on columns: {exc}") from exc
    return merged, locations


def _read_light(files: ByteSource, name: str):
    """One trajectories shard's light data (a source with `read_many` reads 4 ranges at
    a time). The shard keeps its name in the source: the screenshot store reads it there."""
    src = files.ranges(name)
    return read_light(src, name, getattr(src, "read_many", None))


def _read_all(files: ByteSource, progress: sources.Progress | None):
    """Both configs x both splits: light tables + screenshot locations."""
    names = files.names()
    readme = files.whole("README.md").decode("utf-8", "replace") if "README.md" in names else None
    layout = data_files(readme, names)
    tables: dict[tuple[str, str], pa.Table] = {}
    locations: dict[str, list[Location]] = {}
    for c, config in enumerate(CONFIGS):
        if config not in layout:
            raise sources.SourceError(
                f"The source {files.where()} has no config `{config}` "
                f"(configs found: {', '.join(layout) or 'none'})."
            )
        for i, split in enumerate(SPLITS):
            if progress:
                step = c * len(SPLITS) + i  # forward through both configs, never back
                progress(step / (len(CONFIGS) * len(SPLITS)), f"Reading {config} / {split}…")
            tables[(config, split)], locs = _read_split(
                files, config, split, layout[config].get(split, [])
            )
            if config == "trajectories":
                locations[split] = locs
    return tables, locations


def _folder_key(folder: Path) -> str:
    """A key of a local folder's files (paths, sizes, mtimes): a regenerated mirror is new."""
    digest = hashlib.sha1(str(folder.resolve()).encode())
    for path in sorted(folder.rglob("*.parquet")):
        stat = path.stat()
        digest.update(f"{path.relative_to(folder)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return "local-" + digest.hexdigest()[:16]


def _open_local(folder: Path, progress):
    """A local mirror: checked with plain messages (issue 15), then read lazily."""
    try:
        if folder.is_file():
            raise sources.SourceError(
                f"`{folder}` is a file, not a folder ({sources.ENV_VAR} must name a mirror folder)."
            )
        if not folder.is_dir():
            raise sources.SourceError(
                f"Data folder not found: `{folder}` (from {sources.ENV_VAR})."
            )
        has_data = (folder / "README.md").exists() or any(folder.glob("*/*.parquet"))
    except PermissionError as exc:
        raise sources.SourceError(
            f"The data folder `{folder}` cannot be read (permission denied)."
        ) from exc
    if not has_data:
        raise sources.SourceError(f"`{folder}` holds no dataset (no README.md, no parquet).")
    try:
        tables, locations = _read_all(LocalFolder(folder), progress)
    except PermissionError as exc:
        raise sources.SourceError(
            f"A file in `{folder}` cannot be read (permission denied): {exc.filename}"
        ) from exc
    return tables, ShotStore(locations, LocalFolder(folder), _folder_key(folder))


def _open_hub(repo_id: str, progress):
    """A Hub dataset at one revision: light data from our cache, or read and cached."""
    revision = hubs.resolve_revision(repo_id)
    cache = light_cache.path_for(repo_id, revision.sha)
    cached = light_cache.load(cache)
    files = HubSource(hubs.HubFiles(repo_id, revision))
    if cached is None:
        if hubs.offline():
            raise hubs.HubError(
                "HF_HUB_OFFLINE is set and this revision was never downloaded.",
                f"no cached data for {repo_id}@{revision.sha} in {cache}",
            )
        tables, locations = _read_all(files, progress)
        light_cache.save(cache, tables, locations)
        log.info("%s@%s: light data cached in %s", repo_id, revision.short, cache)
    else:
        tables, locations = cached
    removed = light_cache.prune_light(cache.parent, cache.name)
    if removed:
        log.info("removed the light cache of %d old revision(s)", len(removed))
    return tables, ShotStore(locations, files, revision.sha), revision


def capped_counts(
    counts, split: str, task_ids: pd.Series, warnings: list[str]
) -> tuple[pd.Series, pd.Series]:
    """(screenshots a trajectory shows, the stored list's real length) per row.

    The viewer builds a step, a URL and a check per screenshot, so a row whose list holds 3
    million (null) entries cost the Trajectory page 26 s of CPU and 1.8 GB: what it shows is
    capped here, from the lengths alone (the list offsets; no entry is ever read), at the
    `MAX_SHOTS` that the screenshot cache keeps per trajectory. The real length stays in
    `n_screenshots_in_data` for the page's note; each capped row is a data warning.
    """
    real = pd.Series(counts, dtype="int64").clip(lower=0)
    over = real > MAX_SHOTS
    if over.any():
        n = int(over.sum())
        sample = ", ".join(task_ids[over.to_numpy()].astype(str).head(3))
        warnings.append(
            f"trajectories/{split}: {n} {'trajectory stores' if n == 1 else 'trajectories store'}"
            f" more than {MAX_SHOTS} screenshots (e.g. {sample}; at most {int(real.max()):,});"
            f" only the first {MAX_SHOTS} of each are shown."
        )
    return real.clip(upper=MAX_SHOTS).to_numpy(), real.to_numpy()


def _build(source, folder, tables, shots, revision) -> Bench:
    warnings: list[str] = []
    task_frames, annotation_frames = [], []
    for split in SPLITS:
        # popped: each Arrow table is freed once it is a frame (at 100x, ~90 MB less peak)
        table = tables.pop(("trajectories", split))
        counts = table.column(COUNT_COLUMN).to_numpy()
        frame = _light_frame(
            table.drop_columns([COUNT_COLUMN]), [], "trajectories", split, warnings
        )
        del table
        frame["row"] = range(len(frame))
        frame["n_screenshots_stored"], frame["n_screenshots_in_data"] = capped_counts(
            counts, split, frame["task_id"], warnings
        )
        task_frames.append(frame)
        annotation_frames.append(
            _light_frame(tables.pop(("annotations", split)), [], "annotations", split, warnings)
        )
    tasks = pd.concat(task_frames, ignore_index=True)
    task_frames.clear()  # the per-split frames are copies: freed now, not after the verdicts
    tasks = _dedupe(tasks, ["task_id"], "tasks", warnings)
    annotations = pd.concat(annotation_frames, ignore_index=True)
    annotation_frames.clear()
    annotations = _dedupe(annotations, ["split", "task_id", "annotator"], "reviews", warnings)
    unknown = ~annotations["task_id"].isin(set(tasks["task_id"]))
    if unknown.any():
        sample = ", ".join(annotations.loc[unknown, "task_id"].astype(str).head(5))
        warnings.append(f"{int(unknown.sum())} reviews name unknown tasks (e.g. {sample}).")
    tasks = tasks.reset_index(drop=True)
    annotations = annotations.reset_index(drop=True)
    table = verdicts.build(tasks, annotations)
    return Bench(source, folder, tasks, annotations, table, warnings, shots, revision)


GENERATE_SHARE = 0.8
"""Of the progress bar, the part generating the demo's tables takes; the verdicts the rest."""


def _light_demo(
    source: sources.Source, progress: sources.Progress | None, background: bool = True
) -> Bench:
    """The demo before its mirror is on disk: tables generated here (`lib.data.demo.light`,
    ~0.5 s); a trajectory opened before the niced builder (started here, or by run.sh) has
    written the mirror waits for it, showing the builder's progress (`PendingShots`), then
    is read from the mirror's own `ShotStore`. `background` False (a CLI that exits when
    done): no builder is started."""
    from lib.data.demo import builder, light

    demo = sources.demo_dir()
    if background and builder.start_background(demo):
        log.warning("[demo] drawing the demo's screenshots in the background (%s)", demo)

    def generating(fraction: float, text: str) -> None:
        if progress:
            progress(GENERATE_SHARE * fraction, text)

    splits = light.generate(sources.DEMO_SEED, generating)
    if progress:
        progress(GENERATE_SHARE, "Building the verdict table…")
    folder = light.light_folder(demo)
    light.write_sample(folder, splits, sources.DEMO_SEED)
    shots = PendingShots(
        demo / "README.md",
        lambda: _open_local(demo, None)[1],
        progress=lambda: builder.read_progress(demo),
        writing=lambda: builder.building(demo),
        restart=lambda: builder.start_background(demo),
    )
    return _build(source, folder, light.tables(splits), shots, None)


Progress = sources.Progress | None


def _load_hub(source: sources.Source, progress: Progress, background: bool) -> Bench:
    """A Hub id; an unnamed one (the default) that fails falls back to the demo."""
    try:
        tables, shots, revision = _open_hub(source.location, progress)
        folder = hubs.repo_cache(source.location)
        return _give_back(_build(source, folder, tables, shots, revision))
    except hubs.HubError as exc:
        if source.named:
            raise sources.SourceError(
                f"Could not read `{source.location}` from the Hugging Face Hub: {exc.plain} ({exc})"
            ) from exc
        log.warning(  # the terminal's one line: which source, and why
            "Hub %s unusable: %s Serving the built-in demo (CUAVB_DATA chooses a source).",
            source.location,
            exc.plain,
        )
        return _load_demo(sources.demo_fallback(exc.plain, str(exc)), progress, background)


def _load_demo(source: sources.Source, progress: Progress, background: bool) -> Bench:
    """The built-in demo: its mirror once written, else generated tables meanwhile."""
    if not (sources.demo_dir() / "README.md").exists():
        return _light_demo(source, progress, background)
    folder = sources.ensure_demo()
    tables, shots = _open_local(folder, progress)
    return _give_back(_build(source, folder, tables, shots, None))


def _load_local(source: sources.Source, progress: Progress, _background: bool) -> Bench:
    """A local mirror folder (`lib.mirror` marks a synthetic one)."""
    folder = Path(source.location)
    tables, shots = _open_local(folder, progress)
    if sources.marked_synthetic(folder):
        source = dataclasses.replace(source, synthetic=True)
    return _give_back(_build(source, folder, tables, shots, None))


OPENERS: dict[str, Callable[[sources.Source, Progress, bool], Bench]] = {
    "hub": _load_hub,
    "local": _load_local,
    "demo": _load_demo,
}
"""Each kind of source (`lib.data.source.Kind`) -> how it is opened into a Bench (the
source, the progress callback, whether a demo builder may start in the background): a
new kind of source is one more entry (and its `ByteSource`, `lib.data.remote`)."""


def load_bench(
    source: sources.Source | None = None,
    progress: sources.Progress | None = None,
    background_build: bool = True,
) -> Bench:
    """Load a source (default: `CUAVB_DATA` or the Hub) into a Bench.

    `background_build` False: a demo not yet built is served from its generated tables
    without starting the background builder (a CLI or a notebook call that is done
    before the builder would be: no process is left behind).

    Raises SourceError with a user-facing message when the source is unusable. An
    unnamed Hub source that fails falls back to the demo with `source.note` = the plain
    reason and `source.detail` = the technical one (the banner shows both).
    """
    source = source or sources.resolve()
    return OPENERS[source.kind](source, progress, background_build)


def _give_back(bench: Bench) -> Bench:
    """Return to the system the memory the load freed but the allocators kept: Arrow's pool
    (mimalloc) holds the parquet pages and the Arrow tables the frames were made from,
    glibc the pandas temporaries (at 100x tasks, 270 MB of 800 MB resident; without this
    the report's later sections stacked their peaks on top of it, issue 39)."""
    pa.default_memory_pool().release_unused()
    with contextlib.suppress(Exception):  # glibc only; elsewhere there is nothing to trim
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    return bench

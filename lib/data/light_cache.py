"""The light data of a Hub revision cached on disk (every column but the PNG bytes, and
where each trajectory's screenshots are), so a restart makes one request and an offline
start none.

One folder per commit sha (`<sha>-v<LIGHT_CACHE_VERSION>`): parquet files written by
pyarrow and the screenshot locations as plain JSON (no pickle: a cache file must not run
code). A folder that fails to read is a miss and is removed (the cache heals itself);
only the newest `KEEP_LIGHT` revisions are kept.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from pathlib import Path

import pyarrow.parquet as pq

from lib.data.parquet import Group, Shard
from lib.data.remote import hub as hubs
from lib.data.shots import Location
from lib.vocab import CONFIGS, SPLITS

log = logging.getLogger(__name__)
LIGHT_CACHE_VERSION = 2


def path_for(repo_id: str, sha: str) -> Path:
    return hubs.repo_cache(repo_id) / "light" / f"{sha}-v{LIGHT_CACHE_VERSION}"


def _locations_json(locations: dict[str, list[Location]]) -> dict:
    """Screenshot locations as plain JSON (no pickle: a cache file must not run code)."""
    shards: list[Shard] = []
    index: dict[int, int] = {}
    rows: dict[str, list[list[int]]] = {}
    for split, locs in locations.items():
        rows[split] = []
        for loc in locs:
            if id(loc.shard) not in index:
                index[id(loc.shard)] = len(shards)
                shards.append(loc.shard)
            rows[split].append([index[id(loc.shard)], loc.group, loc.row_in_group])
    return {
        "shards": [
            {
                "path": sh.path,
                "size": sh.size,
                "footer_start": sh.footer_start,
                "footer": base64.b64encode(sh.footer).decode(),
                "groups": [[g.rows, g.shot_start, g.shot_end] for g in sh.groups],
            }
            for sh in shards
        ],
        "rows": rows,
    }


def _locations_from_json(data: dict) -> dict[str, list[Location]]:
    shards = [
        Shard(
            sh["path"],
            sh["size"],
            sh["footer_start"],
            base64.b64decode(sh["footer"]),
            [Group(*g) for g in sh["groups"]],
        )
        for sh in data["shards"]
    ]
    return {
        split: [Location(shards[i], g, r) for i, g, r in rows]
        for split, rows in data["rows"].items()
    }


def save(path: Path, tables, locations) -> None:
    """Light tables as parquet + screenshot locations as JSON, one folder per sha, atomically."""
    import shutil
    import tempfile

    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=".tmp-"))
        for (config, split), table in tables.items():
            pq.write_table(table, tmp / f"{config}--{split}.parquet")
        (tmp / "locations.json").write_text(json.dumps(_locations_json(locations)))
        if path.exists():  # a damaged copy (the loader found it unusable)
            _remove_light(path)
        tmp.rename(path)
    except OSError as exc:  # full or read-only disk, or another process won the race
        log.warning("light data not cached in %s: %s", path, exc)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def load(path: Path):
    """The cached light data, or None when absent or damaged (a damaged cache is a miss:
    it is logged, deleted and read again from the source, never trusted or shown)."""
    if not (path / "locations.json").exists():
        return None
    try:
        tables = {}
        for file in path.glob("*--*.parquet"):
            config, split = file.stem.split("--", 1)
            tables[(config, split)] = pq.read_table(file)
        locations = _locations_from_json(json.loads((path / "locations.json").read_text()))
        if set(tables) != {(c, s) for c in CONFIGS for s in SPLITS}:
            raise ValueError(f"tables {sorted(tables)} incomplete")
        for (config, split), table in tables.items():
            if config == "trajectories" and table.num_rows != len(locations.get(split, [])):
                raise ValueError(
                    f"{split}: {table.num_rows} rows, {len(locations[split])} locations"
                )
        return tables, locations
    except Exception as exc:  # truncated parquet, bad JSON, wrong shape: all a miss
        log.warning("damaged light cache %s ignored and rebuilt: %s", path.name, exc)
        _remove_light(path)
        return None


_LIGHT_NAME = re.compile(r"^[0-9a-f]{40}-v\d+$")
KEEP_LIGHT = 2  # light-cache folders kept per repo (the newest); older revisions are removed


def _remove_light(path: Path) -> None:
    """Delete one of our light-cache folders (only that: a `<sha>-v<N>` or `.tmp-` folder
    holding only regular files, never a link or anything else)."""
    import shutil

    if not (_LIGHT_NAME.fullmatch(path.name) or path.name.startswith(".tmp-")):
        return
    try:
        if path.is_symlink() or not path.is_dir():
            return
        if any(p.is_symlink() or not p.is_file() for p in path.iterdir()):
            return
        shutil.rmtree(path)
    except OSError as exc:
        log.warning("could not remove the old light cache %s: %s", path, exc)


def prune_light(folder: Path, keep: str) -> list[str]:
    """Remove light-cache folders of old revisions (all but `keep` and the newest
    KEEP_LIGHT - 1 others) and temp folders older than an hour; returns the names removed."""
    import time

    try:
        items = [p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return []
    ours = sorted(
        (p for p in items if _LIGHT_NAME.fullmatch(p.name) and p.name != keep),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    removed = []
    for path in ours[KEEP_LIGHT - 1 :]:
        _remove_light(path)
        removed.append(path.name)
    for path in items:
        if path.name.startswith(".tmp-") and time.time() - path.stat().st_mtime > 3600:
            _remove_light(path)
            removed.append(path.name)
    return removed

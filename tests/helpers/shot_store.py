"""A screenshot store over a mirror folder, without loading a Bench (the cache tests)."""

from __future__ import annotations

from pathlib import Path

from lib.data.parquet import LocalRanges, read_light
from lib.data.remote import ByteSource, LocalFolder
from lib.data.shots import Location, ShotStore

OM2W = "fara7b_om2w_browserbase"


def om2w_store(folder: Path, files: ByteSource | None = None, *, key: str = "0" * 40) -> ShotStore:
    """A `ShotStore` of every row of the first om2w shard of ``folder``, read through
    ``files`` (default: the folder itself): the screenshot-cache tests need one store with
    several row groups, and a byte source they can break, without a whole Bench."""
    name = f"trajectories/{OM2W}-00000-of-00002.parquet"
    light = read_light(LocalRanges(folder / name), name)
    locations = [
        Location(light.shard, g, i)
        for g, group in enumerate(light.shard.groups)
        for i in range(group.rows)
    ]
    return ShotStore({OM2W: locations}, LocalFolder(folder) if files is None else files, key)

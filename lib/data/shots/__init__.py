"""A trajectory's screenshots on demand: the store (`ShotStore`: which path, jobs, the
memory cache, thumbnails), its disk cache (`ShotDisk`: entries, the cap, eviction) and the
background prefetch of the neighbours (`Prefetcher`). Importers use this face."""

from lib.data.shots.disk import ShotDisk, decode_entry, encode_entry
from lib.data.shots.prefetch import MAX_QUEUED, Prefetcher
from lib.data.shots.store import (
    MEMORY_CAP,
    THUMB_WIDTH,
    FetchJob,
    Location,
    ShotStore,
    make_thumbs,
)

__all__ = [
    "MAX_QUEUED",
    "MEMORY_CAP",
    "THUMB_WIDTH",
    "FetchJob",
    "Location",
    "Prefetcher",
    "ShotDisk",
    "ShotStore",
    "decode_entry",
    "encode_entry",
    "make_thumbs",
]

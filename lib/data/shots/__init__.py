"""A trajectory's screenshots on demand: the store (`ShotStore`: which path, jobs, the
memory cache, thumbnails), its disk cache (`ShotDisk`: entries, the cap, eviction) and the
background prefetch of the neighbours (`Prefetcher`); `PendingShots` answers for a store
still being written (the demo before its mirror). Every store is a `Shots`. Importers use
this face."""

from lib.data.shots.disk import ShotDisk, decode_entry, encode_entry
from lib.data.shots.pending import PendingShots
from lib.data.shots.prefetch import MAX_QUEUED, Prefetcher
from lib.data.shots.protocol import FetchJob, Shots
from lib.data.shots.store import (
    MEMORY_CAP,
    THUMB_WIDTH,
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
    "PendingShots",
    "Prefetcher",
    "ShotDisk",
    "ShotStore",
    "Shots",
    "decode_entry",
    "encode_entry",
    "make_thumbs",
]

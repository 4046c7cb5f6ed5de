"""The loader: bytes (a local folder, the Hub, the built-in demo) -> one `Bench`."""

from lib.data.light_cache import prune_light
from lib.data.load import Bench, cache_dir_for, load_bench

__all__ = ["Bench", "cache_dir_for", "load_bench", "prune_light"]

"""Reproducible random streams: one independent stream per purpose."""

from __future__ import annotations

import zlib

import numpy as np


def rng_for(seed: int, *keys: str | int) -> np.random.Generator:
    """An independent, reproducible stream per purpose (adding one never shifts another)."""
    ints = [zlib.crc32(k.encode()) if isinstance(k, str) else int(k) for k in keys]
    return np.random.default_rng([seed, *ints])

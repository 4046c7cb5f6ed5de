"""A least-recently-used cache bounded in entries AND in bytes.

`st.cache_data` bounds a cache by entries only. Where the size of a result depends on
what a visitor did (uploaded verifiers are more comparisons, more records, a larger
table), 32 entries of an unknown size are not a memory bound: this cache also keeps the
pickled bytes of its entries under ``max_bytes``, dropping the least recently used first,
and never stores a value larger than the whole budget (it is computed, returned, and not
kept). Values are stored pickled, so every hit returns a fresh copy (as `st.cache_data`
does: a caller that changes its copy changes nobody else's) and the size counted is the
size held. A computation that raises stores nothing (an error is never cached).
"""

from __future__ import annotations

import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class BoundedCache:
    """LRU of pickled values: at most ``max_entries`` entries and ``max_bytes`` bytes.

    Examples
    --------
    >>> cache = BoundedCache(max_entries=2, max_bytes=10_000)
    >>> cache.get_or_compute("a", lambda: [1, 2, 3])
    [1, 2, 3]
    >>> cache.get_or_compute("a", lambda: "not called")
    [1, 2, 3]
    >>> _ = cache.get_or_compute("big", lambda: b"x" * 20_000)  # over the budget: not kept
    >>> "big" in cache, len(cache)
    (False, 1)
    """

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("a bounded cache needs at least one entry and one byte")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._items: OrderedDict[Hashable, bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items

    @property
    def nbytes(self) -> int:
        """Bytes held (the pickled entries)."""
        return self._bytes

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def get(self, key: Hashable, default: Any = None) -> Any:
        """A fresh copy of the value, or ``default``; a hit becomes the most recent."""
        with self._lock:
            blob = self._items.get(key)
            if blob is None:
                return default
            self._items.move_to_end(key)
        try:
            return pickle.loads(blob)
        except Exception:  # a damaged entry is a miss, and goes
            self.discard(key)
            return default

    def discard(self, key: Hashable) -> None:
        with self._lock:
            blob = self._items.pop(key, None)
            if blob is not None:
                self._bytes -= len(blob)

    def put(self, key: Hashable, value: Any) -> bool:
        """Keep ``value`` (evicting the least recently used to fit); False when it alone is
        over the byte budget (then nothing is kept)."""
        blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        if len(blob) > self.max_bytes:
            self.discard(key)
            return False
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= len(old)
            self._items[key] = blob
            self._bytes += len(blob)
            while len(self._items) > self.max_entries or self._bytes > self.max_bytes:
                _, dropped = self._items.popitem(last=False)
                self._bytes -= len(dropped)
        return True

    def get_or_compute(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The cached value of ``key``, else ``compute()`` (kept if it fits)."""
        missing = object()
        hit = self.get(key, missing)
        if hit is not missing:
            return hit
        value = compute()
        self.put(key, value)
        return value

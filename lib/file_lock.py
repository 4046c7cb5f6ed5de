"""An exclusive lock on a file, held for a `with` block: the one way this project makes
processes take turns (the demo builder's build lock, the test suite's shared mirrors and
run-once folders).

`fcntl.flock` rather than a lock library: it is what the demo builder's callers test
without taking it (`lib.data.demo.builder.building`, `LOCK_NB`), it is released by the
kernel when its holder dies (a killed builder never leaves a stale lock), and it is two
calls. Without `fcntl` (Windows) there is no lock: the builder then relies on its atomic
rename alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file `path` (created, with its folder, when missing);
    blocks until no other process holds it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on Linux/macOS
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)

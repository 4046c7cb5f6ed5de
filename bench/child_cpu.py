"""The process CPU probe of the benchmarks whose figure is one fresh interpreter's CPU
(`bench/agreement_first.py`, `bench/trajectory_open.py`).

Their children run by path with the code under test first on ``sys.path`` (for
`--before REF`, a tree without `bench/`), so `bench` is not importable there: each child
imports this file as the top-level module `child_cpu`, from beside its own script, before it
puts the code under test on the path.
"""

from __future__ import annotations

import resource
import time


def cpu() -> float:
    """User + system CPU seconds of this process (the machine is shared: never wall time)."""
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def settle(timeout: float) -> None:
    """Return once the process has used no CPU for a second (its background work done:
    threads a page started, prefetches), or after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last, quiet = cpu(), 0
    while time.monotonic() < deadline and quiet < 5:
        time.sleep(0.2)
        now = cpu()
        quiet = quiet + 1 if now - last < 0.01 else 0
        last = now

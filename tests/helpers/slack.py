"""Timeouts that scale with the machine: a loaded 2-core CI box runs a script many times
slower than an idle laptop, and a timeout is a bound on a hang, not a speed target (speed is
measured by `bench/`, never by a test).

`scaled(s)` is `s` times the current load per core (the 1-minute load average), at least 1x
and at most `MAX_SLACK`x, plus `CUAVB_TEST_SLACK` (a factor) when a machine needs more.
"""

from __future__ import annotations

import os

MAX_SLACK = 6.0


def factor() -> float:
    """How much slower than idle this machine is now (1.0 .. MAX_SLACK), times the env factor."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = 0.0
    extra = float(os.environ.get("CUAVB_TEST_SLACK", "1") or 1)
    return min(MAX_SLACK, max(1.0, load / max(cores, 1))) * max(extra, 1.0)


def scaled(seconds: float) -> float:
    """`seconds` stretched by `factor()` (call it when the timeout starts, not at import)."""
    return seconds * factor()


def scaled_ms(milliseconds: float) -> float:
    """`scaled` for Playwright's millisecond timeouts."""
    return milliseconds * factor()

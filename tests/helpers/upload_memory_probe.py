"""`python -m tests.helpers.upload_memory_probe MIRROR`: what a session holds after its uploads.

Run in a fresh process by tests/unit/test_upload_memory.py (RSS is a process-wide figure).
A session (AppTest: the real session state) runs the page's real callback
`ui.your_verifier.on_upload` on a file generated inside the script run, so no copy of
the file is held by the test harness:
1. `rejected`: a 9 MB file read whole, then rejected (50,000 rows, all unknown task ids);
   RSS before and after, both after a warm-up rejection of a tiny file;
2. `control`: the same parse with the exception kept in session state the way the old
   callback kept it, to show the measure sees a leak;
3. `closed`: a valid upload, then the session is dropped: is its verdict table freed?
Prints one JSON object.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import statistics
import sys
import weakref
from typing import Any

import psutil

REPEATS = 7
"""Each measure is the median of this many before/after pairs."""


def rss_mb() -> float:
    """RSS once freed memory is given back: after a full collection, pyarrow's pool
    releasing unused memory and glibc's `malloc_trim(0)` (without them the allocator's
    arenas kept 3-20 MB of freed objects, run to run, and hid a few-MB leak)."""
    gc.collect()
    import pyarrow

    pyarrow.default_memory_pool().release_unused()
    with contextlib.suppress(OSError):  # not glibc: the figure is noisier
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    return psutil.Process().memory_info().rss / 2**20


def session_script() -> None:
    """The script a probe session runs (AppTest.from_function: self-contained)."""
    from pathlib import Path

    import streamlit as st

    from lib.uploads import predictions
    from tests.helpers.upload_memory_probe import rejected_file
    from ui.state import get_bench
    from ui.your_verifier import LAST_KEY, UPLOADER_KEY, on_upload

    class File:
        def __init__(self, name: str, make) -> None:
            self.name, self._make = name, make

        def getvalue(self) -> bytes:
            return self._make()

    action = st.session_state.get("probe_action")
    if action == "warm":
        st.session_state[UPLOADER_KEY] = File("warm.csv", lambda: b"task_id,outcome\nnope,1\n")
    elif action == "rejected":
        st.session_state[UPLOADER_KEY] = File("big.csv", rejected_file)
    elif action == "valid":
        path = st.session_state["probe_sample"]
        st.session_state[UPLOADER_KEY] = File("sample.csv", Path(path).read_bytes)
    elif action == "control":  # the old callback: the exception kept in session state
        try:
            predictions.parse_predictions(rejected_file(), "big.csv", get_bench().tasks)
        except predictions.PredictionsError as exc:
            st.session_state[LAST_KEY] = {"error": str(exc), "exc": exc}
    if UPLOADER_KEY in st.session_state:
        on_upload()
        del st.session_state[UPLOADER_KEY]


def rejected_file() -> bytes:
    ids = [f"unknown-task-{i:06d}-" + "x" * 150 for i in range(50_000)]
    return ("task_id,outcome\n" + "".join(f"{t},1\n" for t in ids)).encode()


def main(mirror: str) -> None:
    os.environ.update({"CUAVB_DATA": mirror, "HF_HUB_OFFLINE": "1", "CUAVB_RAISE_ERRORS": "1"})
    from streamlit.testing.v1 import AppTest

    from ui.state import UPLOADS_KEY
    from ui.your_verifier import LAST_KEY

    def step(at: AppTest, action: str) -> AppTest:
        at.session_state["probe_action"] = action
        return at.run(timeout=120)

    def settle(at: AppTest) -> None:
        """Two tiny uploads: a script run's objects outlive it by one run in AppTest
        (measured: the control's exception was still held after one next run, freed after
        two), so only then is RSS back to what the session itself holds."""
        step(at, "warm")
        step(at, "warm")

    at = AppTest.from_function(session_script, default_timeout=120)
    at.session_state["probe_sample"] = os.path.join(mirror, "sample_predictions.csv")
    out: dict[str, Any] = {}
    for _ in range(3):  # warm: the bench, pandas' and the parser's first allocations
        step(at, "warm")
        step(at, "rejected")
        settle(at)
    # Each figure is paired with the RSS right before its own step, taken once the previous
    # step's objects are gone. One baseline shared by all steps drifted by -10 to +6 MB run
    # to run on a busy machine (lazy allocations, transient caches), more than the bound.
    held, after_next, kept = [], [], []
    for _ in range(REPEATS):
        before = rss_mb()
        step(at, "rejected")
        last = at.session_state[LAST_KEY]
        out["rejected"] = "error" in last and "exc" not in last
        out["kept_dropped_rows"] = len(last["dropped"])
        out["n_dropped"] = last["n_dropped"]
        held.append(rss_mb() - before)
        settle(at)
        after_next.append(rss_mb() - before)
    for _ in range(REPEATS):
        before = rss_mb()
        step(at, "control")
        kept.append(rss_mb() - before)
        settle(at)  # the next upload's message replaces the kept exception
    out["held_after_rejection"] = statistics.median(held)
    out["held_after_next_upload"] = statistics.median(after_next)
    out["held_control_exception_kept"] = statistics.median(kept)
    out["runs"] = {"rejection": held, "next_upload": after_next, "control": kept}

    step(at, "valid")
    table = at.session_state[UPLOADS_KEY]
    out["n_uploaded_rows"] = len(table)
    ref = weakref.ref(table)
    del table
    out["session_open"] = rss_mb()
    del at
    gc.collect()
    out["freed_after_close"] = ref() is None
    out["session_closed"] = rss_mb()
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])

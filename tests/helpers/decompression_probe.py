"""`python -m tests.helpers.decompression_probe FILE MODE`: the memory of one parse, in a fresh
process.

Run by tests/unit/test_upload_decompression.py (RSS is process-wide; the test process holds other
tests' data). MODE `parse`: `lib.uploads.predictions.parse_predictions` on the file (it must refuse
it); MODE `control`: pyarrow's own `read_table` of the `task_id` column, the naive read the
bound replaces, to show the measure sees a decompression. Prints one JSON object: the
message, `peak_rise_mb` (the process's peak RSS after the step minus its RSS just before:
an upper bound of the step's rise) and `held_mb` (RSS after, freed memory given back).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import sys
import time
from pathlib import Path

import pandas as pd
import psutil


def rss_mb() -> float:
    """RSS once freed memory is handed back (full collection, pyarrow's pool, malloc_trim)."""
    gc.collect()
    import pyarrow

    pyarrow.default_memory_pool().release_unused()
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    return psutil.Process().memory_info().rss / 2**20


def peak_mb() -> float:
    """This process image's peak RSS (VmHWM). Not ru_maxrss: on Linux an exec'ed child's
    ru_maxrss starts at its parent's RSS at fork time (a 2 GB pytest worker made a 2 GB
    "peak" of a parse that used 2 MB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024  # kB
    raise RuntimeError("no VmHWM in /proc/self/status")


def main(path: str, mode: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lib.uploads.predictions import PredictionsError, parse_predictions

    tasks = pd.DataFrame({"split": ["internal"] * 2, "task_id": ["fam_1", "fam_2"]})
    data = Path(path).read_bytes()
    parse_predictions(b"task_id,outcome\nfam_1,1\n", "warm.csv", tasks)  # first allocations
    before = rss_mb()
    with contextlib.suppress(OSError):  # reset VmHWM to the current RSS (Linux >= 4.0)
        Path("/proc/self/clear_refs").write_text("5")
    cpu = time.process_time()
    message = ""
    if mode == "parse":
        try:
            parse_predictions(data, Path(path).name, tasks)
        except PredictionsError as exc:
            message = str(exc)
    else:
        pq.read_table(pa.BufferReader(data), columns=["task_id"])
    cpu = time.process_time() - cpu
    peak = peak_mb()
    out = {
        "message": message,
        "peak_rise_mb": peak - before,
        "held_mb": rss_mb() - before,
        "cpu_s": cpu,
        "file_kb": len(data) / 1024,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

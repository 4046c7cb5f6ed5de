"""A rejected upload's memory is released, and a closed session's uploads are freed.

Measured in a fresh process (`tests/upload_memory_probe.py`): RSS is process-wide, and the
test process holds other tests' data. The control keeps the exception in session state as
the old callback did (its traceback held the parser's frames): the same measure then sees
tens of megabytes held, so it can fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FEW_MB = 24
"""Allocator noise: RSS after the same rejected upload measured +2.8, +14.8 and +19.6 MB
on a loaded machine (freed small objects stay in the allocator's arenas)."""


def test_rejected_upload_memory_is_released_and_closed_sessions_are_freed(
    mirror_dir: Path,
) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "tests.upload_memory_probe", str(mirror_dir)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["rejected"], out  # message + dropped table, no exception object
    assert out["n_dropped"] == 50_000 and out["kept_dropped_rows"] == 1_000
    assert out["after_rejection"] - out["before"] < FEW_MB, out
    assert out["after_next_upload"] - out["before"] < FEW_MB, out
    kept = out["control_exception_kept"] - out["before"]
    # the control must stand out of the noise (38-64 MB held on 3.11 and 3.12): the test can fail
    assert kept > FEW_MB and kept > 2 * (out["after_rejection"] - out["before"]), out
    assert out["n_uploaded_rows"] > 0 and out["freed_after_close"], out

"""A rejected upload's memory is released, and a closed session's uploads are freed.

Measured in a fresh process (`tests/helpers/upload_memory_probe.py`): RSS is process-wide, and the
test process holds other tests' data. Each figure is the median of 7 repetitions, each
paired with the RSS right before its own step. RSS is read after `gc.collect()`, pyarrow's
pool releasing unused memory and `malloc_trim(0)` (freed memory handed back, so what is
left is what is held). The control keeps the exception in session state as the old
callback did (its traceback held the parser's frames): the same measure then sees tens of
megabytes held, so the test can fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FEW_MB = 8
"""What "back within a few MB" allows: medians measured +0.5 to +2.4 MB after the
rejection of a 9 MB file (single repetitions -4 to +7, one +20 once per run that the median
drops), the control +42 to +47 MB. A bound of 6 MB with one shared baseline failed CI once
at +6.4 (that baseline drifted -10 to +6 MB run to run)."""


def test_rejected_upload_memory_is_released_and_closed_sessions_are_freed(
    mirror_dir: Path,
) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "tests.helpers.upload_memory_probe", str(mirror_dir)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["rejected"], out  # message + dropped table, no exception object
    assert out["n_dropped"] == 50_000 and out["kept_dropped_rows"] == 1_000
    assert out["held_after_rejection"] < FEW_MB, out
    assert out["held_after_next_upload"] < FEW_MB, out
    # the control (the old behaviour) must fail the same bound, by far: the test can fail
    assert out["held_control_exception_kept"] > 3 * FEW_MB, out
    assert out["n_uploaded_rows"] > 0 and out["freed_after_close"], out

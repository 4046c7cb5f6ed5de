"""The memory trimmer (`ui.state.start_memory_trimmer`): one daemon thread per process
that hands freed memory back while no script runs (closed tabs run no code)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers.browser import ROOT

PROBE = """
import json, threading, time
import ui.state as state
calls = []
state.give_back_memory = lambda: calls.append(time.monotonic())
state.start_memory_trimmer(every=0.05)
state.start_memory_trimmer(every=0.05)  # a second load: still one thread
time.sleep(0.6)
names = [t.name for t in threading.enumerate() if t.name == "cuavb-memory-trim"]
daemon = all(t.daemon for t in threading.enumerate() if t.name == "cuavb-memory-trim")
print(json.dumps({"threads": len(names), "daemon": daemon, "calls": len(calls)}))
"""


def test_one_daemon_thread_trims_again_and_again() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["threads"] == 1 and out["daemon"]
    assert out["calls"] >= 3  # every 0.05 s for 0.6 s, however busy the machine

"""The instrumented app server: `python -m bench.run --serve` times every script run.

Part of `python -m bench.run` (see its docstring).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.common import ROOT, proc_status

# --------------------------------------------------------------------------- instrumented server


def serve(app: str, log_path: str, flags: list[str]) -> None:
    """`streamlit run APP FLAGS` with every script run timed into LOG_PATH (JSON lines).

    The patch wraps `ScriptRunner._run_script`, which handles one rerun request (widget
    callbacks included, fragment-only when the request names fragments). `cpu` is the
    script thread's CPU time, which other processes on a busy machine do not inflate.
    `post_*` is the part spent in `_on_script_finished` after the browser was told the run
    finished: media clean-up and, with `runner.postScriptGC` (the default), a full
    `gc.collect()`, which holds the GIL, so it delays serving the new image too.
    """
    from streamlit.runtime.scriptrunner import script_runner as sr

    lock = threading.Lock()
    original = sr.ScriptRunner._run_script

    profile_to = os.environ.get("BENCH_PROFILE")  # diagnosis: cProfile of fragment runs
    totals: list[Any] = []  # one pstats.Stats, summed over the fragment runs

    def run(self: Any, rerun_data: Any) -> None:
        if not (profile_to and rerun_data.fragment_id_queue):
            return original(self, rerun_data)
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        try:
            profiler.runcall(original, self, rerun_data)
        finally:
            with lock:
                if totals:
                    totals[0].add(profiler)
                else:
                    totals.append(pstats.Stats(profiler))
                totals[0].dump_stats(profile_to)

    post = threading.local()  # time in _on_script_finished (after "finished" is sent)
    original_finished = sr.ScriptRunner._on_script_finished

    def finished(self: Any, *args: Any, **kwargs: Any) -> None:
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            original_finished(self, *args, **kwargs)
        finally:
            post.wall = getattr(post, "wall", 0.0) + time.perf_counter() - t0
            post.cpu = getattr(post, "cpu", 0.0) + time.thread_time() - c0

    def timed(self: Any, rerun_data: Any) -> None:
        t0, c0 = time.perf_counter(), time.thread_time()
        post.wall = post.cpu = 0.0
        try:
            run(self, rerun_data)
        finally:
            record = {
                "end": time.time(),
                "wall": time.perf_counter() - t0,
                "cpu": time.thread_time() - c0,
                "post_wall": post.wall,
                "post_cpu": post.cpu,
                "fragment": bool(rerun_data.fragment_id_queue),
                "session": getattr(self, "_session_id", ""),
            }
            with lock, open(log_path, "a") as fh:
                fh.write(json.dumps(record) + "\n")

    sr.ScriptRunner._run_script = timed
    if os.environ.get("BENCH_PROBE"):  # diagnosis: where the memory is (bench.memory_probe)
        from bench import memory_probe

        memory_probe.start(os.environ["BENCH_PROBE"])
    sr.ScriptRunner._on_script_finished = finished
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", app, *flags]
    cli.main()


def app_env(folder: Path, cache: Path) -> dict[str, str]:
    """The environment of an app server on a mirror folder, as a visitor meets it: offline,
    its own cache folder, no progress bars in the log, errors caught by the page (not
    raised as the tests' CUAVB_RAISE_ERRORS asks)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CUAVB_DATA": str(folder)}
    env |= {"CUAVB_CACHE_DIR": str(cache), "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"}
    env.pop("CUAVB_RAISE_ERRORS", None)
    return env


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """An instrumented `streamlit run` on a free loopback port."""

    def __init__(self, app: str, env: dict[str, str], workdir: Path, name: str) -> None:
        self.app, self.env, self.name = app, env, name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / f"{name}-runs.jsonl"
        self.out = workdir / f"{name}-server.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float) -> None:
        flags = [
            "--server.port",
            str(self.port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
        ]
        flags += os.environ.get("BENCH_STREAMLIT_FLAGS", "").split()  # experiments
        cmd = [sys.executable, "-m", "bench.run", "--serve", self.app, str(self.log), *flags]
        with self.out.open("w") as out:
            self.proc = subprocess.Popen(
                cmd, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=1) as r:
                    if r.read() == b"ok":
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} server did not start: {self.out.read_text()}")
            time.sleep(0.05)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def memory(self) -> dict[str, float]:
        return proc_status(self.pid)

    def runs(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

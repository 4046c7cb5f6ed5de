"""Cold start from the Hub (served locally, throttled), ours vs the old snapshot path.

`python -m bench.hub_cold [--data DIR] [--mbps 50]` (DIR: a mirror, by default `data/full`
of the repository) runs, each on a fresh server process with empty caches:
- ours, default source (no CUAVB_DATA), HF_ENDPOINT at `tools.local_hub` throttled to
  `--mbps` MB/s for all connections together: bytes and requests before the first page,
  time from process start to the Home page rendered in chromium, then a Trajectory deep
  link: time to its first screenshot shown (cold), again in a new tab (cached); peak RSS
  of the server process tree (psutil, sampled every 50 ms) over the whole visit;
- baseline: `bench/hub_baseline_app.py` (snapshot_download + load_dataset), same Hub;
- ours on the local folder (`CUAVB_DATA=<data>`): time to the first page and peak RSS.
Prints one JSON object and a Markdown table; raw output goes to bench/out/hub_cold.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import pyarrow.parquet as pq

from tools.local_hub import Hub, serving

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
OM2W = "fara7b_om2w_browserbase"


class PeakRss:
    """Sample the RSS of a process and its children every 50 ms in a thread."""

    def __init__(self, pid: int) -> None:
        self.proc = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                procs = [self.proc, *self.proc.children(recursive=True)]
                self.peak = max(self.peak, sum(p.memory_info().rss for p in procs))
            except psutil.Error:
                pass
            time.sleep(0.05)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak / 1e6


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def app_server(script: str, env: dict[str, str]):
    """A streamlit server; yields (url, pid, start time)."""
    port = free_port()
    started = time.monotonic()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            script,
            "--server.port",
            str(port),
            "--server.headless",
            "true",
            "--server.address",
            "127.0.0.1",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"http://127.0.0.1:{port}", proc.pid, started
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


def wait_page(page: Any, url: str, timeout_s: float = 600) -> None:
    """Load `url` (retrying while the server starts) and wait until the script is idle."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            page.goto(url, timeout=5_000)
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(
        state="attached", timeout=timeout_s * 1000
    )


def first_page(page: Any, url: str, heading: str) -> None:
    wait_page(page, url)
    page.get_by_role("heading", name=heading).first.wait_for(timeout=600_000)


def shot_time(browser: Any, url: str) -> float:
    """Seconds from opening a deep link to its screenshot loaded in the page."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    began = time.monotonic()
    page.goto(url)
    page.wait_for_function(
        "() => { for (const e of document.querySelectorAll('*')) {"  # the stepper's shadow root
        " const i = e.shadowRoot && e.shadowRoot.querySelector('img.shotimg');"
        " if (i) return i.complete && i.naturalWidth > 0; } return false; }",
        timeout=600_000,
    )
    elapsed = time.monotonic() - began
    context.close()
    return elapsed


def env_for(cache: Path, hub_url: str | None, data: str = "") -> dict[str, str]:
    env = {
        **os.environ,
        "HF_HOME": str(cache / "hf"),
        "CUAVB_CACHE_DIR": str(cache / "cuavb"),
        "HF_HUB_DISABLE_XET": "1",
        "CUAVB_DEMO_DIR": str(cache / "demo"),
        "CUAVB_DATA": data,
        "HF_HUB_OFFLINE": "1" if hub_url is None else "0",
    }
    env.pop("CUAVB_RAISE_ERRORS", None)
    if hub_url:
        env["HF_ENDPOINT"] = hub_url
    return env


def a_task(data: Path) -> tuple[str, int]:
    """An om2w task in the middle of the first shard, and its row."""
    shard = sorted((data / "trajectories").glob(f"{OM2W}-*.parquet"))[0]
    ids = pq.read_table(shard, columns=["task_id"]).column("task_id").to_pylist()
    return ids[len(ids) // 2], len(ids) // 2


def traffic(hub: Hub, since: int) -> dict[str, Any]:
    entries = [e for e in hub.log[since:] if e.path != "/api/agent-harnesses"]
    return {"requests": len(entries), "bytes": sum(max(e.bytes_sent, 0) for e in entries)}


def run_hub(browser: Any, hub: Hub, hub_url: str, data: Path, baseline: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="hubcold-") as tmp:
        script = "bench/hub_baseline_app.py" if baseline else "app.py"
        heading = (
            "CUAVerifierBench explorer (baseline)" if baseline else "CUAVerifierBench explorer"
        )
        mark = len(hub.log)
        with app_server(script, env_for(Path(tmp), hub_url)) as (url, pid, started):
            rss = PeakRss(pid)
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            first_page(page, url, heading)
            out["first_page_s"] = round(time.monotonic() - started, 2)
            out["before_first_page"] = traffic(hub, mark)
            out["demo_shown"] = page.get_by_text("Synthetic demo data").count() > 0
            context.close()
            if not baseline:
                task, _ = a_task(data)
                link = f"{url}/Trajectory?split={OM2W}&task={task}&step=1"
                mark = len(hub.log)
                out["trajectory_cold_s"] = round(shot_time(browser, link), 2)
                out["trajectory_cold_traffic"] = traffic(hub, mark)
                mark = len(hub.log)
                out["trajectory_cached_s"] = round(shot_time(browser, link), 2)
                out["trajectory_cached_traffic"] = traffic(hub, mark)
            out["peak_rss_mb"] = round(rss.stop(), 1)
    return out


LOAD_CODE = """
import time, resource
t0 = time.monotonic()
from lib.data.load import load_bench
t1 = time.monotonic()
bench = load_bench()
t2 = time.monotonic()
print(f"RESULT {t1 - t0:.2f} {t2 - t1:.2f} {bench.source.kind} "
      f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}")
"""


def data_load(hub: Hub, hub_url: str | None, data: str = "") -> dict[str, Any]:
    """`load_bench()` alone in a fresh process with empty caches: imports, load, peak RSS."""
    with tempfile.TemporaryDirectory(prefix="hubcold-") as tmp:
        mark = len(hub.log)
        run = subprocess.run(
            [sys.executable, "-c", LOAD_CODE],
            cwd=ROOT,
            env=env_for(Path(tmp), hub_url, data),
            capture_output=True,
            text=True,
            timeout=600,
        )
        line = [x for x in run.stdout.splitlines() if x.startswith("RESULT ")]
        if not line:
            return {"error": run.stderr[-500:]}
        imports, load, kind, rss = line[-1].split()[1:]
        out = {"imports_s": float(imports), "load_s": float(load), "kind": kind}
        out["peak_rss_mb"] = float(rss)
        if hub_url:
            out["traffic"] = traffic(hub, mark)
        return out


def run_local(browser: Any, data: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="hubcold-") as tmp:
        return _run_local(browser, data, Path(tmp))


def _run_local(browser: Any, data: Path, tmp: Path) -> dict[str, Any]:
    with app_server("app.py", env_for(tmp, None, str(data))) as (url, pid, started):
        rss = PeakRss(pid)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        first_page(page, url, "CUAVerifierBench explorer")
        out: dict[str, Any] = {"first_page_s": round(time.monotonic() - started, 2)}
        context.close()
        task, _ = a_task(data)
        link = f"{url}/Trajectory?split={OM2W}&task={task}&step=1"
        out["trajectory_s"] = round(shot_time(browser, link), 2)
        out["peak_rss_mb"] = round(rss.stop(), 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data" / "full")
    parser.add_argument("--mbps", type=float, default=50.0)
    parser.add_argument("--skip-baseline", action="store_true")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    result: dict[str, Any] = {
        "data": str(args.data),
        "mbps": args.mbps,
        "data_mb": round(sum(p.stat().st_size for p in args.data.rglob("*.parquet")) / 1e6, 1),
        "load_average": os.getloadavg(),
    }
    hub = Hub(args.data, throttle_bps=args.mbps * 1e6)
    with serving(hub) as hub_url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        result["load_bench_hub"] = data_load(hub, hub_url)
        print(json.dumps(result["load_bench_hub"]), flush=True)
        result["load_bench_local"] = data_load(hub, None, str(args.data))
        print(json.dumps(result["load_bench_local"]), flush=True)
        result["ours_hub"] = run_hub(browser, hub, hub_url, args.data, baseline=False)
        print(json.dumps(result["ours_hub"]), flush=True)
        result["ours_local"] = run_local(browser, args.data)
        print(json.dumps(result["ours_local"]), flush=True)
        if not args.skip_baseline:
            result["baseline_hub"] = run_hub(browser, hub, hub_url, args.data, baseline=True)
            print(json.dumps(result["baseline_hub"]), flush=True)
        browser.close()
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "hub_cold.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

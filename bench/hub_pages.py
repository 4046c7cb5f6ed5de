"""The screenshot data path against a throttled local Hub: bytes and time per trajectory open.

`python -m bench.hub_pages [--data DIR] [--mbps 50] [--rows 6]` serves DIR (a mirror,
by default `data/full` of the repository, in the `current` layout) with `tools.local_hub`
throttled to `--mbps` MB/s for all connections together, and in a fresh process with an
empty cache (HF_ENDPOINT at that server):
- loads the light data (bytes, time);
- cold opens of `--rows` trajectories per split (the largest ones and spread rows):
  bytes fetched from the request log, data-path time (fetch + decode, `ShotStore.wait`
  then `pngs`), the fetch path taken;
- a cached open of each in a NEW store (no memory copy: disk entry read + check), time;
- the next trajectory after `prefetch` (open row r, prefetch r+1, then open r+1): bytes;
- peak RSS (psutil, sampled every 10 ms) of another fresh process that loads and opens
  3 different trajectories concurrently (3 sessions).
Prints JSON and a Markdown table; raw output goes to bench/out/hub_pages.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tools.local_hub import Hub, serving

ROOT = Path(__file__).resolve().parents[1]

CLIENT = r"""
import json, sys, threading, time, urllib.request
import psutil
endpoint, mode, plan = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
PEAK = [0]
def sample():  # ru_maxrss would include the parent's peak (kept across exec)
    me = psutil.Process()
    while True:
        PEAK[0] = max(PEAK[0], me.memory_info().rss)
        time.sleep(0.01)
threading.Thread(target=sample, daemon=True).start()
from lib.data.load import load_bench
from lib.data.shots import ShotStore

def log_len():
    return len(json.loads(urllib.request.urlopen(endpoint + "/_log").read()))

def log_bytes(since):
    log = json.loads(urllib.request.urlopen(endpoint + "/_log").read())[since:]
    return sum(max(e["bytes_sent"], 0) for e in log if e["path"] != "/api/agent-harnesses")

out = {}
t0 = time.perf_counter(); mark = log_len()
bench = load_bench()
out["light"] = {"s": round(time.perf_counter() - t0, 2), "bytes": log_bytes(mark)}
store = bench.shots
if mode == "opens":
    opens = []
    for split, row in plan:
        mark = log_len(); t = time.perf_counter()
        job = store.wait(split, row)
        images = store.pngs(split, row)
        cold = time.perf_counter() - t
        fresh = ShotStore(store.locations, store.source, store.dir.name)
        t = time.perf_counter()
        again = fresh.pngs(split, row, fetch=False)
        cached = time.perf_counter() - t
        opens.append({"split": split, "row": row, "bytes": log_bytes(mark),
                      "cold_s": round(cold, 3), "cached_ms": round(cached * 1000, 1),
                      "n": len(images or []),
                      "png_mb": round(sum(len(b or b"") for b in images or []) / 1e6, 2),
                      "same": again == images,
                      "path": (job.path if job else store.fetch_path(split, row))})
    out["opens"] = opens
    split, row = plan[0][0], plan[0][1] + 1
    store.prefetch(split, [row + 1])
    deadline = time.monotonic() + 120
    while not store.ready(split, row + 1) and time.monotonic() < deadline:
        time.sleep(0.02)
    mark = log_len(); t = time.perf_counter()
    store.pngs(split, row + 1)
    out["prefetched_next"] = {"split": split, "row": row + 1, "bytes": log_bytes(mark),
                              "s": round(time.perf_counter() - t, 3)}
else:
    t = time.perf_counter()
    threads = [threading.Thread(target=bench.screenshot_png, args=(s, r, 0)) for s, r in plan]
    for th in threads: th.start()
    for th in threads: th.join()
    out["three_sessions_s"] = round(time.perf_counter() - t, 2)
time.sleep(0.05)
out["peak_rss_mb"] = round(PEAK[0] / 1e6, 1)
print("RESULT " + json.dumps(out))
"""


def _env(cache: Path, url: str) -> dict[str, str]:
    env = {
        **os.environ,
        "HF_ENDPOINT": url,
        "HF_HUB_OFFLINE": "0",
        "HF_HOME": str(cache / "hf"),
        "CUAVB_CACHE_DIR": str(cache / "cuavb"),
        "HF_HUB_DISABLE_XET": "1",
        "CUAVB_DATA": "",
    }
    env.pop("CUAVB_RAISE_ERRORS", None)
    return env


def _client(url: str, mode: str, plan: list) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="hubpages-") as tmp:
        run = subprocess.run(
            [sys.executable, "-c", CLIENT, url, mode, json.dumps(plan)],
            cwd=ROOT,
            env=_env(Path(tmp), url),
            capture_output=True,
            text=True,
            timeout=1800,
        )
    line = [x for x in run.stdout.splitlines() if x.startswith("RESULT ")]
    if not line:
        return {"error": run.stderr[-2000:]}
    return json.loads(line[-1][len("RESULT ") :])


def _plan(data: Path, rows: int) -> list[list]:
    """Per split: the trajectories with the most PNG bytes, and rows spread over the split."""
    import pyarrow.parquet as pq

    plan = []
    for split in ("fara7b_om2w_browserbase", "internal"):
        sizes: list[int] = []
        for shard in sorted((data / "trajectories").glob(f"{split}-*.parquet")):
            meta = pq.ParquetFile(shard).metadata
            del meta
            column = pq.read_table(shard, columns=["screenshots"]).column(0)
            sizes += [
                sum(len(i["bytes"].as_py() or b"") for i in c.values) if c.is_valid else 0
                for c in column
            ]
        biggest = sorted(range(len(sizes)), key=lambda i: -sizes[i])[: rows // 2]
        spread = [i for i in range(0, len(sizes), max(len(sizes) // rows, 1)) if sizes[i]]
        chosen = list(dict.fromkeys(biggest + spread))[:rows]
        plan += [[split, i] for i in chosen]
    return plan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data" / "full")
    parser.add_argument("--mbps", type=float, default=50.0)
    parser.add_argument("--rows", type=int, default=6)
    args = parser.parse_args()
    plan = _plan(args.data, args.rows)
    result: dict[str, Any] = {"data": str(args.data), "mbps": args.mbps}
    result["load_before"] = os.getloadavg()
    hub = Hub(args.data, throttle_bps=args.mbps * 1e6)
    with serving(hub) as url:
        result["opens"] = _client(url, "opens", plan)
        three = [plan[0], plan[1], plan[len(plan) // 2]]
        result["three_sessions"] = _client(url, "three", three)
    result["load_after"] = os.getloadavg()
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "hub_pages.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    opens = result["opens"].get("opens", [])
    if opens:
        print("\n| split | row | PNGs | PNG MB | fetched | cold data path s | cached ms | path |")
        print("|---|---|---|---|---|---|---|---|")
        for o in opens:
            print(
                f"| {o['split'][:8]} | {o['row']} | {o['n']} | {o['png_mb']} | "
                f"{o['bytes'] / 1e6:.2f} MB | {o['cold_s']} | {o['cached_ms']} | {o['path'][:60]} |"
            )


if __name__ == "__main__":
    main()

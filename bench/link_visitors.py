"""`python -m bench.link_visitors [--data MIRROR]`: two visitors open a 760-verifier link.

Issue 26: chaining "Share these results" gave a `?mine=` link to a stored file with 760
verifiers (197,600 rows); two visitors who opened it on Judges took the server to 2,084 MB
and their tabs to 1.0-1.3 GB each. A link now loads at most the per-session verifier cap
(`lib.uploads.shared.load_capped`). Here: one fresh instrumented server
(`bench.server.Server`) whose shared-upload store holds such a file (planted as an older
app stored it, before sharing was capped), then two chromium visitors at once open
Judges and then Agreement through the link. Prints the server's CPU seconds and peak RSS
while they do, and whether each page said how many verifiers were left out.
Targets: each page within 5 s of server CPU per visitor, server peak under 700 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import psutil

from bench.browse import launch_browser, new_context, wait_idle
from bench.common import FULL, OUT_DIR, ROOT
from bench.server import Server, app_env

PEAK_MB = 700
CPU_PER_PAGE_S = 5.0
PAGES = ("Judges", "Agreement")


def _plant(folder: Path, cache: Path) -> str:
    from tests.app.test_shared_link_page import _chained_link

    sample = pd.read_csv(folder / "sample_predictions.csv", dtype=str)
    tasks = sample[["split", "task_id"]].drop_duplicates()
    return _chained_link(tasks, cache / "shared-uploads")


async def _open(browser: Any, url: str, s: Any) -> bool:
    context = await new_context(browser, s)
    page = await context.new_page()
    await page.goto(url, wait_until="commit")
    await page.get_by_text("left out").first.wait_for(timeout=s.timeout_s * 1000)
    await wait_idle(page, s.timeout_s)
    told = "760" in await page.locator("[data-testid=stMain]").inner_text()
    await context.close()
    return told


async def run(folder: Path) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    s = replace(FULL, timeout_s=300)
    work = Path(tempfile.mkdtemp(prefix="cuavb-link-"))
    cache = work / "cache"
    digest = _plant(folder, cache)
    env = app_env(folder, cache)
    out: dict[str, Any] = {"load_before": os.getloadavg(), "pages": {}}
    try:
        async with async_playwright() as p:
            browser = await launch_browser(p)
            server = Server("app.py", env, work, "link")
            try:
                server.start(s.timeout_s)
                warm = await new_context(browser, s)  # the data loaded once, as on a warm server
                page = await warm.new_page()
                await page.goto(server.url, wait_until="commit")
                idle = "[data-testid=stApp][data-test-script-state=notRunning]"
                await page.locator(idle).wait_for(timeout=s.timeout_s * 1000)
                await wait_idle(page, s.timeout_s)
                await warm.close()
                proc = psutil.Process(server.pid)
                out["baseline_mb"] = server.memory()["VmRSS"]
                peak = out["baseline_mb"]
                for name in PAGES:
                    url = f"{server.url}/{name}?mine={digest}"
                    cpu0 = sum(proc.cpu_times()[:2])
                    tasks = [asyncio.create_task(_open(browser, url, s)) for _ in range(2)]
                    while not all(t.done() for t in tasks):
                        peak = max(peak, server.memory()["VmRSS"])
                        await asyncio.sleep(0.25)
                    told = [t.result() for t in tasks]
                    cpu = sum(proc.cpu_times()[:2]) - cpu0
                    out["pages"][name] = {"cpu_s_two_visitors": cpu, "told_760": told}
                out["peak_mb"] = max(peak, server.memory()["VmHWM"])
                log = (work / "link-server.log").read_text(errors="replace")
                out["server_tracebacks"] = log.count("Traceback")
            finally:
                server.stop()
                await browser.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out["load_after"] = os.getloadavg()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=OUT_DIR / "link_mirror", help="mirror")
    args = parser.parse_args(argv)
    if not (args.data / "README.md").exists():
        import subprocess

        subprocess.run([sys.executable, "-m", "lib.mirror", str(args.data)], cwd=ROOT, check=True)
    t0 = time.perf_counter()
    out = asyncio.run(run(args.data.resolve()))
    (OUT_DIR / "link_visitors.json").write_text(json.dumps(out, indent=1, default=str))
    ok = out["peak_mb"] < PEAK_MB
    for name, row in out["pages"].items():
        per_visitor = row["cpu_s_two_visitors"] / 2
        ok = ok and per_visitor <= CPU_PER_PAGE_S and all(row["told_760"])
        print(
            f"{name}: two visitors, server CPU {row['cpu_s_two_visitors']:.1f} s "
            f"({per_visitor:.1f} s each); told how many were left out: {row['told_760']}"
        )
    print(
        f"server RSS baseline {out['baseline_mb']:.0f} MB, peak {out['peak_mb']:.0f} MB "
        f"(target < {PEAK_MB}); tracebacks {out['server_tracebacks']}; load "
        f"{out['load_before'][0]:.1f} -> {out['load_after'][0]:.1f} (2 cores); "
        f"{time.perf_counter() - t0:.0f} s"
    )
    print("targets met" if ok else "over target")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

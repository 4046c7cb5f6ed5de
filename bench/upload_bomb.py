"""`python -m bench.upload_bomb [--data MIRROR]`: the server's memory around one upload bomb.

Issue 26: a 39 KB parquet file whose footer declares small column chunks while its pages
hold 12 x 100 MB of zstd-compressed strings took a server from 229 to 2,641 MB, still
2,640 MB 300 s after the tab closed. Here: one fresh instrumented server
(`bench.server.Server`), one chromium session that opens Your verifier and uploads the
bomb (`tests.helpers.hostile_uploads.parquet_lying_footer`), which must be refused with the page's
message. The server's RSS is sampled every 0.5 s. Prints the baseline (the page open, before
the upload), the peak while it is handled, and the RSS `--after` seconds after the tab
closed. Targets: peak <= baseline + 100 MB, and <= baseline + 50 MB 60 s after the close.
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

from bench.browse import launch_browser, new_context, rendered, visit, wait_idle
from bench.common import FULL, OUT_DIR, ROOT
from bench.server import Server, app_env

PEAK_OVER_MB = 100
AFTER_OVER_MB = 50


async def run(folder: Path, after_s: float) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    from tests.helpers import hostile_uploads

    s = replace(FULL, timeout_s=300)
    work = Path(tempfile.mkdtemp(prefix="cuavb-bomb-"))
    bomb = work / "lying_footer.parquet"
    bomb.write_bytes(hostile_uploads.parquet_lying_footer())
    env = app_env(folder, work / "cache")
    out: dict[str, Any] = {"load_before": os.getloadavg(), "file_kb": bomb.stat().st_size / 1024}
    samples: list[tuple[float, float]] = []
    t0 = time.perf_counter()
    try:
        async with async_playwright() as p:
            browser = await launch_browser(p)
            server = Server("app.py", env, work, "bomb")
            try:
                server.start(s.timeout_s)
                stop = asyncio.Event()

                async def sample() -> None:
                    while not stop.is_set():
                        samples.append((time.perf_counter() - t0, server.memory()["VmRSS"]))
                        await asyncio.sleep(0.5)

                sampler = asyncio.create_task(sample())
                context = await new_context(browser, s)
                page = await context.new_page()
                await page.goto(server.url, wait_until="commit")
                await rendered(page, "", s.timeout_s)
                await visit(page, "Your verifier", s.timeout_s)
                await wait_idle(page, s.timeout_s)
                await asyncio.sleep(3)
                out["baseline_mb"] = server.memory()["VmRSS"]
                upload_at = time.perf_counter() - t0
                field = page.locator("[data-testid='stFileUploaderDropzoneInput']").first
                await field.set_input_files(str(bomb))
                await page.get_by_text("Nothing was loaded").first.wait_for(
                    timeout=s.timeout_s * 1000
                )
                out["refused"] = True
                out["message"] = (await page.get_by_text("is refused").first.inner_text())[:400]
                await wait_idle(page, s.timeout_s)
                await context.close()
                closed = time.perf_counter() - t0
                while time.perf_counter() - t0 < closed + after_s:
                    await asyncio.sleep(1.0)
                stop.set()
                await sampler
                during = [m for t, m in samples if upload_at <= t <= closed]
                out["peak_mb"] = max(during) if during else None
                out["after_mb"] = samples[-1][1]
                out["after_s"] = after_s
                out["server_tracebacks"] = (
                    (work / "bomb-server.log").read_text(errors="replace").count("Traceback")
                )
            finally:
                server.stop()
                await browser.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out["rss_samples"] = samples[::4]
    out["load_after"] = os.getloadavg()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=OUT_DIR / "scale" / "x1", help="mirror")
    parser.add_argument("--after", type=float, default=60, help="seconds after the tab closed")
    args = parser.parse_args(argv)
    if not (args.data / "README.md").exists():
        import subprocess

        subprocess.run([sys.executable, "-m", "lib.mirror", str(args.data)], cwd=ROOT, check=True)
    out = asyncio.run(run(args.data.resolve(), args.after))
    (OUT_DIR / "upload_bomb.json").write_text(json.dumps(out, indent=1, default=str))
    base = out["baseline_mb"]
    print(
        f"{out['file_kb']:.0f} KB lying-footer parquet: refused {out.get('refused', False)}; "
        f"server RSS baseline {base:.0f} MB, peak while handled {out['peak_mb']:.0f} MB "
        f"(+{out['peak_mb'] - base:.0f}), {out['after_s']:.0f} s after the tab closed "
        f"{out['after_mb']:.0f} MB (+{out['after_mb'] - base:.0f}); tracebacks in the log: "
        f"{out['server_tracebacks']}; load {out['load_before'][0]:.1f} -> "
        f"{out['load_after'][0]:.1f} (2 cores)"
    )
    ok = (
        out.get("refused")
        and out["peak_mb"] - base <= PEAK_OVER_MB
        and out["after_mb"] - base <= AFTER_OVER_MB
    )
    print("targets met" if ok else "over target")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

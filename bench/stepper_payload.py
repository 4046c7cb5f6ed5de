"""`python -m bench.stepper_payload`: what a 2,000-step trajectory costs the browser and
the server (issue 32).

Builds the small generated mirror, gives one om2w trajectory a log of `--steps` actions
whose every line carries `--chars` characters of thoughts and as many of another argument
(the old per-step caps: 20,000 each), then:

1. in process: the stepper's payload (`lib.viewer.stepper_data`) as Streamlit encodes it
   (`json.dumps`), and the "All steps" table's text;
2. in chromium against one `streamlit run app.py`: the bytes the server sends over the
   websocket while the Trajectory page opens that trajectory and steps 5 times; the
   server's RSS (psutil) before (after a warm-up tab on the home page was closed and one
   memory-trim period passed; then again after a second warm-up tab opened a normal
   trajectory and closed: the viewer's one-time costs), at its peak, and every 30 s up to
   `--after` seconds after the tab closed.

Targets: <= 20 MB to the browser, RSS within +100 MB of the baseline after the tab closed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import psutil

from bench.common import CHROMIUM, MB
from bench.server import Server

OM2W = "fara7b_om2w_browserbase"


def long_log(steps: int, chars: int) -> str:
    """`steps` om2w action lines, each with `chars` of thoughts and of a state description."""
    lines = []
    for k in range(steps):
        tool = ("left_click", "scroll", "type")[k % 3]
        args = {"action": tool, "coordinate": [100 + k % 1000, 200 + k % 600]}
        args |= {"pixels": -300} if tool == "scroll" else {"text": f"typed {k}"}
        args["thoughts"] = (f"step {k}: " + "I consider the page carefully. " * chars)[:chars]
        args["state_description"] = ("The page shows a list of results. " * chars)[:chars]
        event = {"timestamp": "2025-11-10T13:15:12", "type": "WebSurferEvent"}
        event |= {"message": f"did {tool}", "url": "", "action": tool, "arguments": args}
        lines.append(json.dumps(event))
    return "\n".join(lines)


def make_mirror(work: Path, steps: int, chars: int) -> tuple[Path, str, str]:
    """The mirror, the long trajectory's task id and a normal one's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lib import mirror

    base = mirror.write_mirror(work / "base", full=False, seed=0)
    folder = work / "long"
    shutil.copytree(base, folder)
    for path in sorted((folder / "trajectories").glob(f"{OM2W}-*.parquet")):
        table = pq.read_table(path)
        counts = [len(s or []) for s in table.column("screenshots").to_pylist()]
        row = next(i for i, c in enumerate(counts) if c >= 5)
        logs = table.column("web_surfer_log").to_pylist()
        logs[row] = long_log(steps, chars)
        index = table.schema.get_field_index("web_surfer_log")
        table = table.set_column(index, table.schema.field(index), pa.array(logs, pa.string()))
        pq.write_table(table, path)
        other = next(i for i, c in enumerate(counts) if c >= 2 and i != row)
        return folder, str(table.column("task_id")[row]), str(table.column("task_id")[other])
    raise RuntimeError("no om2w trajectory with 5 screenshots")


def payload_figures(folder: Path, task_id: str) -> dict[str, float]:
    from lib.data.load import load_bench
    from lib.data.source import resolve
    from lib.table.trajlog import steps_table
    from lib.viewer import load_trajectory, stepper_data
    from ui.viewer.steps import TABLE_TEXT_COLUMNS, table_cell_max

    bench = load_bench(resolve(str(folder)))
    traj = load_trajectory(bench.task(task_id))
    shots = [f"/media/{'0' * 56}.png"] * traj.n_screenshots
    started = time.perf_counter()
    data = stepper_data(traj, 0, shots, [None] * len(shots))
    built = time.perf_counter() - started
    table = steps_table(traj.parsed)
    cell = table_cell_max(len(table))
    table_chars = sum(min(int(n), cell) for c in TABLE_TEXT_COLUMNS for n in table[c].str.len())
    return {
        "steps": traj.n_positions,
        "payload_mb": len(json.dumps(data)) / 1e6,
        "payload_build_s": built,
        "table_text_mb": table_chars / 1e6,
        "table_text_uncut_mb": sum(int(table[c].str.len().sum()) for c in TABLE_TEXT_COLUMNS) / 1e6,
    }


def rss_mb(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / MB


def browser_figures(
    folder: Path, task_id: str, normal: str, work: Path, after: float
) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CUAVB_DATA": str(folder)}
    env["CUAVB_CACHE_DIR"] = str(work / "cache")
    server = Server("app.py", env, work, "payload")
    server.start(timeout=180)
    out: dict[str, float] = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=["--disable-gpu"]
            )
            warm = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = warm.new_page()
            page.set_default_timeout(180_000)
            page.goto(server.url)
            page.get_by_role("heading").first.wait_for()
            time.sleep(3)
            warm.close()
            time.sleep(35)  # one trim period (ui.state.TRIM_EVERY = 30 s)
            out["rss_baseline_home_mb"] = rss_mb(server.pid)
            # the viewer's one-time costs (its imports, the catalog of every log, caches)
            # on a normal trajectory, in another tab that then closes
            warm = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = warm.new_page()
            page.set_default_timeout(180_000)
            page.goto(f"{server.url}/Trajectory?split={OM2W}&task={normal}&step=0")
            page.locator(".stp img.shotimg").wait_for()
            time.sleep(3)
            warm.close()
            time.sleep(35)
            out["rss_baseline_mb"] = rss_mb(server.pid)

            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(180_000)
            received = [0]

            def on_socket(ws) -> None:
                def count(payload) -> None:
                    received[0] += len(payload)

                ws.on("framereceived", count)

            page.on("websocket", on_socket)
            peak = [0.0]
            page.goto(f"{server.url}/Trajectory?split={OM2W}&task={task_id}&step=0")
            page.locator(f".stp[data-task='{task_id}'] img.shotimg").wait_for()
            for _ in range(5):
                page.locator(".stp button.nav", has_text="Next").click()
                peak[0] = max(peak[0], rss_mb(server.pid))
                time.sleep(0.5)
            time.sleep(3)
            shown = "[data-testid='stException'], [data-testid='stAlertContentError']"
            errors = page.locator(shown)
            if errors.count():
                raise RuntimeError(f"the page shows an error: {errors.first.inner_text()[:300]}")
            out["ws_received_mb"] = received[0] / 1e6
            out["rss_open_mb"] = max(peak[0], rss_mb(server.pid))
            context.close()
            closed = time.monotonic()
            for mark in [*range(30, int(after), 30), after]:
                time.sleep(max(0.0, closed + mark - time.monotonic()))
                out[f"rss_{int(mark)}s_after_close_mb"] = rss_mb(server.pid)
            browser.close()
    finally:
        server.stop()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2_000)
    parser.add_argument("--chars", type=int, default=20_000)
    parser.add_argument("--after", type=float, default=60.0)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="cuavb-payload-"))
    try:
        folder, task_id, normal = make_mirror(work, args.steps, args.chars)
        figures = payload_figures(folder, task_id)
        if not args.no_browser:
            figures |= browser_figures(folder, task_id, normal, work, args.after)
        figures["load_1min"] = os.getloadavg()[0]
        width = max(len(k) for k in figures)
        for key, value in figures.items():
            print(f"{key:<{width}}  {value:,.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

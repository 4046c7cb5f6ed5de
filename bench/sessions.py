"""`python -m bench.sessions`: N concurrent browser sessions on our server, nothing else.

The load run of issue 15: one instrumented `streamlit run app.py` (the repository's
`.streamlit/config.toml` applies, e.g. `postScriptGC = false`), one warm-up session that
visits every page and steps through the viewer, then `--sessions` concurrent chromium
sessions that each open every page, upload the sample predictions and step through
trajectories (switching task every `--per-task` steps) for `--budget` seconds. It is the
`our_sessions` phase of `python -m bench.run --full` without the loader and naive-app
phases, so it can run alone on the full mirror in a few minutes.

Prints errors, the p95 server time of a step (fragment reruns, from the server's own run
log), and RSS growth per session; saves the raw result to `bench/out/sessions.json`.
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
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from bench.browse import launch_browser, our_sessions
from bench.common import FULL, FULL_DIR, OUT_DIR
from bench.server import Server


async def run(folder: Path, sessions: int, steps: int, budget_s: float, per_task: int) -> dict:
    from playwright.async_api import async_playwright

    s = replace(
        FULL, steps=steps, sessions=sessions, session_steps=steps, per_task=per_task,
        budget_s=budget_s, timeout_s=300,
    )  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="cuavb-sessions-"))
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "CUAVB_DATA": str(folder),
        "CUAVB_CACHE_DIR": str(work / "cache"),
        "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
    }
    env.pop("CUAVB_RAISE_ERRORS", None)
    csv = folder / "sample_predictions.csv"
    out: dict[str, Any] = {"settings": asdict(s), "load_before": os.getloadavg()}
    t0 = time.perf_counter()
    try:
        async with async_playwright() as p:
            browser = await launch_browser(p)
            server = Server("app.py", env, work, "ours")
            try:
                out["ours"] = await our_sessions(browser, server, s, csv if csv.exists() else None)
                log = (work / "ours-server.log").read_text(errors="replace")
                out["server_tracebacks"] = log.count("Traceback")
            finally:
                server.stop()
                await browser.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out["load_after"] = os.getloadavg()
    out["elapsed_s"] = time.perf_counter() - t0
    return out


def report(out: dict[str, Any]) -> str:
    ours = out["ours"]
    many = ours.get("many", {})
    grow = ours["mem_many"]["VmRSS"] - ours["mem_one"]["VmRSS"]
    n = many.get("sessions", 0) or 1
    lines = [
        f"sessions: {many.get('sessions')} concurrent, ok {many.get('ok')}, "
        f"errors {many.get('errors')}, server tracebacks {out.get('server_tracebacks')}",
        f"steps per session: {many.get('steps')}; uploads confirmed {many.get('uploaded')}",
        f"server step time (fragment reruns, all sessions): {many.get('server_ms')} ms; "
        f"cpu {many.get('server_cpu_ms')} ms",
        f"one session alone before: server {ours['one']['server_ms']} ms, "
        f"client {ours['one']['client_ms']} ms",
        f"RSS: start {ours['mem_start']['VmRSS']:.0f} MB, after one session "
        f"{ours['mem_one']['VmRSS']:.0f} MB, after {n} more {ours['mem_many']['VmRSS']:.0f} MB "
        f"(+{grow / n:.1f} MB per session), peak {ours['mem_peak']:.0f} MB",
        f"load average before {out['load_before']}, after {out['load_after']}; "
        f"elapsed {out['elapsed_s']:.0f} s",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=FULL_DIR, help="mirror folder")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--steps", type=int, default=300, help="Next clicks per session (max)")
    parser.add_argument("--budget", type=float, default=180, help="seconds of stepping each")
    parser.add_argument("--per-task", type=int, default=10, help="steps before a task switch")
    parser.add_argument("--json", type=Path, default=OUT_DIR / "sessions.json")
    args = parser.parse_args(argv)
    if not (args.data / "README.md").exists():
        raise SystemExit(f"{args.data} is not a mirror (no README.md)")
    out = asyncio.run(run(args.data.resolve(), args.sessions, args.steps, args.budget,
                          args.per_task))  # fmt: skip
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=1, default=str))
    print(report(out))
    return 0 if out["ours"].get("many", {}).get("ok") == args.sessions else 1


if __name__ == "__main__":
    sys.exit(main())

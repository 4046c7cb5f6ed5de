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

`--hostile H` (issue 18) runs the mixed load instead: one fresh server, then `--sessions`
concurrent sessions of which H upload every hostile file of `tests/helpers/hostile_uploads.py`
(each must be refused with the page's message) and the others browse every page, upload
the sample predictions and step through trajectories. RSS is sampled every 0.5 s; after the
sessions end (their tabs closed) it is followed for `--after` seconds. Targets: no error
for an honest session, peak RSS <= 1.2 GB, RSS under 600 MB within two minutes.
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

from bench import memory_probe
from bench.browse import launch_browser, our_sessions
from bench.common import FULL, FULL_DIR, OUT_DIR
from bench.server import Server, app_env


async def run(folder: Path, sessions: int, steps: int, budget_s: float, per_task: int) -> dict:
    from playwright.async_api import async_playwright

    s = replace(
        FULL, steps=steps, sessions=sessions, session_steps=steps, per_task=per_task,
        budget_s=budget_s, timeout_s=300,
    )  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="cuavb-sessions-"))
    env = app_env(folder, work / "cache")
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


async def hostile_session(browser: Any, url: str, s: Any, files: list[Path]) -> tuple[Any, dict]:
    """Open Your verifier and upload every hostile file; each must give the page's refusal."""
    from bench.browse import new_context, rendered, visit, wait_idle

    context = await new_context(browser, s)
    result: dict[str, Any] = {"refused": 0, "files": len(files)}
    try:
        page = await context.new_page()
        await page.goto(url, wait_until="commit")
        await rendered(page, "", s.timeout_s)
        await visit(page, "Your verifier", s.timeout_s)
        field = page.locator("[data-testid='stFileUploaderDropzoneInput']").first
        for path in files:
            await field.set_input_files(str(path))
            try:
                await page.get_by_text(path.name).first.wait_for(timeout=s.timeout_s * 1000)
                await page.get_by_text("Nothing was loaded").first.wait_for(
                    timeout=s.timeout_s * 1000
                )
                result["refused"] += 1
            except Exception as exc:  # which file, and what the wait saw (load or a miss)
                result.setdefault("not_refused", []).append(
                    f"{path.name}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
                )
            await wait_idle(page, s.timeout_s)
        result["exception_boxes"] = await page.get_by_test_id("stException").count()
    except Exception as exc:
        result["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    return context, result


async def mixed(folder: Path, sessions: int, hostile: int, budget_s: float, after_s: float) -> dict:
    """The mixed load of issue 18 (see the module docstring)."""
    from playwright.async_api import async_playwright

    from bench.browse import one_session
    from tests.helpers import hostile_uploads

    s = replace(
        FULL, steps=300, sessions=sessions, session_steps=300, per_task=10,
        budget_s=budget_s, timeout_s=300,
    )  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="cuavb-mixed-"))
    files = []
    for name, make in hostile_uploads.ALL.items():
        files.append(work / name)
        files[-1].write_bytes(make())
    env = app_env(folder, work / "cache")
    probe = work / "probe.jsonl"
    env["BENCH_PROBE"] = str(probe)
    csv = folder / "sample_predictions.csv"
    out: dict[str, Any] = {"load_before": os.getloadavg(), "sessions": sessions, "hostile": hostile}
    samples: list[tuple[float, float]] = []
    t0 = time.perf_counter()
    try:
        async with async_playwright() as p:
            browser = await launch_browser(p)
            server = Server("app.py", env, work, "mixed")
            try:
                server.start(s.timeout_s)
                out["rss_start"] = server.memory()["VmRSS"]
                out["probes"] = [await asyncio.to_thread(memory_probe.ask, probe, "start")]
                out["warm"] = await warm_up(browser, server.url, s, csv)
                await asyncio.sleep(WARM_SETTLE_S)  # the trimmer runs, as on an idle server
                out["probes"].append(await asyncio.to_thread(memory_probe.ask, probe, "warm"))
                out["rss_warm"] = server.memory()["VmRSS"]
                stop = asyncio.Event()

                async def sample() -> None:
                    while not stop.is_set():
                        samples.append((time.perf_counter() - t0, server.memory()["VmRSS"]))
                        await asyncio.sleep(0.5)

                sampler = asyncio.create_task(sample())
                jobs = [
                    hostile_session(browser, server.url, s, files)
                    if i < hostile
                    else one_session(browser, server.url, s, s.session_steps, 2 + 7 * i, csv)
                    for i in range(sessions)
                ]
                results = await asyncio.gather(*jobs)
                ended = time.perf_counter() - t0
                out["sessions_s"] = ended
                for context, _ in results:
                    await context.close()
                out["probes"].append(await asyncio.to_thread(memory_probe.ask, probe, "closed"))
                while time.perf_counter() - t0 < ended + after_s:
                    await asyncio.sleep(1.0)
                out["probes"].append(await asyncio.to_thread(memory_probe.ask, probe, "after"))
                stop.set()
                await sampler
                honest = [r for _, r in results[hostile:]]
                bad = [r for _, r in results[:hostile]]
                out["honest_errors"] = [r["error"] for r in honest if "error" in r]
                out["honest_uploaded"] = sum(bool(r.get("uploaded")) for r in honest)
                out["honest_steps"] = [r.get("steps", 0) for r in honest]
                out["hostile"] = bad
                out["peak_mb"] = server.memory()["VmHWM"]
                after = [(t - ended, m) for t, m in samples if t >= ended]
                below = [t for t, m in after if m < 600]
                out["rss_at_end"] = after[0][1] if after else None
                out["rss_final"] = samples[-1][1] if samples else None
                out["seconds_to_600mb"] = below[0] if below else None
                log = (work / "mixed-server.log").read_text(errors="replace")
                out["server_tracebacks"] = log.count("Traceback")
                out["server_errors"] = traceback_ends(log)
            finally:
                server.stop()
                await browser.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out["rss_samples"] = samples[::4]
    out["load_after"] = os.getloadavg()
    return out


WARM_SETTLE_S = 60.0
"""Seconds the server idles after the warm-up visitor closed its tab (two trimmer rounds)."""


async def warm_up(browser: Any, url: str, s: Any, csv: Path | None) -> dict[str, Any]:
    """The baseline visitor: every page drawn once (the seven of the sidebar), the sample
    predictions uploaded and a few steps of trajectories, then its tab closed: what a warm
    server holds for everyone (the loaded data, the shared caches filled once)."""
    from bench.browse import one_session, visit

    warm = replace(s, budget_s=20)
    context, result = await one_session(browser, url, warm, 5, 1, csv)
    if "error" not in result:
        try:
            page = context.pages[0]
            result["pages"]["Slices"] = await visit(page, "Slices", s.timeout_s)
        except Exception as exc:
            result["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    await context.close()
    return {k: v for k, v in result.items() if k != "latency"}


def traceback_ends(log: str, most: int = 5) -> list[str]:
    """The exception line ending each traceback of a server log (what went wrong, without
    keeping the log, which lives in a temporary folder)."""
    ends, inside = [], False
    for line in log.splitlines():
        if line.startswith("Traceback"):
            inside = True
        elif inside and line and not line.startswith((" ", "\t")):
            ends.append(line[:300])
            inside = False
    return ends[:most]


def probe_lines(probes: list[dict[str, Any] | None]) -> list[str]:
    """One line per memory probe (`bench.memory_probe`): where the RSS is."""
    lines = []
    for p in probes:
        if not p:
            lines.append("probe: no answer")
            continue
        st, m = p.get("streamlit") or {}, p.get("malloc") or {}
        caches = p.get("bounded_caches") or {}
        held = sum(mb for _, mb in caches.values()) if isinstance(caches, dict) else 0
        stats = st.get("stats_mb", {}) if isinstance(st, dict) else {}
        lines.append(
            f"probe {p['label']}: RSS {p['rss_mb']:.0f} MB ({p['rss_after_gc_mb']:.0f} after gc); "
            f"main arena in use {m.get('in_use')} free {m.get('free')} mmapped "
            f"{m.get('mmapped')}; arenas {p.get('arenas')}; RSS by kind {p.get('rss')}; "
            f"pymalloc {p.get('pymalloc')}; "
            f"arrow {p.get('arrow')}; sessions connected {st.get('sessions_connected')} "
            f"kept {st.get('sessions_stored')}; media {st.get('media_files')} files "
            f"{st.get('media_mb')} MB of {st.get('media_sessions')} sessions; bounded caches "
            f"{held:.1f} MB; stats {stats}"
        )
        lines += [f"  {t}" for t in (p.get("tracemalloc") or [])[:12]]
    return lines


def mixed_report(out: dict[str, Any]) -> str:
    bad = out["hostile"]
    return "\n".join(
        [
            f"{out['sessions']} concurrent sessions, {len(bad)} hostile "
            f"({sum(r.get('refused', 0) for r in bad)} of {sum(r.get('files', 0) for r in bad)} "
            f"hostile uploads refused with the page's message; errors "
            f"{[r.get('error') for r in bad if r.get('error')]}; not refused "
            f"{[n for r in bad for n in r.get('not_refused', [])]})",
            f"honest: errors {out['honest_errors']}, uploads confirmed {out['honest_uploaded']} "
            f"of {out['sessions'] - len(bad)}, steps {out['honest_steps']}",
            f"server tracebacks {out['server_tracebacks']} {out.get('server_errors', [])}",
            f"warm-up visitor (every page, an upload, steps): {out['warm'].get('error', 'ok')}; "
            f"RSS warm idle {out['rss_warm']:.0f} MB ({WARM_SETTLE_S:.0f} s after its tab closed)",
            f"RSS: start {out['rss_start']:.0f} MB, peak {out['peak_mb']:.0f} MB, at the end of "
            f"the sessions {out['rss_at_end']:.0f} MB, under 600 MB after "
            f"{out['seconds_to_600mb']} s, final {out['rss_final']:.0f} MB",
            f"sessions took {out['sessions_s']:.0f} s; load average before "
            f"{out['load_before']}, after {out['load_after']} (2 cores)",
            *probe_lines(out.get("probes", [])),
        ]
    )


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
    parser.add_argument("--hostile", type=int, default=0, help="sessions uploading hostile files")
    parser.add_argument("--after", type=float, default=120, help="seconds followed after the end")
    args = parser.parse_args(argv)
    if not (args.data / "README.md").exists():
        raise SystemExit(f"{args.data} is not a mirror (no README.md)")
    if args.hostile:
        out = asyncio.run(mixed(args.data.resolve(), args.sessions, args.hostile, args.budget,
                                args.after))  # fmt: skip
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1, default=str))
        print(mixed_report(out))
        ok = not out["honest_errors"] and out["peak_mb"] <= 1200
        return 0 if ok and (out["seconds_to_600mb"] is not None) else 1
    out = asyncio.run(run(args.data.resolve(), args.sessions, args.steps, args.budget,
                          args.per_task))  # fmt: skip
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=1, default=str))
    print(report(out))
    return 0 if out["ours"].get("many", {}).get("ok") == args.sessions else 1


if __name__ == "__main__":
    sys.exit(main())

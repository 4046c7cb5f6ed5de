"""Driving the app in a real browser (Playwright + Debian chromium) and timing it.

Part of `python -m bench.run` (see its docstring).
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from bench.common import CHROMIUM, PAGE_ORDER, ROOT, Settings, proc_cpu_s, summary
from bench.server import Server

# --------------------------------------------------------------------------- browser driving

IDLE_JS = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute('data-test-connection-state') !== 'CONNECTED') return false;
  if (app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector("[data-testid='stSkeleton']")) return false;
  return [...document.querySelectorAll("[data-testid='stMain'] img")].every(i => i.complete);
}"""
"""Connected, script idle, no skeleton, every image of the main area loaded."""

TITLE_JS = """(prev) => {
  const h = document.querySelector("[data-testid='stMain'] h1");
  const text = h ? h.innerText.trim() : '';
  return text !== '' && text !== prev;
}"""
"""A page title (h1) is shown and differs from the previous page's."""


async def wait_idle(page: Any, timeout_s: float) -> None:
    await page.wait_for_timeout(50)
    await page.wait_for_function(IDLE_JS, timeout=timeout_s * 1000, polling=50)


async def title(page: Any) -> str:
    h1 = page.locator("[data-testid='stMain'] h1").first
    return (await h1.inner_text()).strip() if await h1.count() else ""


async def rendered(page: Any, previous_title: str, timeout_s: float) -> str:
    """Wait until a new page title is shown and the run is idle; return the title."""
    await page.wait_for_function(TITLE_JS, arg=previous_title, timeout=timeout_s * 1000, polling=50)
    await wait_idle(page, timeout_s)
    return await title(page)


async def visit(page: Any, link_text: str, timeout_s: float) -> float:
    """Click a sidebar page link and wait for that page to be drawn; seconds taken."""
    before = await title(page)
    link = page.locator("[data-testid='stSidebarNavLink']", has_text=link_text).first
    t0 = time.perf_counter()
    await link.click()
    await rendered(page, before, timeout_s)
    return time.perf_counter() - t0


def query(page: Any) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlparse(page.url).query).items()}


async def switch_task(page: Any, presses: int, timeout_s: float) -> None:
    """Pick another trajectory in the viewer's task box (ArrowDown `presses` times)."""
    before = query(page).get("task", "")
    box = page.get_by_role("combobox", name=re.compile(r"^Task"))
    await box.click()
    for _ in range(presses):
        await page.keyboard.press("ArrowDown")
    await page.keyboard.press("Enter")
    await page.wait_for_function(
        "(t) => { const v = new URLSearchParams(location.search).get('task');"
        " return v !== null && v !== t; }",
        arg=before,
        timeout=timeout_s * 1000,
    )
    await wait_idle(page, timeout_s)


async def step_through(
    page: Any,
    steps: int,
    deadline: float,
    timeout_s: float,
    first_switch: int = 0,
    per_task: int = 10,
) -> dict[str, Any]:
    """Click Next `steps` times, moving to the next trajectory after `per_task` steps or at
    its end; returns the client-side latencies and how many trajectories were seen."""
    button = page.locator(".stp button.nav", has_text="Next")  # the stepper
    latencies: list[float] = []
    tasks: set[str] = set()
    switches = 0
    if first_switch:
        await switch_task(page, first_switch, timeout_s)
    in_task = 0
    while len(latencies) < steps and time.perf_counter() < deadline:
        params = query(page)
        tasks.add(params.get("task", ""))
        if in_task >= per_task or await button.count() == 0 or await button.is_disabled():
            await switch_task(page, 1, timeout_s)
            switches += 1
            in_task = 0
            if switches > steps:
                break
            continue
        step = int(params.get("step", "0"))
        t0 = time.perf_counter()
        await button.click()
        await page.wait_for_function(
            "(s) => new URLSearchParams(location.search).get('step') === s",
            arg=str(step + 1),
            timeout=timeout_s * 1000,
        )
        await wait_idle(page, timeout_s)
        latencies.append(time.perf_counter() - t0)
        in_task += 1
    return {"steps": len(latencies), "latency": latencies, "tasks": len(tasks),
            "switches": switches}  # fmt: skip


async def upload(page: Any, csv: Path, timeout_s: float) -> bool:
    """Upload the mirror's sample predictions on the Your verifier page; True if confirmed.

    Confirmed = the page's "No verifier uploaded …" notice went away.
    """
    field = page.locator("[data-testid='stFileUploaderDropzoneInput']").first
    await field.set_input_files(str(csv))
    try:
        await page.get_by_text("No verifier uploaded").first.wait_for(
            state="detached", timeout=min(timeout_s, 60) * 1000
        )
        done = True
    except Exception:
        done = False
    await wait_idle(page, timeout_s)
    return done


async def one_session(
    browser: Any,
    url: str,
    s: Settings,
    steps: int,
    first_switch: int,
    csv: Path | None,
) -> tuple[Any, dict[str, Any]]:
    """A browser session: home, every page, an upload, then steps in the viewer.

    Returns the still open context (its server session stays alive) and what it did.
    """
    context = await new_context(browser, s)
    result: dict[str, Any] = {"pages": {}}
    try:
        page = await context.new_page()
        t0 = time.perf_counter()
        await page.goto(url, wait_until="commit")
        await rendered(page, "", s.timeout_s)
        result["pages"]["Home"] = time.perf_counter() - t0
        for link in PAGE_ORDER:
            result["pages"][link] = await visit(page, link, s.timeout_s)
            if link == "Your verifier" and csv is not None:
                result["uploaded"] = await upload(page, csv, s.timeout_s)
        deadline = time.perf_counter() + s.budget_s  # the stepping part is bounded in time
        result.update(
            await step_through(page, steps, deadline, s.timeout_s, first_switch, s.per_task)
        )
    except Exception as exc:
        result["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    return context, result


async def new_context(browser: Any, s: Settings) -> Any:
    """A browser context (one user) whose every wait allows `s.timeout_s`."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(s.timeout_s * 1000)
    context.set_default_navigation_timeout(s.timeout_s * 1000)
    return context


async def launch_browser(p: Any) -> Any:
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: apt-get install -y chromium")
    return await p.chromium.launch(
        executable_path=CHROMIUM,
        headless=True,
        args=["--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-quic"],
    )


async def cold_start(browser: Any, server: Server, s: Settings) -> tuple[Any, Any, dict[str, Any]]:
    """Start the server, open the home page, then the Agreement page; time both."""
    context = await new_context(browser, s)
    page = await context.new_page()
    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    server.start(s.timeout_s)
    out["health_s"] = time.perf_counter() - t0
    out["mem_start"] = server.memory()
    await page.goto(server.url, wait_until="commit")
    await rendered(page, "", s.timeout_s)
    out["home_s"] = time.perf_counter() - t0
    out["home_server_cpu_s"] = proc_cpu_s(server.pid)
    out["mem_home"] = server.memory()
    c0 = proc_cpu_s(server.pid)
    out["agreement_s"] = await visit(page, "Agreement", s.timeout_s)
    out["agreement_server_cpu_s"] = proc_cpu_s(server.pid) - c0
    out["agreement_total_s"] = time.perf_counter() - t0
    out["mem_agreement"] = server.memory()
    return context, page, out


async def browser_phase(
    folder: Path, env: dict[str, str], s: Settings, workdir: Path
) -> dict[str, Any]:
    """Cold starts (naive, then ours), then the session memory run on our server."""
    from playwright.async_api import async_playwright

    out: dict[str, Any] = {}
    csv = folder / "sample_predictions.csv"
    csv_or_none = csv if csv.exists() else None
    async with async_playwright() as p:
        browser = await launch_browser(p)
        try:
            naive = Server(str(ROOT / "bench" / "naive_app.py"), env, workdir, "naive")
            try:
                context, _, out["naive"] = await cold_start(browser, naive, s)
                out["naive"]["mem_peak"] = naive.memory()["VmHWM"]
                await context.close()
            except Exception as exc:
                out["naive"] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0]}"}
            finally:
                naive.stop()

            ours = Server("app.py", env, workdir, "ours")
            try:
                out["ours"] = await our_sessions(browser, ours, s, csv_or_none)
            except Exception as exc:
                out.setdefault("ours", {})
                out["ours"]["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
            finally:
                ours.stop()
        finally:
            await browser.close()
    return out


async def our_sessions(browser: Any, server: Server, s: Settings, csv: Path | None) -> dict:
    """Cold start, one full session with steps, then `s.sessions` concurrent ones."""
    context, page, out = await cold_start(browser, server, s)
    out["pages"] = {"Agreement": out["agreement_s"]}
    for link in PAGE_ORDER[1:]:
        out["pages"][link] = await visit(page, link, s.timeout_s)
        if link == "Your verifier" and csv is not None:
            out["uploaded"] = await upload(page, csv, s.timeout_s)
    runs_before = len(server.runs())
    deadline = time.perf_counter() + s.budget_s
    one = await step_through(page, s.steps, deadline, s.timeout_s, per_task=s.per_task)
    await page.wait_for_timeout(300)
    step_runs = [r for r in server.runs()[runs_before:] if r["fragment"]]
    out["one"] = {
        **one,
        "server_ms": summary([r["wall"] for r in step_runs], 1e3),
        "server_cpu_ms": summary([r["cpu"] for r in step_runs], 1e3),
        "script_ms": summary([r["wall"] - r.get("post_wall", 0) for r in step_runs], 1e3),
        "script_cpu_ms": summary([r["cpu"] - r.get("post_cpu", 0) for r in step_runs], 1e3),
        "client_ms": summary(one["latency"], 1e3),
    }
    del out["one"]["latency"]
    out["mem_one"] = server.memory()

    runs_before = len(server.runs())
    t0 = time.perf_counter()
    results = await asyncio.gather(
        *(
            one_session(browser, server.url, s, s.session_steps, 2 + 7 * i, csv)
            for i in range(s.sessions)
        )
    )
    out["many_s"] = time.perf_counter() - t0
    await asyncio.sleep(1.0)
    out["mem_many"] = server.memory()
    many_runs = [r for r in server.runs()[runs_before:] if r["fragment"]]
    out["many"] = {
        "sessions": s.sessions,
        "ok": sum("error" not in r for _, r in results),
        "errors": [r["error"] for _, r in results if "error" in r][:3],
        "steps": [r.get("steps", 0) for _, r in results],
        "uploaded": sum(bool(r.get("uploaded")) for _, r in results),
        "tasks": sum(r.get("tasks", 0) for _, r in results),
        "server_ms": summary([r["wall"] for r in many_runs], 1e3),
        "server_cpu_ms": summary([r["cpu"] for r in many_runs], 1e3),
    }
    for ctx, _ in results:
        await ctx.close()
    await context.close()
    out["mem_peak"] = server.memory()["VmHWM"]
    return out

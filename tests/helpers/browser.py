"""Real-browser helpers: a `streamlit run` server on a free port and Debian's chromium.

Streamlit's own e2e suite does the same: poll `/_stcore/health`, then wait on the app's
run state instead of sleeping.
"""

from __future__ import annotations

import http.server
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, Page, expect, sync_playwright
from playwright.sync_api import Error as PlaywrightError

from tests.helpers.slack import scaled, scaled_ms
from tools.local_hub import QuietHTTPServer

ROOT = Path(__file__).resolve().parents[2]
# every page file is one link in the sidebar (Home included); no stray "app" entry
PAGE_LINKS = len(list((ROOT / "pages").glob("[0-9]_*.py")))
# the sidebar's page links (ui.nav.menu: st.page_link, not Streamlit's own list)
MENU_LINK = '[data-testid="stSidebar"] [data-testid="stPageLink-NavLink"]'
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def streamlit_server(
    env: dict[str, str] | None = None, timeout: float = 90, script: str = "app.py"
) -> Iterator[str]:
    """Start `script` (default: the app) on a loopback port; yield its URL; stop it.

    The server binds port 0 (the OS picks a free port and Streamlit prints it), so parallel
    test workers can never race for a port. Its log: `.pytest_cache/streamlit-<port>.log`.
    """
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    full_env.pop("CUAVB_RAISE_ERRORS", None)  # the browser sees what users see
    logs = ROOT / ".pytest_cache"
    logs.mkdir(exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="streamlit-starting-", suffix=".log", dir=logs)
    log = Path(name)
    with os.fdopen(fd, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script,
             "--server.port", "0", "--server.address", "127.0.0.1",
             "--server.headless", "true", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=ROOT, env=full_env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            url = _announced_url(proc, log, scaled(timeout))
        except BaseException:
            _stop(proc)
            raise
        named = log.with_name(f"streamlit-{url.rsplit(':', 1)[1]}.log")
        log.rename(named)  # the server keeps writing to it
        with serving(proc, url, named, scaled(timeout)):
            _PIDS[url] = proc.pid
            try:
                yield url
            finally:
                _PIDS.pop(url, None)


_PIDS: dict[str, int] = {}


def server_pid(url: str) -> int:
    """The process id of the server that `streamlit_server` runs at `url` (for its RSS)."""
    return _PIDS[url]


def _announced_url(proc: subprocess.Popen, log: Path, timeout: float) -> str:
    """The `http://127.0.0.1:<port>` Streamlit prints once it has bound its port."""
    deadline = time.monotonic() + timeout
    while True:
        found = re.search(r"URL: (http://127\.0\.0\.1:\d+)", log.read_text(errors="replace"))
        if found:
            return found.group(1)
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the server did not start:\n{log.read_text()}")
        time.sleep(0.1)


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def serving(proc: subprocess.Popen, url: str, log: Path, timeout: float = 90) -> Iterator[None]:
    """Wait until the server `proc` answers `url/_stcore/health` (its log in the error if it
    exits or times out first); stop it on leaving."""
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as r:
                    if r.read() == b"ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start:\n{log.read_text()}")
            time.sleep(0.1)
        yield
    finally:
        _stop(proc)


@contextmanager
def chromium() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: apt-get install -y chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-quic"],
        )
        try:
            yield browser
        finally:
            browser.close()


QUIET_MS = 400
"""How long the script must stay idle when no run is seen. A widget's change does not mark
the app as running in the browser until the server answers; on a loaded machine that took
longer than the fixed 300 ms this helper used to wait, and a test then acted during the
rerun. A run seen from the call on ends the wait as soon as it is over."""
QUIET_JS = """(quiet) => {
  const app = document.querySelector('[data-testid=stApp]');
  const connected = app && app.getAttribute('data-test-connection-state') === 'CONNECTED';
  const state = connected ? app.getAttribute('data-test-script-state') : null;
  const now = performance.now();
  if (window.__cuavbSince === undefined) { window.__cuavbSince = now; window.__cuavbRan = false; }
  if (!connected) { window.__cuavbSince = now; return false; }  // idle counts from connecting
  if (state !== 'notRunning') { window.__cuavbRan = true; return false; }
  return window.__cuavbRan || now - window.__cuavbSince >= quiet;
}"""


def wait_for_run(page: Page, timeout: float = 60_000) -> None:
    """Connected, script idle, no skeletons: the page has finished drawing."""
    page.locator("[data-testid='stApp'][data-test-connection-state='CONNECTED']").wait_for(
        state="attached", timeout=timeout
    )
    for attempt in range(3):
        try:  # idle from now on, not from before the action
            page.evaluate("() => { window.__cuavbSince = undefined; }")
            page.wait_for_function(QUIET_JS, arg=QUIET_MS, polling=50, timeout=timeout)
            break
        except PlaywrightError as error:  # a navigation replaced the document: wait again
            if "context was destroyed" not in str(error) or attempt == 2:
                raise
            page.wait_for_load_state()
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=timeout)


def no_error_shown(page: Page) -> None:
    """No traceback, no exception box, no 'page not found' dialog."""
    expect(page.get_by_test_id("stException")).to_have_count(0)
    expect(page.get_by_role("dialog")).to_have_count(0)
    assert "Traceback" not in page.content()


SHOTS_ENV = "CUAVB_SHOTS_DIR"


def shot_path(name: str) -> Path:
    """Where a test saves a screenshot for a person to look at: this run's pytest temp
    folder (`CUAVB_SHOTS_DIR`, set by tests/conftest.py), never a fixed /tmp path that two
    runs on one machine would overwrite; printed by the run's `screenshots` line."""
    folder = Path(os.environ.get(SHOTS_ENV) or tempfile.gettempdir()) / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def full_page_screenshot(page: Page, path: str | Path, extra: int = 60) -> None:
    """Save the whole page as a user sees it, and check the picture is the page.

    Streamlit scrolls inside its main block, so the viewport grows to the content first
    (then goes back). The check: the PNG is as tall as the content, not blank (a page
    with text and charts has many colours), so a broken capture fails the test instead
    of leaving a useless file for someone to look at.
    """
    from PIL import Image

    size = page.viewport_size or {"width": 1400, "height": 1000}
    height = int(page.evaluate("document.querySelector('[data-testid=stMain]').scrollHeight"))
    page.set_viewport_size({"width": size["width"], "height": height + extra})
    page.wait_for_timeout(800)  # charts re-layout to the new size
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)
    with Image.open(path) as shot:
        assert shot.width == size["width"] and shot.height >= height, (shot.size, height)
        colours = shot.convert("RGB").resize((shot.width // 4, shot.height // 4)).getcolors(1 << 16)
        assert colours is None or len(colours) > 50, f"{path}: looks blank ({len(colours)} colours)"


@contextmanager
def planted_listener() -> Iterator[tuple[int, list[str]]]:
    """A local HTTP server that only records the paths asked of it: `(port, hits)`.

    The hostile-input tests point payload URLs at it, so any hit means something in the page
    was rendered as an image, a link that was followed, or a fetch.
    """
    hits: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = QuietHTTPServer(("127.0.0.1", free_port()), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], hits
    finally:
        server.shutdown()
        server.server_close()


def copied_link(page: Page) -> str:
    """The sidebar's Copy link, then "Copy the link": the link the clipboard got (the page's
    context needs the clipboard permissions). The popover is left open."""
    page.get_by_role("button", name="Copy link").click()
    page.get_by_role("button", name="Copy the link").click()
    expect(page.get_by_role("status").filter(has_text="Copied.")).to_be_visible(
        timeout=scaled_ms(30_000)
    )
    return page.evaluate("() => navigator.clipboard.readText()")

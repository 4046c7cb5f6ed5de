"""Real browser, every page on the hostile mirror: no markup, no request, no error, bounded RSS.

One `streamlit run` server on `tests.helpers.hostile_mirror.build_hostile_mirror` (markup in every
text column, reviewer ids and informed answers; a 1 MB instruction and comment; a
13000x13000 one-bit PNG, a truncated PNG, a 1x1 PNG and non-image bytes as screenshots),
one chromium, and a local HTTP listener whose port the payloads' local URLs point at.
Each page is opened with hostile values in every URL parameter it reads. After each page:
no error box or traceback; no `img`/`a`/`iframe` (any `src`/`href`) pointing at the planted
host or the listener; no browser request to either; the listener saw no hit. The last test
checks the server's RSS stayed under its start + `RSS_CAP_MB`.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pandas as pd
import psutil
import pyarrow.parquet as pq
import pytest
from playwright.sync_api import Browser, Page

from tests.helpers.browser import (
    no_error_shown,
    server_pid,
    streamlit_server,
    wait_for_run,
)
from tests.helpers.hostile_mirror import HOSTILE_TASK_SUFFIX, build_hostile_mirror
from tests.helpers.hostile_payloads import PLANTED_HOST, payloads
from ui.frame import PAGES as FRAME_PAGES
from ui.params import PAGE_PARAMS, SIDEBAR

pytestmark = pytest.mark.browser

RSS_CAP_MB = 600
"""Server RSS growth allowed over its start, across every page below (the 13000x13000
screenshot alone took 1.4 GB before the pixel cap)."""

PLANTED_DOM = """(port) => {
  const host = (u) => { try { return new URL(u, location.href).host; } catch { return ''; } };
  const bad = (u) => !!u && u.split(/[ ,]+/).some(
    (part) => host(part).endsWith('planted.invalid') || host(part) === '127.0.0.1:' + port);
  return [...document.querySelectorAll('[src], [href], [srcset]')]
    .filter((e) => ['src', 'href', 'srcset'].some((a) => bad(e.getAttribute(a))))
    .map((e) => e.outerHTML.slice(0, 200));
}"""


@pytest.fixture(scope="module")
def hostile_dir(
    mirror_dir: Path, listener: tuple[int, list[str]], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    return build_hostile_mirror(mirror_dir, tmp_path_factory.mktemp("hostile") / "m", listener[0])


@pytest.fixture(scope="module")
def server(hostile_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """The app on the hostile mirror: its URL, its process and its RSS at start."""
    cache = tmp_path_factory.mktemp("shots")
    env = {"CUAVB_DATA": str(hostile_dir), "CUAVB_CACHE_DIR": str(cache)}
    with streamlit_server(env=env) as url:
        proc = psutil.Process(server_pid(url))
        yield {"url": url, "proc": proc, "rss_start": proc.memory_info().rss / 2**20}


@pytest.fixture(scope="module")
def hostile_tasks(hostile_dir: Path) -> list[str]:
    """The hostile task id of each split (1 MB instruction, the image cases as steps 0-3)."""
    ids = []
    for path in sorted((hostile_dir / "trajectories").glob("*.parquet")):
        column = pq.read_table(path, columns=["task_id"])["task_id"].to_pylist()
        ids += [t for t in column if t.endswith(HOSTILE_TASK_SUFFIX)]
    assert ids
    return ids


def _query(listener_port: int, **extra: str) -> dict[str, str]:
    value = " ".join(
        payloads(listener_port)[n] for n in ("backtick_breakout_local", "link", "image_local")
    )
    return {"split": value, **extra}


def visit(browser: Browser, url: str, listener: tuple[int, list[str]]) -> Page:
    """Open `url` in a fresh context; assert the page drew with nothing planted reached."""
    port, hits = listener
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    requests: list[str] = []
    planted = (PLANTED_HOST, f"127.0.0.1:{port}")
    page.on(
        "request",
        lambda r: requests.append(r.url) if urlsplit(r.url).netloc.endswith(planted) else None,
    )
    page.goto(url, timeout=120_000)
    wait_for_run(page, timeout=180_000)
    page.wait_for_timeout(500)  # images and iframes get a moment to be requested
    no_error_shown(page)
    assert page.get_by_text("Something went wrong on this page").count() == 0
    assert page.evaluate(PLANTED_DOM, port) == []
    assert requests == [] and hits == [], (requests, hits)
    return page


def _rss_ok(server: dict) -> None:
    grown = server["proc"].memory_info().rss / 2**20 - server["rss_start"]
    assert grown < RSS_CAP_MB, f"server RSS grew {grown:.0f} MB"


PAGES = {  # URL path ("" = the default page) -> the parameters it reads (ui.params)
    ("" if i == 0 else spec.url_path): [
        p.name for p in (*SIDEBAR, *PAGE_PARAMS[spec.file]) if p.name != "split"
    ]
    for i, spec in enumerate(FRAME_PAGES)
}


@pytest.mark.parametrize("path", list(PAGES))
def test_page_renders_inert(browser, server, listener, path: str) -> None:
    port = listener[0]
    hostile = _query(port)["split"]
    query = _query(port, **{name: f"{name} {hostile}" for name in PAGES[path]})
    page = visit(browser, f"{server['url']}/{path}?{urlencode(query)}", listener)
    # the split warning is shown, as text: the value's words are visible
    assert page.get_by_text("The link asks for split").count() >= 1
    if "task" in PAGES[path]:
        assert page.get_by_text("There is no task").count() >= 1
    page.context.close()
    _rss_ok(server)


@pytest.mark.parametrize("step", ["0", "1", "2", "3"])
def test_trajectory_hostile_task_and_images(browser, server, listener, hostile_tasks, step) -> None:
    """The 1 MB-instruction task; step 0 = 13000x13000 PNG, 1 truncated, 2 = 1x1, 3 not PNG."""
    query = {"task": hostile_tasks[0], "step": step}
    page = visit(browser, f"{server['url']}/Trajectory?{urlencode(query)}", listener)
    height = page.evaluate("document.querySelector('[data-testid=stMain]').scrollHeight")
    assert height < 20_000, height  # the 1 MB instruction is a preview, not 1.3 M pixels
    assert page.get_by_text("more characters").count() >= 1
    if step in ("0", "1", "3"):  # too large / unreadable: the stepper says why
        assert "Screenshot" in page.locator(".stp .missing").inner_text()
    page.context.close()
    _rss_ok(server)


def test_your_verifier_hostile_file_and_names(browser, server, listener, hostile_dir) -> None:
    port = listener[0]
    corpus = payloads(port)
    names = [corpus[n] for n in ("backtick_breakout_local", "image_local", "link", "html_img")]
    tasks = []
    for path in sorted((hostile_dir / "trajectories").glob("*.parquet")):
        tasks += pq.read_table(path, columns=["task_id"])["task_id"].to_pylist()
    rows = [
        {"task_id": t, "outcome": i % 2, "verifier": names[i % len(names)]}
        for i, t in enumerate(tasks[:200])
    ]
    rows.append({"task_id": corpus["image_local"], "outcome": 1, "verifier": names[0]})
    buffer = io.StringIO()
    pd.DataFrame(rows).to_csv(buffer, index=False)
    file_name = f"x` ![f](http://127.0.0.1:{port}/file.png) `y [f](http://{PLANTED_HOST}/f).csv"
    page = visit(browser, f"{server['url']}/Your_verifier", listener)
    page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(
        {"name": file_name, "mimeType": "text/csv", "buffer": buffer.getvalue().encode()}
    )
    page.get_by_text("rows read").first.wait_for(timeout=120_000)
    wait_for_run(page, timeout=180_000)
    page.wait_for_timeout(500)
    no_error_shown(page)
    assert page.evaluate(PLANTED_DOM, port) == [] and listener[1] == []
    assert page.get_by_text("1 row(s) dropped").count() >= 1
    # a garbage file next: a message, the loaded verifiers stay, the page still works
    page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(
        {"name": f"{names[0]}.csv", "mimeType": "text/csv", "buffer": bytes(range(256)) * 50}
    )
    page.get_by_text("Nothing was loaded").first.wait_for(timeout=120_000)
    wait_for_run(page, timeout=180_000)
    no_error_shown(page)
    assert page.get_by_text("Verifiers loaded before are unchanged").count() == 1
    assert page.evaluate(PLANTED_DOM, port) == [] and listener[1] == []
    page.context.close()


def test_zz_server_memory_stayed_bounded(server) -> None:
    """Last in the module: every page above (and their caches) within the RSS cap."""
    time.sleep(1)
    _rss_ok(server)

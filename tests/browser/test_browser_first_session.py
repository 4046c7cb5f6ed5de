"""Real browser, a fresh server's very first session on the demo before it is built
(issue 30): no stray "app" page sent to the sidebar (every navigation message the
browser received is read), the Home page from the tables
generated in the server, and a trajectory opened before the demo's screenshots are
drawn shows the builder's progress, then its screenshots once the mirror is written."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect
from streamlit.proto.Navigation_pb2 import Navigation as NavigationProto

from lib.data import source
from lib.data.demo import builder as demo_build
from lib.file_lock import exclusive
from tests.helpers.browser import (
    MENU_LINK,
    PAGE_LINKS,
    no_error_shown,
    streamlit_server,
    wait_for_run,
)

pytestmark = pytest.mark.browser

WS_TAP = """() => {
  window.__frames = [];
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (event) => {
        if (!(event.data instanceof ArrayBuffer)) return;
        let text = '';
        for (const byte of new Uint8Array(event.data)) text += String.fromCharCode(byte);
        window.__frames.push(btoa(text));
      });
    }
  };
}"""
"""Keeps every message the server sends (Streamlit's ForwardMsg protobufs, base64)."""


def navigations(page) -> list[tuple[int, list[str]]]:
    """(position, page names) of every `navigation` message the browser received."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    out = []
    for frame in page.evaluate("window.__frames"):
        msg = ForwardMsg.FromString(base64.b64decode(frame))
        if msg.HasField("navigation"):
            nav = msg.navigation
            out.append((nav.position, [p.page_name for p in nav.app_pages]))
    return out


def test_first_session_of_a_fresh_demo_server(browser, tmp_path: Path, mirror_dir: Path) -> None:
    demo_root = tmp_path / "demo-root"
    env = {"CUAVB_DATA": "demo", source.DEMO_DIR_ENV: str(demo_root)}
    folder = demo_root / source.demo_dir().name
    lock = demo_build.lock_file(folder)
    with exclusive(lock):  # a builder "runs": none is started, none finishes
        _first_session(browser, env, folder, mirror_dir)


def _first_session(browser, env: dict[str, str], folder: Path, mirror: Path) -> None:
    with streamlit_server(env, timeout=180) as url:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        context.add_init_script(f"({WS_TAP})()")
        page = context.new_page()
        page.set_default_timeout(120_000)
        page.goto(url)
        wait_for_run(page, timeout=180_000)
        no_error_shown(page)
        expect(page.get_by_role("heading", name="CUAVerifierBench explorer")).to_be_visible()
        expect(page.locator(MENU_LINK)).to_have_count(PAGE_LINKS)
        navs = navigations(page)
        assert navs and "Agreement" in navs[-1][1], navs
        # Streamlit's own list is hidden (ui.nav.menu draws the links, with the query): no
        # list it sent is shown, and the drawn menu has no stray "app" entry
        expect(page.get_by_test_id("stSidebarNavLink")).to_have_count(0)
        shown = [names for position, names in navs if position != NavigationProto.HIDDEN]
        assert not [names for names in shown if "app" in names], navs
        assert "app" not in [t.strip() for t in page.locator(MENU_LINK).all_inner_texts()]

        page.locator(MENU_LINK).filter(has_text="Trajectory").click()
        demo_build._write_progress(demo_build.progress_file(folder), 13, 260, "drawing")
        expect(page.get_by_text("13 of 260 trajectories drawn")).to_be_visible()
        assert not (folder / "README.md").exists()
        staging = folder.with_name("staging")  # the builder's last step: the mirror, whole
        shutil.copytree(mirror, staging)
        staging.rename(folder)
        wait_for_run(page, timeout=180_000)
        no_error_shown(page)
        img = page.locator(".stp img.shotimg").first
        img.wait_for(state="visible")
        page.wait_for_function(
            "(el) => el.complete && el.naturalWidth > 0", arg=img.element_handle()
        )
        context.close()

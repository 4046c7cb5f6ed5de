"""The Space as huggingface.co serves it: the container's start command (the Dockerfile's
CMD, run as a process with a Space's environment; no Docker daemon here) inside a
cross-site iframe. A parent page on 127.0.0.2 frames the app on localhost: another site,
so the browser withholds the app's cookies from the frame, as huggingface.co/spaces/...
does for <owner>-<name>.hf.space. The upload on Your verifier must work there.

The same start command with XSRF protection back on fails the upload (HTTP 403): the
check that this setup really is cross-site and the Space setting is what fixes it.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import FrameLocator, expect

from tests.helpers.browser import ROOT, free_port, serving, shot_path
from tests.helpers.slack import scaled_ms
from tools.local_hub import QuietHTTPServer

pytestmark = pytest.mark.browser

DOCKERFILE = ROOT / "deploy/spaces/Dockerfile"
SPACE_PORT = "7860"


def start_command() -> list[str]:
    """The Dockerfile's CMD (exec form), as the container runs it."""
    text = DOCKERFILE.read_text()
    match = re.search(r"^CMD\s+(\[.*\])\s*$", text, re.MULTILINE)
    assert match, "the Dockerfile has no exec-form CMD"
    return json.loads(match.group(1))


def test_the_space_settings_are_only_in_the_dockerfile() -> None:
    cmd = start_command()
    assert cmd[:3] == ["streamlit", "run", "app.py"]
    assert f"--server.port={SPACE_PORT}" in cmd and "--server.address=0.0.0.0" in cmd
    assert "--server.enableXsrfProtection=false" in cmd
    assert "--logger.hideWelcomeMessage=true" in cmd  # no external-IP lookup or hint
    text = DOCKERFILE.read_text()
    assert re.search(r"useradd .*--uid 1000", text) and re.search(r"^USER user$", text, re.M)
    front = (ROOT / "deploy/spaces/README.md").read_text().split("---")[1]
    assert "sdk: docker" in front and f"app_port: {SPACE_PORT}" in front
    # nowhere else: the local run and Community Cloud keep XSRF protection
    for path in (ROOT / ".streamlit/config.toml", ROOT / "run.sh"):
        assert "enableXsrfProtection" not in path.read_text(), path


@contextmanager
def space_process(mirror: Path, home: Path, xsrf_off: bool = True) -> Iterator[int]:
    """The start command as a process with a Space's environment; yields the port."""
    port = free_port()
    cmd = [c.replace(SPACE_PORT, str(port)) if c.startswith("--server.port") else c
           for c in start_command()]  # fmt: skip
    if not xsrf_off:
        cmd = [c for c in cmd if not c.startswith("--server.enableXsrfProtection")]
    env = {
        **os.environ,
        "HOME": str(home),
        "SPACE_ID": "someone/cuavb-explorer",
        "SPACE_HOST": f"localhost:{port}",
        "SPACE_AUTHOR_NAME": "someone",
        "CUAVB_DATA": str(mirror),
        "HF_HUB_OFFLINE": "1",
    }
    env.pop("CUAVB_RAISE_ERRORS", None)
    log = home / f"space-{port}.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", *cmd], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
        )
        with serving(proc, f"http://localhost:{port}", log):
            yield port


@contextmanager
def parent_site(app_url: str) -> Iterator[str]:
    """A page on 127.0.0.2 (another site than localhost) that frames the app."""
    body = (
        "<!doctype html><title>huggingface.co stand-in</title>"
        f'<iframe src="{app_url}" style="width:1200px;height:900px;border:0"></iframe>'
    ).encode()

    class Parent(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = QuietHTTPServer(("127.0.0.2", free_port()), Parent)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.2:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _wait(frame: FrameLocator) -> None:
    frame.locator("[data-testid='stApp'][data-test-connection-state='CONNECTED']").wait_for(
        state="attached", timeout=60_000
    )
    frame.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(
        state="attached", timeout=60_000
    )


def _upload_in_iframe(browser, mirror: Path, port: int, statuses: list[int]):
    """Open Your verifier framed by the parent site and upload the sample predictions;
    returns (context, page, frame). Upload responses' statuses go to `statuses`."""
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(scaled_ms(60_000))
    page.on(
        "response",
        lambda r: statuses.append(r.status) if "/_stcore/upload_file" in r.url else None,
    )
    with parent_site(f"http://localhost:{port}/Your_verifier") as parent:
        page.goto(parent)
        frame = page.frame_locator("iframe")
        _wait(frame)
        expect(frame.get_by_text("No verifier uploaded in this session yet")).to_be_visible()
        dropzone = frame.get_by_test_id("stFileUploaderDropzoneInput").first
        dropzone.set_input_files(str(mirror / "sample_predictions.csv"))
        return context, page, frame


def test_upload_inside_a_cross_site_iframe(browser, mirror_dir: Path, tmp_path: Path) -> None:
    statuses: list[int] = []
    with space_process(mirror_dir, tmp_path) as port:
        context, page, frame = _upload_in_iframe(browser, mirror_dir, port, statuses)
        try:
            success = frame.get_by_test_id("stAlertContentSuccess")
            expect(success).to_contain_text("520 rows read, 520 used", timeout=60_000)
            assert statuses and set(statuses) == {204}, statuses
            # the Copy link control gives the Space's direct address
            frame.get_by_role("button", name="Copy link").click()
            code = frame.get_by_test_id("cuavbCopyLinkText")
            expect(code).to_contain_text(f"https://localhost:{port}/Your_verifier")
            page.screenshot(path=shot_path("space_iframe.png"))
        finally:
            context.close()
    log = (tmp_path / f"space-{port}.log").read_text()
    assert "external IP" not in log and "Traceback" not in log, log[-2000:]


def test_with_xsrf_protection_the_same_upload_fails(
    browser, mirror_dir: Path, tmp_path: Path
) -> None:
    statuses: list[int] = []
    with space_process(mirror_dir, tmp_path, xsrf_off=False) as port:
        context, page, frame = _upload_in_iframe(browser, mirror_dir, port, statuses)
        try:
            deadline = time.monotonic() + 30
            while not statuses and time.monotonic() < deadline:
                page.wait_for_timeout(200)  # lets Playwright deliver the response events
            assert 403 in statuses, statuses
            expect(frame.get_by_test_id("stAlertContentSuccess")).to_have_count(0)
        finally:
            context.close()

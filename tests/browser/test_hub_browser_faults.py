"""Real browser on the stand-in Hub (issue 32): a screenshot fetch that fails, then Retry,
restores the whole stepper (screenshot and filmstrip) without a reload; and `main` moved
to a new commit with the old one deleted mid-session: a trajectory not cached yet still
opens, at the new commit, and the page says the data moved."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.helpers.browser import no_error_shown, streamlit_server, wait_for_run
from tests.unit.test_hub import OM2W
from tools.local_hub import Faults, Hub, serving

pytestmark = pytest.mark.browser
TIMEOUT = 120_000  # a loaded 2-core machine: fetches, reruns and a data reload


def _env(hub_url: str, tmp_path: Path) -> dict[str, str]:
    return {
        "HF_ENDPOINT": hub_url,
        "HF_HUB_OFFLINE": "0",
        "HF_HOME": str(tmp_path / "hf"),
        "CUAVB_CACHE_DIR": str(tmp_path / "cuavb"),
        "CUAVB_DEMO_DIR": str(tmp_path / "no-demo"),
        "HF_HUB_DISABLE_XET": "1",
        "CUAVB_HUB_ATTEMPTS": "1",  # one failed request fails the fetch
        "CUAVB_DATA": "",
    }


def _open(page: Page, url: str, task_id: str) -> None:
    page.goto(f"{url}/Trajectory?split={OM2W}&task={task_id}&step=1")
    wait_for_run(page, TIMEOUT)
    expect(page.get_by_role("heading", name="Trajectory", exact=True)).to_be_visible()


def _screenshot_and_filmstrip_shown(page: Page, n_shots: int) -> None:
    shot = page.locator(".stp img.shotimg")
    expect(shot).to_have_count(1, timeout=TIMEOUT)
    page.wait_for_function(
        "(img) => img.complete && img.naturalWidth > 0", arg=shot.element_handle(), timeout=TIMEOUT
    )
    thumbs = page.locator(".stp .strip button.film img")
    expect(thumbs).to_have_count(n_shots, timeout=TIMEOUT)
    page.wait_for_function(
        "(img) => img.complete && img.naturalWidth > 0",
        arg=thumbs.first.element_handle(),
        timeout=TIMEOUT,
    )


def _tasks(bench, rows: list[int]) -> list:
    om2w = bench.tasks[bench.tasks.split == OM2W]
    return [om2w[om2w.row == r].iloc[0] for r in rows]


def test_retry_after_a_failed_fetch_restores_screenshot_and_filmstrip(
    browser, bench, mirror_dir: Path, tmp_path: Path
) -> None:
    (task,) = _tasks(bench, [12])
    shots = int(task["n_screenshots_stored"])
    assert shots > 2
    hub = Hub(mirror_dir)
    with serving(hub) as hub_url, streamlit_server(_env(hub_url, tmp_path)) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(TIMEOUT)
        page.goto(url)  # the light data first: only screenshot reads will fail
        wait_for_run(page, TIMEOUT)
        hub.faults = Faults(status=503, fail_pattern=r"/resolve/.*trajectories/", fail_count=99)
        _open(page, url, task["task_id"])
        expect(
            page.get_by_text("could not be fetched from the Hub", exact=False).first
        ).to_be_visible()
        expect(page.locator(".stp img.shotimg")).to_have_count(0)
        expect(page.locator(".stp .missing")).to_contain_text("could not be fetched")
        hub.faults = Faults()
        page.get_by_role("button", name="Retry").click()
        wait_for_run(page, TIMEOUT)
        _screenshot_and_filmstrip_shown(page, shots)
        expect(page.get_by_role("button", name="Retry")).to_have_count(0)
        expect(page.locator(".stp .missing")).to_be_hidden()
        no_error_shown(page)
        page.close()


def test_main_moved_and_the_old_commit_deleted_new_trajectories_still_open(
    browser, bench, mirror_dir: Path, tmp_path: Path
) -> None:
    first, second, third = _tasks(bench, [5, 17, 29])
    hub = Hub(mirror_dir)
    old = hub.sha
    with serving(hub) as hub_url, streamlit_server(_env(hub_url, tmp_path)) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(TIMEOUT)
        _open(page, url, first["task_id"])
        _screenshot_and_filmstrip_shown(page, int(first["n_screenshots_stored"]))
        sidebar = page.get_by_test_id("stSidebar")
        expect(sidebar.get_by_text(f"Revision {old[:8]}", exact=False)).to_be_visible()

        new = hub.move_main()
        hub.clear_log()
        _open(page, url, second["task_id"])
        _screenshot_and_filmstrip_shown(page, int(second["n_screenshots_stored"]))
        expect(
            page.get_by_text("The dataset moved to a new revision on the Hub", exact=False)
        ).to_be_visible()
        expect(page.get_by_text(f"reloaded at commit {new[:8]}", exact=False)).to_be_visible()
        expect(sidebar.get_by_text(f"Revision {new[:8]}", exact=False)).to_be_visible()
        no_error_shown(page)
        # after the move: every request at the old commit was refused (found gone), the
        # trajectory's screenshots came from the new one
        at_old = [e for e in hub.log if old in e.path]
        assert at_old and all(e.status == 404 for e in at_old)
        assert any(new in e.path and "/resolve/" in e.path and e.status < 400 for e in hub.log)

        # a fresh tab (another visitor) opens a third trajectory at the new commit
        other = browser.new_page(viewport={"width": 1400, "height": 1000})
        other.set_default_timeout(TIMEOUT)
        _open(other, url, third["task_id"])
        _screenshot_and_filmstrip_shown(other, int(third["n_screenshots_stored"]))
        no_error_shown(other)
        other.close()
        page.close()

"""Real browser, default source = the (local) Hub: a fresh server with empty caches whose
first request is a Trajectory deep link. The screenshot must appear, and the request log
must show light data first, then one page range inside the row group holding that
trajectory (the page index), not the row group."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from lib.viewer.links import hub_viewer_href
from tests.helpers.browser import no_error_shown, shot_path, streamlit_server, wait_for_run
from tests.helpers.slack import scaled_ms
from tests.unit.test_hub import OM2W, REPO, _ours, _ranges, _shot_chunks
from tools.local_hub import Hub, serving
from tools.relayout import relayout_as

pytestmark = pytest.mark.browser


def test_deep_link_on_a_cold_server_fetches_one_page_range(
    browser, bench, mirror_dir: Path, tmp_path: Path
) -> None:
    mirror = relayout_as(mirror_dir, tmp_path / "rg12", "current", 12)
    task = bench.tasks[(bench.tasks.split == OM2W) & (bench.tasks.row == 30)].iloc[0]
    assert task["n_screenshots_stored"] > 1
    hub = Hub(mirror)
    with serving(hub) as hub_url:
        env = {
            "HF_ENDPOINT": hub_url,
            "HF_HUB_OFFLINE": "0",
            "HF_HOME": str(tmp_path / "hf"),
            "CUAVB_CACHE_DIR": str(tmp_path / "cuavb"),
            "CUAVB_DEMO_DIR": str(tmp_path / "no-demo"),
            "HF_HUB_DISABLE_XET": "1",
        }
        with streamlit_server({**env, "CUAVB_DATA": ""}) as url:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(scaled_ms(60_000))
            page.goto(f"{url}/Trajectory?split={OM2W}&task={task['task_id']}&step=1")
            wait_for_run(page)
            expect(page.get_by_role("heading", name="Trajectory", exact=True)).to_be_visible()
            no_error_shown(page)
            shot = page.locator(".stp img.shotimg")  # inside the stepper
            expect(shot).to_have_count(1)
            page.wait_for_function(
                "(img) => img.complete && img.naturalWidth > 0", arg=shot.element_handle()
            )
            hub_link = page.get_by_role("link", name="View in the Hub dataset viewer").first
            expect(hub_link).to_have_attribute("href", hub_viewer_href(REPO, OM2W, 30))
            sidebar = page.get_by_test_id("stSidebar")
            expect(sidebar.get_by_text(f"Revision {hub.sha[:8]}", exact=False)).to_be_visible()
            expect(page.get_by_text("Synthetic demo data", exact=False)).to_have_count(0)
            # the path taken is named under the viewer (technical detail)
            expect(
                page.get_by_text("Screenshots obtained by: page index", exact=False)
            ).to_be_visible()
            page.screenshot(path=shot_path("hub_viewer.png"), full_page=True)
            context.close()
    chunks = _shot_chunks(mirror)
    name = f"{OM2W}-00000-of-00002.parquet"
    group_start, group_end = chunks[name][2]  # the third row group (rows 24-35)
    pngs = [
        (n, first, end)
        for n, first, end in _ranges(_ours(hub))
        if first >= 0 and any(s <= first < e for s, e in chunks[n] if e - s > 65536)
    ]
    # one PNG range (the page of row 30; prefetch may add its neighbours' pages after it)
    assert pngs and pngs[0][0] == name and group_start <= pngs[0][1] < pngs[0][2] <= group_end
    assert pngs[0][2] - pngs[0][1] < (group_end - group_start) / 2
    # it came after every light read
    order = [e for e in _ours(hub) if e.range and not e.range.startswith("bytes=-")]
    first_png = next(
        i for i, e in enumerate(order) if e.range == f"bytes={pngs[0][1]}-{pngs[0][2] - 1}"
    )
    assert all(
        not any(
            s <= int(e.range.split("=")[1].split("-")[0]) < t for s, t in chunks[n] if t - s > 65536
        )
        for e in order[:first_png]
        for n in [e.path.rsplit("/", 1)[-1]]
        if n in chunks
    )
    assert REPO in order[first_png].path

"""Screenshots as media-file URLs for the stepper (the one place the viewer reads PNG bytes)."""

from __future__ import annotations

from lib import images, viewer
from lib.data.load import Bench

MEDIA_BYTES_MAX = 40_000_000
"""Screenshot bytes one trajectory may register as media files at most (a real trajectory
holds about 5-10 MB; the server keeps a session's registered files in memory until its
next run, shared between sessions showing the same bytes); later screenshots are named as
not loaded instead of growing the server's memory."""


def trajectory_media(
    bench: Bench, traj: viewer.Trajectory
) -> tuple[list[str | None], list[str | None], list[str | None]]:
    """Screenshot URLs (served by Streamlit's media file manager, as `st.image` does),
    why any is missing, and the filmstrip's URLs.

    The one place the viewer reads screenshot bytes (`bench.screenshot_png`): the
    browser fetches each URL once and caches it; the page hands over URLs, never bytes.
    Media files are per session and re-registered on each run (same bytes, same URL).
    """
    manager = _media_manager()
    urls: list[str | None] = []
    problems: list[str | None] = []
    total = 0
    for index in range(traj.n_screenshots):
        png = bench.screenshot_png(traj.split, traj.row, index)
        check = viewer.check_png(png, index)
        problem = check.problem
        if problem is None and check.size and check.size[0] * check.size[1] > images.MAX_PIXELS:
            problem = f"Screenshot {index} {images.too_large_reason(check.size)}."
        if problem is None and png and total + len(png) > MEDIA_BYTES_MAX:
            problem = f"Screenshot {index} is not loaded: this trajectory's screenshots exceed "
            problem += f"{MEDIA_BYTES_MAX // 1_000_000} MB."
        if problem is not None or not png or manager is None:
            urls.append(None)
            problems.append(problem or "No screenshot.")
            continue
        total += len(png)
        mime = _mime(png)
        urls.append(manager.add(png, mime, f"viewer.shot.{index}"))
        problems.append(None)
    return urls, problems, _thumb_urls(bench, traj, urls, manager)


def _thumb_urls(bench: Bench, traj: viewer.Trajectory, urls: list[str | None], manager) -> list:
    """The filmstrip's URLs: the 200 px thumbnail the fetch worker cached beside the PNGs
    (`bench.thumbnail_png`), else the full screenshot (not fetched or made yet)."""
    thumbs: list[str | None] = []
    for index, full in enumerate(urls):
        png = bench.thumbnail_png(traj.split, traj.row, index) if full else None
        if png and viewer.check_png(png, index).problem is None:
            thumbs.append(manager.add(png, _mime(png), f"viewer.thumb.{index}"))
        else:
            thumbs.append(full)
    return thumbs


def _mime(data: bytes) -> str:
    if data[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    return "image/png"


def _media_manager():
    from streamlit import runtime

    return runtime.get_instance().media_file_mgr if runtime.exists() else None

"""Images, bytes in and bytes out (the page caches the results).

Part of `lib.viewer` (see its docstring); no Streamlit.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from PIL import Image

from lib import overlay
from lib.trajlog import SCREEN, Step

# ---------------------------------------------------------------------------
# Images (bytes in, bytes out; the page caches the results)
#
# The step view shows the stored PNG untouched (no decode, no re-encode: the browser
# scales it) with a transparent layer on top that holds only the drawn action. Drawing
# on the screenshot itself would cost a full decode and re-encode per step (about
# 200 ms for a detailed 1440x900 PNG); the layer costs about 12 ms and a few kB.

PLACEHOLDER_SIZE = (720, 450)
THUMB_WIDTH = 200


@dataclass(frozen=True)
class ShotCheck:
    """Whether stored bytes can be shown as an image, found without decoding pixels.

    `size` is the image's (width, height) when `problem` is None.
    """

    size: tuple[int, int] | None
    problem: str | None = None


def check_png(png: bytes | None, index: int | None) -> ShotCheck:
    """Read the header and verify the chunks' checksums (about 1 ms, no pixel decode).

    Catches missing, empty, non-image and truncated bytes, so a corrupt screenshot gets
    a placeholder instead of a broken image in the browser.
    """
    if index is None:
        return ShotCheck(None, "No screenshot is stored for this step.")
    if not png:
        return ShotCheck(None, f"Screenshot {index} is empty in the data.")
    try:
        with Image.open(io.BytesIO(png)) as image:
            size = image.size
            image.verify()
    except Exception as exc:  # PIL raises many types for bad bytes
        reason = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
        return ShotCheck(None, f"Screenshot {index} cannot be decoded as an image ({reason}).")
    return ShotCheck(size)


def action_layer(step: Step | None, size: tuple[int, int]) -> bytes | None:
    """A transparent PNG of `size` with only `step`'s action drawn (None: nothing to draw).

    Uses the same drawing as `lib.overlay.draw_action`, so marker, labels and badges look
    the same as on a downloaded overlaid screenshot.
    """
    return None if step is None else overlay.draw_layer(step, size, screen=SCREEN)


def placeholder_png(text: str) -> bytes:
    """A grey stand-in image for a missing or corrupt screenshot."""
    return overlay.placeholder(text, PLACEHOLDER_SIZE)


def drawn_png(png: bytes | None, step: Step | None, index: int | None) -> bytes:
    """The screenshot with the action drawn into it (for a download), or a placeholder."""
    check = check_png(png, index)
    if check.problem or not png:
        return placeholder_png(check.problem or "no image")
    try:
        return overlay.draw_action(png, step)
    except overlay.CorruptImage as exc:
        return placeholder_png(f"Screenshot {index} cannot be decoded ({exc})")


def render_thumb(png: bytes | None, index: int, width: int = THUMB_WIDTH) -> bytes:
    """A filmstrip thumbnail; a small placeholder when the bytes are missing or corrupt."""
    size = (width, round(width * SCREEN[1] / SCREEN[0]))
    if not png:
        return overlay.placeholder("no image", size)
    try:
        return overlay.thumbnail(png, width)
    except overlay.CorruptImage:
        return overlay.placeholder(f"{index}: corrupt", size)

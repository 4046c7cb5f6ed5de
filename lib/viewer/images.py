"""Images, bytes in and bytes out (the page caches the results).

Part of `lib.viewer` (see its docstring); no Streamlit.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from PIL import Image


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

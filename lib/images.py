"""Decode screenshots with a pixel cap checked from the header, before any pixel is decoded.

A PNG's size on disk says nothing about its decoded size: a 13000x13000 one-bit PNG is
37 KB and decodes to 169 Mpx (Pillow keeps mode "1" at one byte per pixel, and RGBA drawing
on it needs 676 MB). Pillow's own bomb limit (~179 Mpx) lets that through, and a server
shared by many sessions cannot afford it. So every decode in the app goes through here:

- :func:`probe` reads the header (``Image.open`` is lazy: size and format without pixels)
  and, for PNG, checks every chunk's CRC (``verify``, no decode), so truncated or non-image
  bytes are found in about a millisecond.
- :func:`open_bounded` decodes only when ``width * height <= MAX_PIXELS``. Above the cap a
  JPEG is decoded at a reduced scale (``Image.draft``: the decoder itself skips the DCT
  detail, peak memory is that of the small image). PNG has no such mode (zlib rows must
  all be inflated into a full-size buffer), so an over-cap PNG is refused with a reason
  and the page shows a placeholder that says why (measured in bench/images_memory.py:
  refusing costs nothing; decoding the 13000x13000 PNG and reducing it peaks at
  hundreds of MB).
- :func:`thumbnail` and :func:`placeholder` make the filmstrip's small PNGs (the action
  itself is drawn in the browser, by the stepper component, never here).

The real screenshots are 1440x900 (1.3 Mpx): far below the cap.
"""

from __future__ import annotations

import io
import textwrap
import warnings
from dataclasses import dataclass
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

MAX_PIXELS = 8_000_000
"""Largest image decoded at full size (8 Mpx: 6x a real 1440x900 screenshot, 32 MB RGBA)."""


class ImageProblem(ValueError):
    """The bytes cannot be shown: empty, not an image, truncated, or over the pixel cap.

    The message is a sentence for the user (it says why, with the size when known).
    """


class ImageTooLarge(ImageProblem):
    """The header says the image is over `MAX_PIXELS` and it cannot be decoded reduced."""


@dataclass(frozen=True)
class ImageInfo:
    """What the header says: `size` (width, height) and `format` (e.g. "PNG")."""

    size: tuple[int, int]
    format: str | None

    @property
    def pixels(self) -> int:
        return self.size[0] * self.size[1]


def describe_size(size: tuple[int, int]) -> str:
    """`13,000 x 13,000 px (169.0 Mpx)`."""
    return f"{size[0]:,} x {size[1]:,} px ({size[0] * size[1] / 1e6:.1f} Mpx)"


def probe(data: bytes | None) -> ImageInfo:
    """Size and format from the header, PNG chunk CRCs verified; no pixel is decoded.

    Raises ImageProblem for empty, unreadable or truncated bytes.
    """
    if not data:
        raise ImageProblem("the image is empty")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # our cap is lower
            with Image.open(io.BytesIO(data)) as image:
                info = ImageInfo(image.size, image.format)
                if image.format == "PNG":
                    image.verify()  # walks the chunks and their CRCs; no pixel inflate
    except Image.DecompressionBombError as exc:
        raise ImageTooLarge(f"is far above the pixel limit ({exc})") from exc
    except Exception as exc:  # Pillow raises many types for bad bytes
        reason = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
        raise ImageProblem(f"cannot be decoded as an image ({reason})") from exc
    if info.size[0] <= 0 or info.size[1] <= 0:
        raise ImageProblem(f"has no pixels ({info.size[0]} x {info.size[1]})")
    return info


def too_large_reason(size: tuple[int, int], max_pixels: int = MAX_PIXELS) -> str:
    """The sentence shown instead of an image above the cap."""
    return (
        f"is {describe_size(size)}, above the {max_pixels / 1e6:g} Mpx this server decodes "
        "per image (a real screenshot is 1440 x 900), so it is not shown"
    )


def open_bounded(data: bytes | None, max_pixels: int = MAX_PIXELS) -> Image.Image:
    """The decoded image, never above `max_pixels` (a JPEG above it is decoded reduced).

    Raises ImageTooLarge for other formats above the cap and ImageProblem for bad bytes.
    The image is fully loaded, so a truncated file fails here and not while drawing.
    """
    info = probe(data)
    assert data is not None  # probe raised otherwise
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
        if info.pixels > max_pixels:
            if info.format != "JPEG":
                raise ImageTooLarge(too_large_reason(info.size, max_pixels))
            scale = (max_pixels / info.pixels) ** 0.5
            target = (max(1, int(info.size[0] * scale)), max(1, int(info.size[1] * scale)))
            # draft picks the largest 1/2, 1/4 or 1/8 decode scale still >= the size asked
            # for, so asking for half the target keeps the result <= the target.
            image.draft("RGB", (max(1, target[0] // 2), max(1, target[1] // 2)))
            if image.size[0] * image.size[1] > max_pixels:  # 1/8 was not enough
                raise ImageTooLarge(too_large_reason(info.size, max_pixels))
        image.load()
    except ImageProblem:
        raise
    except Exception as exc:  # truncated data, decoder errors, Pillow's bomb check
        reason = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
        raise ImageProblem(f"cannot be decoded as an image ({reason})") from exc
    return image


def check_size(data: bytes | None, max_pixels: int = MAX_PIXELS) -> tuple[int, int]:
    """The size of an image that may be sent to the browser and drawn on as is.

    Raises ImageTooLarge above `max_pixels` (any format: Streamlit itself decodes and
    resizes wide images on the server) and ImageProblem for bad bytes.
    """
    info = probe(data)
    if info.pixels > max_pixels:
        raise ImageTooLarge(too_large_reason(info.size, max_pixels))
    return info.size


PNG_COMPRESS_LEVEL = 1
"""zlib level for output PNGs: level 1 is about 3x faster than Pillow's default 6."""
PLACEHOLDER_BG = (205, 205, 210)
PLACEHOLDER_FG = (60, 60, 67)
THUMB_ASPECT = 900 / 1440  # a placeholder thumbnail has the real screenshots' shape


def thumbnail(png: bytes, width: int = 240) -> bytes:
    """A PNG `width` pixels wide (aspect kept) for a filmstrip; never upscales.

    Raises `ImageProblem` for bytes that are not an image; an image over the pixel cap
    gets a placeholder that says so (its header gave the reason without decoding).
    """
    if width <= 0:
        raise ValueError(f"width must be positive, got {width}")
    try:
        image = open_bounded(png)
    except ImageTooLarge:
        return placeholder("too large", (width, round(width * THUMB_ASPECT)))
    if image.mode not in ("RGB", "RGBA", "L"):
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    if image.width > width:
        height = max(1, round(image.height * width / image.width))
        # reducing_gap: a cheap integer reduce first, then a proper filter.
        image = image.resize((width, height), Image.Resampling.BILINEAR, reducing_gap=2.0)
    return _encode(image)


def placeholder(text: str, size: tuple[int, int]) -> bytes:
    """A grey PNG with `text` centred, standing in for a missing or corrupt screenshot."""
    width, height = size
    if width <= 0 or height <= 0:
        raise ValueError(f"size must be positive, got {size}")
    image = Image.new("RGB", (width, height), PLACEHOLDER_BG)
    font = _font(max(10, round(28 * width / 1440)))
    # Wrap to the width: average glyph width is about 0.55 em.
    chars = max(8, int(width * 0.85 / (font.size * 0.55))) if hasattr(font, "size") else 40
    wrapped = "\n".join(textwrap.wrap(text, chars) or [""])
    draw = ImageDraw.Draw(image)
    draw.multiline_text((width / 2, height / 2), wrapped, PLACEHOLDER_FG, font, anchor="mm")
    return _encode(image)


def _encode(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
    return buffer.getvalue()


@lru_cache(maxsize=16)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """DejaVu Sans when installed, else Pillow's bundled font."""
    try:
        return ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default(size=size)

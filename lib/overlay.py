"""Draw an agent's action on its screenshot, so a reader sees where it clicked or typed.

Screenshots arrive as PNG bytes and leave as PNG bytes: the page hands them to
``st.image(..., output_format="PNG")`` and caches them, so we never keep decoded
images around. PNG (not JPEG) keeps page text sharp; a low zlib level keeps a
1440x900 overlay well under the 40 ms budget of an interactive step viewer.

No Streamlit here. Bytes that are not an image raise :class:`CorruptImage`, so the
page can show a placeholder for that one step instead of failing the whole view.
"""

from __future__ import annotations

import io
import textwrap
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

from lib import images
from lib.trajlog import SCREEN, Step, describe

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont
Color = tuple[int, int, int]

PNG_COMPRESS_LEVEL = 1
"""zlib level for output PNGs: level 1 is about 3x faster than Pillow's default 6."""

CLICK_COLOR: Color = (255, 0, 128)
"""Marker colour of clicks and typing: a magenta that web pages rarely use."""
MOVE_COLOR: Color = (255, 140, 0)
"""Marker colour of mouse moves (hover), so they are not mistaken for clicks."""
SCROLL_COLOR: Color = (0, 160, 255)
HALO: Color = (255, 255, 255)
BADGE_BG: Color = (24, 24, 27)
BADGE_FG: Color = (255, 255, 255)
SUCCESS_BG: Color = (22, 128, 61)
FAILURE_BG: Color = (185, 28, 28)
PLACEHOLDER_BG: Color = (205, 205, 210)
PLACEHOLDER_FG: Color = (60, 60, 67)

# Pictograms used when the font has them; plain words otherwise.
_SYMBOLS = {"key": "⌨", "visit_url": "→", "history_back": "←", "up": "↑", "down": "↓"}
_FONT_FILES = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf")


class CorruptImage(ValueError):
    """The bytes could not be decoded as an image (empty, truncated or not an image)."""


# ---------------------------------------------------------------------------
# Public API


def draw_action(png: bytes, step: Step | None, *, screen: tuple[int, int] = SCREEN) -> bytes:
    """Return a PNG of the screenshot with ``step`` drawn on it.

    Coordinates in ``step`` are in ``screen`` pixels and are scaled to the image's
    size. ``step=None`` (e.g. the final result screenshot) returns the image unchanged.
    Raises :class:`CorruptImage` when ``png`` cannot be decoded.
    """
    image = _open(png)
    if step is None:
        return png if image.format == "PNG" else _encode(image)
    canvas = image.convert("RGB")
    if images.overlay_size(canvas.size) != canvas.size:  # a tiny image: draw on it enlarged
        canvas = canvas.resize(images.overlay_size(canvas.size), Image.Resampling.NEAREST)
    _draw_step(canvas, step, screen)
    return _encode(canvas)


def draw_layer(step: Step, size: tuple[int, int], *, screen: tuple[int, int] = SCREEN) -> bytes:
    """A transparent PNG of ``size`` holding only ``step``'s action, to lay over the image.

    The same drawing as `draw_action` (marker, labels, badges), without decoding or
    re-encoding the screenshot: about 12 ms and a few kB instead of ~200 ms for a
    detailed 1440x900 PNG.
    """
    canvas = Image.new("RGBA", images.overlay_size(size), (0, 0, 0, 0))
    _draw_step(canvas, step, screen)
    return _encode(canvas)


def thumbnail(png: bytes, width: int = 240) -> bytes:
    """A PNG ``width`` pixels wide (aspect kept) for a filmstrip; never upscales."""
    if width <= 0:
        raise ValueError(f"width must be positive, got {width}")
    try:
        image = _open(png)
    except CorruptImage as exc:
        if not isinstance(exc.__cause__, images.ImageTooLarge):
            raise
        return placeholder("too large", (width, round(width * SCREEN[1] / SCREEN[0])))
    if image.mode not in ("RGB", "RGBA", "L"):
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    if image.width > width:
        height = max(1, round(image.height * width / image.width))
        # reducing_gap: a cheap integer reduce first, then a proper filter.
        image = image.resize((width, height), Image.Resampling.BILINEAR, reducing_gap=2.0)
    return _encode(image)


def placeholder(text: str, size: tuple[int, int] = SCREEN) -> bytes:
    """A grey PNG with ``text`` centred, standing in for a missing or corrupt screenshot."""
    width, height = size
    if width <= 0 or height <= 0:
        raise ValueError(f"size must be positive, got {size}")
    image = Image.new("RGB", (width, height), PLACEHOLDER_BG)
    font = _font(max(10, round(28 * width / SCREEN[0])))
    # Wrap to the width: average glyph width is about 0.55 em.
    chars = max(8, int(width * 0.85 / (font.size * 0.55))) if hasattr(font, "size") else 40
    wrapped = "\n".join(textwrap.wrap(text, chars) or [""])
    center = (width / 2, height / 2)
    draw = ImageDraw.Draw(image)
    draw.multiline_text(center, wrapped, PLACEHOLDER_FG, font, anchor="mm", align="center")
    return _encode(image)


def screen_to_image(
    point: tuple[int, int], image_size: tuple[int, int], screen: tuple[int, int] = SCREEN
) -> tuple[int, int]:
    """Map a screen coordinate to the image pixel that shows it, clamped into the image."""
    x = round(point[0] * image_size[0] / screen[0])
    y = round(point[1] * image_size[1] / screen[1])
    return _clamp(x, 0, image_size[0] - 1), _clamp(y, 0, image_size[1] - 1)


# ---------------------------------------------------------------------------
# Decoding and encoding


def _open(png: bytes) -> Image.Image:
    """Decode fully (not lazily) and never above `lib.images.MAX_PIXELS`, so truncated or
    oversized files fail here (`CorruptImage`, the cause says which) and not mid-drawing."""
    if not png:
        raise CorruptImage("empty image bytes")
    try:
        return images.open_bounded(png)
    except images.ImageProblem as exc:
        raise CorruptImage(f"image {exc}") from exc


def _encode(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
    return buffer.getvalue()


# ---------------------------------------------------------------------------
# Drawing one step


def _draw_step(canvas: Image.Image, step: Step, screen: tuple[int, int]) -> None:
    """Dispatch on the tool: spatial tools get a marker, the others a badge."""
    scale = min(canvas.width / screen[0], canvas.height / screen[1])
    pen = _Pen(ImageDraw.Draw(canvas), canvas.size, scale)
    point = screen_to_image(step.coordinate, canvas.size, screen) if step.coordinate else None
    off_screen = bool(step.coordinate) and not _on_screen(step.coordinate, screen)

    if step.tool == "type":
        _draw_type(pen, step, point)
    elif step.tool == "scroll":
        _draw_scroll(pen, step, point)
    elif point is not None:
        color = MOVE_COLOR if step.tool == "mouse_move" else CLICK_COLOR
        pen.marker(point, color)
        if step.tool not in ("left_click", "mouse_move"):
            pen.badge(describe(step))
    else:
        _draw_badge_for(pen, step)
    if off_screen and point is not None and step.coordinate is not None:
        pen.label(f"off-screen ({step.coordinate[0]}, {step.coordinate[1]})", point)


def _draw_type(pen: _Pen, step: Step, point: tuple[int, int] | None) -> None:
    """Marker where the agent typed, and the typed text in a label beside it."""
    text = _quoted(step.text or "", 60)
    if step.delete_existing_text:
        text = "replace: " + text
    if step.press_enter:
        text += " ⏎" if pen.has_symbols else " + Enter"
    if point is None:
        pen.badge(f"type {text}")
        return
    pen.marker(point, CLICK_COLOR)
    pen.label(text, point)


def _draw_scroll(pen: _Pen, step: Step, point: tuple[int, int] | None) -> None:
    """An arrow in the scroll direction (positive pixels = up), labelled with the amount."""
    anchor = point or (pen.size[0] // 2, pen.size[1] // 2)
    if point is not None:
        pen.marker(point, SCROLL_COLOR, small=True)
    pixels = step.scroll_pixels
    if not pixels:
        pen.label(describe(step), anchor)
        return
    direction = "up" if pixels > 0 else "down"
    pen.arrow(anchor, up=pixels > 0, length=abs(pixels) * pen.scale)
    word = _SYMBOLS[direction] if pen.has_symbols else f"scroll {direction}"
    pen.label(f"{word} {abs(pixels)} px", anchor)


def _draw_badge_for(pen: _Pen, step: Step) -> None:
    """Badge in the top-left corner for tools without a screen position."""
    args = step.arguments
    background = BADGE_BG
    if step.tool == "key":
        symbol = _SYMBOLS["key"] if pen.has_symbols else "key:"
        text = f"{symbol} {'+'.join(step.keys or []) or '?'}"
    elif step.tool == "visit_url":
        symbol = _SYMBOLS["visit_url"] if pen.has_symbols else "visit_url:"
        text = f"{symbol} {args.get('url', '?')}"
    elif step.tool == "history_back":
        text = f"{_SYMBOLS['history_back']} back" if pen.has_symbols else "history_back"
    elif step.tool == "terminate":
        status = str(args.get("status", "")).strip().lower()
        background = {"success": SUCCESS_BG, "failure": FAILURE_BG}.get(status, BADGE_BG)
        text = describe(step)
    else:
        text = describe(step)
    pen.badge(text, background)


# ---------------------------------------------------------------------------
# Primitives


class _Pen:
    """Drawing primitives sized for one image (marker radius, fonts, margins)."""

    def __init__(self, draw: ImageDraw.ImageDraw, size: tuple[int, int], scale: float) -> None:
        self.draw = draw
        self.size = size
        self.scale = scale
        self.font = _font(max(10, round(18 * scale)))
        self.has_symbols = _has_symbols(self.font)
        self.radius = max(6, round(18 * scale))
        self.margin = max(4, round(12 * scale))

    def marker(self, point: tuple[int, int], color: Color, *, small: bool = False) -> None:
        """Ring plus crosshair centred exactly on ``point``; white halo for contrast."""
        x, y = point
        r = self.radius // 2 if small else self.radius
        width = max(2, round(3 * self.scale))
        arm = round(r * 1.6)
        ring = (x - r, y - r, x + r, y + r)
        self.draw.ellipse(_grow(ring, 1), outline=HALO, width=width + 2)
        self.draw.ellipse(ring, outline=color, width=width)
        for start, end in (((x - arm, y), (x + arm, y)), ((x, y - arm), (x, y + arm))):
            self.draw.line((start, end), fill=HALO, width=3)
            self.draw.line((start, end), fill=color, width=1)
        # The centre dot makes the exact pixel unmistakable.
        self.draw.rectangle((x - 1, y - 1, x + 1, y + 1), fill=color)

    def arrow(self, start: tuple[int, int], *, up: bool, length: float) -> None:
        """Vertical arrow from ``start``; length clamped to stay visible and on the image."""
        sign = -1 if up else 1
        # Start just outside the small scroll marker, so the arrow does not hide it.
        x, y = start[0], start[1] + sign * (self.radius // 2 + 3)
        length = _clamp(round(length), self.radius * 2, round(self.size[1] * 0.4))
        tip_y = _clamp(y + sign * length, 0, self.size[1] - 1)
        head = self.radius
        width = max(3, round(5 * self.scale))
        self.draw.line(((x, y), (x, tip_y - sign * head)), fill=HALO, width=width + 4)
        self.draw.line(((x, y), (x, tip_y - sign * head)), fill=SCROLL_COLOR, width=width)
        triangle = [(x, tip_y), (x - head, tip_y - sign * head), (x + head, tip_y - sign * head)]
        self.draw.polygon(triangle, fill=SCROLL_COLOR, outline=HALO)

    def badge(self, text: str, background: Color = BADGE_BG) -> None:
        """Text on a dark rounded box in the top-left corner."""
        self._box((self.margin, self.margin), text, background)

    def label(self, text: str, point: tuple[int, int]) -> None:
        """Text box beside ``point`` (below-right, flipped to stay inside the image)."""
        text = self._fit(text)
        w, h = self._box_size(text)
        gap = self.radius + 4
        x, y = point[0] + gap, point[1] + gap
        if x + w > self.size[0]:
            x = point[0] - gap - w
        if y + h > self.size[1]:
            y = point[1] - gap - h
        x = _clamp(x, 0, max(0, self.size[0] - w))
        y = _clamp(y, 0, max(0, self.size[1] - h))
        self._box((x, y), text, BADGE_BG)

    def _box(self, origin: tuple[int, int], text: str, background: Color) -> None:
        text = self._fit(text)
        w, h = self._box_size(text)
        x, y = origin
        pad = self._pad()
        self.draw.rounded_rectangle((x, y, x + w, y + h), radius=pad, fill=background)
        self.draw.text((x + pad, y + pad), text, fill=BADGE_FG, font=self.font, anchor="lt")

    def _pad(self) -> int:
        return max(3, round(8 * self.scale))

    def _box_size(self, text: str) -> tuple[int, int]:
        left, top, right, bottom = self.draw.textbbox((0, 0), text, font=self.font, anchor="lt")
        pad = self._pad()
        return int(right - left) + 2 * pad, int(bottom - top) + 2 * pad

    def _fit(self, text: str) -> str:
        """Cut ``text`` (one line) so its box fits the image width."""
        text = " ".join(text.split())
        limit = self.size[0] - 2 * self.margin
        if self._box_size(text)[0] <= limit:
            return text
        low, high = 0, len(text)
        while low < high:  # Longest prefix that fits, with an ellipsis.
            mid = (low + high + 1) // 2
            if self._box_size(text[:mid] + "…")[0] <= limit:
                low = mid
            else:
                high = mid - 1
        return text[:low] + "…"


@lru_cache(maxsize=16)
def _font(size: int) -> Font:
    """DejaVu Sans when installed (it has ⌨ → ↑ ⏎), else Pillow's bundled font."""
    for name in _FONT_FILES:
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default(size=size)


@lru_cache(maxsize=16)
def _has_symbols(font: Font) -> bool:
    """True when every pictogram renders as a real glyph, not the "missing" box."""
    missing = bytes(font.getmask("\U0010fffd"))
    return all(bytes(font.getmask(ch)) != missing for ch in [*_SYMBOLS.values(), "⏎"])


def _quoted(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return '"' + (flat if len(flat) <= limit else flat[: limit - 1] + "…") + '"'


def _on_screen(point: tuple[int, int], screen: tuple[int, int]) -> bool:
    return 0 <= point[0] < screen[0] and 0 <= point[1] < screen[1]


def _grow(box: tuple[int, int, int, int], by: int) -> tuple[int, int, int, int]:
    return box[0] - by, box[1] - by, box[2] + by, box[3] + by


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))

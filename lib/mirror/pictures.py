"""Screenshots for the synthetic mirror: page layouts and their 1440x900 PNG rendering.

The agent logs of the mirror carry pixel coordinates. A viewer that overlays them on the
screenshots is only exercised if the element the agent acts on is really drawn at that
point, so the simulated agent here picks its targets from the same `Page` layouts that
are drawn. Screenshot k is a `Frame` (a page, its scroll offset and the text typed into
its inputs so far) and shows the page before action k+1.
"""

from __future__ import annotations

import functools
import struct
import zlib
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

SCREEN_W, SCREEN_H = 1440, 900
TAB_H, BAR_H = 38, 46
CHROME_H = TAB_H + BAR_H
"""Height of the browser chrome (tab strip + address bar) above the page viewport."""
VIEW_H = SCREEN_H - CHROME_H
PAGE_BG = (255, 255, 255)
CLICK_TARGETS = ("link", "button", "card")
"""Element kinds an agent clicks or hovers; like inputs, all are drawn with a non-white fill."""

ON_BRAND = (250, 250, 250)
"""Text on a brand-coloured header or button: not the page's pure white, so a click that
lands on a button's label still hits a drawn (non-background) pixel."""
LINK_FILL, LINK_INK = (236, 242, 255), (26, 13, 171)
INPUT_FILL, INPUT_EDGE = (247, 248, 250), (150, 154, 165)
CARD_FILL, CARD_EDGE = (250, 250, 252), (214, 216, 222)
INK, MUTED = (32, 33, 36), (112, 117, 122)
LINK_SIZE = 17
GRAIN, BLOB_CONTRAST = 0.15, 0.3
"""Pixel noise and blotchiness of photo stand-ins in detail mode; together with the page
layout they set the PNG size (real screenshots: 100-300 KB)."""
FILLER_TEXT = (
    "price rating reviews shipping available store details results options filter sort "
    "delivery returns size color brand features customer question answer popular new "
    "updated hours location map directions schedule departure arrival total guide"
)
FILLER_WORDS = tuple(FILLER_TEXT.split())


@dataclass(frozen=True)
class Element:
    """One drawable block of a page, in document coordinates (y grows with scrolling)."""

    kind: str  # header, link, button, input, card, title, image, text, label
    box: tuple[int, int, int, int]
    label: str = ""
    lines: int = 0


@dataclass(frozen=True)
class Page:
    """A page layout; immutable so that every screenshot of it can share it."""

    url: str
    title: str
    kind: str  # home, list, detail, search
    elements: tuple[Element, ...]
    height: int
    seed: int
    brand: tuple[int, int, int]


@dataclass(frozen=True)
class Frame:
    """What one screenshot shows: the page, its scroll offset and the typed input text."""

    page: Page
    scroll: int = 0
    typed: tuple[tuple[int, str], ...] = ()

    def screen_box(self, index: int) -> tuple[int, int, int, int]:
        """The element's box on screen (may lie partly or wholly outside the viewport)."""
        x0, y0, x1, y1 = self.page.elements[index].box
        dy = CHROME_H - self.scroll
        return x0, y0 + dy, x1, y1 + dy

    def visible(self, kinds: tuple[str, ...]) -> list[int]:
        """Indices of elements of these kinds that lie wholly inside the viewport."""
        out = []
        for i, el in enumerate(self.page.elements):
            _, y0, _, y1 = self.screen_box(i)
            if el.kind in kinds and y0 >= CHROME_H and y1 <= SCREEN_H:
                out.append(i)
        return out

    def point_in(self, index: int, rng: np.random.Generator) -> list[int]:
        """A click point near the middle of an element (where a model would click)."""
        x0, y0, x1, y1 = self.screen_box(index)
        w, h = x1 - x0, y1 - y0
        x = x0 + w // 2 + int(rng.integers(-w // 5, w // 5 + 1))
        y = y0 + h // 2 + int(rng.integers(-h // 6, h // 6 + 1))
        return [x, y]

    def text_of(self, index: int) -> str:
        """Text typed into an input so far ("" if none)."""
        return dict(self.typed).get(index, "")


# ----------------------------------------------------------------------------- layouts


def brand_color(domain: str) -> tuple[int, int, int]:
    """A stable, fairly dark brand colour per site, so pages of one site look alike."""
    h = zlib.crc32(domain.encode())
    return (40 + h % 140, 40 + (h >> 8) % 120, 60 + (h >> 16) % 150)


def make_page(
    url: str,
    title: str,
    kind: str,
    site: str,
    labels: list[str],
    rng: np.random.Generator,
    value: str = "",
    value_of: str = "",
) -> Page:
    """Lay out a page of the given kind; `labels` name its links and result cards.

    `value` is the detail the task asks for (e.g. a price) of the result `value_of`: a
    detail page about that result (`labels[0]`) shows it, a list page shows a price under
    it, so the screenshots support the answer that cites it.
    """
    els: list[Element] = [Element("header", (0, 0, SCREEN_W, 64), site)]
    nav = ["Home", "Deals", "Help", "Sign in"] if kind != "search" else ["All", "Images", "News"]
    x = 760
    for name in nav:
        els.append(_link(name, x, 16, 32))
        x = els[-1].box[2] + 24
    els.append(Element("input", (300, 86, 900, 132), f"Search {site}"))
    els.append(Element("button", (912, 86, 1032, 132), "Search"))
    els.append(Element("title", (60, 156, 1380, 196), title))
    if kind == "detail":
        y = _detail_body(els, labels, rng, value if labels[0] == value_of else "")
    elif kind == "list":
        y = _list_body(els, labels, rng, value, value_of)
    else:
        builder = {"home": _home_body}
        y = builder.get(kind, _search_body)(els, labels, rng)
    els.append(Element("text", (60, y + 30, 1000, y + 30 + 18 * 4), lines=4))
    x = 60
    for name in ("About", "Privacy", "Terms", "Contact"):
        els.append(_link(name, x, y + 120, 30))
        x += 150
    seed = int(rng.integers(0, 2**31))
    return Page(url, title, kind, tuple(els), y + 200, seed, brand_color(url.split("/")[2]))


def _link(label: str, x: int, y: int, height: int, max_width: int = 900) -> Element:
    """A link sized to its text, so a click anywhere on its pill hits the drawn link."""
    width = min(max_width, int(font(LINK_SIZE).getlength(label)) + 28)
    return Element("link", (x, y, x + width, y + height), label)


def _home_body(els: list[Element], labels: list[str], rng: np.random.Generator) -> int:
    """Hero banner plus a grid of product/result cards."""
    els.append(Element("image", (60, 220, 1380, 440)))
    y = 470
    for row in range(2):
        for col in range(4):
            x0 = 60 + col * 335
            label = labels[(row * 4 + col) % len(labels)]
            els.append(Element("card", (x0, y, x0 + 310, y + 250), label))
        y += 280
    els.append(Element("text", (60, y, 1380, y + 18 * 6), lines=6))
    return y + 18 * 6


def _list_body(
    els: list[Element],
    labels: list[str],
    rng: np.random.Generator,
    value: str = "",
    value_of: str = "",
) -> int:
    """Filter buttons on the left, a column of result rows with links and prices."""
    for i, name in enumerate(("Price", "Rating", "Brand", "Size", "Color", "Sort by")):
        els.append(Element("button", (60, 230 + i * 56, 290, 272 + i * 56), name))
    y = 226
    for i in range(7):
        label = labels[i % len(labels)]
        els.append(Element("image", (330, y, 530, y + 150)))
        els.append(_link(label, 560, y + 8, 36, max_width=760))
        els.append(Element("text", (560, y + 56, 1300, y + 56 + 18 * 3), lines=3))
        price = f"${int(rng.integers(12, 400))}.{int(rng.integers(0, 100)):02d}"
        if label == value_of and value.startswith("$"):
            price = value
        els.append(Element("label", (560, y + 118, 800, y + 146), price))
        y += 180
    els.append(Element("button", (560, y + 10, 700, y + 52), "Next page"))
    return y + 60


def _detail_body(
    els: list[Element], labels: list[str], rng: np.random.Generator, value: str = ""
) -> int:
    """Large image, the item's name and key detail, buy/save buttons and related links."""
    els.append(Element("image", (60, 220, 620, 640)))
    els.append(Element("label", (740, 220, 1380, 256), labels[0]))
    price = f"${int(rng.integers(12, 400))}.{int(rng.integers(0, 100)):02d}"
    els.append(Element("label", (740, 270, 1380, 306), value or price))
    els.append(Element("text", (740, 330, 1380, 330 + 18 * 8), lines=8))
    els.append(Element("button", (740, 500, 960, 550), "Add to cart"))
    els.append(Element("button", (980, 500, 1140, 550), "Save"))
    els.append(Element("input", (740, 580, 1140, 624), "Quantity or date"))
    y = 740
    els.append(Element("text", (60, y, 1380, y + 18 * 10), lines=10))
    y += 18 * 10 + 30
    for i, label in enumerate(labels[1:5]):
        els.append(_link(label, 60, y + i * 48, 36))
    return y + 4 * 48


def _search_body(els: list[Element], labels: list[str], rng: np.random.Generator) -> int:
    """Search-engine results: title links, snippets and green URLs."""
    y = 220
    for i in range(8):
        label = labels[i % len(labels)]
        els.append(_link(label, 60, y, 34))
        els.append(Element("text", (60, y + 42, 1000, y + 42 + 18 * 2), lines=2))
        y += 110
    return y


# ----------------------------------------------------------------------------- rendering


@functools.lru_cache(maxsize=16)
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled font (no system fonts needed), cached per size."""
    return ImageFont.load_default(size)


def render_png(frame: Frame, *, detail: bool, level: int) -> bytes:
    """Draw one 1440x900 screenshot and encode it as PNG.

    `detail` adds what makes real screenshots 100-300 KB (real text lines, photo-like
    textures, gradients); without it text blocks are grey skeleton bars, which is much
    faster to draw and compress.
    """
    img = Image.new("RGB", (SCREEN_W, SCREEN_H), PAGE_BG)
    draw = ImageDraw.Draw(img)
    typed = dict(frame.typed)
    for i, el in enumerate(frame.page.elements):
        box = frame.screen_box(i)
        if box[3] < CHROME_H or box[1] > SCREEN_H:
            continue
        rng = np.random.default_rng((frame.page.seed, i))  # same look at any scroll offset
        _draw_element(img, draw, el, box, frame.page, typed.get(i), rng, detail)
    _draw_chrome(draw, frame.page)
    return encode_png(img, level)


def _draw_element(
    img: Image.Image,
    draw: ImageDraw.ImageDraw,
    el: Element,
    box: tuple[int, int, int, int],
    page: Page,
    typed: str | None,
    rng: np.random.Generator,
    detail: bool,
) -> None:
    """Draw one element at its screen box."""
    x0, y0, x1, y1 = box
    if el.kind == "header":
        draw.rectangle(box, fill=page.brand)
        draw.text((x0 + 60, y0 + 16), el.label, fill=ON_BRAND, font=font(28))
    elif el.kind == "link":
        draw.rounded_rectangle(box, 6, fill=LINK_FILL)
        draw.text(
            (x0 + 14, y0 + (y1 - y0 - 18) // 2), el.label, fill=LINK_INK, font=font(LINK_SIZE)
        )
        draw.line((x0 + 12, y1 - 6, x1 - 12, y1 - 6), fill=LINK_INK)
    elif el.kind == "button":
        draw.rounded_rectangle(box, 8, fill=page.brand)
        draw.text((x0 + 16, y0 + (y1 - y0 - 18) // 2), el.label, fill=ON_BRAND, font=font(18))
    elif el.kind == "input":
        draw.rounded_rectangle(box, 6, fill=INPUT_FILL, outline=INPUT_EDGE, width=2)
        text, ink = (typed, INK) if typed else (el.label, MUTED)
        draw.text((x0 + 14, y0 + (y1 - y0 - 18) // 2), text, fill=ink, font=font(18))
        if typed:
            cx = x0 + 16 + int(font(18).getlength(typed))
            draw.line((cx, y0 + 10, cx, y1 - 10), fill=INK, width=2)
    elif el.kind == "card":
        draw.rounded_rectangle(box, 10, fill=CARD_FILL, outline=CARD_EDGE, width=2)
        _draw_image(img, draw, (x0 + 10, y0 + 10, x1 - 10, y0 + 170), rng, detail)
        draw.text((x0 + 14, y0 + 184), el.label[:30], fill=LINK_INK, font=font(17))
        draw.text(
            (x0 + 14, y0 + 212),
            f"{rng.integers(1, 5)}.{rng.integers(0, 10)} stars",
            fill=MUTED,
            font=font(14),
        )
    elif el.kind == "title":
        draw.text((x0, y0), el.label, fill=INK, font=font(30))
    elif el.kind == "label":
        draw.text((x0, y0 + 4), el.label, fill=INK, font=font(22))
    elif el.kind == "image":
        _draw_image(img, draw, box, rng, detail)
    elif el.kind == "text":
        _draw_text_block(draw, box, el.lines, rng, detail)


def _draw_text_block(
    draw: ImageDraw.ImageDraw,
    box: tuple[int, int, int, int],
    lines: int,
    rng: np.random.Generator,
    detail: bool,
) -> None:
    """Paragraph lines: real words in detail mode, grey skeleton bars otherwise."""
    x0, y0, x1, _ = box
    width = x1 - x0
    for k in range(lines):
        y = y0 + 18 * k
        frac = 0.55 + 0.45 * float(rng.random()) if k < lines - 1 else 0.4
        if detail:
            words = rng.choice(FILLER_WORDS, size=max(4, int(width * frac / 60)))
            draw.text((x0, y), " ".join(words).capitalize(), fill=(70, 72, 76), font=font(14))
        else:
            draw.rectangle((x0, y + 4, x0 + int(width * frac), y + 12), fill=(222, 224, 228))


def _draw_image(
    img: Image.Image,
    draw: ImageDraw.ImageDraw,
    box: tuple[int, int, int, int],
    rng: np.random.Generator,
    detail: bool,
) -> None:
    """A photo stand-in: a two-colour gradient, with a noisy texture in detail mode."""
    x0, y0, x1, y1 = (int(v) for v in box)
    c0 = rng.integers(40, 230, size=3)
    c1 = rng.integers(40, 230, size=3)
    if not detail:
        draw.rectangle((x0, y0, x1, y1), fill=tuple(int(v) for v in c0))
        draw.rectangle((x0, (y0 + y1) // 2, x1, y1), fill=tuple(int(v) for v in c1))
        return
    top, bottom = max(y0, CHROME_H), min(y1, SCREEN_H)
    if bottom <= top:
        return
    h, w = y1 - y0, x1 - x0
    t = np.linspace(0.0, 1.0, h, dtype=np.float32)[:, None, None]
    s = np.linspace(0.0, 1.0, w, dtype=np.float32)[None, :, None]
    base = c0 * (1 - t) * (1 - 0.3 * s) + c1 * t + 30 * np.sin(6 * s + 3 * t)
    coarse = rng.normal(128, 40, (h // 16 + 2, w // 16 + 2)).clip(0, 255).astype(np.uint8)
    blobs = np.asarray(Image.fromarray(coarse).resize((w, h), Image.Resampling.BILINEAR))
    grain = rng.normal(0, GRAIN, (h, w, 1)).astype(np.float32)
    arr = base + BLOB_CONTRAST * (blobs[:, :, None] - 128.0) + grain
    arr = np.clip(arr, 0, 255).astype(np.uint8)
    img.paste(Image.fromarray(arr[top - y0 : bottom - y0]), (x0, top))


def _draw_chrome(draw: ImageDraw.ImageDraw, page: Page) -> None:
    """Tab strip with the page title, and the address bar with the URL."""
    draw.rectangle((0, 0, SCREEN_W, TAB_H), fill=(222, 225, 230))
    draw.rounded_rectangle((8, 6, 300, TAB_H + 6), 8, fill=(247, 248, 249))
    draw.text((22, 13), page.title[:30], fill=INK, font=font(14))
    draw.rectangle((0, TAB_H, SCREEN_W, CHROME_H - 1), fill=(247, 248, 249))
    draw.line((0, CHROME_H - 1, SCREEN_W, CHROME_H - 1), fill=(210, 212, 216))
    for i in range(3):  # back, forward, reload
        cx = 26 + 34 * i
        draw.ellipse((cx - 9, TAB_H + 14, cx + 9, TAB_H + 32), outline=MUTED, width=2)
    draw.rounded_rectangle((120, TAB_H + 7, SCREEN_W - 80, CHROME_H - 8), 15, fill=(233, 235, 238))
    draw.text((146, TAB_H + 13), page.url, fill=INK, font=font(16))


def encode_png(img: Image.Image, level: int) -> bytes:
    """Encode an RGB image as PNG using the "Up" filter on every row and one IDAT chunk.

    About twice as fast as Pillow's encoder (which tries five filters per row), still
    compact for flat pages and vertical gradients, and byte-stable for a given zlib. The
    array goes to zlib as a buffer: no 3.9 MB copy per screenshot.
    """
    w, h = img.size
    pixels = np.asarray(img, dtype=np.uint8).reshape(h, 3 * w)
    rows = np.empty((h, 1 + 3 * w), dtype=np.uint8)
    rows[:, 0] = 2  # filter type Up: each byte minus the byte above it (mod 256)
    rows[0, 1:] = pixels[0]
    np.subtract(pixels[1:], pixels[:-1], out=rows[1:, 1:])

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, level))
        + chunk(b"IEND", b"")
    )

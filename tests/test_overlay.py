"""Tests for lib.overlay: actions drawn at the right pixel, robust decoding, fast output."""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageDraw

from lib.overlay import (
    BADGE_BG,
    CLICK_COLOR,
    FAILURE_BG,
    MOVE_COLOR,
    PLACEHOLDER_BG,
    SCROLL_COLOR,
    SUCCESS_BG,
    CorruptImage,
    draw_action,
    placeholder,
    screen_to_image,
    thumbnail,
)
from lib.trajlog import Step, parse_log

WHITE = (255, 255, 255)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_bytes(size: tuple[int, int] = (1440, 900), color: tuple[int, int, int] = WHITE) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


def step(tool: str, **args: Any) -> Step:
    """A Step built through the real parser, as the page will get it."""
    line = json.dumps({"action": tool, "url": "", "arguments": {"action": tool, **args}})
    parsed = parse_log(line)
    assert len(parsed.steps) == 1
    return parsed.steps[0]


def pixels(png: bytes) -> np.ndarray:
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    return np.asarray(image.convert("RGB"))


def mask_of(array: np.ndarray, color: tuple[int, int, int]) -> np.ndarray:
    return np.all(array == np.array(color, dtype=array.dtype), axis=-1)


def changed_box(before: bytes, after: bytes) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1) of the pixels that differ."""
    diff = np.any(pixels(before) != pixels(after), axis=-1)
    ys, xs = np.nonzero(diff)
    assert xs.size, "nothing was drawn"
    return int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())


# ---------------------------------------------------------------------------
# Markers at the right place


def test_click_marker_is_drawn_exactly_at_the_coordinate() -> None:
    base = png_bytes()
    out = draw_action(base, step("left_click", coordinate=[512, 300]))
    assert out.startswith(PNG_SIGNATURE)
    array = pixels(out)
    assert array.shape == (900, 1440, 3)
    assert tuple(array[300, 512]) == CLICK_COLOR
    # The marker is local and centred on the point.
    x0, y0, x1, y1 = changed_box(base, out)
    assert (x0 + x1) / 2 == pytest.approx(512, abs=1)
    assert (y0 + y1) / 2 == pytest.approx(300, abs=1)
    assert x1 - x0 < 100 and y1 - y0 < 100
    assert tuple(array[800, 100]) == WHITE


def test_marker_scales_to_a_smaller_image() -> None:
    base = png_bytes((720, 450))
    out = draw_action(base, step("left_click", coordinate=[512, 300]))
    array = pixels(out)
    assert array.shape == (450, 720, 3)
    assert tuple(array[150, 256]) == CLICK_COLOR
    assert tuple(array[300, 512]) == WHITE  # the unscaled spot is untouched
    x0, y0, x1, y1 = changed_box(base, out)
    assert (x0 + x1) / 2 == pytest.approx(256, abs=1)
    assert (y0 + y1) / 2 == pytest.approx(150, abs=1)


def test_custom_screen_size_is_respected() -> None:
    click = step("left_click", coordinate=[100, 50])
    out = draw_action(png_bytes((720, 450)), click, screen=(720, 450))
    assert tuple(pixels(out)[50, 100]) == CLICK_COLOR


def test_mouse_move_uses_its_own_colour() -> None:
    array = pixels(draw_action(png_bytes(), step("mouse_move", coordinate=[40, 60])))
    assert tuple(array[60, 40]) == MOVE_COLOR
    assert not mask_of(array, CLICK_COLOR).any()


def test_off_screen_coordinate_is_clamped_to_the_edge_and_labelled() -> None:
    array = pixels(draw_action(png_bytes(), step("left_click", coordinate=[2000, 300])))
    assert tuple(array[300, 1439]) == CLICK_COLOR
    assert mask_of(array, BADGE_BG).any()  # the "off-screen" label


@pytest.mark.parametrize(
    ("point", "size", "expected"),
    [
        ((512, 300), (1440, 900), (512, 300)),
        ((512, 300), (720, 450), (256, 150)),
        ((-5, 950), (1440, 900), (0, 899)),
    ],
)
def test_screen_to_image(point, size, expected) -> None:
    assert screen_to_image(point, size) == expected


# ---------------------------------------------------------------------------
# Labels, arrows and badges


def label_width(text: str) -> int:
    """Width of the dark label drawn for a typed text at (200, 200)."""
    array = pixels(draw_action(png_bytes(), step("type", text=text, coordinate=[200, 200])))
    assert tuple(array[200, 200]) == CLICK_COLOR
    dark = mask_of(array, BADGE_BG)
    ys, xs = np.nonzero(dark)
    # The label sits below-right of the point.
    assert xs.min() > 200 and ys.min() > 200
    return int(xs.max() - xs.min())


def test_typed_text_is_labelled_next_to_its_coordinate() -> None:
    assert label_width("a much longer piece of typed text") > label_width("hi") + 100


def test_label_near_the_right_edge_flips_left_and_stays_inside() -> None:
    array = pixels(draw_action(png_bytes(), step("type", text="hello", coordinate=[1435, 895])))
    ys, xs = np.nonzero(mask_of(array, BADGE_BG))
    assert xs.size and xs.max() < 1435 and ys.max() < 895


def test_very_long_url_badge_is_cut_to_the_image_width() -> None:
    long_url = "https://example.com/" + "a" * 3000
    array = pixels(draw_action(png_bytes(), step("visit_url", url=long_url)))
    _, xs = np.nonzero(mask_of(array, BADGE_BG))
    # Wide, yet it ends before the edge: it was cut, not clipped by the image border.
    assert xs.max() - xs.min() > 1000
    assert xs.max() < 1439


@pytest.mark.parametrize(("amount", "up"), [(300, True), (-300, False)])
def test_scroll_arrow_points_in_the_scroll_direction(amount: int, up: bool) -> None:
    array = pixels(draw_action(png_bytes(), step("scroll", coordinate=[700, 450], pixels=amount)))
    blue = mask_of(array, SCROLL_COLOR)
    above, below = int(blue[:440].sum()), int(blue[461:].sum())
    assert (above > 5 * below) if up else (below > 5 * above)


def test_scroll_arrow_grows_with_the_amount() -> None:
    def arrow_height(amount: int) -> int:
        out = draw_action(png_bytes(), step("scroll", coordinate=[700, 800], pixels=amount))
        ys, _ = np.nonzero(mask_of(pixels(out), SCROLL_COLOR))
        return int(ys.max() - ys.min())

    assert arrow_height(300) > arrow_height(100) + 100


def test_scroll_without_coordinate_is_drawn_at_the_centre() -> None:
    array = pixels(draw_action(png_bytes(), step("scroll", pixels=200)))
    ys, xs = np.nonzero(mask_of(array, SCROLL_COLOR))
    assert abs(int(np.median(xs)) - 720) <= 2
    assert ys.max() < 450  # up from the centre


def top_left_colors(png: bytes) -> set[tuple[int, int, int]]:
    corner = pixels(png)[:60, :300].reshape(-1, 3)
    return {tuple(int(v) for v in c) for c in np.unique(corner, axis=0)}


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("key", {"keys": ["Control", "L"]}),
        ("visit_url", {"url": "https://example.com"}),
        ("web_search", {"query": "shoes"}),
        ("history_back", {}),
        ("wait", {"time": 2}),
        ("pause_and_memorize_fact", {"fact": "x"}),
        ("some_new_tool", {"a": 1}),
    ],
)
def test_tools_without_position_get_a_top_left_badge(tool: str, args: dict[str, Any]) -> None:
    out = draw_action(png_bytes(), step(tool, **args))
    colors = top_left_colors(out)
    assert BADGE_BG in colors and WHITE in colors
    assert not mask_of(pixels(out)[100:], BADGE_BG).any()  # nothing else drawn


@pytest.mark.parametrize(("status", "color"), [("success", SUCCESS_BG), ("failure", FAILURE_BG)])
def test_terminate_badge_is_coloured_by_status(status: str, color) -> None:
    assert color in top_left_colors(draw_action(png_bytes(), step("terminate", status=status)))


def test_badge_text_differs_with_content() -> None:
    a = draw_action(png_bytes(), step("key", keys=["Enter"]))
    b = draw_action(png_bytes(), step("key", keys=["Control", "Shift", "T"]))
    assert not np.array_equal(pixels(a), pixels(b))


# ---------------------------------------------------------------------------
# Input handling


def test_no_step_returns_the_png_unchanged() -> None:
    base = png_bytes()
    assert draw_action(base, None) == base


def test_no_step_with_a_jpeg_still_returns_png() -> None:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 40), (10, 20, 30)).save(buffer, format="JPEG")
    out = draw_action(buffer.getvalue(), None)
    assert out.startswith(PNG_SIGNATURE)
    assert Image.open(io.BytesIO(out)).size == (64, 40)


def test_rgba_and_palette_inputs_are_accepted() -> None:
    for mode in ("RGBA", "P", "L"):
        buffer = io.BytesIO()
        Image.new(mode, (1440, 900)).save(buffer, format="PNG")
        array = pixels(draw_action(buffer.getvalue(), step("left_click", coordinate=[5, 5])))
        assert tuple(array[5, 5]) == CLICK_COLOR


def truncated_png() -> bytes:
    image = Image.effect_noise((300, 200), 60).convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()[: len(buffer.getvalue()) // 2]


@pytest.mark.parametrize("data", [b"", b"not an image at all", PNG_SIGNATURE + b"\0" * 40])
def test_corrupt_bytes_raise_corrupt_image(data: bytes) -> None:
    with pytest.raises(CorruptImage):
        draw_action(data, step("left_click", coordinate=[1, 1]))
    with pytest.raises(CorruptImage):
        thumbnail(data)


def test_truncated_png_raises_corrupt_image_even_without_a_step() -> None:
    with pytest.raises(CorruptImage):
        draw_action(truncated_png(), None)


# ---------------------------------------------------------------------------
# Thumbnails and placeholders


@pytest.mark.parametrize(("width", "expected"), [(240, (240, 150)), (480, (480, 300))])
def test_thumbnail_size_keeps_aspect(width: int, expected: tuple[int, int]) -> None:
    out = thumbnail(png_bytes(), width)
    assert out.startswith(PNG_SIGNATURE)
    assert Image.open(io.BytesIO(out)).size == expected


def test_thumbnail_never_upscales_and_rejects_bad_width() -> None:
    assert Image.open(io.BytesIO(thumbnail(png_bytes((200, 100)), 240))).size == (200, 100)
    with pytest.raises(ValueError):
        thumbnail(png_bytes(), 0)


def test_thumbnail_keeps_the_marker_visible() -> None:
    drawn = draw_action(png_bytes(), step("left_click", coordinate=[720, 450]))
    small = pixels(thumbnail(drawn, 240))
    # Around (120, 75): reddish pixels from the marker survive the downscale.
    patch = small[70:81, 115:126].astype(int)
    assert ((patch[..., 0] - patch[..., 1]) > 60).any()


def test_placeholder_is_a_grey_png_with_the_message() -> None:
    out = placeholder("Screenshot 3 is missing")
    assert out.startswith(PNG_SIGNATURE)
    array = pixels(out)
    assert array.shape == (900, 1440, 3)
    background = mask_of(array, PLACEHOLDER_BG)
    assert background.mean() > 0.9
    assert not background.all()  # text was drawn
    _, xs = np.nonzero(~background)
    assert abs((xs.min() + xs.max()) / 2 - 720) < 20  # centred


def test_placeholder_custom_size_and_long_text_wraps() -> None:
    array = pixels(placeholder("word " * 200, size=(320, 200)))
    assert array.shape == (200, 320, 3)
    ys, xs = np.nonzero(~mask_of(array, PLACEHOLDER_BG))
    assert xs.min() >= 0 and xs.max() < 320
    assert ys.max() - ys.min() > 40  # several lines
    with pytest.raises(ValueError):
        placeholder("x", size=(0, 10))


# ---------------------------------------------------------------------------
# Speed


def page_like_png() -> bytes:
    """A 1440x900 screenshot-like PNG: lines of text, blocks and a photo-like area."""
    image = Image.new("RGB", (1440, 900), WHITE)
    draw = ImageDraw.Draw(image)
    for y in range(0, 900, 18):
        draw.text(
            (20, y),
            "Search results for red running shoes, size 42, free delivery " * 2,
            fill=(40, 40, 40),
        )
    draw.rectangle((900, 120, 1380, 480), fill=(30, 120, 200))
    image.paste(Image.effect_noise((320, 200), 40).convert("RGB"), (960, 560))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()

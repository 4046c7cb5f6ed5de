"""`lib.images`: the pixel cap is enforced from the header; bad bytes become reasons."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from lib import images, overlay
from lib import viewer as lib_viewer
from lib.trajlog import Step
from tests.hostile_images import NOT_AN_IMAGE, huge_png, png, tiny_png, truncated_png


@pytest.fixture(scope="module")
def huge() -> bytes:
    return huge_png()


def test_huge_png_is_small_on_disk_and_its_size_is_read_from_the_header(huge: bytes) -> None:
    assert len(huge) < 100_000
    info = images.probe(huge)
    assert info.size == (13_000, 13_000) and info.format == "PNG"
    with pytest.raises(images.ImageTooLarge, match=r"13,000 x 13,000 px \(169\.0 Mpx\)"):
        images.open_bounded(huge)
    with pytest.raises(images.ImageTooLarge):
        images.check_size(huge)


def test_a_png_at_the_cap_is_decoded_and_one_above_is_refused() -> None:
    data = png((100, 100))
    assert images.open_bounded(data, max_pixels=10_000).size == (100, 100)
    with pytest.raises(images.ImageTooLarge):
        images.open_bounded(data, max_pixels=9_999)


def test_an_over_cap_jpeg_is_decoded_reduced_with_draft() -> None:
    buffer = io.BytesIO()
    Image.new("RGB", (4000, 3000), (50, 100, 150)).save(buffer, format="JPEG")
    image = images.open_bounded(buffer.getvalue(), max_pixels=1_000_000)
    assert image.size[0] * image.size[1] <= 1_000_000
    assert image.size == (1000, 750)  # the decoder's 1/4 scale, aspect kept


@pytest.mark.parametrize(
    ("data", "expected"),
    [(b"", "empty"), (NOT_AN_IMAGE, "cannot be decoded"), (None, "empty")],
)
def test_bad_bytes_raise_a_reason(data: bytes | None, expected: str) -> None:
    with pytest.raises(images.ImageProblem, match=expected):
        images.probe(data)


def test_a_truncated_png_is_found_by_the_crc_check_without_decoding() -> None:
    with pytest.raises(images.ImageProblem, match="cannot be decoded"):
        images.probe(truncated_png())
    with pytest.raises(images.ImageProblem):
        images.open_bounded(truncated_png())


def test_overlay_size_enlarges_tiny_images_and_keeps_normal_ones() -> None:
    assert images.overlay_size((1440, 900)) == (1440, 900)
    assert images.overlay_size((1, 1)) == (300, 300)
    assert images.overlay_size((2, 1)) == (600, 300)
    width, height = images.overlay_size((1, 900))
    assert max(width, height) <= images.MAX_OVERLAY_SIDE and width >= 1


def _share_of_colour(data: bytes, colour: tuple[int, int, int]) -> float:
    image = Image.open(io.BytesIO(data)).convert("RGBA")
    pixels = list(image.getdata())
    return sum(1 for p in pixels if p[:3] == colour and p[3] > 0) / len(pixels)


def test_a_click_on_a_1x1_screenshot_is_a_marker_not_a_solid_square() -> None:
    step = Step(index=0, tool="left_click", raw_tool="left_click", coordinate=(720, 450))
    layer = lib_viewer.action_layer(step, (1, 1))
    assert layer is not None
    assert Image.open(io.BytesIO(layer)).size == (300, 300)
    assert 0 < _share_of_colour(layer, overlay.CLICK_COLOR) < 0.05
    drawn = overlay.draw_action(tiny_png(), step)
    assert Image.open(io.BytesIO(drawn)).size == (300, 300)
    assert _share_of_colour(drawn, overlay.CLICK_COLOR) < 0.05


def test_overlay_and_thumbnail_refuse_the_huge_png_without_decoding(huge: bytes) -> None:
    with pytest.raises(overlay.CorruptImage, match="Mpx"):
        overlay.draw_action(huge, None)
    thumb = overlay.thumbnail(huge, 240)
    assert Image.open(io.BytesIO(thumb)).size == (240, 150)  # a "too large" placeholder
    shown = Image.open(io.BytesIO(lib_viewer.drawn_png(huge, None, 3)))
    assert shown.size == lib_viewer.PLACEHOLDER_SIZE  # a placeholder, not a decode

"""`lib.images`: the pixel cap is enforced from the header; bad bytes become reasons."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from lib import images
from tests.helpers.hostile_images import NOT_AN_IMAGE, huge_png, png, truncated_png


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


def test_thumbnail_refuses_the_huge_png_without_decoding(huge: bytes) -> None:
    thumb = images.thumbnail(huge, 240)
    assert Image.open(io.BytesIO(thumb)).size == (240, 150)  # a "too large" placeholder
    with pytest.raises(images.ImageProblem):
        images.thumbnail(truncated_png(), 240)


def _rgb(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


@pytest.mark.parametrize(("width", "expected"), [(240, (240, 150)), (480, (480, 300))])
def test_thumbnail_size_keeps_aspect(width: int, expected: tuple[int, int]) -> None:
    out = images.thumbnail(png((1440, 900)), width)
    assert out.startswith(b"\x89PNG\r\n\x1a\n")
    assert Image.open(io.BytesIO(out)).size == expected


def test_thumbnail_never_upscales_and_rejects_bad_width() -> None:
    small = images.thumbnail(png((200, 100)), 240)
    assert Image.open(io.BytesIO(small)).size == (200, 100)
    with pytest.raises(ValueError):
        images.thumbnail(png((1440, 900)), 0)


def test_placeholder_is_a_grey_png_with_the_message_centred() -> None:
    array = _rgb(images.placeholder("Screenshot 3 is missing", (1440, 900)))
    assert array.shape == (900, 1440, 3)
    background = (array == images.PLACEHOLDER_BG).all(axis=-1)
    assert background.mean() > 0.9
    assert not background.all()  # text was drawn
    _, xs = np.nonzero(~background)
    assert abs((xs.min() + xs.max()) / 2 - 720) < 20


def test_placeholder_long_text_wraps_inside_a_custom_size() -> None:
    array = _rgb(images.placeholder("word " * 200, (320, 200)))
    assert array.shape == (200, 320, 3)
    ys, xs = np.nonzero(~(array == images.PLACEHOLDER_BG).all(axis=-1))
    assert xs.max() < 320 and ys.max() - ys.min() > 40  # several lines
    with pytest.raises(ValueError):
        images.placeholder("x", (0, 10))

"""Image bytes an attacker (or a broken export) can put into the screenshots column.

`huge_png()` writes a 13000x13000 one-bit PNG (about 37 KB) row by row with zlib, so the
test never holds the 169 Mpx it decodes to.
"""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def huge_png(width: int = 13_000, height: int = 13_000) -> bytes:
    """A valid 1-bit greyscale PNG of `width` x `height` (all black), built streaming."""
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    row = b"\x00" + b"\x00" * ((width + 7) // 8)
    packer = zlib.compressobj(9)
    parts = [packer.compress(row) for _ in range(height)]
    idat = b"".join(parts) + packer.flush()
    signature = b"\x89PNG\r\n\x1a\n"
    return signature + _chunk(b"IHDR", header) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")


def png(size: tuple[int, int], color: tuple[int, int, int] = (200, 200, 200)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


def truncated_png() -> bytes:
    """A real 1440x900 PNG cut in the middle of its pixel data."""
    whole = png((1440, 900), (10, 120, 200))
    return whole[: len(whole) // 2]


def tiny_png() -> bytes:
    return png((1, 1))


NOT_AN_IMAGE = b"GIF? no: <html><img src=http://planted.invalid/x.png></html>"

"""Peak RSS of showing a 13000x13000 one-bit PNG (37 KB): naive decode vs `lib.images`.

`python -m bench.images_memory` runs each approach in a fresh interpreter and prints the
peak RSS above that interpreter's baseline (ru_maxrss, Linux: KiB).
"""

from __future__ import annotations

import subprocess
import sys

SETUP = """
import io, resource, sys
from PIL import Image
Image.MAX_IMAGE_PIXELS = None
from tests.helpers.hostile_images import huge_png
from lib import images  # imported before the baseline: only the work is measured
data = huge_png()
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
"""

APPROACHES = {
    "naive: Image.open().load()": "Image.open(io.BytesIO(data)).load()",
    "old thumbnail: load, RGB, resize to 240": (
        "im = Image.open(io.BytesIO(data)); im.load(); im = im.convert('RGB')\n"
        "im = im.resize((240, 240), Image.Resampling.BILINEAR, reducing_gap=2.0)"
    ),
    "old layer: RGBA canvas at header size": "Image.new('RGBA', (13000, 13000))",
    "lib.images.open_bounded (refuses)": (
        "try:\n    images.open_bounded(data)\nexcept images.ImageTooLarge:\n    pass"
    ),
    "lib.images.thumbnail (placeholder)": "images.thumbnail(data)",
}


def measure(code: str) -> float:
    """Peak RSS growth in MB of running `code` after SETUP."""
    script = (
        SETUP
        + code
        + ("\nprint((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024)")
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    return float(out.strip().splitlines()[-1])


def main() -> None:
    print(f"{'approach':45} peak RSS growth")
    for name, code in APPROACHES.items():
        print(f"{name:45} {measure(code):8.1f} MB")


if __name__ == "__main__":
    main()

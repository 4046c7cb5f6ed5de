"""Screenshot a page of a running app, as a user sees it.

    .venv/bin/python -m tools.screenshot URL OUT.png [--width 1400] [--height 1000]

The height grows to the page's content, so the picture shows the whole page.
"""

from __future__ import annotations

import argparse

from playwright.sync_api import sync_playwright

from tests.helpers.browser import CHROMIUM, wait_for_run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument("out")
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=1000)
    parser.add_argument("--crop", type=int, default=0, help="keep only the top N pixels")
    args = parser.parse_args(argv)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        page = browser.new_page(viewport={"width": args.width, "height": args.height})
        page.goto(args.url)
        wait_for_run(page)
        height = page.evaluate(
            "() => (document.querySelector('[data-testid=stMain]') || document.body).scrollHeight"
        )
        page.set_viewport_size({"width": args.width, "height": max(args.height, int(height))})
        page.wait_for_timeout(1500)
        clip = {"x": 0, "y": 0, "width": args.width, "height": args.crop} if args.crop else None
        page.screenshot(path=args.out, full_page=clip is None, clip=clip)
        browser.close()


if __name__ == "__main__":
    main()

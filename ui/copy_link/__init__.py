"""The "Copy link" box: the address of the view as the browser has it at this moment.

Why in the browser: the trajectory stepper writes `step=` into the address with
`history.pushState` and no server run, so a link the server built at the end of its last
run would drop the step (issue 30). This component reads `window.location` when it is
shown and again at the click, and rebuilds the link on `origin`: the Space's direct
address (`lib.uploads.share_link`) in a Space, else the browser's own origin. Streamlit's and
Hugging Face's own parameters (`embed`, `embed_options`, `__sign`, any `__*`) are dropped.
`fallback` (the server's link) is what shows before the script runs.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

_HERE = Path(__file__).parent

_mount = st.components.v2.component(
    "cuavb_copy_link",
    css=(_HERE / "copy_link.css").read_text(encoding="utf-8"),
    js=(_HERE / "copy_link.js").read_text(encoding="utf-8"),
)


def copy_link(fallback: str, origin: str | None, key: str = "copy_link") -> None:
    """The live link and its Copy button. `origin`: `https://<SPACE_HOST>` or None."""
    _mount(key=key, data={"fallback": fallback, "origin": origin}, height="content")

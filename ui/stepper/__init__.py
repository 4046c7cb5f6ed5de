"""The trajectory stepper: an `st.components.v2` component that steps in the browser.

Why: a Streamlit rerun per step cost 170-536 ms in chromium, mostly the browser
re-rendering the page. The page hands this component one trajectory
(`lib.viewer.stepper_data`: steps and screenshot URLs) and it then steps with buttons,
arrow keys, slider and filmstrip, draws the action as SVG over the image, preloads the
neighbours and writes `step=` into the URL with `history.pushState`: no server run.
With the Universal Verifier's evidence (`data.evidence`, `lib.viewer.stepper_evidence`) it
also lists the rubric's criteria: choosing one jumps to its most relevant screenshot and
marks the screenshots the verifier chose for it on the filmstrip (ranked).

Inline HTML/CSS/JS (no build chain): `stepper.js` and `stepper.css` beside this file.
Every dataset string is set with `textContent` or attribute setters, never `innerHTML`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

_HERE = Path(__file__).parent
COMPONENT_NAME = "cuavb_stepper"
KEY = "viewer_stepper"

_mount = st.components.v2.component(
    COMPONENT_NAME,
    css=(_HERE / "stepper.css").read_text(encoding="utf-8"),
    js=(_HERE / "stepper.js").read_text(encoding="utf-8"),
)


def stepper(data: dict[str, Any], key: str = KEY) -> None:
    """Mount the stepper with one trajectory's data (`lib.viewer.stepper_data`)."""
    _mount(key=key, data=data, height="content")

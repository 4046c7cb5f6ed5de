"""Streamlit pieces of the trajectory viewer (pages/4_Trajectory.py).

One module per concern, re-exported here (`from ui import viewer as view; view.step_view`),
as `lib.viewer` is: `text` (dataset text as inert Markdown, badges, notices), `filters`
(search box and filters popover), `picker` (catalog and task selectbox), `header` (the
task header, the Hub link), `steps` (the in-browser stepper and the steps table), `media`
(screenshots as media-file URLs), `verdicts` (verifiers and humans, the rubric's two
passes), `evidence` (the verifier's relevance heatmap, evidence and penalties).

URL contract (`lib.viewer.links`): `?split=<split>&task=<task_id>&step=<k>`, plus the picker's
search (`q`), filters (`disagree`, `reviewer`, `outcome`, `family`, `actions`, `shots`)
and `informed=1`, so a shared link opens exactly the view meant. `split` is the
sidebar's bound widget and is never written here; the others go through `ui.url` (the
URL wins only when it changed from outside: a deep link, Back/forward).

Stepping happens in the browser (`ui.stepper`): the page hands the component the
trajectory once (steps and screenshot URLs) and the component writes `step=` itself,
with no server run. The server reads `step=` only to open a trajectory at that step.
"""

from ui.viewer.evidence import evidence_section
from ui.viewer.filters import (
    ANY,
    SEARCH_KEY,
    SEARCH_MAX,
    filter_controls,
    search_box,
    show_unusable,
)
from ui.viewer.header import current_why, hub_link, task_header, task_summary, why_focus
from ui.viewer.media import MEDIA_BYTES_MAX, trajectory_media
from ui.viewer.picker import TASK_KEY, TASK_LABEL_MAX, catalog, task_picker
from ui.viewer.steps import (
    JUMP_KEY,
    STEPS_TABLE_KEY,
    opening_step,
    prefetch_neighbours,
    step_view,
    steps_table_section,
)
from ui.viewer.text import (
    INLINE_MAX,
    LABEL_COLOR,
    LONG_TEXT_PREVIEW,
    _md,
    field_line,
    label_badge,
    show_notices,
    text_block,
)
from ui.viewer.verdicts import INFORMED_CAPTION, INFORMED_KEY, humans_section, verifiers_section

__all__ = [
    "ANY",
    "INFORMED_CAPTION",
    "INFORMED_KEY",
    "INLINE_MAX",
    "JUMP_KEY",
    "LABEL_COLOR",
    "LONG_TEXT_PREVIEW",
    "MEDIA_BYTES_MAX",
    "SEARCH_KEY",
    "SEARCH_MAX",
    "STEPS_TABLE_KEY",
    "TASK_KEY",
    "TASK_LABEL_MAX",
    "_md",
    "catalog",
    "current_why",
    "evidence_section",
    "field_line",
    "filter_controls",
    "hub_link",
    "humans_section",
    "label_badge",
    "opening_step",
    "prefetch_neighbours",
    "search_box",
    "show_notices",
    "show_unusable",
    "step_view",
    "steps_table_section",
    "task_header",
    "task_picker",
    "task_summary",
    "text_block",
    "trajectory_media",
    "verifiers_section",
    "why_focus",
]

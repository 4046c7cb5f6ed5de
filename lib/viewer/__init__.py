"""The trajectory viewer's logic: which tasks to offer, which view a URL means, what to show.

One module per concern, re-exported here (`from lib import viewer; viewer.build_catalog`):
`text` (dataset text as text), `catalog` (the picker and its filters), `navigation`
(URL -> a valid view), `steps` (one trajectory), `cards` (every verdict on one task),
`evidence` (the Universal Verifier's intermediate steps: relevance matrix, chosen
screenshots, evidence, penalties), `images` (screenshots, layers, thumbnails), `payload`
(one trajectory as the in-browser stepper's JSON: `stepper_data`).

Pure functions over the Bench's image-free frames (no Streamlit), so every rule the page
follows is unit-tested:

- a *catalog* (one row per trajectory with what the picker filters on) and
  `filter_tasks` (search, disagreement, reviewer, human outcome, family, steps,
  screenshots);
- URL resolution: `resolve_task` and `resolve_step` turn `?task=..&step=..` into a valid
  view plus `Notice`s that say what was corrected (an unknown task id, a step out of
  range): a shared link always opens *something* and says why it differs;
- `Trajectory`: the parsed log aligned with the stored screenshots, and what is odd about
  the pairing (log-only, empty log, more actions than screenshots or the reverse);
- `task_verdicts`: every verdict on one task (verifier rows of the verdict table, uploads
  included; the Universal Verifier rubric; the om2w judge's text; each reviewer's blind
  and informed stage);
- `as_text`: a dataset cell as display text (Markdown contexts make it inert with
  `ui.safe_text.inert`, the one helper for untrusted text);
- images: `check_png` (header and checksums, no pixel decode); the action itself is
  drawn over the untouched screenshot in the browser (`ui/stepper`), never in Pillow;
- `viewer_href` (`lib.viewer.links`): the Trajectory page's URL for a task and step.
"""

from lib.viewer.cards import (
    InformedStage,
    ReviewCard,
    RubricItem,
    RubricView,
    TaskVerdicts,
    VerdictLine,
    answer_flags,
    label_text,
    parse_rubric,
    task_verdicts,
    two_pass_frame,
)
from lib.viewer.catalog import (
    CATALOG_COLUMNS,
    OUTCOME_CHOICES,
    SCREENSHOT_CHOICES,
    TaskFilter,
    build_catalog,
    disagreeing_tasks,
    family_of,
    filter_tasks,
    search_mask,
    task_label,
)
from lib.viewer.evidence import (
    CriterionEvidence,
    EvidenceEntry,
    Penalty,
    VerifierEvidence,
    most_relevant,
    parse_evidence,
    stepper_evidence,
)
from lib.viewer.images import ShotCheck, check_png
from lib.viewer.navigation import (
    Notice,
    resolve_step,
    resolve_task,
)
from lib.viewer.payload import (
    alt_text,
    cap,
    step_record,
    stepper_data,
)
from lib.viewer.steps import (
    FILMSTRIP_SIZE,
    Trajectory,
    filmstrip_window,
    load_trajectory,
    step_caption,
    step_fields,
)
from lib.viewer.text import (
    as_text,
    truthy,
)
from lib.vocab import NO_ANSWER

__all__ = [
    "CATALOG_COLUMNS",
    "FILMSTRIP_SIZE",
    "NO_ANSWER",
    "OUTCOME_CHOICES",
    "SCREENSHOT_CHOICES",
    "CriterionEvidence",
    "EvidenceEntry",
    "InformedStage",
    "Notice",
    "Penalty",
    "ReviewCard",
    "RubricItem",
    "RubricView",
    "ShotCheck",
    "TaskFilter",
    "TaskVerdicts",
    "Trajectory",
    "VerdictLine",
    "VerifierEvidence",
    "alt_text",
    "answer_flags",
    "as_text",
    "build_catalog",
    "cap",
    "check_png",
    "disagreeing_tasks",
    "family_of",
    "filmstrip_window",
    "filter_tasks",
    "label_text",
    "load_trajectory",
    "most_relevant",
    "parse_evidence",
    "parse_rubric",
    "resolve_step",
    "resolve_task",
    "search_mask",
    "step_caption",
    "step_fields",
    "step_record",
    "stepper_data",
    "stepper_evidence",
    "task_label",
    "task_verdicts",
    "truthy",
    "two_pass_frame",
]

"""The words every analysis module and page shares, each defined once.

Why one module: the same constants used to live in four analysis modules and a caption,
and a change to one copy (say, the number of resamples) would silently make the page
caption lie about the numbers above it. Everything here is plain data or a pure
function; import it from anywhere (`lib/`, `ui/`, `pages/`, `bench/`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

SPLITS: tuple[str, ...] = ("fara7b_om2w_browserbase", "internal")
"""The dataset's two splits, in display order."""
SPLIT_SHORT = {"fara7b_om2w_browserbase": "om2w", "internal": "internal"}
CONFIGS: tuple[str, ...] = ("trajectories", "annotations")
"""The dataset's two configs (one row per trajectory; one row per reviewer and task)."""
SCREEN: tuple[int, int] = (1440, 900)
"""The agent's screen in pixels: action coordinates are in this space."""
NO_ANSWER = "<no_answer>"
"""What the dataset stores as the final answer of a run that gave none."""


def short_split(split: str) -> str:
    """`om2w` / `internal` for a split's full name; an unknown name is shown as it is."""
    return SPLIT_SHORT.get(split, split)


ALL = "all"
"""The split (or reviewer) choice that pools every split (or reviewer)."""

OUTCOME, PROCESS = "outcome", "process"
DIMENSIONS: tuple[str, ...] = (OUTCOME, PROCESS)
"""The two things a verdict judges: did the task succeed; was the process sound."""

HUMAN_REFERENCE: dict[str, str] = {
    OUTCOME: "final_human_outcome_label",
    PROCESS: "final_human_process_label",
}
"""Each dimension's default human reference: the task-level final (adjudicated) label."""

UV_VERDICT: dict[str, str] = {OUTCOME: "uv_outcome_success", PROCESS: "uv_process"}
"""Each dimension's Universal Verifier rater (the baseline an uploaded verifier beats)."""

N_RESAMPLES = 2000
"""Bootstrap resamples of every interval in the app and the report."""
SEED = 0
"""Seed of every bootstrap: the same data give the same interval on every page."""
LEVEL = 0.95
"""Confidence level of every interval."""


@dataclass(frozen=True)
class Bootstrap:
    """How an interval was computed: one value instead of four loose arguments.

    ``unit`` is what one resampled cluster is: ``task`` or ``site`` (a website/family,
    `lib.table.clusters`). A result carries the `Bootstrap` it was computed with, so a caption
    says what was done, never what a widget says now.
    """

    n_resamples: int = N_RESAMPLES
    seed: int = SEED
    level: float = LEVEL
    unit: str = "task"


UNIT_WORDS = {"task": "tasks", "site": "websites/families"}
"""What one resampled cluster is called in captions and the report, per `Bootstrap.unit`."""

BOOTSTRAP = Bootstrap()
"""The app's default bootstrap (task clusters)."""

UV_THRESHOLD = 0.8
"""Rubric-score threshold that turns the Universal Verifier's process score into a verdict."""

_DIGITS = re.compile(r"(\d+)")


def reviewer_sort_key(name: Any) -> tuple[int, tuple[Any, ...]]:
    """Order of reviewers everywhere: `all` first, then names with a number in natural
    order (`Judge9` < `Judge11`, `Judge9@informed` < `Judge11@informed`), then the rest.

    Plain string order would put `Judge11` before `Judge9`, which readers take for a bug.
    """
    text = str(name)
    if text == ALL:
        return (0, ())
    parts = tuple(int(p) if p.isdigit() else p.lower() for p in _DIGITS.split(text))
    return (1 if len(parts) > 1 else 2, parts)

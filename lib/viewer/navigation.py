"""URL -> a valid view: `?task=..&step=..` resolved, with notices of what was corrected.

Part of `lib.viewer` (see its docstring); no Streamlit.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from lib.vocab import ALL

# ---------------------------------------------------------------------------
# URL -> a valid view


@dataclass(frozen=True)
class Notice:
    """Something the page must say about how it read the URL (`level`: info / warning)."""

    level: str
    text: str


def resolve_task(
    catalog: pd.DataFrame,
    asked: str | None,
    split_option: str = ALL,
    candidates: Sequence[str] = (),
) -> tuple[str | None, list[Notice]]:
    """The task to show for `?task=` and what to tell the reader about it.

    - no `task`: the first candidate (the filtered list), else the first task of the
      chosen split, else the first task at all;
    - a known id: that task, whatever split the sidebar shows (ids are unique across
      splits), with an info notice when it belongs to another split;
    - an unknown id: the closest id (difflib) or the default, with a warning.
    Returns (None, []) only when the catalog is empty.
    """
    if catalog.empty:
        return None, []
    ids = catalog["task_id"].astype(str).tolist()
    split_of = dict(zip(ids, catalog["split"].astype(str), strict=True))
    default = _default_task(catalog, split_option, candidates)
    asked = (asked or "").strip()
    if not asked:
        return default, []
    if asked in split_of:
        notices = []
        if split_option not in (ALL, split_of[asked]):
            notices.append(
                Notice(
                    "info",
                    f"Task {asked} belongs to the split {split_of[asked]}, "
                    f"not to {split_option} chosen in the sidebar; it is shown anyway.",
                )
            )
        return asked, notices
    close = difflib.get_close_matches(asked, ids, n=1, cutoff=0.6)
    chosen = close[0] if close else default
    why = "the closest task id" if close else "the first task of the list"
    text = f"There is no task {asked} in this data. Showing {chosen} ({why}) instead."
    return chosen, [Notice("warning", text)]


def _default_task(catalog: pd.DataFrame, split_option: str, candidates: Sequence[str]) -> str:
    if candidates:
        return str(candidates[0])
    in_split = catalog[catalog["split"] == split_option]
    return str((in_split if not in_split.empty else catalog)["task_id"].iloc[0])


def resolve_step(asked: Any, n_positions: int) -> tuple[int, Notice | None]:
    """The step to show for `?step=` in a trajectory with `n_positions` steps.

    Missing -> 0 silently. Not an integer -> 0, and a step out of range -> the nearest
    valid step, each with a warning that names the valid range.
    """
    last = max(int(n_positions), 1) - 1
    if asked is None or (isinstance(asked, str) and not asked.strip()):
        return 0, None
    try:
        step = int(str(asked).strip())
    except ValueError:
        return 0, Notice("warning", f"Step {asked!r} is not a number; showing step 0.")
    if 0 <= step <= last:
        return step, None
    nearest = min(max(step, 0), last)
    text = (
        f"Step {step} is out of range: this trajectory has steps 0 to {last}. "
        f"Showing step {nearest}."
    )
    return nearest, Notice("warning", text)

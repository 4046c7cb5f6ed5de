"""Which tasks belong together: the cluster key of a task id, and cluster labels per row.

Tasks on one website (om2w) or of one task family (internal) are not independent
evidence: a verifier that misreads one site's pages tends to fail on all of that site's
tasks. A bootstrap that resamples tasks then understates the uncertainty; resampling
whole websites/families (a cluster bootstrap) does not. This module only says *which*
rows belong together; the resampling itself lives in `lib.metrics` (every bootstrap
there takes a ``clusters`` array, one label per row).

Cluster key of a task id (`cluster_key`), split-independent:

- ``<Website>--<hex>`` (om2w, e.g. ``Adidas--11857213``) -> ``Adidas``: the part before
  the last ``--`` (the suffix is the Online-Mind2Web task id, so a site name may itself
  contain ``-``). Both parts must be non-empty after trimming.
- ``<family>(_data)?(_<digits>)+`` (internal, e.g. ``alltrails_find_23``,
  ``github_repo_data_34``, ``amazon_cart_14_5``) -> ``alltrails_find``, ``github_repo``,
  ``amazon_cart``: the trailing numbers and an optional ``_data`` before them are
  stripped. Only ASCII digits count.
- Anything else (no pattern, an empty family, a number) is its own cluster: the key is
  the id itself as text. A missing or blank id gives ``(no task id)``. Nothing here
  raises on an odd id.

Keys are not prefixed with the split: the same key in two splits (only possible when a
site or family has exactly the same name) is one cluster, i.e. treated as one website.
In ``task`` mode the label is the bare task id, exactly what the existing task
bootstrap uses, so ``task`` intervals equal the Agreement page's for the same rows.

Whether the choice matters is measured by `design_effects`: the width of the site
interval over the width of the task interval, "material" at >= 1.2 or <= 0.8.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from lib import metrics as M
from lib.vocab import BOOTSTRAP, Bootstrap

#: The two ways to resample: tasks (the default everywhere) or websites/families.
CLUSTER_MODES: tuple[str, ...] = ("task", "site")
DEFAULT_CLUSTER_MODE: str = "task"

#: Shown on screen / in captions: what one resampled unit is.

SITE_SEPARATOR = "--"
_FAMILY = re.compile(r"^(?P<family>.+?)(?:_data)?(?:_[0-9]+)+$", re.ASCII | re.DOTALL)
# Label of a row whose task id is missing; a row number is appended so that two such
# rows never share a cluster (they are not known to be related).
MISSING_ID = "(no task id)"


def _as_text(task_id: Any) -> str | None:
    """The id as text, or None when it is missing (None, NaN, pandas NA, blank text)."""
    if task_id is None:
        return None
    if isinstance(task_id, str):
        return task_id if task_id.strip() else None
    try:
        if pd.isna(task_id):
            return None
    except (TypeError, ValueError):  # arrays and other odd objects: not "missing"
        pass
    return str(task_id)


def cluster_key(task_id: Any) -> str:
    """Website (om2w) or task family (internal) of one task id; see the module docstring.

    >>> cluster_key("Adidas--11857213"), cluster_key("github_repo_data_34")
    ('Adidas', 'github_repo')
    >>> cluster_key("odd id"), cluster_key(None)
    ('odd id', '(no task id)')
    """
    text = _as_text(task_id)
    if text is None:
        return MISSING_ID
    site, sep, rest = text.rpartition(SITE_SEPARATOR)
    if sep and site.strip() and rest.strip():
        return site.strip()
    match = _FAMILY.match(text)
    if match and match.group("family").strip("_ ").strip():
        return match.group("family")
    return text


def check_mode(mode: str) -> str:
    """``mode`` if it is one of `CLUSTER_MODES`, else ValueError (a programming error)."""
    if mode not in CLUSTER_MODES:
        raise ValueError(f"cluster mode must be one of {CLUSTER_MODES}, got {mode!r}")
    return mode


def cluster_labels(frame: pd.DataFrame, mode: str = DEFAULT_CLUSTER_MODE) -> pd.Series:
    """One cluster label per row of ``frame`` (needs a ``task_id`` column), as text.

    ``task``: the task id itself; ``site``: `cluster_key` of the task id. A row without a
    task id gets ``"(no task id) #<position>"``: its own cluster, never merged with
    another row and never missing (the bootstrap refuses missing cluster ids). The
    result has the frame's index, ready to pass as ``clusters`` to `lib.metrics`.
    """
    check_mode(mode)
    ids = frame["task_id"].tolist() if len(frame) else []
    out: list[str] = []
    for position, task_id in enumerate(ids):
        text = _as_text(task_id)
        if text is None:
            out.append(f"{MISSING_ID} #{position}")
        else:
            out.append(text if mode == "task" else cluster_key(text))
    return pd.Series(out, index=frame.index, dtype=object, name=f"cluster_{mode}")


def cluster_ids(task_ids: Any, mode: str = DEFAULT_CLUSTER_MODE) -> Any:
    """The ``clusters`` argument of `lib.metrics` for rows with these task ids.

    ``task``: the ids exactly as given (so every existing interval is bit-for-bit what it
    was before the cluster choice existed); ``site``: `cluster_labels` in site mode, as a
    numpy object array.

    >>> cluster_ids(["Adidas--1", "Adidas--2", "hotel_book_3"], "site").tolist()
    ['Adidas', 'Adidas', 'hotel_book']
    """
    check_mode(mode)
    if mode == "task":
        return task_ids
    frame = pd.DataFrame({"task_id": list(task_ids)})
    return cluster_labels(frame, "site").to_numpy(dtype=object)


def n_clusters(task_ids: Iterable[Any], mode: str = DEFAULT_CLUSTER_MODE) -> int:
    """How many distinct clusters these task ids form (for captions: "K clusters").

    >>> n_clusters(["Adidas--1", "Adidas--2", "Nike--3"], "site")
    2
    """
    ids = list(task_ids)
    return len(set(cluster_labels(pd.DataFrame({"task_id": ids}), mode))) if ids else 0


# ---------------------------------------------------------------------------------------
# Design effect: does resampling websites change the interval?
# ---------------------------------------------------------------------------------------

#: Width ratios >= 1.2 or <= 0.8 "differ materially": the interval is at least 20%
#: wider (or narrower) when websites are resampled. 20% is well above the Monte Carlo
#: noise of a 2,000-resample percentile interval (a few percent of its width), and a
#: 1.2 width ratio is a variance ratio of 1.44 (Kish's design effect).
MATERIAL_LOW, MATERIAL_HIGH = 0.8, 1.2


@dataclass(frozen=True)
class DesignEffect:
    """How much wider an interval gets when websites/families are resampled instead of tasks.

    ``ratio`` = width(site interval) / width(task interval). It is the square root of
    the classical (Kish) design effect, which compares variances; widths are what a
    reader sees. ``material`` is True when the ratio is >= `MATERIAL_HIGH` or <=
    `MATERIAL_LOW` (compared at 9 decimals, so 0.24 / 0.2 counts as 1.2); False when it
    is strictly between them or undefined.
    """

    metric: str
    task_ci: M.Interval
    site_ci: M.Interval
    ratio: M.Value
    material: bool


def interval_width(ci: M.Interval) -> float | None:
    """``high - low``, or None when the interval is undefined."""
    bounds = ci.bounds
    return None if bounds is None else bounds[1] - bounds[0]


def design_effect(task_ci: M.Interval, site_ci: M.Interval, metric: str = "") -> DesignEffect:
    """`DesignEffect` from the two intervals of the same metric on the same rows."""
    w_task, w_site = interval_width(task_ci), interval_width(site_ci)
    if w_task is None or w_site is None:
        which = "task" if w_task is None else "site"
        reason = (task_ci if which == "task" else site_ci).reason or "undefined"
        ratio = M.Value(None, f"{which} interval undefined: {reason}")
    elif w_task <= 0.0:
        ratio = M.Value(None, "the task interval has zero width")
    else:
        ratio = M.Value(w_site / w_task)
    rounded = None if ratio.value is None else round(ratio.value, 9)
    material = rounded is not None and (rounded >= MATERIAL_HIGH or rounded <= MATERIAL_LOW)
    return DesignEffect(metric, task_ci, site_ci, ratio, material)


def design_effects(
    pred: Any,
    ref: Any,
    task_ids: Any,
    metric_names: Iterable[str] = ("kappa", "accuracy", "fpr", "fnr"),
    boot: Bootstrap = BOOTSTRAP,
) -> dict[str, DesignEffect]:
    """Task-bootstrap and site-bootstrap intervals of the same rows, and their width ratio.

    ``task_ids`` gives each row's task id; the site clusters are `cluster_key` of it.
    Both intervals come from `lib.metrics.bootstrap_intervals` with ``boot``'s resamples,
    seed and level (its ``unit`` is not used: both units are measured).
    """
    frame = pd.DataFrame({"task_id": list(task_ids)})
    names = tuple(metric_names)
    task = replace(boot, unit="task")
    site = replace(boot, unit="site")
    by_task = M.bootstrap_intervals(
        pred, ref, cluster_labels(frame, "task").to_numpy(), names, task
    )
    by_site = M.bootstrap_intervals(
        pred, ref, cluster_labels(frame, "site").to_numpy(), names, site
    )
    return {m: design_effect(by_task[m], by_site[m], m) for m in names}


def effect_note(effect: DesignEffect) -> str | None:
    """ "interval 1.6x wider resampling websites" when the difference is material, else None.

    The words beside a number on the Agreement and Slices pages (`DesignEffect.material`).

    >>> ci = lambda lo, hi: M.Interval(lo, hi)
    >>> effect_note(design_effect(ci(0.4, 0.6), ci(0.34, 0.66), "kappa"))
    'interval 1.6x wider resampling websites/families'
    >>> effect_note(design_effect(ci(0.4, 0.6), ci(0.39, 0.61), "kappa")) is None
    True
    """
    if not effect.material or effect.ratio.value is None:
        return None
    ratio = effect.ratio.value
    if ratio >= 1.0:
        return f"interval {ratio:.1f}x wider resampling websites/families"
    return f"interval {1 / ratio:.1f}x narrower resampling websites/families"

"""Slice dimensions: one value per task for each way of cutting the benchmark.

`lib.analysis.slices` measures a verifier on each slice; this module only decides which slice a
task is in. Every task gets exactly one value per dimension (`SLICE_DIMS`), and a value
that cannot be determined is the visible value ``"unknown"``, never dropped.

- ``site``: website (om2w) or task family (internal), `lib.table.clusters.cluster_key`.
- ``length``: number of agent actions, in quartile bins of the selected tasks, labelled
  with their ranges (``"3-7 actions"``). Counted from the log with the viewer's parser
  (`lib.table.trajlog.parse_log`, every action line, ``terminate`` included); when the log
  holds no action, ``n_screenshots - 1`` (screenshot 0 is the start page, one more per
  action); when neither is known, ``unknown``. `task_lengths` says which source was used.
- ``screenshots``: whether the stored trajectory has any screenshot
  (``n_screenshots_stored``; about half the internal runs have none).
- ``run_end``: ``aborted`` (``is_aborted``), else ``no answer`` (the final answer is the
  literal ``<no_answer>``), else ``final answer`` (non-empty text), else ``unknown``.
- ``reviewers``: number of distinct blind reviewers of the task (``no reviewer`` if none).
- ``blind_tie``: ``tie`` when the blind labels (of the dimension studied) split evenly,
  ``no tie`` when there is at least one blind label and no even split (every
  single-reviewer task), ``unknown`` without a blind label.
- ``adjudicated``: the final task-level label against the strict blind majority:
  ``adjudicated`` (differs), ``not adjudicated`` (equal), ``tie (no majority)``, or
  ``unknown`` (no final label or no blind label).
- ``uv_band``: the Universal Verifier's rubric score in ``[0, 0.2)``, ``[0.2, 0.5)``,
  ``[0.5, 0.8)``, ``[0.8, 1]``; ``out of [0, 1]``; ``unknown`` when missing.

Human facts come from the verdict table (the one source of labels), task facts from
``bench.tasks``. No statistics here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from lib.table.clusters import cluster_key
from lib.table.trajlog import parse_log
from lib.vocab import HUMAN_REFERENCE, NO_ANSWER, OUTCOME, PROCESS, UV_VERDICT

# ---------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slice:
    """One slice dimension, declared once: its id, its title on screen, and the verifiers
    whose own output defines it (``own_score_of``). Ranking a verifier on a slice made from
    its own score is circular (its rubric bands sort the tasks by how it judged them), so
    such a slice is never ranked for them (`lib.analysis.slices.not_ranked`). The field has
    no default: a new slice says ``()`` (defined by no verifier) or names them."""

    name: str
    title: str
    own_score_of: tuple[str, ...]


SLICES: tuple[Slice, ...] = (
    Slice("site", "Website / task family", own_score_of=()),
    Slice("length", "Trajectory length (actions, quartiles)", own_score_of=()),
    Slice("screenshots", "Screenshots", own_score_of=()),
    Slice("run_end", "How the run ended", own_score_of=()),
    Slice("reviewers", "Number of blind reviewers", own_score_of=()),
    Slice("blind_tie", "Blind tie", own_score_of=()),
    Slice("adjudicated", "Adjudicated", own_score_of=()),
    Slice(
        "uv_band",
        "Universal Verifier rubric score",
        own_score_of=(UV_VERDICT[OUTCOME], UV_VERDICT[PROCESS]),
    ),
)
"""Every slice dimension, in the page's order (see the module docstring for each)."""
SLICE_DIMS: tuple[str, ...] = tuple(s.name for s in SLICES)
SLICE_TITLES: dict[str, str] = {s.name: s.title for s in SLICES}


def slice_of(name: str) -> Slice:
    """The declaration of slice dimension ``name`` (read from `SLICES` when called)."""
    for declared in SLICES:
        if declared.name == name:
            return declared
    raise KeyError(f"unknown slice dimension {name!r}; known: {[s.name for s in SLICES]}")


def own_score(name: str, verifier: str) -> bool:
    """True when slice dimension ``name`` is defined by ``verifier``'s own score."""
    return verifier in slice_of(name).own_score_of


UNKNOWN = "unknown"


# The task-level human label of each dimension (the adjudicated final label).

RUN_END_VALUES: tuple[str, ...] = ("final answer", "no answer", "aborted")
SCREENSHOT_VALUES: tuple[str, ...] = ("screenshots", "no screenshots")
TIE_VALUES: tuple[str, ...] = ("no tie", "tie")
ADJUDICATED_VALUES: tuple[str, ...] = ("not adjudicated", "adjudicated", "tie (no majority)")
#: Rubric-score bands: (low, high, label); the last band is closed at 1.
UV_BANDS: tuple[tuple[float, float, str], ...] = (
    (0.0, 0.2, "[0, 0.2)"),
    (0.2, 0.5, "[0.2, 0.5)"),
    (0.5, 0.8, "[0.5, 0.8)"),
    (0.8, 1.0, "[0.8, 1]"),
)
UV_OUT_OF_RANGE = "out of [0, 1]"


# ---------------------------------------------------------------------------------------
# Slice values per task
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SliceTable:
    """One row per task: ``split``, ``task_id`` and one text column per slice dimension.

    ``orders[dim]`` lists the values present in display order (natural order of the
    dimension, ``unknown`` last), so pages and the report never sort labels by text.
    """

    frame: pd.DataFrame
    orders: dict[str, tuple[str, ...]]


def _column(tasks: pd.DataFrame, name: str) -> pd.Series:
    """A column of ``tasks`` or an all-missing one: an older source may lack it."""
    if name in tasks:
        return tasks[name]
    return pd.Series([None] * len(tasks), index=tasks.index, dtype=object)


def _numbers(values: pd.Series) -> np.ndarray:
    """float64 with NaN for missing or unreadable values."""
    return pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


def _count_actions(log: Any) -> int:
    try:
        return parse_log(log if isinstance(log, str | bytes) else None).n_actions
    except Exception:  # the parser never raises by contract; a slice must not either
        return 0


def task_lengths(tasks: pd.DataFrame) -> pd.DataFrame:
    """Number of actions per task and where it came from: ``log``, ``screenshots``, ``unknown``.

    This parses every log (the one costly step: cache it per data source). The count is
    the parser's action count; an empty or unreadable log falls back to
    ``n_screenshots - 1`` (the dataset's own count, which is known even when the shard
    stores no image), else missing.
    """
    from_log = np.array([_count_actions(v) for v in _column(tasks, "web_surfer_log")], dtype=float)
    shots = _numbers(_column(tasks, "n_screenshots"))
    from_shots = np.where(shots >= 1, shots - 1, np.nan)
    n = np.where(from_log > 0, from_log, from_shots)
    source = np.where(from_log > 0, "log", np.where(np.isnan(from_shots), UNKNOWN, "screenshots"))
    return pd.DataFrame(
        {
            "split": _column(tasks, "split").astype(object).to_numpy(),
            "task_id": _column(tasks, "task_id").astype(object).to_numpy(),
            "n_actions": pd.array(np.where(np.isnan(n), np.nan, n), dtype="Float64").astype(
                "Int64"
            ),
            "length_source": source,
        }
    )


def _actions_label(lo: int, hi: int) -> str:
    if lo == hi:
        return f"{lo} action" if lo == 1 else f"{lo} actions"
    return f"{lo}-{hi} actions"


def length_bins(n_actions: pd.Series) -> tuple[pd.Series, tuple[str, ...]]:
    """Quartile bins of action counts, labelled with their integer ranges.

    Upper bounds are ``floor`` of the 25th, 50th and 75th percentiles (numpy's linear
    method) of the known counts; bins are ``[min, u1]``, ``[u1 + 1, u2]``,
    ``[u2 + 1, u3]``, ``[u3 + 1, max]``, and empty or repeated bins are dropped (many
    equal counts give fewer than four bins). Missing counts are ``unknown``.
    Returns (label per row, labels in order).
    """
    values = pd.to_numeric(pd.Series(n_actions), errors="coerce")
    known = values.dropna().to_numpy(dtype=np.float64)
    labels = pd.Series(UNKNOWN, index=values.index, dtype=object)
    if known.size == 0:
        return labels, ((UNKNOWN,) if len(values) else ())
    lo_all, hi_all = int(known.min()), int(known.max())
    uppers = [math.floor(q) for q in np.quantile(known, [0.25, 0.5, 0.75])] + [hi_all]
    bins: list[tuple[int, int]] = []
    low = lo_all
    for up in uppers:
        if up >= low:
            bins.append((low, up))
            low = up + 1
    order = [_actions_label(a, b) for a, b in bins]
    ups = np.array([b for _, b in bins])
    ok = values.notna().to_numpy()
    idx = np.searchsorted(ups, values[ok].to_numpy(dtype=np.float64), side="left")
    labels[ok] = [order[i] for i in idx]
    if not ok.all():
        order.append(UNKNOWN)
    return labels, tuple(order)


def _screenshots(tasks: pd.DataFrame) -> pd.Series:
    n = _numbers(_column(tasks, "n_screenshots_stored"))
    out = np.where(np.isnan(n), UNKNOWN, np.where(n > 0, "screenshots", "no screenshots"))
    return pd.Series(out, index=tasks.index, dtype=object)


def _run_end_one(aborted: Any, answer: Any) -> str:
    if aborted is True or (isinstance(aborted, np.bool_) and bool(aborted)):
        return "aborted"
    if isinstance(answer, str):
        text = answer.strip()
        if text.lower() == NO_ANSWER:
            return "no answer"
        if text:
            return "final answer"
    return UNKNOWN


def _run_end(tasks: pd.DataFrame) -> pd.Series:
    pairs = zip(_column(tasks, "is_aborted"), _column(tasks, "final_answer"), strict=True)
    return pd.Series([_run_end_one(a, f) for a, f in pairs], index=tasks.index, dtype=object)


def _uv_band_one(score: float) -> str:
    if math.isnan(score):
        return UNKNOWN
    for low, high, label in UV_BANDS:
        if low <= score < high or (high == 1.0 and score == 1.0):
            return label
    return UV_OUT_OF_RANGE


def _uv_band(tasks: pd.DataFrame) -> pd.Series:
    scores = _numbers(_column(tasks, "uv_rubric_score"))
    return pd.Series([_uv_band_one(s) for s in scores], index=tasks.index, dtype=object)


def human_standing(table: pd.DataFrame, dimension: str) -> pd.DataFrame:
    """Per (split, task_id) with any blind review or final label: the humans' position.

    Columns ``n_reviewers`` (distinct blind reviewers), ``n_blind`` (blind labels
    present), ``n_blind_success``, ``majority`` (strict blind majority 1/0, missing on a
    tie or without labels), ``tie`` (bool), ``final`` (the final task-level label).
    From the verdict table only (blind rows: ``kind == "human"``, ``stage == "blind"``).
    """
    keys = ["split", "task_id"]
    rows = table[table["dimension"] == dimension]
    blind = rows[(rows["kind"] == "human") & (rows["stage"] == "blind")]
    labels = pd.to_numeric(blind["label"], errors="coerce").astype("float64")
    per = (
        blind.assign(_l=labels, _s=labels == 1.0)
        .groupby(keys, observed=True)
        .agg(
            n_reviewers=("annotator", "nunique"),
            n_blind=("_l", "count"),
            n_blind_success=("_s", "sum"),
        )
    )
    final_rater = HUMAN_REFERENCE.get(dimension)
    final = rows.loc[rows["rater"] == final_rater, [*keys, "label"]].drop_duplicates(keys)
    final = final.set_index(keys)["label"].astype("Float64").rename("final")
    out = per.join(final, how="outer")
    out["n_reviewers"] = out["n_reviewers"].fillna(0).astype(int)
    out["n_blind"] = out["n_blind"].fillna(0).astype(int)
    out["n_blind_success"] = out["n_blind_success"].fillna(0).astype(int)
    out["tie"] = (out["n_blind"] >= 2) & (2 * out["n_blind_success"] == out["n_blind"])
    has = (out["n_blind"] > 0) & ~out["tie"]
    majority = (2 * out["n_blind_success"] > out["n_blind"]).astype("Float64")
    out["majority"] = majority.where(has, pd.NA)
    return out.reset_index()


def _human_values(standing: pd.DataFrame) -> pd.DataFrame:
    """Text values of the three human dimensions from `human_standing`."""
    n_rev = standing["n_reviewers"].astype(int)
    reviewers = np.where(
        n_rev == 0,
        "no reviewer",
        np.where(n_rev == 1, "1 reviewer", n_rev.astype(str) + " reviewers"),
    )
    tie = np.where(standing["n_blind"] == 0, UNKNOWN, np.where(standing["tie"], "tie", "no tie"))
    final = standing["final"].astype("Float64")
    majority = standing["majority"].astype("Float64")
    comparable = final.notna() & majority.notna()
    differs = (final != majority).fillna(False).to_numpy(dtype=bool)
    adjudicated = np.where(
        final.isna().to_numpy() | (standing["n_blind"] == 0).to_numpy(),
        UNKNOWN,
        np.where(
            standing["tie"].to_numpy(dtype=bool),
            "tie (no majority)",
            np.where(comparable.to_numpy(dtype=bool) & differs, "adjudicated", "not adjudicated"),
        ),
    )
    return pd.DataFrame(
        {
            "split": standing["split"].astype(object).to_numpy(),
            "task_id": standing["task_id"].astype(object).to_numpy(),
            "reviewers": reviewers,
            "blind_tie": tie,
            "adjudicated": adjudicated,
        }
    )


def _natural_order(dim: str, values: pd.Series) -> tuple[str, ...]:
    present = set(values.tolist())
    if dim == "site":
        order = sorted((v for v in present if v != UNKNOWN), key=lambda v: (v.casefold(), v))
    elif dim == "reviewers":

        def count(v: str) -> int:
            head = v.split(" ")[0]
            return int(head) if head.isdigit() else 0

        order = sorted((v for v in present if v != UNKNOWN), key=count)
    else:
        fixed = {
            "screenshots": SCREENSHOT_VALUES,
            "run_end": RUN_END_VALUES,
            "blind_tie": TIE_VALUES,
            "adjudicated": ADJUDICATED_VALUES,
            "uv_band": (*(b[2] for b in UV_BANDS), UV_OUT_OF_RANGE),
        }[dim]
        order = [v for v in fixed if v in present]
        order += sorted(present - set(fixed) - {UNKNOWN})
    if UNKNOWN in present:
        order.append(UNKNOWN)
    return tuple(order)


def slice_table(
    tasks: pd.DataFrame,
    table: pd.DataFrame,
    dimension: str = "outcome",
    lengths: pd.DataFrame | None = None,
) -> SliceTable:
    """Every task of ``tasks`` with its value on every slice dimension.

    ``dimension`` (outcome/process) picks the human labels of the human dimensions.
    ``lengths`` is `task_lengths(tasks)` if already computed (it parses every log);
    quartile bins are computed over the tasks passed in, so pass the selected split's
    tasks to get that split's quartiles.
    """
    keys = ["split", "task_id"]
    base = pd.DataFrame(
        {
            "split": _column(tasks, "split").astype(object).to_numpy(),
            "task_id": _column(tasks, "task_id").astype(object).to_numpy(),
        }
    )
    base["site"] = [cluster_key(t) for t in base["task_id"]]
    if lengths is None:
        lengths = task_lengths(tasks)
    n_actions = base.merge(lengths[[*keys, "n_actions"]], on=keys, how="left")["n_actions"]
    base["length"], length_order = length_bins(n_actions)
    base["screenshots"] = _screenshots(tasks).to_numpy()
    base["run_end"] = _run_end(tasks).to_numpy()
    human = _human_values(human_standing(table, dimension))
    human = human.astype({"split": str, "task_id": str})
    merged = base.astype({"split": str, "task_id": str}).merge(human, on=keys, how="left")
    base["reviewers"] = merged["reviewers"].fillna("no reviewer").to_numpy()
    base["blind_tie"] = merged["blind_tie"].fillna(UNKNOWN).to_numpy()
    base["adjudicated"] = merged["adjudicated"].fillna(UNKNOWN).to_numpy()
    base["uv_band"] = _uv_band(tasks).to_numpy()
    orders = {dim: _natural_order(dim, base[dim]) for dim in SLICE_DIMS if dim != "length"}
    orders["length"] = length_order
    return SliceTable(base, {dim: orders[dim] for dim in SLICE_DIMS})

"""The label audit: which human labels are contested, and why (one rule per reason).

Every number in the app is measured against human labels, and the data has countable
places where the humans disagree with each other or with themselves. Each reason below is
one function of the verdict table (the one source of labels), returning the
``(split, task_id, dimension)`` it flags; `audit_table` joins them into one row per
contested task and dimension with its named reasons. No statistics here: the ceiling
with and without these tasks is `lib.analysis.ceiling`.

Reasons (ids are stable: the URL's ``?reason=`` and the report use them):

- ``tie``: the blind outcome labels split evenly (1:1 in om2w; the dataset stores the
  majority of a tie as 0).
- ``adjudicated``: the final outcome label differs from the stored blind majority (a tie
  stored as 0 and resolved as success counts: the dataset's 13 om2w adjudications).
- ``partial``: a human label (a reviewer's blind label or a task-level label) that is
  neither correct nor incorrect (e.g. ``partial``); a tie's stored 0 is not one.
- ``changed_informed``: a reviewer's informed label differs from their blind label.
- ``against_verifier``: ...and the informed label is not the verdict they were shown (a
  reviewer who agreed with the verifier blind, then said ``disagree``).
- ``process_contradiction``: a reviewer's blind process label contradicts their own
  blind process score: ``Correct`` with a score below `CORRECT_BELOW` (less than half the
  rubric), or ``Incorrect`` with a score at or above `INCORRECT_FROM` (the verifier's own
  pass mark). Between the two a label is a judgement call, not a contradiction (the
  paper's Table 14: a label is not always the score >= 0.8).
- ``internal_decisive``: a task with a single blind reviewer where the Universal
  Verifier's verdict differs from the final label and its rubric score backs its verdict
  decisively: at least halfway from the 0.8 threshold to the end of the scale on the
  verdict's side (``>= 0.9`` for a success, ``<= 0.4`` for a failure). For the outcome the
  verdict is ``uv_outcome_success``; for the process, the score >= 0.8.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from lib.analysis.slice_values import human_standing
from lib.table.verdicts import shown_verdicts
from lib.vocab import DIMENSIONS, HUMAN_REFERENCE, OUTCOME, PROCESS, SPLITS, UV_THRESHOLD

KEYS = ["split", "task_id", "dimension"]

CORRECT_BELOW = 0.5
"""A blind ``Correct`` process label with a score below this contradicts the score."""
INCORRECT_FROM = UV_THRESHOLD
"""A blind ``Incorrect`` process label with a score at or above this contradicts it."""
DECISIVE_SUCCESS_FROM = (UV_THRESHOLD + 1.0) / 2
"""A verifier's success is decisive from this rubric score (halfway from 0.8 to 1)."""
DECISIVE_FAILURE_TO = UV_THRESHOLD / 2
"""A verifier's failure is decisive up to this rubric score (halfway from 0.8 to 0)."""
EPS = 1e-6
"""Scores are stored as float32 (0.9 reads 0.8999999762): every cut above allows this."""


@dataclass(frozen=True)
class Reason:
    """One reason a label is contested: its id, the words on screen, its rule."""

    id: str
    title: str
    rule: Callable[[pd.DataFrame], pd.DataFrame]


def _keys(frame: pd.DataFrame) -> pd.DataFrame:
    """The flagged ``(split, task_id, dimension)``, once each, as plain strings, sorted."""
    out = frame[KEYS].drop_duplicates().astype(str)
    return out.sort_values(KEYS).reset_index(drop=True)


def _blind(table: pd.DataFrame) -> pd.DataFrame:
    return table[(table["kind"] == "human") & (table["stage"] == "blind")]


def ties(table: pd.DataFrame) -> pd.DataFrame:
    """Tasks whose blind outcome labels split evenly (at least two labels)."""
    standing = human_standing(table, OUTCOME)
    return _keys(standing[standing["tie"]].assign(dimension=OUTCOME))


def adjudicated(table: pd.DataFrame) -> pd.DataFrame:
    """Tasks whose final outcome label differs from the stored blind majority
    (`majority_human_outcome_vote`, where a tie is stored as 0): the dataset's own count of
    adjudications (13 in om2w), so a tie the adjudicator resolved as success is one."""
    keys = ["split", "task_id"]
    majority = table.loc[table["rater"] == "majority_human_outcome_vote", [*keys, "label"]]
    final = table.loc[table["rater"] == HUMAN_REFERENCE[OUTCOME], [*keys, "label"]]
    both = majority.merge(final, on=keys, suffixes=("_m", "_f"))
    both = both[both["label_m"].notna() & both["label_f"].notna()]
    return _keys(both[both["label_m"] != both["label_f"]].assign(dimension=OUTCOME))


def partial(table: pd.DataFrame) -> pd.DataFrame:
    """A reviewer's blind label or a task-level human label that is neither 1 nor 0 but
    had a value (its text is kept in ``raw``)."""
    blind = _blind(table)
    refs = table[
        table["rater"].isin(set(HUMAN_REFERENCE.values()) | {"majority_human_outcome_vote"})
    ]
    rows = pd.concat([blind, refs])
    return _keys(rows[rows["label"].isna() & rows["raw"].notna()])


def _blind_informed(table: pd.DataFrame) -> pd.DataFrame:
    """Each reviewer's blind and informed label per task and dimension, both known."""
    blind = _blind(table)[["split", "task_id", "annotator", "dimension", "label"]]
    informed = table[(table["kind"] == "human") & (table["stage"] == "informed")]
    informed = informed[["split", "task_id", "annotator", "dimension", "label"]]
    both = blind.merge(
        informed, on=["split", "task_id", "annotator", "dimension"], suffixes=("_b", "_i")
    )
    return both[both["label_b"].notna() & both["label_i"].notna()]


def changed_informed(table: pd.DataFrame) -> pd.DataFrame:
    """A reviewer whose informed label differs from their blind label."""
    both = _blind_informed(table)
    return _keys(both[both["label_b"] != both["label_i"]])


def against_verifier(table: pd.DataFrame) -> pd.DataFrame:
    """A reviewer who changed when informed, to a label unlike the verdict they were shown."""
    both = _blind_informed(table)
    changed = both[both["label_b"] != both["label_i"]]
    shown = shown_verdicts(table).astype({"split": str, "task_id": str, "dimension": str})
    changed = changed.astype({"split": str, "task_id": str, "dimension": str})
    merged = changed.merge(shown, on=KEYS)
    return _keys(merged[merged["shown"].notna() & (merged["label_i"] != merged["shown"])])


def process_contradiction(table: pd.DataFrame) -> pd.DataFrame:
    """A blind process label on the far side of the reviewer's own process score."""
    rows = _blind(table)
    rows = rows[(rows["dimension"] == PROCESS) & rows["score"].notna() & rows["label"].notna()]
    wrong = ((rows["label"] == 1) & (rows["score"] < CORRECT_BELOW - EPS)) | (
        (rows["label"] == 0) & (rows["score"] >= INCORRECT_FROM - EPS)
    )
    return _keys(rows[wrong.astype(bool)])


def internal_decisive(table: pd.DataFrame) -> pd.DataFrame:
    """Single-reviewer tasks where the verifier's decisive verdict differs from the final."""
    keys = ["split", "task_id"]
    counts = _blind(table).groupby(keys, observed=True)["annotator"].nunique()
    single = counts[counts == 1].reset_index()[keys].astype(str)
    score = table.loc[table["rater"] == "uv_process", [*keys, "score"]].astype(
        {"split": str, "task_id": str}
    )
    found = []
    for dimension in DIMENSIONS:
        verdict_rater = "uv_outcome_success" if dimension == OUTCOME else "uv_process"
        verdict = table.loc[table["rater"] == verdict_rater, [*keys, "label"]]
        final = table.loc[table["rater"] == HUMAN_REFERENCE[dimension], [*keys, "label"]]
        merged = (
            verdict.astype({"split": str, "task_id": str})
            .merge(final.astype({"split": str, "task_id": str}), on=keys, suffixes=("_v", "_f"))
            .merge(score, on=keys)
            .merge(single, on=keys)
        )
        merged = merged[merged["label_v"].notna() & merged["label_f"].notna()]
        merged = merged[merged["score"].notna() & (merged["label_v"] != merged["label_f"])]
        decisive = ((merged["label_v"] == 1) & (merged["score"] >= DECISIVE_SUCCESS_FROM - EPS)) | (
            (merged["label_v"] == 0) & (merged["score"] <= DECISIVE_FAILURE_TO + EPS)
        )
        found.append(merged[decisive.astype(bool)].assign(dimension=dimension))
    return _keys(pd.concat(found)) if found else _keys(pd.DataFrame(columns=KEYS))


REASONS: tuple[Reason, ...] = (
    Reason("tie", "Blind tie (1:1, stored as majority 0)", ties),
    Reason("adjudicated", "Final label differs from the blind majority", adjudicated),
    Reason("partial", "A label neither correct nor incorrect", partial),
    Reason("changed_informed", "A reviewer changed their label when informed", changed_informed),
    Reason("against_verifier", "Changed when informed, against the verifier", against_verifier),
    Reason(
        "process_contradiction",
        "Process label contradicts the reviewer's own score",
        process_contradiction,
    ),
    Reason(
        "internal_decisive",
        "Single reviewer; the verifier disagrees with a decisive score",
        internal_decisive,
    ),
)
REASON_IDS: tuple[str, ...] = tuple(r.id for r in REASONS)
REASON_TITLES: dict[str, str] = {r.id: r.title for r in REASONS}


def reason_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Long form: one row per (split, task_id, dimension, reason) flagged by a rule."""
    parts = [REASONS_BY_ID[r].rule(table).assign(reason=r) for r in REASON_IDS]
    out = pd.concat(parts, ignore_index=True)
    return out[[*KEYS, "reason"]]


REASONS_BY_ID: dict[str, Reason] = {r.id: r for r in REASONS}


def audit_table(table: pd.DataFrame) -> pd.DataFrame:
    """One row per contested (split, task_id, dimension): ``reasons`` (a tuple of reason
    ids in `REASON_IDS` order) and ``n_reasons``; sorted by split, task, dimension."""
    return grouped(reason_rows(table))


def grouped(long: pd.DataFrame) -> pd.DataFrame:
    """`audit_table` from the long form `reason_rows` (already narrowed, say, to a split)."""
    order = {r: i for i, r in enumerate(REASON_IDS)}
    if long.empty:
        return pd.DataFrame(columns=[*KEYS, "reasons", "n_reasons"])
    grouped = long.groupby(KEYS, sort=True)["reason"].agg(
        lambda s: tuple(sorted(set(s), key=order.__getitem__))
    )
    out = grouped.rename("reasons").reset_index()
    out["n_reasons"] = out["reasons"].map(len)
    return out


def reason_counts(long: pd.DataFrame) -> pd.DataFrame:
    """Tasks x dimensions flagged per reason and split (columns: reason, title, each split
    present, ``all``), every reason listed (0 when a rule flags nothing)."""
    splits = [s for s in SPLITS if s in set(long["split"])] + sorted(
        set(long["split"]) - set(SPLITS)
    )
    rows = []
    for rid in REASON_IDS:
        mine = long[long["reason"] == rid]
        row = {"reason": rid, "title": REASON_TITLES[rid]}
        for split in splits:
            row[split] = int((mine["split"] == split).sum())
        row["all"] = len(mine)
        rows.append(row)
    return pd.DataFrame(rows)


def contested_tasks(
    table: pd.DataFrame, dimension: str, reason: str | None = None
) -> set[tuple[str, str]]:
    """``(split, task_id)`` contested on ``dimension`` (by ``reason``, or by any)."""
    long = reason_rows(table)
    long = long[long["dimension"] == dimension]
    if reason is not None:
        long = long[long["reason"] == reason]
    return set(zip(long["split"], long["task_id"], strict=True))

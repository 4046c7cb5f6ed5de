"""Numbers for the home page: what is in the loaded data, per split."""

from __future__ import annotations

import pandas as pd

from lib.table.verdicts import rater_title
from lib.vocab import NO_ANSWER, SPLIT_SHORT, short_split


def split_overview(tasks: pd.DataFrame, annotations: pd.DataFrame) -> pd.DataFrame:
    """One row per split: trajectories, screenshots, unfinished runs, reviews."""
    rows = []
    for split, group in tasks.groupby("split", sort=False):
        reviews = annotations[annotations["split"] == split]
        per_task = reviews.groupby("task_id").size()
        rows.append(
            {
                "split": short_split(split),
                "trajectories": len(group),
                "with screenshots": int((group["n_screenshots_stored"] > 0).sum()),
                "without screenshots": int((group["n_screenshots_stored"] == 0).sum()),
                "screenshots": int(group["n_screenshots_stored"].sum()),
                "no answer": int((group["final_answer"].astype("string") == NO_ANSWER).sum()),
                "aborted": int(group["is_aborted"].fillna(False).astype(bool).sum()),
                "reviews": len(reviews),
                "reviewers": int(reviews["annotator"].nunique()),
                "tasks with 1 / 2 / 3+ reviewers": " / ".join(
                    str(int(n))
                    for n in ((per_task == 1).sum(), (per_task == 2).sum(), (per_task >= 3).sum())
                ),
            }
        )
    return pd.DataFrame(rows)


def reviewer_load(annotations: pd.DataFrame) -> pd.DataFrame:
    """Tasks each reviewer reviewed, per split (reviewer ids are one map across splits)."""
    table = annotations.pivot_table(
        index="annotator", columns="split", values="task_id", aggfunc="count", fill_value=0
    )
    table.columns = [short_split(c) for c in table.columns]
    table["total"] = table.sum(axis=1)
    key = table.index.str.extract(r"(\d+)$", expand=False).astype("float")
    return table.iloc[key.argsort(kind="stable")].rename_axis("reviewer").reset_index()


def label_balance(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per task-level rater and split: successes, failures, missing, other values.

    `missing` counts null or empty labels; `other` counts values that were present but
    are not a success/failure (kept visible, never turned into 0); `of which ties` counts
    the blind majority's 1:1 ties, which the dataset stores as failure.
    """
    task_level = verdicts[verdicts["kind"] != "human"]
    rows = []
    for (rater, split), group in task_level.groupby(["rater", "split"], sort=False):
        labels = group["label"]
        ties = group["raw"].fillna("").str.startswith("tie")
        other = int((labels.isna() & group["raw"].notna() & ~ties).sum())
        known = labels.dropna()
        rows.append(
            {
                "rater": rater_title(str(rater)),
                "split": short_split(split),
                "success": int((known == 1).sum()),
                "failure": int((known == 0).sum()),
                "of which ties": int(ties.sum()),
                "missing": int(labels.isna().sum()) - other,
                "other value": other,
                "success share": round(float(known.mean()), 3) if len(known) else None,
            }
        )
    return pd.DataFrame(rows)


def missing_values(tasks: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Null or empty cells per column and split (long form; only non-zero counts)."""
    rows = []
    for split, group in tasks.groupby("split", sort=False):
        for column in columns:
            values = group[column]
            empty = values.isna()
            if values.dtype == object or str(values.dtype).startswith("string"):
                empty |= values.astype("string").str.strip().fillna("") == ""
            if int(empty.sum()):
                rows.append(
                    {
                        "split": short_split(split),
                        "column": column,
                        "missing": int(empty.sum()),
                        "of": len(group),
                    }
                )
    return pd.DataFrame(rows, columns=["split", "column", "missing", "of"])


def missing_matrix(missing: pd.DataFrame) -> pd.DataFrame:
    """`missing_values` as one row per column and one `missing / of` cell per split."""
    if missing.empty:
        return missing
    cells = missing.assign(cell=missing["missing"].astype(str) + " / " + missing["of"].astype(str))
    wide = cells.pivot(index="column", columns="split", values="cell").fillna("0")
    order = [SPLIT_SHORT[s] for s in SPLIT_SHORT if SPLIT_SHORT[s] in wide.columns]
    return wide[order].reset_index().rename_axis(columns=None)

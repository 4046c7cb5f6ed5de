"""Altair chart of the process x outcome quadrant (Inside the verifier page).

DataFrames in, charts out; no Streamlit. Input: `quadrant_frame` (below), one row per cell.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from lib.analysis.quadrant import Quadrant
from lib.charts.two_by_two import Axis, two_by_two_chart

PROCESS_ORDER = ["sound", "flawed"]
OUTCOME_ORDER = ["success", "failure"]


def quadrant_frame(q: Quadrant) -> pd.DataFrame:
    """One row per cell: process and outcome words, its count and its share of ``q.n``."""
    rows = [
        {
            "process": "sound" if c.process else "flawed",
            "outcome": "success" if c.outcome else "failure",
            "count": c.n,
            "share": c.n / q.n if q.n else np.nan,
        }
        for c in q.cells
    ]
    return pd.DataFrame(rows, columns=["process", "outcome", "count", "share"])


def quadrant_chart(frame: pd.DataFrame, cell: int = 105) -> alt.LayerChart:
    """2x2 heatmap: rows = process verdict, columns = outcome verdict; count and share.

    The off-diagonal cells (process and outcome disagree: the environment blocked a sound
    process, or a flawed one succeeded) get a dashed outline so they read as such.
    """
    return two_by_two_chart(
        frame,
        rows=Axis("process", PROCESS_ORDER, "process verdict", "process"),
        columns=Axis("outcome", OUTCOME_ORDER, "outcome verdict", "outcome"),
        off_diagonal=(frame["process"] == "sound") != (frame["outcome"] == "success"),
        share_of="tasks",
        count_title="tasks",
        cell=cell,
    )

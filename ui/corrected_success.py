"""The agent's success rate, reported and corrected (Rogan-Gladen), on the Agreement page.

Numbers: `lib.analysis.corrected_success`; this module words them.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from lib.analysis import agreement as A
from lib.analysis import corrected_success as cs
from lib.vocab import ALL, short_split
from ui import fmt, state
from ui.safe_text import plain
from ui.sidebar import current_bootstrap

TITLE = "The agent's success rate, corrected for the verifier's errors"


@state.bounded_cache(max_entries=16, max_bytes=4 * state.MB)
def cached_corrected(
    _table: pd.DataFrame,
    source: str,
    uploads: str,
    cluster: str,
    verifiers: tuple[str, ...],
    splits: tuple[str, ...],
) -> list[cs.CorrectedSuccess]:
    return cs.corrected_success(_table, list(verifiers), list(splits), boot=current_bootstrap())


def _pct(value) -> str:
    return "undefined" if value.value is None else f"{value.value:.1%}"


def corrected_section(
    table: pd.DataFrame,
    source: str,
    uploads: str,
    cluster: str,
    shown: tuple[str, ...],
    splits: list[str],
) -> None:
    """Every shown outcome verifier: reported rate, corrected rate [CI], Se, Sp, humans' rate."""
    st.header(TITLE)
    verifiers = tuple(v for v in cs.outcome_verifiers(table) if v in shown)
    records = cached_corrected(table, source, uploads, cluster, verifiers, tuple(splits))
    if not records:
        st.caption("No outcome verifier in this view.")
        return
    rows = []
    for r in records:
        corrected = r.corrected
        text = (
            f"undefined ({corrected.reason})"
            if corrected.value is None
            else f"{corrected.value:.1%}"
            + (
                f" [{corrected.ci.low:.1%}, {corrected.ci.high:.1%}]"
                if corrected.ci is not None and corrected.ci.defined
                else ""
            )
        )
        rows.append(
            {
                "verifier": plain(A.verifier_title(r.verifier), 200),
                "split": "all" if r.split == ALL else short_split(r.split),
                "reported success": _pct(r.reported),
                "corrected success [95% CI]": text,
                "humans' rate": _pct(r.reference_rate),
                "sensitivity": _pct(r.sensitivity),
                "specificity": _pct(r.specificity),
                "n judged": r.n_judged,
            }
        )
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        column_config={
            "verifier": st.column_config.TextColumn("verifier", width="medium"),
            "corrected success [95% CI]": st.column_config.TextColumn(width="medium"),
        },
    )
    st.caption(
        "*Reported*: the share of the tasks the verifier judged that it calls a success. "
        "*Corrected* (Rogan-Gladen): (reported + specificity − 1) / (sensitivity + "
        "specificity − 1), clipped to [0, 1], with sensitivity = 1 − FNR and specificity = "
        f"1 − FPR against `{records[0].reference}`; not defined when sensitivity + "
        "specificity ≤ 1. Its interval: the percentile bootstrap that redraws the reported "
        "rate, the sensitivity and the specificity from the same resampled clusters "
        f"({current_bootstrap().n_resamples:,} resamples, seed {current_bootstrap().seed}, "
        f"{fmt.cluster_count_text([r.n_clusters for r in records])}). Here every task has a "
        "human label, so the corrected rate equals the humans' rate on the tasks both judged: "
        "the correction matters for tasks no human labelled. " + cs.TABLE3_CAPTION
    )

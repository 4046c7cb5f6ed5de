"""The naive way, for comparison only: `load_dataset(...).to_pandas()` of everything.

`streamlit run bench/naive_app.py` with `CUAVB_DATA=<mirror folder>` serves two pages
(a home table and a small agreement page) from pandas frames that hold every screenshot's
PNG bytes as Python objects. That is what `bench/run.py` measures our loader against; it
is charitable to the naive way in two respects: the frames are kept in
`st.cache_resource` (one copy per process, not the pickled copy per rerun that
`st.cache_data` would make), and its pages do far less than ours.

`BENCH_ARROW_CACHE` (set by bench/run.py) points `load_dataset` at the Arrow cache our
loader built, so both read the same files already on disk.
"""

from __future__ import annotations

import os

import pandas as pd

CONFIGS = ("trajectories", "annotations")
SPLITS = ("fara7b_om2w_browserbase", "internal")
CACHE_ENV = "BENCH_ARROW_CACHE"
N_RESAMPLES = 2000


def load_everything(folder: str, cache_dir: str | None = None) -> dict[str, pd.DataFrame]:
    """Both configs x both splits as pandas frames, screenshots included (the naive way)."""
    import datasets

    frames: dict[str, list[pd.DataFrame]] = {config: [] for config in CONFIGS}
    for config in CONFIGS:
        for split in SPLITS:
            ds = datasets.load_dataset(folder, config, split=split, cache_dir=cache_dir)
            frame = ds.to_pandas()
            frame.insert(0, "split", split)
            frames[config].append(frame)
    return {config: pd.concat(parts, ignore_index=True) for config, parts in frames.items()}


def _bootstrap_accuracy(agree: pd.Series, seed: int = 0) -> tuple[float, float]:
    """95% percentile interval of the agreement rate over N_RESAMPLES task resamples."""
    import numpy as np

    values = agree.to_numpy(dtype=float)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(values), size=(N_RESAMPLES, len(values)))
    rates = values[draws].mean(axis=1)
    low, high = np.quantile(rates, [0.025, 0.975])
    return float(low), float(high)


def main() -> None:
    import streamlit as st

    @st.cache_resource(show_spinner="Loading the whole dataset…")
    def frames() -> dict[str, pd.DataFrame]:
        return load_everything(os.environ["CUAVB_DATA"], os.environ.get(CACHE_ENV) or None)

    def home() -> None:
        data = frames()
        st.title("CUAVerifierBench (naive)")
        tasks = data["trajectories"]
        st.metric("Trajectories", len(tasks))
        st.dataframe(tasks.drop(columns=["screenshots"]).head(200), hide_index=True)
        st.dataframe(data["annotations"].head(200), hide_index=True)

    def agreement() -> None:
        tasks = frames()["trajectories"]
        st.title("Agreement (naive)")
        rows = []
        for split, group in tasks.groupby("split"):
            both = group.dropna(subset=["uv_outcome_success", "final_human_outcome_label"])
            agree = both["uv_outcome_success"] == both["final_human_outcome_label"]
            low, high = _bootstrap_accuracy(agree)
            rows.append({"split": split, "n": len(both), "agreement": agree.mean(), "low": low,
                         "high": high})  # fmt: skip
        st.dataframe(pd.DataFrame(rows), hide_index=True)
        st.dataframe(
            pd.crosstab(tasks["uv_outcome_success"], tasks["final_human_outcome_label"]),
        )

    page = st.navigation(
        [st.Page(home, title="Home", default=True), st.Page(agreement, title="Agreement")]
    )
    page.run()


if __name__ == "__main__":
    main()

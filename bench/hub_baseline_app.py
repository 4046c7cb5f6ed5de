"""The old default path, for comparison only: `snapshot_download` + `datasets.load_dataset`.

`streamlit run bench/hub_baseline_app.py` (with `HF_ENDPOINT` at a local Hub) does what
the app did before the lazy reader: download the whole snapshot of
`microsoft/CUAVerifierBench`, let `datasets` build its Arrow cache for both configs x
both splits, take the image-free columns into pandas, then render a title and the
counts. `bench/hub_cold.py` times it against the real app. (The old app also called
Streamlit from the download threads and fell back to the demo; this script passes no
progress callback, so it measures the path as it was meant to work.)
"""

from __future__ import annotations

import datasets
import streamlit as st
from huggingface_hub import snapshot_download

REPO = "microsoft/CUAVerifierBench"
SPLITS = ("fara7b_om2w_browserbase", "internal")


@st.cache_resource
def load() -> dict[str, int]:
    folder = snapshot_download(REPO, repo_type="dataset")
    counts = {}
    for config in ("trajectories", "annotations"):
        for split in SPLITS:
            ds = datasets.load_dataset(folder, config, split=split)
            light = [c for c in ds.column_names if c != "screenshots"]
            counts[f"{config}/{split}"] = len(ds.select_columns(light).to_pandas())
    return counts


st.title("CUAVerifierBench explorer (baseline)")
st.table(load())

"""The default Slices page ranks first an honest slice (issue 21), on the demo and on a
second mirror made with another seed: the slice's verifier and reference each use both
classes on its tasks (counted here from the rows, not from `lib.analysis.slices.one_class`), so
kappa is informative, and its kappa interval has width."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import streamlit as st

from lib.analysis import slices as S
from lib.analysis.slice_values import slice_table
from lib.data.load import load_bench
from lib.data.source import resolve
from tests.helpers import mirror_cache
from tests.helpers.apptest import open_page

PAGE = "pages/6_Slices.py"
VERIFIER, REFERENCE = "uv_outcome_success", "final_human_outcome_label"


@pytest.fixture(scope="module")
def other_mirror() -> Path:
    """A mirror with another seed than the demo's: other tasks, labels and slices (built
    once per machine, `tests.helpers.mirror_cache`)."""
    return mirror_cache.seeded_mirror(1)


@pytest.mark.parametrize("which", ["demo", "seed 1"])
def test_default_slices_page_ranks_an_honest_slice_first(
    which: str, mirror_dir: Path, other_mirror: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = mirror_dir if which == "demo" else other_mirror
    monkeypatch.setenv("CUAVB_DATA", str(data))
    st.cache_data.clear()
    at = open_page(PAGE)
    assert not at.exception
    first = next(w for w in at.selectbox if w.key == "slices_value").value
    dim, value = first.split(":", 1)
    bench = load_bench(resolve(str(data)))
    table = bench.verdicts
    # the slice's tasks and their labels, from the verdict table
    rows = S.selection_rows(
        table, slice_table(bench.tasks, table, "outcome"), VERIFIER, REFERENCE, "outcome",
        S.ALL_SPLITS, "task",
    )  # fmt: skip
    mine = rows[rows[dim].astype(str) == value]
    complete = mine[mine["pred"].notna() & mine["ref"].notna()]
    assert len(complete) >= S.DEFAULT_MIN_N, (which, first)
    assert set(np.unique(complete["pred"])) == {0.0, 1.0}, (which, first, "verifier one class")
    assert set(np.unique(complete["ref"])) == {0.0, 1.0}, (which, first, "reference one class")
    assert dim != "uv_band", (which, first)  # not the verifier's own score
    records = S.slice_records(table, bench.tasks, VERIFIER, REFERENCE, "outcome", sort_by=None)
    (record,) = [r for r in records if (r.slice_dim, r.value) == (dim, value)]
    assert record.n == len(complete)
    ci = record.stats["kappa"].value.ci
    assert ci.defined and ci.low < ci.high, (which, first, ci)

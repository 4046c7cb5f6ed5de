"""The Agreement page computes only what it shows (issue 18): the shown verifiers against
the chosen references, with the same numbers as the full computation; uploaded verifiers
beyond `?uploads=` (default 5) are left out and counted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from lib.analysis import agreement as A
from lib.table.verdicts import COLUMNS, UPLOAD_PREFIX
from lib.vocab import Bootstrap
from tests.helpers.apptest import APP, shown
from tests.helpers.slack import scaled
from ui.state import UPLOADS_KEY

PAGE = "pages/1_Agreement.py"


def uploads(bench, n: int) -> pd.DataFrame:
    """``n`` uploaded verifiers: the UV's outcome verdicts with some labels flipped."""
    uv = bench.verdicts[bench.verdicts["rater"] == "uv_outcome_success"]
    rng = np.random.default_rng(1)
    parts = []
    for i in range(n):
        labels = uv["label"].astype("Int8").copy()
        flip = rng.random(len(labels)) < 0.2
        labels[flip & labels.notna().to_numpy()] = 1 - labels[flip & labels.notna().to_numpy()]
        parts.append(uv.assign(rater=f"{UPLOAD_PREFIX}u{i}", label=labels)[COLUMNS])
    return pd.concat(parts, ignore_index=True).astype({"rater": "string"})


def test_only_the_shown_comparisons_are_computed_and_equal_the_full_ones(bench) -> None:
    table = pd.concat([bench.verdicts, uploads(bench, 3)], ignore_index=True)
    full = A.agreement_records(table, boot=Bootstrap(n_resamples=200))
    verifiers = ("uv_outcome_success", "uv_process", f"{UPLOAD_PREFIX}u1")
    references = ("final_human_outcome_label", "final_human_process_label")
    part = A.agreement_records(
        table,
        boot=Bootstrap(n_resamples=200),
        only_verifiers=verifiers,
        only_references=references,
    )
    assert len(part) < len(full) / 3
    assert {r.verifier for r in part} == set(verifiers)
    assert {r.reference for r in part} == set(references)
    by_key = {(r.split, r.verifier, r.reference, r.dimension): r for r in full}
    for record in part:  # the same numbers, intervals included (own bootstrap streams)
        assert record == by_key[(record.split, record.verifier, record.reference, record.dimension)]


def _open(bench, n_uploads: int, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=scaled(120))
    at.session_state[UPLOADS_KEY] = uploads(bench, n_uploads)
    at.query_params.update(query)
    at.switch_page(PAGE)
    at.run()
    assert not at.exception
    return at


def _shown_uploads(at: AppTest) -> set[str]:
    names = at.dataframe[0].value["verifier"]
    return {f"u{i}" for i in range(20) if names.str.startswith(f"u{i} ").any()}


def test_the_first_five_uploads_are_shown_and_the_rest_counted(use_mirror: Path, bench) -> None:
    at = _open(bench, 7)
    assert _shown_uploads(at) == {"u0", "u1", "u2", "u3", "u4"}
    captions = " ".join(shown(c.value) for c in at.caption)
    assert "2 of your 7 uploaded verifiers are not in the chart and table" in captions
    assert at.number_input(key="agreement_uploads").value == 5


def test_the_detail_verifier_is_always_shown_and_the_link_asks_for_more(
    use_mirror: Path, bench
) -> None:
    at = _open(bench, 7, verifier=f"{UPLOAD_PREFIX}u6")
    assert _shown_uploads(at) == {"u0", "u1", "u2", "u3", "u4", "u6"}
    assert "1 of your 7 uploaded" in " ".join(shown(c.value) for c in at.caption)
    at = _open(bench, 7, uploads="7")
    assert _shown_uploads(at) == {f"u{i}" for i in range(7)}
    assert "uploaded verifiers are not in" not in " ".join(shown(c.value) for c in at.caption)
    at = _open(bench, 7, uploads="1")
    assert _shown_uploads(at) == {"u0"}

"""AppTest of the human-parity section on Agreement and Your verifier, and of Table 13 on
Shifts: the words and numbers shown are those of `lib.analysis.parity` /
`lib.analysis.shifts` on the same
table, and ε and δ come from the URL (`?epsilon=`, `?margin=`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from lib.analysis import parity as P
from lib.analysis import shifts
from lib.vocab import Bootstrap
from tests.helpers.apptest import open_page, texts
from ui import fmt
from ui import parity as parity_view

AGREEMENT, YOURS, SHIFTS = "pages/1_Agreement.py", "pages/5_Your_verifier.py", "pages/3_Shifts.py"


def _frame(at, column: str) -> pd.DataFrame:
    frames = [d.value for d in at.dataframe if column in d.value.columns]
    assert frames, f"no table with a `{column}` column"
    return frames[0]


def test_agreement_shows_parity_for_every_verifier(use_mirror: Path, bench) -> None:
    at = open_page(AGREEMENT, timeout=180, epsilon="0.30", margin="0.20")
    assert not at.exception
    want = P.parity_records(bench.verdicts, Bootstrap(), epsilon=0.30, margin=0.20)
    frame = _frame(at, "difference [95% CI]")
    assert len(frame) == len(want) == 5
    got = dict(zip(frame["verifier"], frame["difference [95% CI]"], strict=True))
    for r in want:
        assert fmt.signed_diff(r.kappa.diff.diff, r.kappa.diff.ci) in got.values()
    text = texts(at)
    assert "ε = 0.30" in text and "Benjamini-Yekutieli" in text
    assert "overlaps the band" not in text
    for r in want:
        assert r.kappa.words in text and r.kappa.margin == 0.20
    assert "δ = 0.20" in text and parity_view.RECONCILE in text
    assert "human range" not in text
    assert set(frame["verdict"]) <= set(parity_view.VERDICT_CELLS.values())
    assert frame["power"].str.endswith("%").all()


def test_your_verifier_shows_parity_of_the_upload(use_mirror: Path) -> None:
    at = open_page(YOURS, timeout=180)
    assert not at.exception
    assert "Universal Verifier, outcome" in _frame(at, "verdict")["verifier"].tolist()
    sample = (use_mirror / "sample_predictions.csv").read_bytes()
    at.file_uploader(key="predictions_file").set_value(("s.csv", sample, "text/csv"))
    at = at.run(timeout=180)
    assert not at.exception
    rows = _frame(at, "verdict")
    assert len(rows) == 2 and any("(yours)" in v for v in rows["verifier"])
    assert "ε = 0.15" in texts(at)


def test_an_upload_without_om2w_labels_is_said_untested(use_mirror: Path) -> None:
    sample = pd.read_csv(use_mirror / "sample_predictions.csv", dtype=str)
    internal = sample[sample["split"] == "internal"].to_csv(index=False).encode()
    at = open_page(YOURS, timeout=180)
    at.file_uploader(key="predictions_file").set_value(("i.csv", internal, "text/csv"))
    at = at.run(timeout=180)
    assert not at.exception
    assert "Yours is not tested: it has no outcome label" in texts(at)
    assert _frame(at, "verdict")["verifier"].tolist() == ["Universal Verifier, outcome"]


def test_shifts_shows_table13(use_mirror: Path, bench) -> None:
    at = open_page(SHIFTS, timeout=180)
    assert not at.exception
    frame = _frame(at, "blind → informed [95% CI]")
    paired = shifts.paired_reviews(bench.verdicts, bench.annotations)
    want = shifts.verifier_errors(paired, "outcome")
    for name, m in want.metrics.items():
        row = frame[frame["metric"] == shifts_label(name)].iloc[0]
        assert row["blind"] == fmt.value_with_ci(m.blind)
        assert row["informed"] == fmt.value_with_ci(m.informed)
        assert row["blind → informed [95% CI]"] == fmt.signed_diff(m.diff, m.diff.ci)


def shifts_label(name: str) -> str:
    from ui.shifts import TABLE13_TITLES

    return TABLE13_TITLES[name]

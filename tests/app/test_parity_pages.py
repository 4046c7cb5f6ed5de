"""AppTest of the human-parity section on Agreement and Your verifier, and of Table 13 on
Shifts: the words and numbers shown are those of `lib.analysis.parity` /
`lib.analysis.shifts` on the same
table, and ε and δ come from the URL (`?epsilon=`, `?margin=`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from lib.analysis import audit, shifts
from lib.analysis import parity as P
from lib.vocab import Bootstrap
from tests.helpers.apptest import open_page, texts
from ui import fmt
from ui import parity as parity_view
from ui.state import LABELS_KEY

OM2W = "fara7b_om2w_browserbase"
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


def test_agreement_parity_with_your_labels(use_mirror: Path, bench) -> None:
    """With labels in the session: the reviewers' table as before, then "With your labels":
    each verifier with you in the panel and your labels as the candidate, the numbers of
    `lib.analysis.parity` with the same labels, and the counts of yours used and unsure."""
    ties = audit.ties(bench.verdicts)["task_id"].tolist()[:3]
    rows = [
        {"split": OM2W, "task_id": t, "dimension": "outcome", "label": lab, "note": ""}
        for t, lab in zip(ties, ("success", "failure", "unsure"), strict=True)
    ]
    internal = bench.tasks.loc[bench.tasks["split"] == "internal", "task_id"].iloc[0]
    rows.append(
        {"split": "internal", "task_id": internal, "dimension": "outcome", "label": "failure"}
        | {"note": ""}
    )
    mine = pd.DataFrame(rows).astype("string")
    at = open_page(AGREEMENT, timeout=180)
    at.session_state[LABELS_KEY] = mine
    at = at.run(timeout=180)
    assert not at.exception
    want = [r for r in P.parity_records(bench.verdicts, Bootstrap(), labels=mine) if r.you]
    assert len(want) == 5 and want[-1].you.role == P.CANDIDATE
    frame = _frame(at, "panel")
    assert len(frame) == len(want)
    assert frame["panel"].tolist() == ["reviewers + you"] * 4 + ["reviewers"]
    assert frame["verifier"].iloc[-1] == "Your labels (outcome)"
    assert frame["difference [95% CI]"].tolist() == [
        fmt.signed_diff(r.kappa.diff.diff, r.kappa.diff.ci) for r in want
    ]
    assert len(_frame(at, "difference [95% CI]")) == 5  # the reviewers' table unchanged
    text = texts(at)
    assert parity_view.YOUR_TITLE in text
    said = "om2w outcome: 2 success / failure labels of yours, 1 unsure (left out); used on 2"
    assert said in text
    assert "not blind" in text
    assert "a split without two or more reviewers on a task): internal outcome 1." in text
    duels = next(
        d.value
        for d in at.dataframe
        if "reviewer" in d.value.columns and "panel" in d.value.columns
    )
    assert (duels["reviewer"] == "you").sum() == 4  # a held-out annotator of each verifier


def test_your_verifier_parity_with_your_labels(use_mirror: Path, bench) -> None:
    """Your verifier (no upload yet): the Universal Verifier with you in the panel and
    your labels, the outcome only (the page's dimension)."""
    ties = audit.ties(bench.verdicts)["task_id"].tolist()[:2]
    rows = [
        {"split": OM2W, "task_id": t, "dimension": dim, "label": "success", "note": ""}
        for t in ties
        for dim in ("outcome", "process")
    ]
    at = open_page(YOURS, timeout=180)
    at.session_state[LABELS_KEY] = pd.DataFrame(rows).astype("string")
    at = at.run(timeout=180)
    assert not at.exception
    frame = _frame(at, "panel")
    assert frame["verifier"].tolist() == ["Universal Verifier, outcome", "Your labels (outcome)"]
    text = texts(at)
    assert "om2w outcome: 2 success / failure labels of yours, 0 unsure (left out)" in text
    assert "om2w process" not in text

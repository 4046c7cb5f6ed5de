"""AppTest of the Audit page: the counts per reason are the rules' counts, the filters
narrow the queue, a re-label is kept in the session and shown as done, and the Agreement
page then offers "your labels" as its reference and says how many tasks are yours."""

from __future__ import annotations

from lib.analysis import audit
from tests.helpers.apptest import open_page, texts
from ui.state import LABELS_KEY

PAGE = "pages/8_Audit.py"
OM2W = "fara7b_om2w_browserbase"


def _frame(at, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_counts_and_filters(use_mirror, bench) -> None:
    at = open_page(PAGE, split=OM2W)
    assert not at.exception
    counts = _frame(at, "reason").set_index("reason")
    want = audit.reason_counts(audit.reason_rows(bench.verdicts)).set_index("title")
    for title, row in want.iterrows():
        assert counts.loc[title, "om2w"] == row[OM2W]
    assert counts.loc[audit.REASON_TITLES["tie"], "om2w"] == 21
    assert "are contested" in texts(at)

    at = open_page(PAGE, split=OM2W, reason="tie", dimension="outcome", sort="reasons")
    assert not at.exception
    queue = _frame(at, "reasons")
    assert len(queue) == 21
    assert queue["reasons"].str.contains("Blind tie").all()
    assert list(queue["n"]) == sorted(queue["n"], reverse=True)
    assert queue["task"].str.contains("informed=1&audit=1").all()


def test_relabel_is_kept_and_used_as_reference(use_mirror) -> None:
    at = open_page(PAGE, split=OM2W, reason="adjudicated")
    pick = at.selectbox(key="audit_pick")
    first = pick.options[0]
    task = pick.value.split("|", 1)[1]
    at.radio(key="audit_label").set_value("failure")
    at.text_input(key="audit_note").input("=cmd|' /C calc'!A0")
    next(b for b in at.button if b.label == "Save my label").click()
    at.run()
    assert not at.exception
    mine = at.session_state[LABELS_KEY]
    assert mine[["task_id", "dimension", "label"]].values.tolist() == [[task, "outcome", "failure"]]
    queue = _frame(at, "reasons")
    done = queue[queue["yours"] != ""]
    assert len(done) == 1 and done["yours"].iloc[0] == "✓ failure"
    assert first  # the option stays offered, now marked
    assert "1 label(s) in this session" in texts(at).replace("**", "")

    at.query_params.update({"reference": "your_labels"})
    at.switch_page("pages/1_Agreement.py")
    at.run()
    assert not at.exception
    assert at.selectbox(key="agreement_reference").value == "your_labels"
    assert "1 of 106 tasks are yours" in texts(at)

    for page, query in (
        ("pages/6_Slices.py", {"reference": "your_labels"}),
        ("pages/2_Judges.py", {"a": "uv_outcome_success", "b": "your_labels"}),
    ):
        at.query_params.clear()
        at.query_params.update({"split": OM2W, **query})
        at.switch_page(page)
        at.run()
        assert not at.exception, page
        assert "1 of 106 tasks are yours" in texts(at), page


def test_bad_url_values_are_explained(use_mirror) -> None:
    at = open_page(PAGE, reason="<b>nope</b>", sort="x", dimension="both")
    assert not at.exception
    assert at.selectbox(key="audit_reason").value == "all"
    assert len(at.warning) + len(at.info) >= 1


def test_viewer_audit_panel(use_mirror, bench) -> None:
    """The queue's link opens the viewer with the panel: reasons, blind and informed rows."""
    long = audit.reason_rows(bench.verdicts)
    task = long.loc[long["reason"] == "tie", "task_id"].iloc[0]
    at = open_page("pages/4_Trajectory.py", task=task, informed="1", audit="1")
    assert not at.exception
    assert "why this task is contested: Blind tie" in texts(at)
    panel = _frame(at, "stage")
    assert {"blind", "informed"} <= set(panel["stage"])
    assert (panel["who"] == "Universal Verifier, outcome").any()


def test_ceiling_table(use_mirror) -> None:
    at = open_page(PAGE, split=OM2W, dimension="outcome")
    assert not at.exception
    table = _frame(at, "UV κ vs final")
    assert table["tasks"].iloc[0] == "All tasks"
    assert "Without any contested" in set(table["tasks"])
    assert "split" not in table.columns  # one split: no split column
    assert (table["left out"].iloc[1:] > 0).all()
    # the parity verdict in the Agreement page's words, never its id ("undetermined")
    from ui.parity import VERDICT_CELLS

    assert set(table["parity"]) <= set(VERDICT_CELLS.values()) | {"n/a"}
    assert "cannot tell" in set(table["parity"]) or "worse" in set(table["parity"])
    # a zero-width interval's reason, cut in its cell, is said in full in the caption
    assert (
        table["reviewers κ"].str.contains("no width").any()
    )  # the demo: without the contested tasks the reviewers agree on every pair
    assert any("Intervals without width: every resample gives" in c.value for c in at.caption)

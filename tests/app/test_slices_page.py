"""AppTest of the Slices page and of the sidebar's cluster choice (issue 14)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lib.analysis import slices as S
from lib.analysis.slices import SLICE_DIMS
from lib.data.load import load_bench
from lib.data.source import resolve
from lib.uploads import predictions
from lib.vocab import Bootstrap
from tests.helpers.apptest import open_page, texts
from ui.state import UPLOADS_KEY

PAGE = "pages/6_Slices.py"
DEEP = {
    "split": "fara7b_om2w_browserbase",
    "cluster": "site",
    "verifier": "mm_is_success",
    "vs": "uv_outcome_success",
    "reference": "majority_human_outcome_vote",
    "slice": "run_end",
    "sort": "fnr",
    "min_n": "4",
    "value": "run_end:aborted",
}


@pytest.fixture(autouse=True)
def _on_the_mirror(use_mirror: Path):
    yield  # the caches: emptied once per module (tests/app/conftest.py)


def widget(at, key: str):
    for kind in (at.selectbox, at.number_input, at.radio):
        for w in kind:
            if w.key == key:
                return w
    raise KeyError(key)


def test_deep_link_reproduces_the_view() -> None:
    at = open_page(PAGE, **DEEP)
    assert not at.exception, [e.value for e in at.exception]
    for name in ("verifier", "vs", "reference", "slice", "sort"):
        assert widget(at, f"slices_{name}").value == DEEP[name], name
    assert widget(at, "slices_min_n").value == 4
    assert widget(at, "slices_value").value == "run_end:aborted"
    assert at.session_state["cluster"] == "site"
    text = texts(at)
    # every number's context: split, reference, n, method with the resampled unit
    assert "split: om2w" in text and "n = " in text
    assert "bootstrap over websites/families (" in text
    assert re.search(r"clusters per (defined )?comparison, 2,000 resamples", text), text
    assert "slices with n < 4" in text
    assert "A = " in text  # the paired section is drawn for vs=
    # its method, from the paired results: the unit, resamples and the clusters resampled
    (paired,) = [str(c.value) for c in at.caption if "Both verifiers on exactly" in str(c.value)]
    assert "bootstrap over websites/families (" in paired and "2,000 resamples" in paired
    assert re.search(r"overall \S+ A - B = .*\(n = \d+, [\d,]+ clusters resampled\)", text)
    assert "aborted" in text  # the chosen slice's tasks
    # the table has only the chosen dimension's slices
    table = at.dataframe[0].value
    assert table["slice"].str.startswith("How the run ended").all()
    # the URL keeps the view (nothing reset to a default)
    for name, value in DEEP.items():
        assert at.query_params[name] in (value, [value]), name


def test_bogus_value_of_each_parameter_gives_a_notice_and_the_page_works() -> None:
    """One link with every parameter unusable: one notice per parameter (the value shown
    inert, never as a link), defaults in the widgets, and the page still draws."""
    bad = "[x](http://evil.example) `bad`"
    names = [k for k in DEEP if k not in ("split", "cluster")]
    at = open_page(PAGE, **{name: bad for name in names})
    assert not at.exception, [e.value for e in at.exception]
    warnings = [str(w.value) for w in at.warning]
    assert sum("The link asks for" in w for w in warnings) == len(names), warnings
    assert not any("](http" in w for w in warnings)  # inert: never a working link
    assert widget(at, "slices_verifier").value == "uv_outcome_success"
    assert widget(at, "slices_min_n").value == 10
    assert len(at.dataframe) >= 2  # the slices table and a slice's tasks are still drawn


def test_bogus_cluster_falls_back_to_tasks_with_a_notice() -> None:
    at = open_page(PAGE, cluster="**loud**")
    assert not at.exception
    assert at.session_state["cluster"] == "task"
    assert "**loud**" not in " ".join(str(w.value) for w in at.warning)
    assert "bootstrap over tasks (" in texts(at)


def test_uploaded_verifier_can_be_chosen(use_mirror: Path) -> None:
    bench = load_bench(resolve(str(use_mirror)))
    data = (use_mirror / "sample_predictions.csv").read_bytes()
    upload = predictions.parse_predictions(data, "sample_predictions.csv", bench.tasks, set())
    rater = upload.raters[0]
    at = open_page(PAGE, verifier=rater, vs="uv_outcome_success", slice="length", timeout=120)
    at.session_state[UPLOADS_KEY] = upload.verdicts
    at.query_params["verifier"] = rater
    at.query_params["vs"] = "uv_outcome_success"  # the first run (no upload yet) dropped it
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert widget(at, "slices_verifier").value == rater
    assert "yours" in texts(at)  # its title, in the context caption (shown inert)
    assert "A = " in texts(at)  # paired with the Universal Verifier
    # The upload judges both dimensions: each is offered, and the link can ask for process.
    assert widget(at, "slices_dimension").value == "outcome"
    at.query_params["dimension"] = "process"
    at.run()
    assert not at.exception
    assert widget(at, "slices_reference").value == "final_human_process_label"


def _kappa_cells(at) -> list[str]:
    frame = at.dataframe[0].value
    column = next(c for c in frame.columns if "kappa" in str(c).lower())
    return frame[column].astype(str).tolist()


def test_cluster_choice_changes_agreement_intervals_and_caption() -> None:
    task = open_page("pages/1_Agreement.py", cluster="task")
    site = open_page("pages/1_Agreement.py", cluster="site")
    assert not task.exception and not site.exception
    a, b = _kappa_cells(task), _kappa_cells(site)
    assert len(a) == len(b) and a != b  # same rows, other intervals
    widths = []
    for cells in (a, b):
        bounds = [re.search(r"\[(-?[\d.]+), (-?[\d.]+)\]", c) for c in cells]
        widths.append(sum(float(m[2]) - float(m[1]) for m in bounds if m))
    assert widths[0] != widths[1]
    assert "bootstrap over tasks (" in texts(task)
    assert "bootstrap over websites/families (" in texts(site)


def test_all_dimensions_listed_by_default() -> None:
    at = open_page(PAGE)
    assert not at.exception
    slices = at.dataframe[0].value["slice"].tolist()
    assert len({s.split(":")[0] for s in slices}) == len(SLICE_DIMS)


def test_default_page_ranks_an_honest_slice_first(bench) -> None:
    """Issue 21: the default page's first slice (the default of *Tasks of one slice*) has
    an informative kappa and an interval with width, and the chart leaves small n out."""
    at = open_page(PAGE)
    assert not at.exception
    first = widget(at, "slices_value").value
    records = S.rank_slices(
        S.slice_records(bench.verdicts, bench.tasks, "uv_outcome_success",
                        "final_human_outcome_label", "outcome", sort_by=None, boot=Bootstrap(2000)),
        "kappa",
    )  # fmt: skip
    (record,) = [r for r in records if f"{r.slice_dim}:{r.value}" == first]
    assert S.not_ranked(record, "kappa") is None and record.one_class is None
    ci = record.stats["kappa"].value.ci
    assert ci.defined and ci.low < ci.high
    assert not record.own_score and record.slice_dim != "uv_band"
    assert "are only in the table" in texts(at)  # small-n slices left out of the chart


@pytest.mark.parametrize("split", ["fara7b_om2w_browserbase", "all"])
def test_overall_caption_counts_the_selections_own_clusters(bench, split: str) -> None:
    """Issue 21: the "Overall kappa" figure's caption says its own n and the clusters its
    interval resampled (the selection's websites/families), counted here from the rows."""
    from lib.table import clusters as C
    from lib.table.pairs import pair

    at = open_page(PAGE, split=split, cluster="site", slice="length")
    assert not at.exception
    splits = ["fara7b_om2w_browserbase", "internal"] if split == "all" else [split]
    rows = pair(bench.verdicts, "uv_outcome_success", "final_human_outcome_label", "outcome")
    rows = rows[rows["split"].astype(str).isin(splits)]
    both = rows[rows["label_a"].notna() & rows["label_b"].notna()]
    k = C.n_clusters(both["task_id"].astype(str).tolist(), "site")
    assert k < len(both)  # websites hold several tasks: a task count would show
    want = (
        f"n = {len(both)} tasks with both labels · 95% intervals: percentile bootstrap over "
        f"websites/families ({k:,} clusters, 2,000 resamples, seed 0)"
    )
    captions = [c.value for c in at.caption]
    assert any(c.startswith(f"Overall kappa: {want}") for c in captions), captions

"""Every URL parameter of every page, declared once: its name, the widget that holds it,
the label that widget shows, and its kind.

Pages draw these with `ui.url.choice` / `ui.url.number` (which read, explain, draw and
write back); the options and default are the page's, at run time (they depend on the
data). `PAGE_PARAMS` is the registry the URL tests enumerate
(tests/app/test_url_injection.py, tests/browser/test_browser_hostile_pages.py,
tests/browser/test_browser_url_roundtrip.py): a parameter declared here is tested on its page
without editing a test list.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Param:
    """One URL parameter: ``?name=`` held by the widget ``key`` labelled ``label``.

    ``kind``: the widget, ``select``, ``radio``, ``number`` or ``slider`` (drawn by
    `ui.url`, or by `ui.sidebar` with Streamlit's ``bind="query-params"`` for the split
    and cluster), or ``own`` (no widget of its own: the page resolves it itself, as the
    viewer's task and step and a shared upload's hash). ``noun`` is how the
    warning about a bad value names it.
    """

    name: str
    key: str
    label: str
    kind: str
    noun: str = ""
    free_text: bool = False
    """Any value is a usable choice (a search): nothing to explain, so nothing echoed."""
    echoed: bool = True
    """An unusable value is explained by quoting it (False: a fixed line says why, or it is
    ignored, and nothing of the value is shown: `?v=`, an old `?mine=`, `?why=`)."""

    def __post_init__(self) -> None:
        if not self.noun:
            object.__setattr__(self, "noun", self.name.replace("_", " "))


# --- every page (the sidebar) ------------------------------------------------------------
SPLIT = Param("split", "split", "Split", "select")  # bind="query-params" (ui.sidebar)
CLUSTER = Param("cluster", "cluster", "Intervals resample", "radio", "intervals over")
UPLOADS_LINK = Param("v", "v", "", "own", "uploaded verdicts", echoed=False)
"""The session's uploaded verdicts, carried by every link (`lib.uploads.link_codec`)."""
OLD_MINE = Param("mine", "mine", "", "own", "shared upload", echoed=False)
"""An old server-stored upload's hash: said to be gone (`link_codec.OLD_LINK`)."""

# --- Agreement ---------------------------------------------------------------------------
AGREEMENT_REFERENCE = Param(
    "reference", "agreement_reference", "Human reference for outcome verdicts", "select"
)
AGREEMENT_VERIFIER = Param(
    "verifier", "agreement_verifier", "Verifier for the details below", "select"
)
AGREEMENT_THRESHOLD = Param(
    "threshold", "agreement_threshold", "Process verdict: rubric score ≥", "slider"
)
AGREEMENT_ROC = Param("roc", "agreement_roc", "Score against", "radio", "ROC reference")
AGREEMENT_UPLOADS = Param(
    "uploads", "agreement_uploads", "Uploaded verifiers shown", "number", "uploaded verifiers shown"
)
AGREEMENT_EPSILON = Param(
    "epsilon", "agreement_epsilon", "Alt-test ε (cost advantage)", "slider", "alt-test ε"
)
AGREEMENT_FLAGGED = Param("flagged", "agreement_flagged", "", "own", "flagged tasks", echoed=False)
"""As `YOUR_FLAGGED` (its label is set there)."""
AGREEMENT_MARGIN = Param(
    "margin", "agreement_margin", "Equivalence margin δ (kappa)", "slider", "margin δ"
)

# --- Judges ------------------------------------------------------------------------------
JUDGES_DIMENSION = Param("dimension", "judges_dimension", "Dimension", "radio")
JUDGES_MIN_N = Param("min_n", "judges_min_n", "Minimum shared tasks for a coloured cell", "number")
JUDGES_A = Param("a", "judges_a", "Rater A (rows)", "select", "rater")
JUDGES_B = Param("b", "judges_b", "Rater B (columns)", "select", "rater")
JUDGES_SHOW = Param("show", "judges_cell", "Show", "radio", "off-diagonal cells")
JUDGES_UPLOADS = Param(
    "uploads", "judges_uploads", "Uploaded verifiers shown", "number", "uploaded verifiers shown"
)
JUDGES_B_DIMENSION = Param("b_dimension", "judges_b_dimension", "Rater B judges", "radio",
                           "rater B's dimension")  # fmt: skip
JUDGES_HUMAN_THRESHOLD = Param(
    "human_threshold", "judges_human_threshold", "Human threshold t: median reviewer score ≥",
    "slider", "human threshold",
)  # fmt: skip

# --- Shifts ------------------------------------------------------------------------------
SHIFTS_DIMENSION = Param("dimension", "shifts_dimension", "Dimension", "radio")
SHIFTS_REVIEWER = Param("reviewer", "shifts_reviewer", "Reviewer", "select")
SHIFTS_MEASURE = Param("measure", "shifts_measure", "Measure", "radio")

# --- Trajectory (resolved by ui.viewer itself) ---------------------------------------------
VIEWER_TASK = Param("task", "viewer_task", "", "own")
VIEWER_STEP = Param("step", "viewer_step", "", "own")
VIEWER_SEARCH = Param("q", "viewer_search", "Search", "own", "search", free_text=True)
VIEWER_FILTERS = tuple(
    Param(name, key, "", "own", f"{name} filter")
    for name, key in (
        ("disagree", "viewer_f_disagree"),
        ("reviewer", "viewer_f_reviewer"),
        ("outcome", "viewer_f_outcome"),
        ("family", "viewer_f_family"),
        ("actions", "viewer_f_steps"),
        ("shots", "viewer_f_shots"),
    )
)
VIEWER_INFORMED = Param("informed", "viewer_informed", "Show the informed stage", "own")
VIEWER_WHY = Param("why", "viewer_why", "", "own", "reason", echoed=False)
"""`fp:<rater>` / `fn:<rater>`: opened from that verifier's error list (`lib.viewer.links`)."""

# --- Your verifier -----------------------------------------------------------------------
YOUR_EPSILON = Param(
    "epsilon", "your_epsilon", "Alt-test ε (cost advantage)", "slider", "alt-test ε"
)
YOUR_MARGIN = Param("margin", "your_margin", "Equivalence margin δ (kappa)", "slider", "margin δ")
FLAGGED_LABEL = "Tasks the verifier's score files flag ambiguous or invalid"
YOUR_FLAGGED = Param("flagged", "your_flagged", FLAGGED_LABEL, "own", "flagged tasks", echoed=False)
"""`include` / `exclude` (`ui.flagged`): drawn on Your verifier and Agreement (one key each,
the session's choice carried between them), only when an uploaded verifier's score files
flag a task (so kind "own": no control without them; ignored then). An unusable value is
said in a fixed line, not quoted (`echoed` False)."""
ITER_REFERENCE = Param(
    "iter_reference", "iterations_reference", "Reference", "select", "iterations reference"
)
ITER_SPLIT = Param(
    "iter_split", "iterations_split", "Split of the versions", "select", "iterations split"
)
ITER_FROM = Param("iter_from", "iterations_from", "From", "select", "version to compare from")
ITER_TO = Param("iter_to", "iterations_to", "To", "select", "version to compare to")
ITERATIONS = (ITER_REFERENCE, ITER_SPLIT, ITER_FROM, ITER_TO)
"""The Iterations section (`ui.iterations`): drawn only when the verifier scored has a
history (`version` / `run` columns; a link carries it in `?v=`), so without one these are
not read. ``from`` / ``to`` are a version's place in the file (1, 2, ...), not its name."""

# --- Slices ------------------------------------------------------------------------------
SLICES_VERIFIER = Param("verifier", "slices_verifier", "Verifier", "select")
SLICES_DIMENSION = Param("dimension", "slices_dimension", "Dimension", "radio")
SLICES_REFERENCE = Param("reference", "slices_reference", "Human reference", "select")
SLICES_VS = Param("vs", "slices_vs", "Beside it (paired)", "select", "second verifier")
SLICES_SLICE = Param("slice", "slices_slice", "Slice by", "select", "slice dimension")
SLICES_SORT = Param("sort", "slices_sort", "Rank by", "select", "ranking metric")
SLICES_MIN_N = Param("min_n", "slices_min_n", "Minimum n", "number", "a minimum n of")
SLICES_VALUE = Param("value", "slices_value", "Slice", "select", "slice")

# --- Inside the verifier -----------------------------------------------------------------
INSIDE_THRESHOLD = Param(
    "threshold", "inside_threshold", "Process verdict: rubric score ≥", "slider"
)

# --- Audit -------------------------------------------------------------------------------
AUDIT_DIMENSION = Param("dimension", "audit_dimension", "Dimension", "radio")
AUDIT_REASON = Param("reason", "audit_reason", "Reason", "select")
AUDIT_SORT = Param("sort", "audit_sort", "Sort by", "select", "sort order")

# --- Trajectory: the audit panel ------------------------------------------------------------
VIEWER_AUDIT = Param("audit", "viewer_audit", "", "own", "audit view")

SIDEBAR: tuple[Param, ...] = (SPLIT, CLUSTER, UPLOADS_LINK, OLD_MINE)
"""Read on every page (the sidebar, and `ui.state.sync_link` for the uploads a link carries)."""

PAGE_PARAMS: dict[str, tuple[Param, ...]] = {
    "pages/0_Home.py": (),
    "pages/1_Agreement.py": (
        AGREEMENT_REFERENCE,
        AGREEMENT_THRESHOLD,
        AGREEMENT_VERIFIER,
        AGREEMENT_UPLOADS,
        AGREEMENT_EPSILON,
        AGREEMENT_MARGIN,
        AGREEMENT_ROC,
        AGREEMENT_FLAGGED,
    ),
    "pages/2_Judges.py": (
        JUDGES_DIMENSION,
        JUDGES_MIN_N,
        JUDGES_A,
        JUDGES_B_DIMENSION,
        JUDGES_B,
        JUDGES_SHOW,
        JUDGES_UPLOADS,
        JUDGES_HUMAN_THRESHOLD,
    ),
    "pages/3_Shifts.py": (SHIFTS_DIMENSION, SHIFTS_REVIEWER, SHIFTS_MEASURE),
    "pages/4_Trajectory.py": (
        VIEWER_TASK,
        VIEWER_STEP,
        VIEWER_SEARCH,
        *VIEWER_FILTERS,
        VIEWER_INFORMED,
        VIEWER_WHY,
        VIEWER_AUDIT,
    ),
    "pages/5_Your_verifier.py": (YOUR_FLAGGED, *ITERATIONS, YOUR_EPSILON, YOUR_MARGIN),
    "pages/6_Slices.py": (
        SLICES_VERIFIER,
        SLICES_DIMENSION,
        SLICES_REFERENCE,
        SLICES_VS,
        SLICES_SLICE,
        SLICES_SORT,
        SLICES_MIN_N,
        SLICES_VALUE,
    ),
    "pages/7_Inside_the_verifier.py": (INSIDE_THRESHOLD,),
    "pages/8_Audit.py": (AUDIT_DIMENSION, AUDIT_REASON, AUDIT_SORT),
}
"""Page file -> the parameters it reads (besides `SIDEBAR`), in the order it draws them."""

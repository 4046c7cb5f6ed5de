"""The measured facts of microsoft/CUAVerifierBench that the mirror reproduces exactly.

Counts come from the real data (split sizes, reviewers, ties, adjudications, nulls); the
agreement targets come from the paper. Every other module of `lib.mirror` reads them
from here, so a fact is stated once.
"""

from __future__ import annotations

from datetime import datetime

OM2W, INTERNAL = "fara7b_om2w_browserbase", "internal"
SPLITS = (OM2W, INTERNAL)
N_TASKS = {OM2W: 106, INTERNAL: 154}
N_SHARDS = {"trajectories": 2, "annotations": 1}
N_SITES = {OM2W: 63, INTERNAL: 70}
"""Distinct websites (om2w) and task families (internal) in the real data."""
MAJORITY_SUCCESS_FAILURE = {OM2W: (29, 56), INTERNAL: (90, 64)}
"""Non-tie majority outcome votes (success, failure); om2w adds 21 ties."""
OM2W_THREE_REVIEWER_TASKS = 3
OM2W_TIES_FINAL_SUCCESS = 9
"""Ties (stored as majority 0) that adjudication settled as success: final != majority."""
OM2W_OVERTURNED = {1: 3, 0: 1}
"""Non-tie majority label -> how many such tasks adjudication overturned (9 + 3 + 1 = 13)."""
N_ABORTED = {OM2W: 2, INTERNAL: 2}
REVIEWERS = {
    OM2W: ("Judge3", "Judge5", "Judge9", "Judge11", "Judge12", "Judge14"),
    INTERNAL: ("Judge1", "Judge2", "Judge9", "Judge11", "Judge16"),
}
"""One anonymised Judge<N> map across both splits; N is not contiguous."""
UV_PROCESS_THRESHOLD = 0.8
RUBRIC_POINTS = (6.0, 27.0)
"""Typical range of a rubric's total points; criteria are scored in 0.5-point steps."""

VERIFIER_TARGETS = {
    "uv_outcome_success": {OM2W: (0.58, 0.08), INTERNAL: (0.64, 0.01)},
    "mm_is_success": {OM2W: (0.30, 0.30), INTERNAL: (0.30, 0.25)},
    "verifier_is_success": {OM2W: (0.15, 0.40), INTERNAL: (0.15, 0.40)},
    "webjudge": {OM2W: (0.38, 0.22)},
    "my_verifier_v1": {OM2W: (0.45, 0.12), INTERNAL: (0.50, 0.10)},
    "my_verifier_v2": {OM2W: (0.25, 0.30), INTERNAL: (0.30, 0.25)},
}
"""(Cohen's kappa vs final_human_outcome_label, false-positive rate) per verifier and split."""
VERIFIER_SHARPNESS = {
    "uv_outcome_success": 1.0,
    "webjudge": 1.2,
    "mm_is_success": 1.0,
    "verifier_is_success": 0.5,
    "my_verifier_v1": 1.5,
    "my_verifier_v2": 0.8,
}
"""How strongly a verifier's errors concentrate on the tasks whose latent truth is closest
to the other side (0 = errors anywhere; larger = only on unclear runs)."""

UV_BLIND_SPOT_SD = 3.0
"""Spread of the Universal Verifier's per-site blind spots (`labels.verdicts`): its outcome
errors cluster modestly by site (om2w site/task interval width ratio about 1.1-1.4)."""
UV_CONTESTED_CLARITY = 3.0
"""How much less likely the Universal Verifier errs on a contested om2w task (a blind tie,
a dissent or an adjudicated label), in logits (`build._uv_blind_spots`)."""
UV_TIE_LEAN = 6.0
"""How much likelier the Universal Verifier passes a 1:1 om2w tie adjudicated failure than
a run the blind reviewers failed, in logits: its false passes against the final label fall
on ties (the blind majority leaves them out), so its FPR against the strict blind
majority is about the paper's 0.04 (Table 13) at FPR 0.08 against the final label."""
INFORMED_RISE = 0.17
"""Least rise of the verdict's kappa against each reviewer from blind to informed that
`build._informed_kappa_band` asks of the informed stage (the paper: 0.39 -> 0.63)."""
UV_PROCESS_TARGETS = {OM2W: (0.43, 0.10), INTERNAL: (0.59, 0.04)}
"""(Cohen's kappa vs final_human_process_label, FPR) of the Universal Verifier's process
verdict (rubric score >= 0.8): the paper's Table 2 (om2w FPR not reported; 0.10 assumed)."""
N_UV_MISSING = 3
N_WITHOUT_STEPS = 4
"""internal rows whose score file has no `rubric_intermediate_mm_rubric_steps` (its
presence is not verified on every real row)."""
"""Tasks per split where the Universal Verifier did not run: both uv_* columns null."""
N_NULL = {"mm_is_success": 3, "verifier_is_success": 3, "final_human_process_label": 3}
N_OM2W_UNSCORED_TASKS = 2
"""om2w tasks whose reviewers gave no process score, so the median is null."""
N_WEBJUDGE_NOT_EVALUATED, N_WEBJUDGE_EMPTY = 3, 2
INFORMED_NOT_GIVEN = 0.03

N_QUIRK = {"empty_log": 1, "non_json": 2, "aliases": 3, "malformed_key": 2}
"""Per split: logs that are empty, hold a non-JSON line, use old tool names, a bad key."""
N_MISMATCH = 2
"""Per split: logs with more actions than screenshots - 1, and as many with fewer."""
N_EMPTY_TIMESTAMPS, N_EMPTY_INIT_URL = 2, 2
N_INTERNAL_FIRST_HALF_NO_SCREENSHOTS = 4
ALIASES = {
    "left_click": "click",
    "type": "input_text",
    "mouse_move": "hover",
    "key": "keypress",
    "wait": "sleep",
    "terminate": "stop",
}
"""Older Fara tool names seen in some logs."""

ACTIONS_DEFAULT, ACTIONS_FULL = (2, 4), (19, 39)
"""Inclusive range of actions per trajectory; screenshots = actions + 1."""
PNG_LEVEL = 1
BASE_DATE = datetime(2025, 10, 6, 8, 0, 0)
MODELS = ("Pro", "Lite", "Plus", "2025", "Classic", "Max", "Select", "Essentials", "Prime", "Go")
"""Model names that make up result titles, e.g. "Trail Runner Pro"."""
NO_ANSWER = "<no_answer>"

"""Assemble one split: task specs, latent truth, labels, agent runs and every text column.

Order matters: the labels are drawn first (from the latent truth), the run's story
follows from the humans' final label, the agent is simulated with the answer that story
implies, and only then are the comments and judge texts written, citing the run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lib.mirror import labels as L
from lib.mirror import text as T
from lib.mirror.agent import Run, simulate
from lib.mirror.facts import (
    ACTIONS_DEFAULT,
    ACTIONS_FULL,
    INFORMED_RISE,
    INTERNAL,
    N_ABORTED,
    N_EMPTY_INIT_URL,
    N_EMPTY_TIMESTAMPS,
    N_INTERNAL_FIRST_HALF_NO_SCREENSHOTS,
    N_MISMATCH,
    N_NULL,
    N_QUIRK,
    N_TASKS,
    N_UV_MISSING,
    N_WEBJUDGE_EMPTY,
    N_WEBJUDGE_NOT_EVALUATED,
    N_WITHOUT_STEPS,
    OM2W,
    UV_BLIND_SPOT_SD,
    UV_CONTESTED_CLARITY,
    UV_PROCESS_TARGETS,
    UV_PROCESS_THRESHOLD,
    UV_TIE_LEAN,
    VERIFIER_SHARPNESS,
    VERIFIER_TARGETS,
)
from lib.mirror.pictures import Frame
from lib.mirror.rng import rng_for
from lib.mirror.score_file import CRITERIA, uv_response


@dataclass
class SplitData:
    """Everything of one split except the encoded screenshots."""

    traj: dict[str, list]
    frames: list[list[Frame]]
    ann: dict[str, list]


def _choose(rng: np.random.Generator, pool: Sequence[int], k: int, taken: set[int]) -> set[int]:
    """k distinct rows from `pool` not yet taken (quirks never overlap)."""
    free = [p for p in pool if p not in taken]
    chosen = {int(x) for x in rng.choice(free, k, replace=False)}
    taken |= chosen
    return chosen


PARTIAL_LABEL = "partial"
"""The release holds one human label that is neither Correct nor Incorrect (DATASET.md); the
demo's is an om2w process label (`partial_review`), so the outcome facts (21 ties, 13
adjudications) stay exact."""


def partial_review(reviews: list[L.Review]) -> int:
    """The review whose blind process label is `PARTIAL_LABEL`: the first review of a task
    with three reviewers whose drawn process label is Incorrect (else the first review of
    the first such task). No draw, so no other column moves; and read as not Correct, the
    label leaves the reviewers' process kappa as drawn (an om2w Correct one lowered the
    demo's from 0.48 to 0.44, under the kappa of the scores cut at 0.8)."""
    per_task: dict[int, int] = {}
    for r in reviews:
        per_task[r.task] = per_task.get(r.task, 0) + 1
    three = [i for i, r in enumerate(reviews) if per_task[r.task] >= 3]
    return next((i for i in three if reviews[i].process == 0), three[0])


def build_split(split: str, seed: int, full: bool) -> SplitData:
    """Derive all columns of one split from the facts, in dependency order."""
    n = N_TASKS[split]
    make_specs = T.om2w_specs if split == OM2W else T.internal_specs
    specs = make_specs(rng_for(seed, split, "ids"))
    merit = L.latent_merit([s.site for s in specs], rng_for(seed, split, "merit"))
    humans = L.human_outcomes(split, merit, rng_for(seed, split, "humans"))
    reviews = L.blind_reviews(split, humans, merit, rng_for(seed, split, "reviews"))
    process = L.task_process(split, reviews, rng_for(seed, split, "process"))
    final = [int(x) for x in humans.final]

    rng = rng_for(seed, split, "verifiers")

    def draw(
        name: str, missing: set[int] | np.ndarray, spots: np.ndarray | None = None
    ) -> list[int | None]:
        target = VERIFIER_TARGETS[name][split]
        return L.verdicts(final, missing, target, merit, VERIFIER_SHARPNESS[name], rng, spots)

    uv_missing = {int(t) for t in rng.choice(n, N_UV_MISSING, replace=False)}
    uv_outcome = draw("uv_outcome_success", uv_missing, _uv_blind_spots(split, specs, humans, seed))
    rubrics = _uv_rubrics(split, reviews, process, uv_outcome, seed)
    uv_score = [None if r is None else r.score for r in rubrics]
    partial = partial_review(reviews) if split == OM2W else None
    L.draw_scores(reviews, uv_score, rng_for(seed, split, "scores"), partial)
    legacy = {
        col: draw(col, rng.choice(n, N_NULL[col], replace=False))
        for col in ("mm_is_success", "verifier_is_success")
    }
    judge_rng = rng_for(seed, split, "webjudge")
    odd = judge_rng.choice(n, N_WEBJUDGE_NOT_EVALUATED + N_WEBJUDGE_EMPTY, replace=False)
    not_evaluated = {int(t) for t in odd[:N_WEBJUDGE_NOT_EVALUATED]}
    empty_judge = {int(t) for t in odd[N_WEBJUDGE_NOT_EVALUATED:]}
    webjudge = L.verdicts(
        final,
        not_evaluated | empty_judge,
        VERIFIER_TARGETS["webjudge"][OM2W],
        merit,
        VERIFIER_SHARPNESS["webjudge"],
        judge_rng,
    )
    if split == OM2W:
        shown_process = [None if s is None else int(s >= UV_PROCESS_THRESHOLD) for s in uv_score]
        L.add_informed(
            reviews,
            {"outcome": uv_outcome, "process": shown_process},
            {"outcome": final, "process": process},
            rng_for(seed, split, "informed"),
        )
        L.settle_informed(
            reviews,
            uv_outcome,
            rng_for(seed, split, "settle"),
            kappa_band=_informed_kappa_band(reviews, uv_outcome),
        )

    stories, runs, frames, logs, cols = _runs(split, specs, humans, seed, full)
    gpt = []
    bare = _without_steps(split, frames, [r is not None for r in rubrics], seed)
    for t, spec in enumerate(specs):
        if split == INTERNAL:
            ctx = (spec, stories[t], runs[t], frames[t])
            gpt.append(_uv_json(t, rubrics[t], uv_outcome[t], ctx, uv_missing, t not in bare, seed))
        elif t in empty_judge:
            gpt.append("")
        elif webjudge[t] is None:
            gpt.append(json.dumps({"score": -1, "gpt_response_text": ""}))
        else:
            text = T.webjudge_text(int(webjudge[t]), spec, stories[t], runs[t])
            gpt.append(json.dumps({"score": webjudge[t], "gpt_response_text": text}))

    traj = {
        "task_id": [s.task_id for s in specs],
        "instruction": [s.instruction for s in specs],
        "init_url": cols["init_url"],
        "start_timestamp": cols["start"],
        "end_timestamp": cols["end"],
        "final_answer": [r.final_answer for r in runs],
        "is_aborted": [s.mode == "aborted" for s in stories],
        "web_surfer_log": logs,
        "n_screenshots": [len(f) for f in frames],
        "gpt_eval_json": gpt,
        "uv_rubric_score": uv_score,
        "uv_outcome_success": uv_outcome,
        "mm_is_success": legacy["mm_is_success"],
        "verifier_is_success": legacy["verifier_is_success"],
        "final_human_outcome_label": final,
        "final_human_process_label": process,
        "median_human_rubric_score_agnostic": L.median_scores(split, reviews),
        "majority_human_outcome_vote": [int(x) for x in humans.majority],
    }
    shown = {
        "outcome": uv_outcome,
        "process": [None if s is None else int(s >= UV_PROCESS_THRESHOLD) for s in uv_score],
    }
    ann = _annotation_columns(split, specs, stories, runs, reviews, shown)
    return SplitData(traj, frames, ann)


def _informed_kappa_band(reviews: list[L.Review], shown: list[int | None]) -> tuple[float, float]:
    """The band `settle_informed` moves the informed kappa into: the paper's (0.60, 0.66),
    raised to stay `INFORMED_RISE` above the blind kappa of the verdict against each
    reviewer. With the false passes on ties (`UV_TIE_LEAN`) some seeds start at a blind
    kappa near 0.5, where 0.60 would hide the reviewers' move toward the verifier."""
    pairs = [(r.outcome, int(shown[r.task])) for r in reviews if shown[r.task] is not None]
    blind, verdict = (np.array(x) for x in zip(*pairs, strict=True))
    agree = float((blind == verdict).mean())
    p, q = float(blind.mean()), float(verdict.mean())
    expected = p * q + (1 - p) * (1 - q)
    kappa = (agree - expected) / (1 - expected) if expected < 1 else 0.0
    low, high = L.INFORMED_KAPPA
    return max(low, kappa + INFORMED_RISE), max(high, kappa + INFORMED_RISE + 0.03)


def _uv_blind_spots(split: str, specs: list[T.TaskSpec], humans: L.Humans, seed: int) -> np.ndarray:
    """The Universal Verifier's per-site blind spots, so its errors cluster by site, and
    its reading of the contested tasks (blind ties, dissents, adjudicated labels).

    Where the final label is success, or where the blind reviewers agreed on success and
    adjudication overturned it, the verifier sides with the adjudicated label
    (`UV_CONTESTED_CLARITY`). On a 1:1 tie adjudicated failure it passes the run as one of
    the two reviewers did (`UV_TIE_LEAN`): its false passes land there rather than on runs
    every blind reviewer failed. So it agrees less with each blind reviewer (the paper's
    Table 13: kappa 0.39) than with the final labels (Table 2: 0.58), and its FPR against
    the strict blind majority (ties left out) is the paper's 0.04."""
    rng = rng_for(seed, split, "spots")
    spots = L.site_blind_spots([s.site for s in specs], UV_BLIND_SPOT_SD, rng)
    contested = np.array(
        [
            len(set(v)) > 1 or humans.final[t] != humans.majority[t]
            for t, v in enumerate(humans.votes)
        ],
        dtype=float,
    )
    tie_failed = np.array(
        [2 * sum(v) == len(v) and humans.final[t] == 0 for t, v in enumerate(humans.votes)],
        dtype=float,
    )
    return (
        spots - UV_CONTESTED_CLARITY * contested + (UV_CONTESTED_CLARITY + UV_TIE_LEAN) * tie_failed
    )


def _uv_rubrics(
    split: str,
    reviews: list[L.Review],
    process: list[int | None],
    uv_outcome: list[int | None],
    seed: int,
) -> list[L.Rubric | None]:
    """The rubric of every task the verifier ran on: its process verdict first (exact
    counts against the human process label), then points on that verdict's side of 0.8."""
    rng = rng_for(seed, split, "rubrics")
    quality = L.process_quality(split, reviews)
    verdict = L.uv_process_verdicts(process, quality, uv_outcome, UV_PROCESS_TARGETS[split], rng)
    return [
        None
        if v is None
        else L.rubric(
            L.uv_fraction(v, float(quality[t]), int(uv_outcome[t] or 0), rng), len(CRITERIA), rng, v
        )
        for t, v in enumerate(verdict)
    ]


def _without_steps(split: str, frames: list[list[Frame]], ran: list[bool], seed: int) -> set[int]:
    """Rows whose score file lacks the intermediate steps (`N_WITHOUT_STEPS`, all with
    screenshots, so the viewer's "absent" path shows beside a filmstrip)."""
    pool = [t for t, shots in enumerate(frames) if shots and ran[t]]
    rng = rng_for(seed, split, "without_steps")
    return {int(t) for t in rng.choice(pool, min(N_WITHOUT_STEPS, len(pool)), replace=False)}


def _uv_json(
    t: int,
    rub: L.Rubric | None,
    outcome: int | None,
    ctx: tuple[T.TaskSpec, T.Story, Run, list[Frame]],
    missing: set[int],
    with_steps: bool,
    seed: int,
) -> str:
    """The Universal Verifier's own output (internal); "" or score -1 where it did not run."""
    if rub is None or outcome is None:
        first_missing = t == min(missing)
        return json.dumps({"score": -1, "gpt_response_text": ""}) if first_missing else ""
    rng = rng_for(seed, INTERNAL, "score_file", t)
    response = uv_response(rub, outcome, *ctx, rng, with_steps)
    return json.dumps({"score": rub.score, "gpt_response_text": json.dumps(response)})


def _runs(
    split: str, specs: list[T.TaskSpec], humans: L.Humans, seed: int, full: bool
) -> tuple[list[T.Story], list[Run], list[list[Frame]], list[str], dict[str, list[str]]]:
    """Stories, agent runs, screenshot frames, logs and timestamp/URL columns of a split."""
    n = len(specs)
    rng = rng_for(seed, split, "runs")
    half = (n + 1) // 2
    no_shots = set(range(half, n)) if split == INTERNAL else set()
    if split == INTERNAL:
        no_shots |= {
            int(x) for x in rng.choice(half, N_INTERNAL_FIRST_HALF_NO_SCREENSHOTS, replace=False)
        }
    failed = [t for t in range(n) if humans.final[t] == 0 and humans.majority[t] == 0]
    aborted = {int(x) for x in rng.choice(failed, N_ABORTED[split], replace=False)}
    taken = set(aborted)
    quirks: dict[int, set[str]] = {t: set() for t in range(n)}
    for quirk, k in N_QUIRK.items():
        for t in _choose(rng, range(n), k, taken):
            quirks[t].add(quirk)
    with_shots = [t for t in range(n) if t not in no_shots]
    lo, hi = ACTIONS_FULL if full else ACTIONS_DEFAULT
    n_actions = [int(rng.integers(lo, hi + 1)) for _ in range(n)]
    for quirk in ("extra_actions", "fewer_actions"):
        for t in _choose(rng, [t for t in with_shots if n_actions[t] >= 3], N_MISMATCH, taken):
            quirks[t].add(quirk)
    empty_url = _choose(rng, range(n), N_EMPTY_INIT_URL, set())
    empty_start = _choose(rng, range(n), N_EMPTY_TIMESTAMPS, set())
    empty_end = _choose(rng, range(n), N_EMPTY_TIMESTAMPS, set())

    stories, runs, frames, logs = [], [], [], []
    cols: dict[str, list[str]] = {"init_url": [], "start": [], "end": []}
    for t, spec in enumerate(specs):
        task_rng = rng_for(seed, split, "run", t)
        story = (
            T.Story("aborted")
            if t in aborted
            else T.story_for(int(humans.final[t]), spec, task_rng)
        )
        init_url = "" if t in empty_url else f"https://{spec.domain}/"
        aim = spec.items[1] if story.mode == "wrong_item" else spec.target
        answer = T.final_answer(spec, story)
        run = simulate(spec, init_url, n_actions[t], answer, task_rng, aim)
        start, times, end = T.timestamps(len(run.steps), task_rng)
        shots = [] if t in no_shots else run.frames
        if "extra_actions" in quirks[t]:
            shots = shots[: -int(task_rng.integers(1, 3))]
        stories.append(story)
        runs.append(run)
        frames.append(shots)
        logs.append(T.log_text(split, run, times, quirks[t], task_rng))
        cols["init_url"].append(init_url)
        cols["start"].append("" if t in empty_start else start)
        cols["end"].append("" if t in empty_end else end)
    return stories, runs, frames, logs, cols


def _annotation_columns(
    split: str,
    specs: list[T.TaskSpec],
    stories: list[T.Story],
    runs: list[Run],
    reviews: list[L.Review],
    shown: dict[str, list[int | None]],
) -> dict[str, list]:
    """Rows sorted by task_id (reviews are already in task order), with comments on the run."""
    label = {1: "Correct", 0: "Incorrect"}

    def ctx(r: L.Review) -> tuple[T.TaskSpec, T.Story, Run]:
        return specs[r.task], stories[r.task], runs[r.task]

    def informed(r: L.Review, dim: str) -> str:
        answer = r.informed.get(dim, "")
        if not answer:
            return ""
        return T.informed_comment(answer, int(shown[dim][r.task] or 0), *ctx(r), dim)

    om2w = split == OM2W
    process = [label[r.process] for r in reviews]
    if om2w:
        process[partial_review(reviews)] = PARTIAL_LABEL
    return {
        "task_id": [specs[r.task].task_id for r in reviews],
        "annotator": [r.annotator for r in reviews],
        "human_judgement_outcome": [label[r.outcome] for r in reviews],
        "human_judgement_process": process,
        "human_process_score": [r.score for r in reviews],
        "outcome_comment": [T.outcome_comment(r.outcome, *ctx(r)) for r in reviews],
        "process_comment": [T.process_comment(r.process, *ctx(r)) if om2w else "" for r in reviews],
        "informed_outcome_agreement": [r.informed.get("outcome", "") for r in reviews],
        "informed_process_agreement": [r.informed.get("process", "") for r in reviews],
        "informed_outcome_comment": [informed(r, "outcome") for r in reviews],
        "informed_process_comment": [informed(r, "process") for r in reviews],
    }

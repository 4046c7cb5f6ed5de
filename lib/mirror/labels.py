"""Human and verifier labels drawn from one latent truth per task.

Each task has a latent `merit` (how well the run really went, in logits) and a site
effect shared by the tasks of one website, so tasks cluster by site. Every rater sees
that truth through its own noise:

- the exact human counts of DATASET.md (ties, majorities, adjudications) are placed by
  merit: ties on the least clear-cut runs, adjudicated tasks next to the boundary;
- reviewers' process labels share a task-level process quality, so two reviewers of one
  run agree beyond chance (kappa about 0.45, as in the paper's Table 14) instead of
  independently; their scores read the same logit through their own noise (Pearson r
  about 0.62 between reviewers), so a label is not always the score >= 0.8 and scores cut
  at 0.8 agree less than labels (0.36 vs 0.45 in the paper);
- each verifier gets exact confusion counts (its target kappa and false-positive rate)
  but makes its errors on the runs whose merit is closest to the other side, the sharper
  the verifier the more so; all verifiers therefore stumble on the same unclear runs.
  The Universal Verifier also has per-site blind spots (its errors cluster by site) and
  sides with the adjudicated label on contested tasks, so it agrees less with each blind
  reviewer (kappa about 0.39) than with the final labels (0.58), as in the paper;
- its process verdict (rubric score >= 0.8) gets exact counts against the human process
  label too (`uv_process_verdicts`: kappa 0.59 internal, 0.43 om2w), and the score sits on
  its verdict's side of 0.8 by the run's process quality (Pearson r about 0.61 with the
  reviewers' scores);
- in the informed stage a reviewer shown a verdict unlike their blind label concedes when
  the verdict matches the task's adjudicated truth (more readily a missed failure than a
  missed success), and holds firm when the verifier is wrong. The verifier's agreement
  with each reviewer thus rises from blind to informed, as the paper's Table 13 reports;
- that informed agreement and the share of flipped labels are then settled into bands by
  exact moves (`settle_informed`), so every seed shows the paper's level (0.63, 16.6%
  flipped, mostly success -> failure), not only the ones whose draws happen to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from lib.mirror.facts import (
    INFORMED_NOT_GIVEN,
    INTERNAL,
    MAJORITY_SUCCESS_FAILURE,
    N_NULL,
    N_OM2W_UNSCORED_TASKS,
    N_TASKS,
    OM2W,
    OM2W_OVERTURNED,
    OM2W_THREE_REVIEWER_TASKS,
    OM2W_TIES_FINAL_SUCCESS,
    REVIEWERS,
    RUBRIC_POINTS,
    UV_PROCESS_THRESHOLD,
)

SITE_EFFECT_SD, TASK_NOISE_SD = 0.6, 1.0
"""Spread of the latent merit shared by a site's tasks and of each task's own part."""
PROCESS_FROM_OUTCOME, PROCESS_TASK_SD, PROCESS_REVIEWER_SD, PROCESS_BIAS = 1.8, 1.3, 1.05, -1.0
"""Reviewer process logit = bias + weight * own outcome label + task quality + own noise."""
INTERNAL_PROCESS_BIAS = 1.4
"""Added to the bias on `internal`, whose reviewers pass three processes in four: at the
verifier's process kappa 0.59 and FPR 0.04 that puts its FNR near the paper's 0.24."""
UV_PROCESS_SHARPNESS, UV_PROCESS_FROM_OUTCOME = 1.0, 1.0
"""How strongly the verifier's process passes follow the run's process quality and its own
outcome verdict (`uv_process_verdicts`)."""
UV_FRACTION_FROM_QUALITY, UV_FRACTION_FROM_OUTCOME, UV_FRACTION_NOISE = 0.3, 0.8, 0.8
UV_FRACTION_SHIFT = (-0.5, 1.0)
"""Where a rubric score sits on its side of 0.8 (`uv_fraction`): logistic in quality and
the outcome verdict, shifted per verdict (0, 1)."""
SCORE_NOISE_SD, SCORE_SLOPE, SCORE_AT_08 = 0.6, 0.8, 1.5
"""A reviewer's score = logistic(slope * (logit + noise - at_08) + logit(0.8)), as k/m."""
CONCEDE = {1: 0.9, 0: 0.6}
"""Blind label -> chance a reviewer concedes to a verdict that matches the task's truth."""
CONCEDE_WHEN_WRONG = {1: 0.7, 0: 0.08}
"""Blind label -> chance a reviewer concedes to a verdict that contradicts the task's truth:
a strict verdict of failure often persuades (the paper's flips are mostly success to
failure), a lenient verdict of success rarely does."""
TASK_SHARE = 0.8
"""Weight of the task's shared draw in a reviewer's decision to concede."""
DISSENT_WHEN_SAME = 0.02
"""Chance a reviewer who agreed blind now says `disagree`."""
RECONSIDER_FALSE_PASS = 0.7
"""Chance a reviewer who passed a run, shown the verifier's pass of it, says `disagree`
(failure) when the adjudicated label is failure: the verifier's false passes fall on
1:1 ties (`UV_TIE_LEAN`), whose success voter reconsiders, so the two reviewers still
converge when informed (issue 37)."""
INFORMED_KAPPA = (0.60, 0.66)
"""Band of the informed outcome kappa of the Universal Verifier against each reviewer's
informed label (the paper's Table 13: 0.39 blind -> 0.63 informed)."""
INFORMED_FLIPS = (0.15, 0.18)
"""Band of the share of informed outcome labels that differ from the blind ones (the
paper: 16.6%, 31 of 34 from success to failure)."""
TOWARD_SUCCESS = (0.06, 0.12)
"""Band of the share of those flips that go failure -> success (the paper: 3 of 34). The
demo settles at 4 of 33: a band of (0.06, 0.10) gives 3 of 33, but one more flip away from
the verdict (29 of 33 toward it) and informed kappa 0.598, FNR 0.280 (issue 37)."""
INFORMED_FNR = (0.30, 0.40)
"""Band of the verdict's FNR against the informed labels (the paper's Table 13: 0.35). The
informed kappa band weighs twice as much in `settle_informed`, and on the release's counts
the two cannot both be met (docs/data.md, "Table 13"): the demo settles at FNR 0.28."""
SCORE_BANDS = {"pearson": (0.56, 0.68), "uv_pearson": (0.55, 0.67), "cut_below_labels": 0.06}
"""What a draw of the reviewers' scores must show (`draw_scores`): reviewer-vs-reviewer and
verifier-vs-reviewer Pearson r in these bands (the paper: 0.62 and 0.61), and a pairwise
kappa of the scores cut at 0.8 at least this much below the labels' (0.36 vs 0.45)."""
PROCESS_KAPPA = (0.42, 0.48)
"""Band of the reviewers' pooled pairwise process kappa on their labels (the paper: 0.45)."""
SCORE_DRAWS = 200
"""Draws of the score noise tried before the last one is kept (60 left the demo's om2w
scores outside their bands once the verifier's false passes moved onto ties, issue 37)."""


def latent_merit(sites: Sequence[str], rng: np.random.Generator) -> np.ndarray:
    """Merit per task: a site effect (shared) plus the task's own part."""
    names = sorted(set(sites))
    effect = dict(zip(names, rng.normal(0.0, SITE_EFFECT_SD, len(names)), strict=True))
    return np.array([effect[s] for s in sites]) + rng.normal(0.0, TASK_NOISE_SD, len(sites))


@dataclass
class Humans:
    """Task-level human outcome facts plus each reviewer's blind outcome label."""

    majority: np.ndarray
    final: np.ndarray
    votes: list[list[int]]


def _weighted(rng: np.random.Generator, pool: Sequence[int], k: int, w: np.ndarray) -> list[int]:
    """k distinct members of `pool`, drawn with probability proportional to `w`."""
    pool = np.asarray(pool, dtype=int)
    if k == 0 or len(pool) == 0:
        return []
    p = np.asarray(w, dtype=float) + 1e-12
    return [int(x) for x in rng.choice(pool, k, replace=False, p=p / p.sum())]


def human_outcomes(split: str, merit: np.ndarray, rng: np.random.Generator) -> Humans:
    """Place ties, majorities and adjudications by merit, with the exact counts."""
    n = N_TASKS[split]
    n_success, n_failure = MAJORITY_SUCCESS_FAILURE[split]
    n_ties = n - n_success - n_failure
    seen = merit + rng.normal(0.0, 0.35, n)  # what the reviewers saw, a little noisy
    order = np.argsort(-seen)
    cut = seen[order[n_success + n_ties // 2]]
    ties = _weighted(rng, range(n), n_ties, np.exp(-3.0 * np.abs(seen - cut)))
    rest = [int(t) for t in order if t not in set(ties)]
    success, failure = rest[:n_success], rest[n_success:]
    majority = np.zeros(n, dtype=int)
    majority[success] = 1
    final = majority.copy()
    if split == OM2W:
        final[_weighted(rng, ties, OM2W_TIES_FINAL_SUCCESS, np.exp(2.0 * merit[ties]))] = 1
        final[_weighted(rng, success, OM2W_OVERTURNED[1], np.exp(-2.0 * merit[success]))] = 0
        final[_weighted(rng, failure, OM2W_OVERTURNED[0], np.exp(2.0 * merit[failure]))] = 1
    three = (
        set(
            _weighted(
                rng,
                success + failure,
                OM2W_THREE_REVIEWER_TASKS,
                np.exp(-np.abs(seen[success + failure] - cut)),
            )
        )
        if split == OM2W
        else set()
    )
    tie_set = set(ties)
    # one three-reviewer task split 2:1, the others unanimous: the pooled pairwise outcome
    # kappa is then about 0.55 (the paper's 0.53-0.57); all three split gives 0.49
    dissent = min(three) if three else -1
    votes = []
    for t in range(n):
        m = int(majority[t])
        if split == INTERNAL:
            v = [m]
        elif t in tie_set:
            v = [1, 0]
        else:
            v = ([m, m, 1 - m] if t == dissent else [m, m, m]) if t in three else [m, m]
        votes.append([int(x) for x in rng.permutation(v)])
    return Humans(majority, final, votes)


@dataclass
class Review:
    """One annotations row in the making (comments are written later from the run)."""

    task: int
    annotator: str
    outcome: int
    process: int
    score: float | None
    informed: dict[str, str] = field(default_factory=dict)
    latent: float = 0.0
    """The reviewer's process logit (label = latent > 0; the score reads it with more noise)."""


def _process_score(latent: float, rng: np.random.Generator) -> float:
    """A rubric-style fraction k/m (e.g. 4/15 = 0.2667) read from the reviewer's latent.

    The score sees the latent through its own noise and puts 0.8 at a latent of
    `SCORE_AT_08` > 0 (the label's cut): so a reviewer's binary label is not always their
    score >= 0.8, and two reviewers agree less on scores cut at 0.8 than on their labels
    (the paper's Table 14: kappa 0.45 on labels, 0.36 on scores >= 0.8).
    """
    m = int(rng.choice([5, 6, 8, 10, 12, 15]))
    x = latent + rng.normal(0.0, SCORE_NOISE_SD)
    y = SCORE_SLOPE * (x - SCORE_AT_08) + np.log(UV_PROCESS_THRESHOLD / (1 - UV_PROCESS_THRESHOLD))
    k = int(np.clip(np.round(m / (1.0 + np.exp(-y))), 0, m))
    return round(k / m, 4)


def blind_reviews(
    split: str, humans: Humans, merit: np.ndarray, rng: np.random.Generator
) -> list[Review]:
    """Reviewer rows: blind outcome labels (given) and process labels from a shared quality."""
    pool = REVIEWERS[split]
    weights = np.linspace(1.6, 0.6, len(pool))
    weights /= weights.sum()
    n = N_TASKS[split]
    unscored = set(rng.choice(n, N_OM2W_UNSCORED_TASKS, replace=False)) if split == OM2W else set()
    quality = 0.3 * merit + rng.normal(0.0, PROCESS_TASK_SD, n)
    reviews = []
    for t, votes in enumerate(humans.votes):
        names = rng.choice(len(pool), size=len(votes), replace=False, p=weights)
        for outcome, who in zip(votes, sorted(names), strict=True):
            shared = PROCESS_BIAS + PROCESS_FROM_OUTCOME * outcome + quality[t]
            shared += INTERNAL_PROCESS_BIAS if split == INTERNAL else 0.0
            score = 0.0 if split == OM2W and t not in unscored else None  # see draw_scores
            reviews.append(Review(t, pool[who], outcome, 0, score, latent=float(shared)))
    _draw_process_labels(reviews, rng)
    if split == OM2W:
        _leave_one_shared_task(reviews, pool, rng)
    return reviews


def _draw_process_labels(reviews: list[Review], rng: np.random.Generator) -> None:
    """Each reviewer's own process noise on the shared logit; label = logit > 0.

    With several reviewers per task the noise is redrawn (at most `SCORE_DRAWS` times)
    until their pooled pairwise process kappa is in `PROCESS_KAPPA`: about 110 pairs leave
    a single draw anywhere from 0.38 to 0.62.
    """
    shared = np.array([r.latent for r in reviews])
    several = len({r.task for r in reviews}) < len(reviews)
    for _ in range(SCORE_DRAWS):
        logit = shared + rng.normal(0.0, PROCESS_REVIEWER_SD, len(reviews))
        for r, x in zip(reviews, logit, strict=True):
            r.latent, r.process = float(x), int(x > 0)
        if not several:
            return
        pairs = _pairs_of(reviews, lambda r: r.process).astype(int)
        if PROCESS_KAPPA[0] <= pairwise_kappa([tuple(p) for p in pairs]) <= PROCESS_KAPPA[1]:
            return


def _pairs_of(reviews: list[Review], value: Callable[[Review], float | None]) -> np.ndarray:
    """(a, b) values of every unordered pair of reviewers of one task (both present)."""
    by_task: dict[int, list[float]] = {}
    for r in reviews:
        v = value(r)
        if v is not None:
            by_task.setdefault(r.task, []).append(v)
    out = [(a, b) for vs in by_task.values() for i, a in enumerate(vs) for b in vs[i + 1 :]]
    return np.array(out, dtype=float).reshape(-1, 2)


def _pearson_both_orders(pairs: np.ndarray) -> float:
    x = np.concatenate([pairs[:, 0], pairs[:, 1]])
    y = np.concatenate([pairs[:, 1], pairs[:, 0]])
    return float(np.corrcoef(x, y)[0, 1]) if len(x) > 2 else float("nan")


def draw_scores(
    reviews: list[Review],
    uv_score: Sequence[float | None],
    rng: np.random.Generator,
    not_correct: int | None = None,
) -> None:
    """Fill in the reviewers' blind process scores (the reviews whose score is not None).

    Each score reads the reviewer's process logit through its own noise
    (`_process_score`). Draws are repeated (at most `SCORE_DRAWS`) until the split shows
    `SCORE_BANDS`: the scores are few (about 110 reviewer pairs), so a single draw lands
    anywhere from r 0.5 to 0.7 and may cut at 0.8 as well as the labels agree.
    `not_correct` is the review whose process label will be written as neither Correct nor
    Incorrect (`build.partial_review`): the labels' kappa is read as the data says it, with
    that label not Correct.
    """
    scored = [r for r in reviews if r.score is not None]
    if not scored:
        return
    partial = reviews[not_correct] if not_correct is not None else None
    as_written = _pairs_of(reviews, lambda r: 0 if r is partial else r.process).astype(int)
    labels = pairwise_kappa([tuple(p) for p in as_written])
    lo, hi = SCORE_BANDS["pearson"]
    uv_lo, uv_hi = SCORE_BANDS["uv_pearson"]
    for _ in range(SCORE_DRAWS):
        for r in scored:
            r.score = _process_score(r.latent, rng)
        cut = _pairs_of(reviews, lambda r: None if r.score is None else float(r.score >= 0.8))
        rr = _pearson_both_orders(_pairs_of(reviews, lambda r: r.score))
        both = [(uv_score[r.task], r.score) for r in scored if uv_score[r.task] is not None]
        uv_r = float(np.corrcoef(np.array(both, dtype=float).T)[0, 1])
        kappa_cut = pairwise_kappa([tuple(p) for p in cut.astype(int)])
        if (
            lo <= rr <= hi
            and uv_lo <= uv_r <= uv_hi
            and kappa_cut <= labels - SCORE_BANDS["cut_below_labels"]
        ):
            return


def _leave_one_shared_task(
    reviews: list[Review], pool: Sequence[str], rng: np.random.Generator
) -> None:
    """Reassign reviews so that one pair of reviewers shares exactly one task.

    Rare pairings exist in the real data, and the Judges page must then show a kappa that
    is undefined for n = 1; the rarest pair keeps one shared task, its other shared tasks
    go to a reviewer not yet on them. Labels stay with their task, so no agreement figure
    of the pooled reviewers changes.
    """
    by_task: dict[int, list[Review]] = {}
    for r in reviews:
        by_task.setdefault(r.task, []).append(r)
    shared: dict[tuple[str, str], list[int]] = {}
    for task, group in sorted(by_task.items()):
        names = sorted(r.annotator for r in group)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                shared.setdefault((a, b), []).append(task)
    (a, b), tasks = min(
        ((k, v) for k, v in shared.items() if len(v) >= 2), key=lambda kv: (len(kv[1]), kv[0])
    )
    for task in tasks[1:]:
        taken = {r.annotator for r in by_task[task]}
        free = [name for name in pool if name not in taken and name != b]
        review = next(r for r in by_task[task] if r.annotator == b)
        review.annotator = free[int(rng.integers(len(free)))]
    reviews.sort(key=lambda r: (r.task, pool.index(r.annotator)))


def task_process(split: str, reviews: list[Review], rng: np.random.Generator) -> list[int | None]:
    """final_human_process_label: the reviewers' majority, ties adjudicated, a few missing."""
    n = N_TASKS[split]
    labels: list[int | None] = []
    for t in range(n):
        votes = [r.process for r in reviews if r.task == t]
        ones = sum(votes)
        if 2 * ones == len(votes):
            labels.append(int(rng.integers(0, 2)))
        else:
            labels.append(int(2 * ones > len(votes)))
    for t in rng.choice(n, N_NULL["final_human_process_label"], replace=False):
        labels[int(t)] = None
    return labels


def median_scores(split: str, reviews: list[Review]) -> list[float | None]:
    """Median of each task's blind process scores; null if none (always null in internal)."""
    out: list[float | None] = []
    for t in range(N_TASKS[split]):
        scores = [r.score for r in reviews if r.task == t and r.score is not None]
        out.append(float(np.median(scores)) if scores else None)
    return out


# ----------------------------------------------------------------------------- verifiers


def _kappa(tp: int, fp: int, n_pos: int, n_neg: int) -> float:
    """Cohen's kappa of a binary rater against a reference, from confusion counts."""
    n = n_pos + n_neg
    fn, tn = n_pos - tp, n_neg - fp
    observed = (tp + tn) / n
    expected = ((tp + fp) * n_pos + (fn + tn) * n_neg) / n**2
    return 0.0 if expected == 1 else (observed - expected) / (1 - expected)


def confusion_for(n_pos: int, n_neg: int, kappa: float, fpr: float) -> tuple[int, int]:
    """(true positives, false positives) closest to a target kappa at a target FPR."""
    fp = round(fpr * n_neg)
    tp = min(range(n_pos + 1), key=lambda k: abs(_kappa(k, fp, n_pos, n_neg) - kappa))
    return tp, fp


def verdicts(
    truth: Sequence[int],
    missing: Iterable[int],
    target: tuple[float, float],
    merit: np.ndarray,
    sharpness: float,
    rng: np.random.Generator,
    blind_spot: np.ndarray | None = None,
) -> list[int | None]:
    """Binary verdicts with exact confusion counts against `truth` (None where missing).

    True positives are drawn among the positives with weight exp(sharpness * merit) and
    false positives among the negatives likewise, so a sharp verifier errs only on runs
    whose merit sits near the other side, and verifiers share their hard cases.
    `blind_spot` (per task, shared by a site's tasks) makes both kinds of error likelier
    on some sites: a positive's weight is divided by exp(blind_spot), a negative's
    multiplied, so a verifier that misreads a site's pages errs on several of its tasks.
    """
    missing = {int(m) for m in missing}
    valid = [t for t in range(len(truth)) if t not in missing]
    pos = [t for t in valid if truth[t] == 1]
    neg = [t for t in valid if truth[t] == 0]
    tp, fp = confusion_for(len(pos), len(neg), *target)
    out: list[int | None] = [None if t in missing else 0 for t in range(len(truth))]
    spot = np.zeros(len(truth)) if blind_spot is None else np.asarray(blind_spot, dtype=float)
    base = sharpness * (merit - merit.mean())
    w_pos, w_neg = np.exp(base - spot), np.exp(base + spot)
    for t in _weighted(rng, pos, tp, w_pos[pos]) + _weighted(rng, neg, fp, w_neg[neg]):
        out[t] = 1
    return out


def site_blind_spots(sites: Sequence[str], sd: float, rng: np.random.Generator) -> np.ndarray:
    """Per task, its site's blind spot for a verifier: one normal draw per site."""
    names = sorted(set(sites))
    spot = dict(zip(names, rng.normal(0.0, sd, len(names)), strict=True))
    return np.array([spot[s] for s in sites])


def process_quality(split: str, reviews: list[Review]) -> np.ndarray:
    """Per task, the mean process logit of its reviewers (what the rubric score tracks)."""
    total, count = np.zeros(N_TASKS[split]), np.zeros(N_TASKS[split])
    for r in reviews:
        total[r.task] += r.latent
        count[r.task] += 1
    return total / np.maximum(count, 1)


@dataclass
class Rubric:
    """The Universal Verifier's rubric for one task; score = earned / max points.

    `items` hold criterion index, max and earned points; the text is added from the run.
    """

    items: list[tuple[int, float, float]]
    max_points: float
    earned: float

    @property
    def score(self) -> float:
        return self.earned / self.max_points


def rubric(
    fraction: float, n_criteria: int, rng: np.random.Generator, verdict: int | None = None
) -> Rubric:
    """Criteria in 0.5-point steps totalling 6-27 points, earned points near `fraction`.

    With a process `verdict`, the earned half-points are kept on its side of the 0.8
    threshold (earned / max >= 0.8 exactly when the verdict is 1), whatever the rounding.
    """
    n_items = int(rng.integers(3, n_criteria + 1))
    picked = sorted(int(c) for c in rng.choice(n_criteria, n_items, replace=False))
    maxes = [float(rng.choice([1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0])) for _ in picked]
    while sum(maxes) < RUBRIC_POINTS[0]:
        maxes[int(rng.integers(n_items))] += 1.0
    while sum(maxes) > RUBRIC_POINTS[1]:
        maxes[int(np.argmax(maxes))] -= 1.0
    max_total = sum(maxes)
    halves = round(2 * max_total)
    earned_halves = round(fraction * halves)
    if verdict is not None:
        cut = -(-4 * halves // 5)  # the fewest half-points with earned / max >= 0.8
        earned_halves = max(earned_halves, cut) if verdict else min(earned_halves, cut - 1)
    earned = list(maxes)
    deficit = halves - earned_halves
    while deficit > 0:
        i = int(rng.integers(n_items))
        if earned[i] > 0:
            earned[i] -= 0.5
            deficit -= 1
    return Rubric(list(zip(picked, maxes, earned, strict=True)), max_total, sum(earned))


def uv_process_verdicts(
    reference: Sequence[int | None],
    quality: np.ndarray,
    outcome: Sequence[int | None],
    target: tuple[float, float],
    rng: np.random.Generator,
) -> list[int | None]:
    """The Universal Verifier's process verdicts (rubric score >= 0.8) with exact counts.

    Against the human process label (`reference`) the verdicts have the (kappa, FPR) of
    `target` (the paper's Table 2: 0.59 / 0.04 internal, about 0.43 om2w). Passes go
    preferably to runs of high process `quality` (the reviewers' mean process logit) that
    the verifier's own outcome verdict also passed, so its errors fall on unclear runs and
    its two verdicts mostly agree. Tasks without a human label get the verdict their
    quality implies; tasks where the verifier did not run (outcome None) get None.
    """
    n = len(reference)
    ran = [t for t in range(n) if outcome[t] is not None]
    out: list[int | None] = [None] * n
    labelled = [t for t in ran if reference[t] is not None]
    pos = [t for t in labelled if reference[t] == 1]
    neg = [t for t in labelled if reference[t] == 0]
    tp, fp = confusion_for(len(pos), len(neg), *target)
    q = np.asarray(quality, dtype=float)
    passed = np.array([o or 0 for o in outcome], dtype=float)
    weight = np.exp(UV_PROCESS_SHARPNESS * (q - q.mean()) + UV_PROCESS_FROM_OUTCOME * passed)
    for t in ran:
        out[t] = 0 if reference[t] is not None else int(q[t] + rng.normal(0.0, 1.0) > 0)
    for t in _weighted(rng, pos, tp, weight[pos]) + _weighted(rng, neg, fp, weight[neg]):
        out[t] = 1
    return out


def uv_fraction(verdict: int, quality: float, outcome: int, rng: np.random.Generator) -> float:
    """The rubric fraction, on the side of 0.8 its process verdict says.

    Within its side it rises with the run's process quality and the verifier's outcome
    verdict, so the score tracks the reviewers' scores (the paper's Figure 11: Pearson
    0.61) beyond the verdict itself.
    """
    z = UV_FRACTION_FROM_QUALITY * quality + UV_FRACTION_FROM_OUTCOME * outcome
    z += rng.normal(0.0, UV_FRACTION_NOISE)
    if verdict:
        return float(0.8 + 0.2 / (1.0 + np.exp(-(z - UV_FRACTION_SHIFT[1]))))
    return float(0.8 / (1.0 + np.exp(-(z - UV_FRACTION_SHIFT[0]))))


def add_informed(
    reviews: list[Review],
    shown: dict[str, list[int | None]],
    truth: dict[str, Sequence[int | None]],
    rng: np.random.Generator,
) -> None:
    """om2w informed stage: each review's `agree` / `disagree` / "" per dimension.

    A reviewer whose blind label differs from the verdict shown concedes (`agree`, a flip
    toward the verifier) with CONCEDE[blind] when the verdict matches the task's truth
    (the adjudicated label) and rarely otherwise; one draw per task is shared by its
    reviewers, so a convincing verdict moves them together.
    """
    n_tasks = max(r.task for r in reviews) + 1
    for dim, verdict in shown.items():
        task_draw = rng.random(n_tasks)
        for r in reviews:
            blind = r.outcome if dim == "outcome" else r.process
            v = verdict[r.task]
            if v is None or rng.random() < INFORMED_NOT_GIVEN:
                r.informed[dim] = ""
                continue
            if v == blind:
                # a pass the adjudication overturned: a reviewer who passed it too looks
                # again and now says failure (the paper's flips toward failure)
                wrong_pass = dim == "outcome" and v == 1 and truth[dim][r.task] == 0
                dissent = RECONSIDER_FALSE_PASS if wrong_pass else DISSENT_WHEN_SAME
                r.informed[dim] = "disagree" if rng.random() < dissent else "agree"
                continue
            right = truth[dim][r.task] == v
            chance = (CONCEDE if right else CONCEDE_WHEN_WRONG)[blind]
            u = TASK_SHARE * task_draw[r.task] + (1 - TASK_SHARE) * rng.random()
            r.informed[dim] = "agree" if u < chance else "disagree"


def pairwise_kappa(pairs: Sequence[tuple[int, int]]) -> float:
    """Kappa of unordered label pairs counted in both orders (Scott's pi), as the app pools
    reviewer pairs; NaN when undefined."""
    if not pairs:
        return float("nan")
    agree = sum(a == b for a, b in pairs) / len(pairs)
    ones = sum(a + b for a, b in pairs) / (2 * len(pairs))
    expected = ones**2 + (1 - ones) ** 2
    return float("nan") if expected == 1 else (agree - expected) / (1 - expected)


def _uv_kappa_and_flips(
    blind: np.ndarray, shown: np.ndarray, agree: np.ndarray
) -> tuple[float, float]:
    """Kappa of the verdict shown vs the informed labels, and the share of flipped labels."""
    informed = np.where(agree, shown, 1 - shown)
    observed = float((informed == shown).mean())
    p, q = float(informed.mean()), float(shown.mean())
    expected = p * q + (1 - p) * (1 - q)
    kappa = float("nan") if expected == 1 else (observed - expected) / (1 - expected)
    return kappa, float((informed != blind).mean())


def settle_informed(
    reviews: list[Review],
    shown: Sequence[int | None],
    rng: np.random.Generator,
    kappa_band: tuple[float, float] = INFORMED_KAPPA,
    flip_band: tuple[float, float] = INFORMED_FLIPS,
) -> None:
    """Move the verifier-vs-reviewer informed outcome kappa, the flip rate, the share of
    flips toward success and the informed FNR into their bands.

    The concession draws of `add_informed` leave them anywhere between 0.63 and 0.8 (kappa)
    and 0.16 and 0.23 (flips) from seed to seed (about 205 reviews). Each move toggles one
    review's answer: a contested one (blind label unlike the verdict shown) between
    conceding and holding firm, or an uncontested one between agreeing and dissenting.
    The move that brings both closest to their bands is made (ties: one keeping the flips
    success -> failure, then at random), until both are in their bands or no move helps.
    """
    rows = [
        r
        for r in reviews
        if r.informed.get("outcome") in ("agree", "disagree") and shown[r.task] is not None
    ]
    if not rows:
        return
    blind = np.array([r.outcome for r in rows])
    verdict = np.array([int(shown[r.task]) for r in rows])
    agree = np.array([r.informed["outcome"] == "agree" for r in rows])

    def off(x: float, band: tuple[float, float]) -> float:
        return max(0.0, band[0] - x, x - band[1])

    def miss(a: np.ndarray) -> float:
        kappa, flips = _uv_kappa_and_flips(blind, verdict, a)
        informed = np.where(a, verdict, 1 - verdict)
        flipped = informed != blind
        up = float((flipped & (blind == 0)).sum()) / max(1, int(flipped.sum()))
        fnr = float((verdict[informed == 1] == 0).mean()) if (informed == 1).any() else 0.0
        return (
            2 * off(kappa, kappa_band) + off(flips, flip_band)
            + off(up, TOWARD_SUCCESS) + off(fnr, INFORMED_FNR)
        )  # fmt: skip

    for _ in range(len(rows)):
        now = miss(agree)
        if now == 0.0:
            break
        chosen: list = []
        for i in rng.permutation(len(rows)):
            agree[i] = not agree[i]
            after = miss(agree)
            agree[i] = not agree[i]
            # an informed "failure" makes a success -> failure flip or undoes a failure ->
            # success one: preferred, so flips stay mostly success -> failure
            informed = verdict[i] if not agree[i] else 1 - verdict[i]
            key = (round(after, 9), int(informed))
            if after < now and (not chosen or key < chosen[0]):
                chosen = [key, int(i)]
        if not chosen:
            break
        agree[chosen[1]] = not agree[chosen[1]]
    for r, a in zip(rows, agree, strict=True):
        r.informed["outcome"] = "agree" if a else "disagree"

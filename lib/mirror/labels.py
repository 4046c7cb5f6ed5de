"""Human and verifier labels drawn from one latent truth per task.

Each task has a latent `merit` (how well the run really went, in logits) and a site
effect shared by the tasks of one website, so tasks cluster by site. Every rater sees
that truth through its own noise:

- the exact human counts of DATASET.md (ties, majorities, adjudications) are placed by
  merit: ties on the least clear-cut runs, adjudicated tasks next to the boundary;
- reviewers' process labels share a task-level process quality, so two reviewers of one
  run agree beyond chance (kappa about 0.4, as in the paper) instead of independently;
- each verifier gets exact confusion counts (its target kappa and false-positive rate)
  but makes its errors on the runs whose merit is closest to the other side, the sharper
  the verifier the more so; all verifiers therefore stumble on the same unclear runs;
- in the informed stage a reviewer shown a verdict unlike their blind label concedes when
  the verdict matches the task's adjudicated truth (more readily a missed failure than a
  missed success), and holds firm when the verifier is wrong. Reviewers thus converge,
  and the inter-reviewer kappa rises from blind to informed, as the paper reports;
- that informed kappa is then settled into a band by exact moves (`settle_informed_kappa`),
  so every seed shows the paper's level, not only the ones whose draws happen to.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
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
    UV_SCORE_CENTER,
    UV_SCORE_NOISE,
    UV_SCORE_WEIGHTS,
)

SITE_EFFECT_SD, TASK_NOISE_SD = 0.6, 1.0
"""Spread of the latent merit shared by a site's tasks and of each task's own part."""
PROCESS_FROM_OUTCOME, PROCESS_TASK_SD, PROCESS_REVIEWER_SD, PROCESS_BIAS = 1.8, 1.1, 1.2, -1.0
"""Reviewer process logit = bias + weight * own outcome label + task quality + own noise."""
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
INFORMED_KAPPA, INFORMED_KAPPA_TOLERANCE = 0.65, 0.015
"""Target of the informed inter-reviewer outcome kappa (the paper: about 0.63, up from 0.39).
The mirror's blind kappa is a little higher (0.44-0.50), so the target is a little higher
too, which keeps the rise from blind to informed near the paper's."""


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
    votes = []
    for t in range(n):
        m = int(majority[t])
        if split == INTERNAL:
            v = [m]
        elif t in tie_set:
            v = [1, 0]
        else:
            v = [m, m, 1 - m] if t in three else [m, m]
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


def _process_score(correct: bool, outcome: int, rng: np.random.Generator) -> float:
    """A rubric-style fraction k/m (e.g. 4/15 = 0.2667) on the side of 0.8 its label says."""
    m = int(rng.choice([5, 6, 8, 10, 12, 15]))
    cut = int(np.ceil(UV_PROCESS_THRESHOLD * m))
    if correct:
        k = int(rng.integers(cut, m + 1))
    else:
        low = cut // 2 if outcome else 0
        k = int(rng.integers(low, cut))
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
            logit = (
                PROCESS_BIAS
                + PROCESS_FROM_OUTCOME * outcome
                + quality[t]
                + rng.normal(0.0, PROCESS_REVIEWER_SD)
            )
            process = int(logit > 0)
            score = None
            if split == OM2W and t not in unscored:
                score = _process_score(bool(process), outcome, rng)
            reviews.append(Review(t, pool[who], outcome, process, score))
    if split == OM2W:
        _leave_one_shared_task(reviews, pool, rng)
    return reviews


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
) -> list[int | None]:
    """Binary verdicts with exact confusion counts against `truth` (None where missing).

    True positives are drawn among the positives with weight exp(sharpness * merit) and
    false positives among the negatives likewise, so a sharp verifier errs only on runs
    whose merit sits near the other side, and verifiers share their hard cases.
    """
    missing = {int(m) for m in missing}
    valid = [t for t in range(len(truth)) if t not in missing]
    pos = [t for t in valid if truth[t] == 1]
    neg = [t for t in valid if truth[t] == 0]
    tp, fp = confusion_for(len(pos), len(neg), *target)
    out: list[int | None] = [None if t in missing else 0 for t in range(len(truth))]
    weight = np.exp(sharpness * (merit - merit.mean()))
    for t in _weighted(rng, pos, tp, weight[pos]) + _weighted(rng, neg, fp, weight[neg]):
        out[t] = 1
    return out


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


def rubric(fraction: float, n_criteria: int, rng: np.random.Generator) -> Rubric:
    """Criteria in 0.5-point steps totalling 6-27 points, earned points near `fraction`."""
    n_items = int(rng.integers(3, n_criteria + 1))
    picked = sorted(int(c) for c in rng.choice(n_criteria, n_items, replace=False))
    maxes = [float(rng.choice([1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0])) for _ in picked]
    while sum(maxes) < RUBRIC_POINTS[0]:
        maxes[int(rng.integers(n_items))] += 1.0
    while sum(maxes) > RUBRIC_POINTS[1]:
        maxes[int(np.argmax(maxes))] -= 1.0
    max_total = sum(maxes)
    earned = list(maxes)
    deficit = max_total - round(fraction * max_total * 2) / 2
    while deficit > 0:
        i = int(rng.integers(n_items))
        if earned[i] > 0:
            earned[i] -= 0.5
            deficit -= 0.5
    return Rubric(list(zip(picked, maxes, earned, strict=True)), max_total, sum(earned))


def uv_fraction(outcome: int, process: int | None, verdict: int, rng: np.random.Generator) -> float:
    """A rubric fraction driven by the verifier's own outcome verdict and the human labels.

    Weights are tuned for a ROC AUC of about 0.85 against the human outcome and a
    process kappa (score >= 0.8 vs the human process label) of about 0.4.
    """
    w = np.array(UV_SCORE_WEIGHTS)
    z = w @ (verdict, outcome, process or 0) + rng.normal(0.0, UV_SCORE_NOISE)
    return float(1.0 / (1.0 + np.exp(-2.5 * (z - UV_SCORE_CENTER))))


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
                r.informed[dim] = "disagree" if rng.random() < DISSENT_WHEN_SAME else "agree"
                continue
            right = truth[dim][r.task] == v
            chance = (CONCEDE if right else CONCEDE_WHEN_WRONG)[blind]
            u = TASK_SHARE * task_draw[r.task] + (1 - TASK_SHARE) * rng.random()
            r.informed[dim] = "agree" if u < chance else "disagree"


def informed_label(answer: str, shown: int | None) -> int | None:
    """The informed label an answer implies: the verdict shown (`agree`) or its opposite."""
    if shown is None or answer not in ("agree", "disagree"):
        return None
    return shown if answer == "agree" else 1 - shown


def pairwise_kappa(pairs: Sequence[tuple[int, int]]) -> float:
    """Kappa of unordered label pairs counted in both orders (Scott's pi), as the app pools
    reviewer pairs; NaN when undefined."""
    if not pairs:
        return float("nan")
    agree = sum(a == b for a, b in pairs) / len(pairs)
    ones = sum(a + b for a, b in pairs) / (2 * len(pairs))
    expected = ones**2 + (1 - ones) ** 2
    return float("nan") if expected == 1 else (agree - expected) / (1 - expected)


def _informed_pairs(
    by_task: dict[int, list[Review]], shown: Sequence[int | None], dim: str
) -> list[tuple[int, int]]:
    """Every unordered pair of reviewers of one task whose informed labels are both given."""
    out = []
    for task, group in by_task.items():
        labels = [informed_label(r.informed.get(dim, ""), shown[task]) for r in group]
        given = [x for x in labels if x is not None]
        out += [(a, b) for i, a in enumerate(given) for b in given[i + 1 :]]
    return out


def settle_informed_kappa(
    reviews: list[Review],
    shown: Sequence[int | None],
    rng: np.random.Generator,
    dim: str = "outcome",
    target: float = INFORMED_KAPPA,
    tolerance: float = INFORMED_KAPPA_TOLERANCE,
) -> None:
    """Move the informed inter-reviewer kappa into `target` +- `tolerance` by exact moves.

    The concession draws of `add_informed` leave that kappa anywhere between 0.6 and 0.85
    from seed to seed (about 105 reviewer pairs). Each move changes one contested answer
    (blind label unlike the verdict shown): a reviewer who conceded now holds firm, or
    one who held firm now concedes. Moves alternate between the two kinds, so the number
    of flips (and the share of `agree` answers) stays within one of what was drawn; among
    the moves that bring the kappa closer to the target, one adding a success-to-failure
    flip or removing a failure-to-success flip is preferred (the paper's flips are mostly
    success to failure). Stops in the band, or when no move helps.
    """
    by_task: dict[int, list[Review]] = {}
    for r in reviews:
        by_task.setdefault(r.task, []).append(r)
    contested = [
        r
        for r in reviews
        if r.informed.get(dim) in ("agree", "disagree")
        and shown[r.task] is not None
        and shown[r.task] != (r.outcome if dim == "outcome" else r.process)
        and len(by_task[r.task]) > 1
    ]
    toggle = {"agree": "disagree", "disagree": "agree"}
    concede_next = True
    for _ in range(len(contested)):
        kappa = pairwise_kappa(_informed_pairs(by_task, shown, dim))
        if abs(kappa - target) <= tolerance:
            return
        better: list[tuple[bool, bool, Review]] = []
        for r in contested:
            before = r.informed[dim]
            r.informed[dim] = toggle[before]
            after = pairwise_kappa(_informed_pairs(by_task, shown, dim))
            r.informed[dim] = before
            if abs(after - target) < abs(kappa - target):
                conceding = before == "disagree"
                blind = r.outcome if dim == "outcome" else r.process
                # a concession from 1 or a held line from 0 keeps flips success -> failure
                preferred = (blind == 1) == conceding
                better.append((conceding == concede_next, preferred, r))
        if not better:
            return
        best = max((kind, pref) for kind, pref, _ in better)
        pool = [r for kind, pref, r in better if (kind, pref) == best]
        chosen = pool[int(rng.integers(len(pool)))]
        chosen.informed[dim] = toggle[chosen.informed[dim]]
        concede_next = not concede_next

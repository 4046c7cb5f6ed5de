"""`python -m lib.mirror OUT_DIR [--full] [--seed N]`: a synthetic microsoft/CUAVerifierBench.

Our machines cannot reach the Hugging Face Hub, so tests and demos run on this local
mirror. It has the Hub layout of /work/shared/DATASET.md (README with `configs:`, the
same parquet shard names, columns and types), and every fact measured there holds
exactly: split sizes, reviewer counts, 21 ties stored as 0, 13 adjudicated tasks, the
non-tie majorities, 4 aborted runs, nulls and empty strings where the real data has
them, both `web_surfer_log` formats. Verifier verdicts are drawn with exact confusion
counts chosen to reach the paper's agreement levels (Cohen's kappa, false-positive
rate), so dashboards show realistic, not random, numbers.

The default mirror is small (2-5 screenshots per trajectory, about 5 s to build);
`--full` is about as large as the real 1.5 GB release (20-40 detailed screenshots).
The output is deterministic for a seed: the same seed gives byte-identical files.
"""

from __future__ import annotations

import argparse
import csv
import json
import multiprocessing
import os
import shutil
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import datasets
import numpy as np
from datasets import Dataset, Features, Image, List, Value

from lib.mirror_draw import MODELS, NO_ANSWER, Frame, Run, TaskSpec, pick, render_png, simulate

# ----------------------------------------------------------------------------- facts

OM2W, INTERNAL = "fara7b_om2w_browserbase", "internal"
SPLITS = (OM2W, INTERNAL)
N_TASKS = {OM2W: 106, INTERNAL: 154}
N_SHARDS = {"trajectories": 2, "annotations": 1}
MAJORITY_SUCCESS_FAILURE = {OM2W: (29, 56), INTERNAL: (90, 64)}
"""Non-tie majority outcome votes (success, failure); om2w adds OM2W_TIES ties."""
OM2W_TIES = 21
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

UV_SCORE_WEIGHTS = np.array([1.0, 0.4, 0.5])
"""Latent rubric score = weights . (UV outcome verdict, human outcome, human process) + noise."""
UV_SCORE_NOISE = 0.65
UV_SCORE_CENTER = 0.8
N_UV_MISSING = 3
"""Tasks per split where the Universal Verifier did not run: both uv_* columns null."""
N_NULL = {"mm_is_success": 3, "verifier_is_success": 3, "final_human_process_label": 3}
N_OM2W_UNSCORED_TASKS = 2
"""om2w tasks whose reviewers gave no process score, so the median is null."""
N_WEBJUDGE_NOT_EVALUATED, N_WEBJUDGE_EMPTY = 3, 2
INFORMED_AGREE_WHEN_DIFFERENT = {1: 0.7, 0: 0.3}
"""Blind label -> share of reviewers who, shown a verdict unlike it, now agree (a flip)."""
INFORMED_DISAGREE_WHEN_SAME = 0.02
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

ACTIONS_DEFAULT, ACTIONS_FULL = (1, 4), (19, 39)
"""Inclusive range of actions per trajectory; screenshots = actions + 1."""
PNG_LEVEL = 1
BASE_DATE = datetime(2025, 10, 6, 8, 0, 0)


# ----------------------------------------------------------------------------- vocabulary

OM2W_SITES = (
    ("Adidas", "www.adidas.com", "shop"),
    ("Amazon", "www.amazon.com", "shop"),
    ("Apple", "www.apple.com", "shop"),
    ("Bestbuy", "www.bestbuy.com", "shop"),
    ("Carmax", "www.carmax.com", "shop"),
    ("Costco", "www.costco.com", "shop"),
    ("Ebay", "www.ebay.com", "shop"),
    ("Ikea", "www.ikea.com", "shop"),
    ("Nike", "www.nike.com", "shop"),
    ("Rei", "www.rei.com", "shop"),
    ("Target", "www.target.com", "shop"),
    ("Ups", "www.ups.com", "local"),
    ("Airbnb", "www.airbnb.com", "travel"),
    ("Amtrak", "www.amtrak.com", "travel"),
    ("Booking", "www.booking.com", "travel"),
    ("Budget", "www.budget.com", "travel"),
    ("Delta", "www.delta.com", "travel"),
    ("Expedia", "www.expedia.com", "travel"),
    ("Kayak", "www.kayak.com", "travel"),
    ("Marriott", "www.marriott.com", "travel"),
    ("Uhaul", "www.uhaul.com", "travel"),
    ("United", "www.united.com", "travel"),
    ("Allrecipes", "www.allrecipes.com", "info"),
    ("Coursera", "www.coursera.org", "info"),
    ("Discogs", "www.discogs.com", "info"),
    ("Espn", "www.espn.com", "info"),
    ("Github", "github.com", "info"),
    ("Healthline", "www.healthline.com", "info"),
    ("Imdb", "www.imdb.com", "info"),
    ("Nba", "www.nba.com", "info"),
    ("Nps", "www.nps.gov", "info"),
    ("Rottentomatoes", "www.rottentomatoes.com", "info"),
    ("Weather", "weather.com", "info"),
    ("Eventbrite", "www.eventbrite.com", "local"),
    ("Opentable", "www.opentable.com", "local"),
    ("Spothero", "spothero.com", "local"),
    ("Thumbtack", "www.thumbtack.com", "local"),
    ("Tripadvisor", "www.tripadvisor.com", "local"),
    ("Yelp", "www.yelp.com", "local"),
    ("Apartments", "www.apartments.com", "housing"),
    ("Redfin", "www.redfin.com", "housing"),
    ("Zillow", "www.zillow.com", "housing"),
)
INTERNAL_FAMILIES = (
    ("alltrails_find", "AllTrails", "www.alltrails.com", "info"),
    ("amazon_cart", "Amazon", "www.amazon.com", "shop"),
    ("booking_hotel", "Booking.com", "www.booking.com", "travel"),
    ("coursera_course", "Coursera", "www.coursera.org", "info"),
    ("espn_scores", "ESPN", "www.espn.com", "info"),
    ("github_repo", "GitHub", "github.com", "info"),
    ("google_flights", "Google Flights", "www.google.com", "travel"),
    ("imdb_lookup", "IMDb", "www.imdb.com", "info"),
    ("instacart_order", "Instacart", "www.instacart.com", "shop"),
    ("kayak_compare", "Kayak", "www.kayak.com", "travel"),
    ("linkedin_jobs", "LinkedIn", "www.linkedin.com", "local"),
    ("nytimes_recipe", "NYT Cooking", "cooking.nytimes.com", "info"),
    ("opentable_reserve", "OpenTable", "www.opentable.com", "local"),
    ("redfin_listing", "Redfin", "www.redfin.com", "housing"),
    ("target_price", "Target", "www.target.com", "shop"),
    ("ticketmaster_event", "Ticketmaster", "www.ticketmaster.com", "local"),
    ("tripadvisor_review", "Tripadvisor", "www.tripadvisor.com", "local"),
    ("ubereats_menu", "Uber Eats", "www.ubereats.com", "local"),
    ("weather_forecast", "Weather", "weather.com", "info"),
    ("wikipedia_fact", "Wikipedia", "en.wikipedia.org", "info"),
    ("yelp_search", "Yelp", "www.yelp.com", "local"),
    ("zillow_rent", "Zillow", "www.zillow.com", "housing"),
)
THINGS = {
    "shop": "running shoes|rain jacket|hiking backpack|wireless earbuds|coffee maker|desk lamp|"
    "yoga mat|water bottle|kids bike|air fryer|used sedan",
    "travel": "flight from Boston to Chicago|hotel in Lisbon|car rental in Denver|"
    "train from New York to Washington|hotel near Times Square|flight to Austin",
    "info": "beginner hiking trail near Denver|vegetarian lasagna recipe|latest Lakers score|"
    "top-rated sci-fi movie of 2023|intro to Python course|weekend weather in Seattle|"
    "vinyl pressing of Kind of Blue|most starred Rust web framework",
    "local": "Thai restaurant in Chicago|dentist in Austin|plumber in Seattle|"
    "jazz concert in New Orleans|parking near Fenway Park|data analyst job in Denver",
    "housing": "2-bedroom apartment in Boston|house with a yard in Portland|studio in Brooklyn|"
    "condo in Miami under $400k",
}
"""What tasks of a site category ask for, "|"-separated."""
TEMPLATES = {
    "shop": (
        "Find the cheapest {thing} on {site} with at least 4 stars and tell me its price.",
        "Add a {thing} under ${price} to the cart on {site}.",
        "On {site}, compare the two best-selling {thing} options and say which has more reviews.",
    ),
    "travel": (
        "Search {site} for a {thing} on {date} and report the lowest price.",
        "On {site}, find a {thing} for {n} adults on {date} with free cancellation.",
    ),
    "info": (
        "Use {site} to find a {thing} and summarize the key facts.",
        "On {site}, look up the {thing} and tell me its rating.",
    ),
    "local": (
        "Find a {thing} on {site} rated 4.5 or higher that is open on {date}.",
        "Use {site} to book or shortlist a {thing} for {n} people on {date}.",
    ),
    "housing": (
        "Find a {thing} on {site} listed for less than ${price}0 and report its address.",
        "On {site}, save the newest listing for a {thing}.",
    ),
}
SMALL_WORDS = frozenset({"a", "an", "the", "in", "of", "to", "from", "near", "with", "under"})
CRITERIA = (
    ("Reach the right site", "The agent opens {site} or reaches it through a search."),
    ("Search with the task's terms", "The agent searches for '{query}' or an equivalent."),
    ("Apply every constraint", "Filters or choices match all constraints of the task."),
    ("Identify the requested item", "The agent opens a result that satisfies the request."),
    ("Verify before answering", "Details are checked on the page before the final answer."),
    ("Complete the requested action", "The cart, booking or saved item reflects the request."),
    ("Report a grounded answer", "The final answer states facts visible in the screenshots."),
)
OUTCOME_COMMENTS = {
    1: (
        "Found the right item and reported it correctly.",
        "Answer matches what the last screenshots show; all constraints are met.",
        "Task completed; the result satisfies the request.",
    ),
    0: (
        "The price/rating constraint was not applied.",
        "The final answer is not supported by the screenshots.",
        "The agent stopped before completing the task.",
        "Wrong item: it does not match the requested details.",
    ),
}
PROCESS_COMMENTS = {
    1: ("Efficient and sensible steps.", "Navigation was reasonable with few detours."),
    0: (
        "Many repeated actions and detours.",
        "Skipped the filter step and guessed.",
        "Never verified the details before answering.",
    ),
}
INFORMED_COMMENTS = {
    ("agree", True): ("Agree, same conclusion as mine.", "Agree with the verifier's reasoning."),
    ("agree", False): (
        "Agree after all: I had missed that a constraint was not met.",
        "The verifier is right; the answer is not grounded in the screenshots.",
    ),
    ("disagree", True): ("On reflection I disagree; the verifier overlooks a detail.",),
    ("disagree", False): (
        "Disagree: the verifier is too strict here.",
        "Disagree: the last screenshot shows the result.",
    ),
}


# ----------------------------------------------------------------------------- task specs


def _rng(seed: int, *keys: str | int) -> np.random.Generator:
    """An independent, reproducible stream per purpose (adding one never shifts another)."""
    ints = [zlib.crc32(k.encode()) if isinstance(k, str) else int(k) for k in keys]
    return np.random.default_rng([seed, *ints])


def _spec(
    task_id: str, site: str, domain: str, category: str, rng: np.random.Generator
) -> TaskSpec:
    """Instruction, search query and result names for one task."""
    thing = pick(rng, THINGS[category].split("|"))
    instruction = pick(rng, TEMPLATES[category]).format(
        thing=thing,
        site=site,
        price=int(rng.integers(3, 40)) * 10,
        date=_day(BASE_DATE + timedelta(days=int(rng.integers(20, 120)))),
        n=int(rng.integers(2, 5)),
    )
    words = [w for w in thing.split() if w.lower() not in SMALL_WORDS]
    head = " ".join(w[:1].upper() + w[1:] for w in words[:3])
    models = rng.choice(MODELS, size=6, replace=False)
    items = tuple(f"{head} {m}" for m in models)
    return TaskSpec(task_id, site, domain, instruction, thing, items)


def _day(d: datetime) -> str:
    return f"{d:%B} {d.day}"


def _om2w_specs(rng: np.random.Generator) -> list[TaskSpec]:
    """`Site--8hexdigits` ids (first 8 hex digits of an Online-Mind2Web task id)."""
    specs: dict[str, TaskSpec] = {}
    while len(specs) < N_TASKS[OM2W]:
        site, domain, category = OM2W_SITES[int(rng.integers(len(OM2W_SITES)))]
        task_id = f"{site}--{int(rng.integers(0, 2**32)):08x}"
        specs[task_id] = _spec(task_id, site, domain, category, rng)
    return [specs[k] for k in sorted(specs)]


def _internal_specs(rng: np.random.Generator) -> list[TaskSpec]:
    """`family[_data]_<digits>[_<digits>]` ids, e.g. alltrails_find_23, zillow_rent_data_4_2."""
    specs: dict[str, TaskSpec] = {}
    while len(specs) < N_TASKS[INTERNAL]:
        family, site, domain, category = INTERNAL_FAMILIES[
            int(rng.integers(len(INTERNAL_FAMILIES)))
        ]
        task_id = family + ("_data" if rng.random() < 0.15 else "") + f"_{int(rng.integers(1, 60))}"
        if rng.random() < 0.15:
            task_id += f"_{int(rng.integers(1, 6))}"
        specs[task_id] = _spec(task_id, site, domain, category, rng)
    return [specs[k] for k in sorted(specs)]


# ----------------------------------------------------------------------------- human labels


@dataclass
class Humans:
    """Task-level human outcome facts plus each reviewer's blind outcome label."""

    majority: np.ndarray
    final: np.ndarray
    votes: list[list[int]]


def _human_outcomes(split: str, rng: np.random.Generator) -> Humans:
    """Place ties, majorities and adjudications on random tasks with the exact counts."""
    n = N_TASKS[split]
    n_success, n_failure = MAJORITY_SUCCESS_FAILURE[split]
    order = rng.permutation(n)
    ties = order[: n - n_success - n_failure]
    success = order[len(ties) : len(ties) + n_success]
    failure = order[len(ties) + n_success :]
    majority = np.zeros(n, dtype=int)
    majority[success] = 1
    final = majority.copy()
    if split == OM2W:
        final[rng.choice(ties, OM2W_TIES_FINAL_SUCCESS, replace=False)] = 1
        final[rng.choice(success, OM2W_OVERTURNED[1], replace=False)] = 0
        final[rng.choice(failure, OM2W_OVERTURNED[0], replace=False)] = 1
    non_tie = np.concatenate([success, failure])
    three = (
        set(rng.choice(non_tie, OM2W_THREE_REVIEWER_TASKS, replace=False))
        if split == OM2W
        else set()
    )
    tie_set = {int(t) for t in ties}
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


@dataclass
class Review:
    """One annotations row in the making."""

    task: int
    annotator: str
    outcome: int
    process: int
    score: float | None
    outcome_comment: str
    process_comment: str
    informed: dict[str, str] = field(default_factory=dict)


def _blind_reviews(split: str, humans: Humans, rng: np.random.Generator) -> list[Review]:
    """Reviewer rows: blind outcome/process labels, scores and comments."""
    pool = REVIEWERS[split]
    weights = np.linspace(1.6, 0.6, len(pool))
    weights /= weights.sum()
    n = N_TASKS[split]
    unscored = set(rng.choice(n, N_OM2W_UNSCORED_TASKS, replace=False)) if split == OM2W else set()
    reviews = []
    for t, votes in enumerate(humans.votes):
        names = rng.choice(len(pool), size=len(votes), replace=False, p=weights)
        for outcome, who in zip(votes, sorted(names), strict=True):
            process = int(rng.random() < (0.72 if outcome else 0.1))
            if split == INTERNAL:
                score, process_comment = None, ""
            else:
                score = None if t in unscored else _process_score(bool(process), outcome, rng)
                process_comment = pick(rng, PROCESS_COMMENTS[process])
            comment = pick(rng, OUTCOME_COMMENTS[outcome])
            reviews.append(Review(t, pool[who], outcome, process, score, comment, process_comment))
    return reviews


def _task_process(split: str, reviews: list[Review], rng: np.random.Generator) -> list[int | None]:
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


def _median_scores(split: str, reviews: list[Review]) -> list[float | None]:
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


def _confusion_for(n_pos: int, n_neg: int, kappa: float, fpr: float) -> tuple[int, int]:
    """(true positives, false positives) closest to a target kappa at a target FPR."""
    fp = round(fpr * n_neg)
    tp = min(range(n_pos + 1), key=lambda k: abs(_kappa(k, fp, n_pos, n_neg) - kappa))
    return tp, fp


def _verdicts(
    truth: Sequence[int],
    missing: Iterable[int],
    target: tuple[float, float],
    rng: np.random.Generator,
) -> list[int | None]:
    """Binary verdicts with exact confusion counts against `truth` (None where missing)."""
    missing = set(int(m) for m in missing)
    valid = [t for t in range(len(truth)) if t not in missing]
    pos = [t for t in valid if truth[t] == 1]
    neg = [t for t in valid if truth[t] == 0]
    tp, fp = _confusion_for(len(pos), len(neg), *target)
    out: list[int | None] = [None if t in missing else 0 for t in range(len(truth))]
    for t in list(rng.choice(pos, tp, replace=False)) + list(rng.choice(neg, fp, replace=False)):
        out[int(t)] = 1
    return out


@dataclass
class Rubric:
    """The Universal Verifier's rubric for one task; score = earned / max points."""

    items: list[dict]
    max_points: float
    earned: float

    @property
    def score(self) -> float:
        return self.earned / self.max_points


def _rubric(fraction: float, spec: TaskSpec, rng: np.random.Generator) -> Rubric:
    """Criteria in 0.5-point steps totalling 6-27 points, earned points near `fraction`."""
    n_items = int(rng.integers(3, len(CRITERIA) + 1))
    picked = sorted(rng.choice(len(CRITERIA), n_items, replace=False))
    maxes = [float(rng.choice([1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0])) for _ in picked]
    while sum(maxes) < RUBRIC_POINTS[0]:
        maxes[int(rng.integers(n_items))] += 1.0
    while sum(maxes) > RUBRIC_POINTS[1]:
        i = int(np.argmax(maxes))
        maxes[i] -= 1.0
    max_total = sum(maxes)
    earned = list(maxes)
    deficit = max_total - round(fraction * max_total * 2) / 2
    while deficit > 0:
        i = int(rng.integers(n_items))
        if earned[i] > 0:
            earned[i] -= 0.5
            deficit -= 0.5
    items = []
    for c, mx, got in zip(picked, maxes, earned, strict=True):
        name, description = CRITERIA[c]
        verdict = "Fully met" if got == mx else ("Not met" if got == 0 else "Partly met")
        items.append(
            {
                "criterion": name,
                "description": description.format(site=spec.site, query=spec.query),
                "max_points": mx,
                "earned_points": got,
                "justification": f"{verdict}: {pick(rng, OUTCOME_COMMENTS[int(got == mx)])}",
            }
        )
    return Rubric(items, max_total, sum(earned))


def _uv_fraction(
    outcome: int, process: int | None, verdict: int, rng: np.random.Generator
) -> float:
    """A rubric fraction driven by the verifier's own outcome verdict and the human labels.

    Weights are tuned for a ROC AUC of about 0.85 against the human outcome and a
    process kappa (score >= 0.8 vs the human process label) of about 0.4.
    """
    z = UV_SCORE_WEIGHTS @ (verdict, outcome, process or 0) + rng.normal(0.0, UV_SCORE_NOISE)
    return float(1.0 / (1.0 + np.exp(-2.5 * (z - UV_SCORE_CENTER))))


def _webjudge_json(score: int, spec: TaskSpec, rng: np.random.Generator) -> str:
    """An Online-Mind2Web (WebJudge-style) judgement ending with a Status line."""
    if score == -1:
        return json.dumps({"score": -1, "gpt_response_text": ""})
    summary = (
        "the final state satisfies every key point"
        if score
        else "at least one key point is not satisfied by the final state"
    )
    text = (
        f"Thoughts: The task is: {spec.instruction}\n"
        f"Key points: 1. Use {spec.site}. 2. Find '{spec.query}'. 3. Meet all stated constraints.\n"
        f"The agent searched for '{spec.query}' and opened '{spec.items[0]}'. "
        f"Judging from the screenshots, {summary}.\n"
        f'Status: "{"success" if score else "failure"}"'
    )
    return json.dumps({"score": score, "gpt_response_text": text})


def _uv_json(rubric: Rubric, outcome: int, spec: TaskSpec) -> str:
    """The Universal Verifier's own output, as stored in the internal split."""
    intent = f"Find the {spec.query} on {spec.site} and report it"
    reasoning = (
        f"The agent reached {spec.site}, found '{spec.items[0]}' and its answer is grounded."
        if outcome
        else f"The agent's answer about '{spec.query}' is not supported by the final pages."
    )
    response = {
        "rubric_items": rubric.items,
        "rubric_total_max_points": rubric.max_points,
        "rubric_total_earned_points": rubric.earned,
        "rubric_is_success": rubric.score >= UV_PROCESS_THRESHOLD,
        "outcome_success": bool(outcome),
        "outcome_reasoning": reasoning,
        "outcome_primary_intent": intent,
        "rubric_outcome_verification": {
            "primary_intent": intent,
            "reasoning": reasoning,
            "output_success": bool(outcome),
        },
    }
    return json.dumps({"score": rubric.score, "gpt_response_text": json.dumps(response)})


def _add_informed(
    reviews: list[Review],
    shown: dict[str, list[int | None]],
    rng: np.random.Generator,
) -> None:
    """om2w informed stage: agreement with the Universal Verifier's verdicts, and comments.

    Reviewers shown a verdict unlike their blind label often agree, so their label flips
    toward the verifier; they concede a missed failure more readily than a missed
    success, so most flips go from success to failure, as the paper reports.
    """
    for dim, verdicts in shown.items():
        groups: dict[tuple[bool, int], list[Review]] = {}
        for r in reviews:
            blind = r.outcome if dim == "outcome" else r.process
            v = verdicts[r.task]
            r.informed[dim] = ""
            if v is not None and rng.random() >= INFORMED_NOT_GIVEN:
                groups.setdefault((v == blind, blind), []).append(r)
        for (same, blind), group in sorted(groups.items()):
            share = INFORMED_DISAGREE_WHEN_SAME if same else INFORMED_AGREE_WHEN_DIFFERENT[blind]
            first, other = ("disagree", "agree") if same else ("agree", "disagree")
            chosen = set(rng.choice(len(group), round(share * len(group)), replace=False))
            for i, r in enumerate(group):
                r.informed[dim] = first if i in chosen else other
        for r in reviews:
            blind = r.outcome if dim == "outcome" else r.process
            answer = r.informed[dim]
            key = (answer, verdicts[r.task] == blind)
            r.informed[dim + "_comment"] = pick(rng, INFORMED_COMMENTS[key]) if answer else ""


def _message(name: str, args: dict) -> str:
    """A short human-readable line like Fara's own `message` field."""
    shown = {k: v for k, v in args.items() if k not in ("action", "thoughts")}
    return f"{name}({', '.join(f'{k}={json.dumps(v)}' for k, v in shown.items())})"


def _log_text(
    split: str, run: Run, times: list[str], quirks: set[str], rng: np.random.Generator
) -> str:
    """The web_surfer_log JSON Lines of a run, with the per-split `action`/`url` convention."""
    if "empty_log" in quirks:
        return ""
    lines = []
    for k, (step, ts) in enumerate(zip(run.steps, times, strict=True)):
        name = ALIASES.get(step.name, step.name) if "aliases" in quirks else step.name
        args = {"action": name, **step.args, "thoughts": step.thoughts}
        if rng.random() < 0.3:
            args["state_description"] = f"Viewing {step.url}"
        if "malformed_key" in quirks and k == 0:
            args['coordinate"'] = args.get("coordinate", [0, 0])
        record = {
            "timestamp": ts,
            "type": "WebSurferEvent",
            "source": "WebSurfer",
            "message": _message(name, args),
            "url": step.url if split == INTERNAL else "",
            "action": "computer_use" if split == INTERNAL else name,
            "arguments": args,
        }
        lines.append(json.dumps(record))
    if "non_json" in quirks:
        junk = f"Error: page.goto: net::ERR_TIMED_OUT at {run.steps[0].url}"
        lines.insert(int(rng.integers(0, len(lines) + 1)), junk)
    if "fewer_actions" in quirks:
        lines = lines[: -int(rng.integers(1, 3))] if len(lines) > 2 else lines[:-1]
    return "\n".join(lines)


def _timestamps(n_steps: int, rng: np.random.Generator) -> tuple[str, list[str], str]:
    """(start, one per action, end), ISO 8601 without zone, with microseconds."""
    t = BASE_DATE + timedelta(days=int(rng.integers(0, 50)), seconds=float(rng.uniform(0, 36000)))
    start = t
    times = []
    for _ in range(n_steps):
        t += timedelta(seconds=float(rng.uniform(2.0, 18.0)))
        times.append(t.isoformat(timespec="microseconds"))
    end = t + timedelta(seconds=float(rng.uniform(0.5, 4.0)))
    return start.isoformat(timespec="microseconds"), times, end.isoformat(timespec="microseconds")


# ----------------------------------------------------------------------------- split assembly


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


def _build_split(split: str, seed: int, full: bool) -> SplitData:
    """Derive all columns of one split from the facts, in dependency order."""
    n = N_TASKS[split]
    specs = (_om2w_specs if split == OM2W else _internal_specs)(_rng(seed, split, "ids"))
    humans = _human_outcomes(split, _rng(seed, split, "humans"))
    reviews = _blind_reviews(split, humans, _rng(seed, split, "reviews"))
    process = _task_process(split, reviews, _rng(seed, split, "process"))
    rng = _rng(seed, split, "verifiers")
    final = [int(x) for x in humans.final]

    uv_missing = set(int(t) for t in rng.choice(n, N_UV_MISSING, replace=False))
    uv_outcome = _verdicts(final, uv_missing, VERIFIER_TARGETS["uv_outcome_success"][split], rng)
    rubrics = [
        None
        if t in uv_missing
        else _rubric(_uv_fraction(final[t], process[t], uv_outcome[t], rng), specs[t], rng)
        for t in range(n)
    ]
    uv_score = [None if r is None else r.score for r in rubrics]
    legacy = {
        col: _verdicts(
            final, rng.choice(n, N_NULL[col], replace=False), VERIFIER_TARGETS[col][split], rng
        )
        for col in ("mm_is_success", "verifier_is_success")
    }
    gpt = _gpt_eval_column(split, specs, final, rubrics, uv_outcome, rng)
    if split == OM2W:
        shown_process = [None if s is None else int(s >= UV_PROCESS_THRESHOLD) for s in uv_score]
        _add_informed(
            reviews,
            {"outcome": uv_outcome, "process": shown_process},
            _rng(seed, split, "informed"),
        )

    runs, frames, logs, times = _runs(split, specs, humans, seed, full)
    traj = {
        "task_id": [s.task_id for s in specs],
        "instruction": [s.instruction for s in specs],
        "init_url": times["init_url"],
        "start_timestamp": times["start"],
        "end_timestamp": times["end"],
        "final_answer": [r.final_answer for r in runs],
        "is_aborted": [r.final_answer == NO_ANSWER for r in runs],
        "web_surfer_log": logs,
        "n_screenshots": [len(f) for f in frames],
        "gpt_eval_json": gpt,
        "uv_rubric_score": uv_score,
        "uv_outcome_success": uv_outcome,
        "mm_is_success": legacy["mm_is_success"],
        "verifier_is_success": legacy["verifier_is_success"],
        "final_human_outcome_label": final,
        "final_human_process_label": process,
        "median_human_rubric_score_agnostic": _median_scores(split, reviews),
        "majority_human_outcome_vote": [int(x) for x in humans.majority],
    }
    return SplitData(traj, frames, _annotation_columns(specs, reviews))


def _gpt_eval_column(
    split: str,
    specs: list[TaskSpec],
    final: list[int],
    rubrics: list[Rubric | None],
    uv_outcome: list[int | None],
    rng: np.random.Generator,
) -> list[str]:
    """om2w: WebJudge output (a few -1 and ""); internal: the Universal Verifier's output."""
    n = len(specs)
    if split == INTERNAL:
        out, n_missing = [], 0
        for t in range(n):
            rubric, outcome = rubrics[t], uv_outcome[t]
            if rubric is None or outcome is None:  # the verifier did not run: "" or score -1
                n_missing += 1
                out.append(
                    json.dumps({"score": -1, "gpt_response_text": ""}) if n_missing == 1 else ""
                )
            else:
                out.append(_uv_json(rubric, outcome, specs[t]))
        return out
    odd = rng.choice(n, N_WEBJUDGE_NOT_EVALUATED + N_WEBJUDGE_EMPTY, replace=False)
    not_evaluated, empty = set(odd[:N_WEBJUDGE_NOT_EVALUATED]), set(odd[N_WEBJUDGE_NOT_EVALUATED:])
    scores = _verdicts(final, not_evaluated | empty, VERIFIER_TARGETS["webjudge"][split], rng)
    return [
        "" if t in empty else _webjudge_json(-1 if s is None else s, specs[t], rng)
        for t, s in enumerate(scores)
    ]


def _runs(
    split: str, specs: list[TaskSpec], humans: Humans, seed: int, full: bool
) -> tuple[list[Run], list[list[Frame]], list[str], dict[str, list[str]]]:
    """Agent runs, screenshot frames, logs and timestamp/URL columns of a split."""
    n = len(specs)
    rng = _rng(seed, split, "runs")
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

    runs, frames, logs = [], [], []
    cols: dict[str, list[str]] = {"init_url": [], "start": [], "end": []}
    for t, spec in enumerate(specs):
        task_rng = _rng(seed, split, "run", t)
        init_url = "" if t in empty_url else f"https://{spec.domain}/"
        run = simulate(spec, init_url, n_actions[t], t in aborted, int(humans.final[t]), task_rng)
        start, times, end = _timestamps(len(run.steps), task_rng)
        shots = [] if t in no_shots else run.frames
        if "extra_actions" in quirks[t]:
            shots = shots[: -int(task_rng.integers(1, 3))]
        runs.append(run)
        frames.append(shots)
        logs.append(_log_text(split, run, times, quirks[t], task_rng))
        cols["init_url"].append(init_url)
        cols["start"].append("" if t in empty_start else start)
        cols["end"].append("" if t in empty_end else end)
    return runs, frames, logs, cols


def _annotation_columns(specs: list[TaskSpec], reviews: list[Review]) -> dict[str, list]:
    """Rows sorted by task_id (reviews are already in task order), blind then informed."""
    label = {1: "Correct", 0: "Incorrect"}
    return {
        "task_id": [specs[r.task].task_id for r in reviews],
        "annotator": [r.annotator for r in reviews],
        "human_judgement_outcome": [label[r.outcome] for r in reviews],
        "human_judgement_process": [label[r.process] for r in reviews],
        "human_process_score": [r.score for r in reviews],
        "outcome_comment": [r.outcome_comment for r in reviews],
        "process_comment": [r.process_comment for r in reviews],
        "informed_outcome_agreement": [r.informed.get("outcome", "") for r in reviews],
        "informed_process_agreement": [r.informed.get("process", "") for r in reviews],
        "informed_outcome_comment": [r.informed.get("outcome_comment", "") for r in reviews],
        "informed_process_comment": [r.informed.get("process_comment", "") for r in reviews],
    }


# ----------------------------------------------------------------------------- writing

_INT, _FLOAT, _STR = Value("int32"), Value("float32"), Value("string")
TRAJECTORY_FEATURES = Features(
    {
        "task_id": _STR,
        "instruction": _STR,
        "init_url": _STR,
        "start_timestamp": _STR,
        "end_timestamp": _STR,
        "final_answer": _STR,
        "is_aborted": Value("bool"),
        "web_surfer_log": _STR,
        "screenshots": List(Image()),
        "n_screenshots": _INT,
        "gpt_eval_json": _STR,
        "uv_rubric_score": _FLOAT,
        "uv_outcome_success": _INT,
        "mm_is_success": _INT,
        "verifier_is_success": _INT,
        "final_human_outcome_label": _INT,
        "final_human_process_label": _INT,
        "median_human_rubric_score_agnostic": _FLOAT,
        "majority_human_outcome_vote": _INT,
    }
)
ANNOTATION_FEATURES = Features(
    {
        "task_id": _STR,
        "annotator": _STR,
        "human_judgement_outcome": _STR,
        "human_judgement_process": _STR,
        "human_process_score": _FLOAT,
        "outcome_comment": _STR,
        "process_comment": _STR,
        "informed_outcome_agreement": _STR,
        "informed_process_agreement": _STR,
        "informed_outcome_comment": _STR,
        "informed_process_comment": _STR,
    }
)
README_TEMPLATE = """---
license: mit
pretty_name: CUAVerifierBench (synthetic local mirror)
configs:
- config_name: trajectories
  data_files:
  - split: {om2w}
    path: trajectories/{om2w}-*
  - split: {internal}
    path: trajectories/{internal}-*
- config_name: annotations
  data_files:
  - split: {om2w}
    path: annotations/{om2w}-*
  - split: {internal}
    path: annotations/{internal}-*
---

# CUAVerifierBench: synthetic local mirror

Generated by `python -m lib.mirror` ({mode}, seed {seed}) with the layout, columns and
measured facts of `microsoft/CUAVerifierBench`. Texts, screenshots and verdicts are made up.
`sample_predictions.csv` holds made-up predictions of two verifiers for upload tests.
"""


def shard_name(config: str, split: str, index: int) -> str:
    """Hub shard path, e.g. trajectories/internal-00001-of-00002.parquet."""
    return f"{config}/{split}-{index:05d}-of-{N_SHARDS[config]:05d}.parquet"


def _render_run(job: tuple[list[Frame], bool]) -> list[bytes]:
    """PNGs of one trajectory; identical frames (wait, terminate, ...) are drawn once."""
    frames, detail = job
    cache: dict[Frame, bytes] = {}
    out = []
    for frame in frames:
        if frame not in cache:
            cache[frame] = render_png(frame, detail=detail, level=PNG_LEVEL)
        out.append(cache[frame])
    return out


def _mapper() -> tuple[Callable, Callable[[], None]]:
    """`map` over a pool of forked processes when that is safe and useful, else plain `map`.

    Rendering is CPU bound, so two cores halve the build time. Forking is only safe from
    the main thread of a process without other busy threads (the CLI, a test run; idle
    daemon threads such as tqdm's monitor are fine). Inside a threaded host such as the
    Streamlit server, or where fork does not exist, the screenshots are drawn serially.
    """
    workers = min(4, os.cpu_count() or 1)
    forkable = "fork" in multiprocessing.get_all_start_methods()
    me = threading.current_thread()
    busy = [t for t in threading.enumerate() if t is not me and not t.daemon]
    if workers <= 1 or not forkable or me is not threading.main_thread() or busy:
        return map, lambda: None
    pool = multiprocessing.get_context("fork").Pool(workers)
    return (lambda f, it: pool.imap(f, it, chunksize=2)), pool.terminate


def _write_trajectories(
    out: Path, split: str, data: SplitData, pngs: Iterator[list[bytes]]
) -> None:
    """Two contiguous halves, each collected and written on its own to bound memory."""
    n = len(data.frames)
    bounds = [0, (n + 1) // 2, n]
    for shard in range(N_SHARDS["trajectories"]):
        rows = range(bounds[shard], bounds[shard + 1])
        columns = {k: [v[t] for t in rows] for k, v in data.traj.items()}
        shots = [next(pngs) for _ in rows]
        columns["screenshots"] = [[{"bytes": b, "path": None} for b in run] for run in shots]
        ordered = {k: columns[k] for k in TRAJECTORY_FEATURES}
        dataset = Dataset.from_dict(ordered, features=TRAJECTORY_FEATURES)
        del columns, shots, ordered  # Arrow holds the bytes now: free ~0.5 GB before writing
        dataset.to_parquet(str(out / shard_name("trajectories", split, shard)))


def _write_predictions(path: Path, splits: dict[str, SplitData], seed: int) -> None:
    """Two made-up verifiers over all tasks, for testing prediction uploads."""
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["task_id", "split", "verifier", "outcome", "process", "score"])
        for verifier in ("my_verifier_v1", "my_verifier_v2"):
            for split, data in splits.items():
                rng = _rng(seed, split, verifier)
                final = data.traj["final_human_outcome_label"]
                outcome = _verdicts(final, [], VERIFIER_TARGETS[verifier][split], rng)
                for task_id, o in zip(data.traj["task_id"], outcome, strict=True):
                    score = round(float(rng.beta(6, 2) if o else rng.beta(2, 4)), 4)
                    process = int(score >= UV_PROCESS_THRESHOLD)
                    writer.writerow([task_id, split, verifier, o, process, score])


def _build(out: Path, *, full: bool, seed: int) -> None:
    """Write every file of the mirror into `out` (README last)."""
    for config in N_SHARDS:
        (out / config).mkdir(parents=True, exist_ok=True)
    splits = {split: _build_split(split, seed, full) for split in SPLITS}
    imap, close = _mapper()
    bars_were_off = datasets.utils.are_progress_bars_disabled()
    datasets.utils.disable_progress_bars()  # one bar per shard is noise in tests and the CLI
    try:
        jobs = [(frames, full) for data in splits.values() for frames in data.frames]
        pngs = iter(imap(_render_run, jobs))  # one stream keeps the workers busy while we write
        for split, data in splits.items():
            _write_trajectories(out, split, data, pngs)
            ann = Dataset.from_dict(data.ann, features=ANNOTATION_FEATURES)
            ann.to_parquet(str(out / shard_name("annotations", split, 0)))
    finally:
        close()
        if not bars_were_off:
            datasets.utils.enable_progress_bars()
    _write_predictions(out / "sample_predictions.csv", splits, seed)
    mode = "full" if full else "default"
    readme = README_TEMPLATE.format(om2w=OM2W, internal=INTERNAL, mode=mode, seed=seed)
    (out / "README.md").write_text(readme)


def write_mirror(out_dir: Path, *, full: bool = False, seed: int = 0) -> Path:
    """Write the mirror to `out_dir` and return it; an existing complete mirror is reused.

    The files are built in `OUT_DIR.tmp-<pid>` and renamed into place, so concurrent
    callers never see a half-written mirror. Note: an existing mirror is returned as is,
    whatever `full` and `seed` it was built with.
    """
    out_dir = Path(out_dir)
    if (out_dir / "README.md").exists():
        return out_dir
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.with_name(f"{out_dir.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        _build(tmp, full=full, seed=seed)
        try:
            os.rename(tmp, out_dir)  # atomic; also replaces an empty directory
        except OSError:
            if not (out_dir / "README.md").exists():
                raise  # a non-empty, incomplete OUT_DIR: refuse to overwrite it
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out_dir


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: write the mirror and print where, how big and how long it took."""
    parser = argparse.ArgumentParser(
        prog="python -m lib.mirror", description=__doc__.splitlines()[0]
    )
    parser.add_argument("out_dir", type=Path, help="folder to create (reused if complete)")
    parser.add_argument("--full", action="store_true", help="as large as the real ~1.5 GB data")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    out = write_mirror(args.out_dir, full=args.full, seed=args.seed)
    elapsed = time.perf_counter() - started
    print(f"{out}: {_size(out) / 1e6:.1f} MB in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

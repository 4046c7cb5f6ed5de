"""The Universal Verifier's score file (internal `gpt_eval_json`): both passes and its steps.

The verifier scores every criterion twice (DATASET.md, `gpt_eval_json`): first from the
agent's actions and answer only (`earned_points` / `justification`), then grounded in the
screenshots (`post_image_earned_points` / `post_image_justification`); the totals are the
sum of the post-image points. The rubric drawn by `labels.rubric` holds the post-image
points; here the action-only pass is derived from it: on a run with screenshots some
criteria scored higher from the log's claims than the screenshots bear out (the
screenshots lowered them: most differences, as the paper's check against hallucinated
claims), a few lower (the screenshots raised them). A run without screenshots has no
second look, so its passes agree.

`rubric_intermediate_mm_rubric_steps` follows the verifier's public example: the
relevance 0-10 of every screenshot to every criterion (high where the page shows what
the criterion asks: the start page for reaching the site, the typed query for the search,
the item's page for identifying it, the last page for the answer), the top screenshots
per criterion (most relevant first, the latest on ties), the evidence read from each,
with discrepancies and confirmed environment issues, the reality notes, the rescoring
summary (both passes), penalty criteria for unsolicited side effects, and the outcome
check. Criterion indices are strings, as in the JSON.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lib.mirror import text as T
from lib.mirror.agent import Run
from lib.mirror.facts import UV_PROCESS_THRESHOLD
from lib.mirror.labels import Rubric
from lib.mirror.pictures import Frame

CRITERIA = (
    ("Reach the right site", "The agent opens {site} or reaches it through a search."),
    ("Search with the task's terms", "The agent searches for '{query}' or an equivalent."),
    ("Apply every constraint", "The run applies {constraint}."),
    ("Identify the requested item", "The agent opens a result that satisfies the request."),
    ("Verify before answering", "{detail} is checked on the page before the final answer."),
    ("Complete the requested action", "The cart, booking or saved item reflects the request."),
    ("Report a grounded answer", "The final answer states {detail_lower} as shown on the page."),
)

LOWERED, RAISED = 0.5, 0.05
"""On a run with screenshots: chance that a criterion the screenshots did not fully credit
scored higher from the actions alone (LOWERED), and that one with points scored lower
(RAISED). About one criterion in five then differs between the passes."""
TOP_K = 3
"""Screenshots the verifier keeps per criterion (`step3_grouped_screenshots`)."""
PENALTY_SHARE = 0.08
"""Share of scored runs with a penalty criterion (an unsolicited side effect)."""

RELEVANCE = {  # catalog criterion -> page kind -> base relevance 0-10
    0: {"home": 8, "list": 6, "detail": 5, "search": 3},
    1: {"home": 3, "list": 7, "detail": 2, "search": 5},
    2: {"home": 2, "list": 8, "detail": 6, "search": 1},
    3: {"home": 1, "list": 6, "detail": 9, "search": 1},
    4: {"home": 1, "list": 4, "detail": 8, "search": 1},
    5: {"home": 1, "list": 3, "detail": 7, "search": 1},
    6: {"home": 1, "list": 3, "detail": 6, "search": 1},
}
LAST_BONUS = {4: 1, 5: 2, 6: 3}
"""The last screenshot matters more for criteria about the final state and answer."""


def relevance(c: int, shots: list[Frame], rng: np.random.Generator) -> list[int]:
    """Relevance 0-10 of each screenshot to catalog criterion `c` (what its page shows)."""
    out = []
    for k, frame in enumerate(shots):
        r = RELEVANCE[c].get(frame.page.kind, 2)
        if c == 1 and frame.typed:
            r += 3  # the query typed into the search box
        if k == len(shots) - 1:
            r += LAST_BONUS.get(c, 0)
        out.append(int(np.clip(r + int(rng.integers(-1, 2)), 0, 10)))
    return out


def top_screens(scores: list[int]) -> list[int]:
    """The TOP_K most relevant screenshots, most relevant first, the latest on ties."""
    order = sorted(range(len(scores)), key=lambda k: (-scores[k], -k))
    return order[:TOP_K]


def action_only_points(post: float, mx: float, shots: bool, rng: np.random.Generator) -> float:
    """The first pass's points of a criterion whose screenshot-grounded points are `post`."""
    if not shots:
        return post
    halves = round(2 * (mx - post))
    if halves > 0 and rng.random() < LOWERED:
        return post + 0.5 * int(rng.integers(1, halves + 1))
    if post > 0 and rng.random() < RAISED:
        return post - 0.5 * int(rng.integers(1, round(2 * post) + 1))
    return post


def _shot_word(ks: list[int]) -> str:
    return ", ".join(str(k) for k in ks)


def _frame_text(k: int, frame: Frame) -> str:
    kinds = {"home": "home page", "list": "results list", "detail": "item page"}
    kind = kinds.get(frame.page.kind, "search results")
    typed = f" with '{frame.typed[0][1].strip()}' typed in" if frame.typed else ""
    return f"Screenshot {k} shows the {kind} '{frame.page.title}'{typed}"


def _reality(name: str, spec: T.TaskSpec) -> str:
    """Step 5: what the rubric's assumptions look like on the real pages."""
    detail = spec.detail_name[:1].upper() + spec.detail_name[1:]
    notes = {
        "Reach": f"{spec.site} is reachable at {spec.domain}; a search engine detour is fine.",
        "Search": f"{spec.site} calls the results for '{spec.query}' a catalog listing.",
        "Apply": f"On {spec.site}, {spec.constraint} is a filter on the results page.",
        "Identify": f"{spec.target} is listed next to similar items such as {spec.items[1]}.",
        "Verify": f"{detail} is shown on the item page, not in the results.",
        "Complete": "The cart or saved list shows a confirmation banner when it changes.",
        "Report": f"{detail} on the page reads {spec.value}.",
    }
    return notes.get(name.split()[0], f"No surprises on {spec.site}.")


def _post_justification(
    name: str, post: float, first: float, mx: float, top: int | None, ctx: tuple
) -> str:
    """The screenshot-grounded justification, saying what the screenshots changed."""
    text = T.rubric_justification(name, post, mx, *ctx)
    if top is None or post == first:
        seen = "" if top is None else f" Screenshot {top} confirms it."
        return text + seen
    if post < first:
        return text + (
            f" The action log claims more, but screenshot {top} does not show it: "
            f"lowered from {first:g} to {post:g}."
        )
    return text + (
        f" Screenshot {top} shows what the log leaves out: raised from {first:g} to {post:g}."
    )


def _evidence(
    i: int,
    ks: list[int],
    shots: list[Frame],
    item: dict[str, Any],
    env_issue: bool,
    spec: T.TaskSpec,
    story: T.Story,
    run: Run,
) -> list[dict[str, Any]]:
    """Step 4 for one criterion: what each chosen screenshot shows and whether it fits."""
    post, first, mx = item["post_image_earned_points"], item["earned_points"], item["max_points"]
    problem = T.issue(spec, story, run) or f"{spec.constraint} is not visible"
    out = []
    for rank, k in enumerate(ks):
        lowered = rank == 0 and post < first
        out.append(
            {
                "screenshot_idx": k,
                "screenshot_evidence": _frame_text(k, shots[k]) + ".",
                "criterion_analysis": (
                    f"Consistent with '{item['criterion']}'."
                    if post == mx
                    else f"'{item['criterion']}' is not fully met: {problem}."
                ),
                "discrepancies": (
                    f"The action log implies '{item['criterion']}' was met, but screenshot {k} "
                    "does not show it."
                    if lowered
                    else "None"
                ),
                "environment_issues_confirmed": bool(env_issue and rank == 0 and post < mx),
            }
        )
    return out


def _penalty(run: Run, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Step 7: an unsolicited side effect, on a few runs."""
    if rng.random() >= PENALTY_SHARE:
        return []
    k = T.key_step(run)
    return [
        {
            "criterion": "No unsolicited side effects",
            "description": "The agent changes nothing the task did not ask for.",
            "penalty_points": 1.0,
            "justification": f"At step {k} the agent {T.describe(run.steps[k])}, "
            "which the task did not ask for.",
        }
    ]


def uv_response(
    rub: Rubric,
    outcome: int,
    spec: T.TaskSpec,
    story: T.Story,
    run: Run,
    shots: list[Frame],
    rng: np.random.Generator,
    with_steps: bool = True,
) -> dict[str, Any]:
    """The parsed `gpt_response_text` of one internal row the verifier scored.

    `shots` are the row's screenshots (as released; may be none); `with_steps=False`
    leaves out `rubric_intermediate_mm_rubric_steps`, as on rows whose file lacks it.
    """
    fmt = {
        "site": spec.site,
        "query": spec.query,
        "constraint": spec.constraint,
        "detail": spec.detail_name[:1].upper() + spec.detail_name[1:],
        "detail_lower": spec.detail_name,
    }
    ctx = (spec, story, run)
    env_issue = story.mode in ("gave_up", "aborted") and rng.random() < 0.5
    items, relevances, chosen = [], [], []
    for c, mx, post in rub.items:
        name, description = CRITERIA[c]
        first = action_only_points(post, mx, bool(shots), rng)
        scores = relevance(c, shots, rng)
        ks = top_screens(scores)
        top = ks[0] if ks else None
        relevances.append(scores)
        chosen.append(ks)
        items.append(
            {
                "criterion": name,
                "description": description.format(**fmt),
                "max_points": mx,
                "earned_points": first,
                "justification": T.rubric_justification(name, first, mx, *ctx),
                "reality_notes": _reality(name, spec),
                "applicable_evidence": (
                    f"Screenshots {_shot_word(ks)}" if ks else "No screenshots recorded"
                ),
                "post_image_earned_points": post,
                "post_image_justification": _post_justification(name, post, first, mx, top, ctx),
            }
        )
    intent = spec.instruction
    reasoning = T.uv_reasoning(outcome, *ctx)
    check = {"primary_intent": intent, "reasoning": reasoning, "output_success": bool(outcome)}
    response: dict[str, Any] = {
        "rubric_items": items,
        "rubric_total_max_points": rub.max_points,
        "rubric_total_earned_points": rub.earned,
        "rubric_is_success": rub.score >= UV_PROCESS_THRESHOLD,
        "outcome_success": bool(outcome),
        "outcome_reasoning": reasoning,
        "outcome_primary_intent": intent,
        "rubric_outcome_verification": check,
        "rubric_majority_vote_metadata": _majority(rub.score, bool(outcome), rng),
    }
    penalty = _penalty(run, rng)
    if with_steps:
        n = len(shots)
        response["rubric_intermediate_mm_rubric_steps"] = {
            "step1_num_screenshots": n,
            "step2_relevance_scores": {
                f"screenshot_{k}": {
                    **{str(i): relevances[i][k] for i in range(len(items))},
                    "screenshot_idx": k,
                }
                for k in range(n)
            },
            "step3_grouped_screenshots": {str(i): ks for i, ks in enumerate(chosen)},
            "step4_evidence_by_criterion": {
                str(i): _evidence(i, chosen[i], shots, item, env_issue, *ctx)
                for i, item in enumerate(items)
            },
            "step5_reality_check": {str(i): item["reality_notes"] for i, item in enumerate(items)},
            "step6_rescoring_summary": [
                {
                    k: item[k]
                    for k in (
                        "criterion",
                        "earned_points",
                        "post_image_earned_points",
                        "max_points",
                        "justification",
                        "applicable_evidence",
                        "post_image_justification",
                        "reality_notes",
                    )
                }
                for item in items
            ],
            "step7_penalty_criteria": penalty,
            "step7_requires_penalty": bool(penalty),
            "step7_reasoning": (
                penalty[0]["justification"] if penalty else "No unsolicited side effects."
            ),
            "step8_outcome_verification": check,
        }
    return response


def _majority(score: float, outcome: bool, rng: np.random.Generator) -> dict[str, Any]:
    """Three scoring instances whose median is the score and whose majority is the verdict."""
    low = round(max(0.0, score - float(rng.uniform(0.0, 0.15))), 4)
    high = round(min(1.0, score + float(rng.uniform(0.0, 0.1))), 4)
    votes = [outcome, outcome, outcome if rng.random() < 0.85 else not outcome]
    return {
        "n_instances": 3,
        "all_scores": [round(score, 4), low, high],
        "median_score": round(score, 4),
        "outcome_votes": votes,
        "majority_output_success": outcome,
    }

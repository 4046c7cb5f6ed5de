"""Every text of the mirror that tells what happened in a run.

A task's `TaskSpec` (site, instruction, the item that answers it and the detail asked
for) and its `Story` (how the run went: success, or which failure) are fixed before the
agent is simulated. The final answer is written from them, and after the run the
reviewers' comments, the rubric justifications and the judges' texts cite its steps
("at step 3 the agent clicked ...") and the answer's missing detail. So every text of
one trajectory tells one story instead of generic filler.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np

from lib.mirror.facts import (
    ALIASES,
    BASE_DATE,
    INTERNAL,
    MODELS,
    N_SITES,
    N_TASKS,
    OM2W,
)
from lib.mirror.sites import DETAILS, FAMILY_VERBS, INTERNAL_SITES, OM2W_SITES, TOPICS

if TYPE_CHECKING:
    from lib.mirror.agent import Run, Step

SMALL_WORDS = frozenset({"a", "an", "the", "in", "of", "to", "from", "near", "with", "under"})
FAILURE_MODES = ("missing_detail", "wrong_item", "unverified", "gave_up")
"""How a run the humans call a failure went wrong (plus `aborted`, placed separately)."""


def pick(rng: np.random.Generator, options: Sequence[str]) -> str:
    """One of `options`, drawn from `rng` (a plain str, not a numpy scalar)."""
    return options[int(rng.integers(len(options)))]


@dataclass(frozen=True)
class TaskSpec:
    """Text facts of one task, shared by the instruction, the agent log and the answers.

    `items`: result names the pages list; `items[0]` is the one that answers the task and
    `value` its requested detail (`detail` names the kind, e.g. `price`).
    """

    task_id: str
    site: str
    domain: str
    instruction: str
    query: str
    items: tuple[str, ...]
    detail: str = "price"
    value: str = ""
    constraint: str = ""

    @property
    def target(self) -> str:
        return self.items[0]

    @property
    def detail_name(self) -> str:
        return DETAILS[self.detail]


@dataclass(frozen=True)
class Story:
    """How a run went: `mode` is `success`, `aborted` or one of FAILURE_MODES; `wrong` is
    the wrong value an `unverified` answer reports."""

    mode: str
    wrong: str = ""


# ----------------------------------------------------------------------------- task ids


def _day(d: datetime) -> str:
    return f"{d:%B} {d.day}"


def _value(detail: str, rng: np.random.Generator) -> str:
    """A plausible value of the requested detail, e.g. `$129.99` or `4.6 stars`."""
    r = rng.integers
    values = {
        "price": f"${int(r(12, 900))}.{int(r(0, 100)):02d}",
        "options": "black, navy and olive",
        "cart": f"1 item, ${int(r(5, 300))}.{int(r(0, 100)):02d}",
        "rating": f"{int(r(40, 50)) / 10} stars ({int(r(500, 9000)):,} reviews)",
        "time": f"{int(r(6, 11))}:{int(r(0, 12)) * 5:02d} AM",
        "address": f"{int(r(10, 999))} {pick(rng, ('Elm', 'Oak', 'Main', 'Pine', 'Lake'))} Street",
        "score": f"{int(r(95, 130))}-{int(r(90, 125))}",
        "count": f"{int(r(8, 90))},{int(r(0, 1000)):03d} stars",
        "list": "fatigue, pale skin and shortness of breath",
        "temperature": f"{int(r(45, 80))}°F",
        "company": f"{pick(rng, ('Acme', 'Northwind', 'Globex', 'Initech'))} Analytics",
        "fact": f"{int(r(100, 999)):,},{int(r(0, 1000)):03d}",
    }
    return values[detail]


def _spec(
    task_id: str, site: str, domain: str, topic_name: str, rng: np.random.Generator
) -> TaskSpec:
    """Instruction, search query, result names and the requested detail of one task.

    A price the answer reports respects the instruction's price limit, so a correct
    answer never contradicts its own task.
    """
    topic = TOPICS[topic_name]
    thing = pick(rng, topic.things)
    template, detail = topic.templates[int(rng.integers(len(topic.templates)))]
    price = int(rng.integers(3, 40)) * 10
    instruction = template.format(
        thing=thing,
        site=site,
        price=price,
        date=_day(BASE_DATE + timedelta(days=int(rng.integers(20, 120)))),
        n=int(rng.integers(2, 5)),
    )
    words = [w for w in thing.split() if w.lower() not in SMALL_WORDS]
    head = " ".join(w[:1].upper() + w[1:] for w in words[:3])
    models = rng.choice(MODELS, size=6, replace=False)
    items = tuple(f"{head} {m}" for m in models)
    value = _value(detail, rng)
    if detail == "price" and "{price}" in template:
        after = template.split("{price}")[1]
        limit = price * 10 ** (len(after) - len(after.lstrip("0")))  # "${price}00" = x100
        value = f"${float(rng.uniform(0.55, 0.95)) * limit:,.2f}"
    return TaskSpec(
        task_id, site, domain, instruction, thing, items, detail, value, topic.constraint
    )


def _counts_per_site(n_tasks: int, n_sites: int, rng: np.random.Generator) -> np.ndarray:
    """Every site at least once, the rest skewed to a few popular sites (as in the data).

    The weights are capped: an uncapped Pareto draw gave one site 36 of the 106 om2w tasks,
    which no real split looks like and which made per-site slices meaningless.
    """
    weights = np.minimum(rng.pareto(1.5, n_sites) + 0.2, 3.0)
    extra = rng.multinomial(n_tasks - n_sites, weights / weights.sum())
    return 1 + extra


def om2w_specs(rng: np.random.Generator) -> list[TaskSpec]:
    """`Site--8hexdigits` ids (first 8 hex digits of an Online-Mind2Web task id), 63 sites."""
    sites = OM2W_SITES[: N_SITES[OM2W]]
    specs: dict[str, TaskSpec] = {}
    for (site, domain, topic), count in zip(
        sites, _counts_per_site(N_TASKS[OM2W], len(sites), rng), strict=True
    ):
        made = 0
        while made < count:
            task_id = f"{site}--{int(rng.integers(0, 2**32)):08x}"
            if task_id not in specs:
                specs[task_id] = _spec(task_id, site, domain, topic, rng)
                made += 1
    return [specs[k] for k in sorted(specs)]


def internal_families() -> list[tuple[str, str, str, str]]:
    """(family, site name, domain, topic): two verbs per site, e.g. `alltrails_find`."""
    out = []
    for i, (prefix, name, domain, topic) in enumerate(INTERNAL_SITES):
        for j in range(2):
            verb = FAMILY_VERBS[(i + 3 * j) % len(FAMILY_VERBS)]
            out.append((f"{prefix}_{verb}", name, domain, topic))
    return out[: N_SITES[INTERNAL]]


def internal_specs(rng: np.random.Generator) -> list[TaskSpec]:
    """`family[_data]_<digits>[_<digits>]` ids, e.g. alltrails_find_23, zillow_browse_data_4_2."""
    families = internal_families()
    specs: dict[str, TaskSpec] = {}
    for (family, site, domain, topic), count in zip(
        families, _counts_per_site(N_TASKS[INTERNAL], len(families), rng), strict=True
    ):
        made = 0
        while made < count:
            task_id = family + ("_data" if rng.random() < 0.15 else "")
            task_id += f"_{int(rng.integers(1, 60))}"
            if rng.random() < 0.15:
                task_id += f"_{int(rng.integers(1, 6))}"
            if task_id not in specs:
                specs[task_id] = _spec(task_id, site, domain, topic, rng)
                made += 1
    return [specs[k] for k in sorted(specs)]


# ----------------------------------------------------------------------------- stories


def story_for(label: int, spec: TaskSpec, rng: np.random.Generator) -> Story:
    """How the run of a task went, given the humans' final outcome label."""
    if label == 1:
        return Story("success")
    mode = pick(rng, FAILURE_MODES)
    if mode != "unverified":
        return Story(mode)
    kind = spec.detail if spec.detail not in ("list", "options") else "price"
    for _ in range(20):  # a value unlike the page's (values have many digits: ends at once)
        wrong = _value(kind, rng)
        if wrong != spec.value:
            return Story(mode, wrong)
    return Story("missing_detail")


def final_answer(spec: TaskSpec, story: Story) -> str | None:
    """The agent's answer (None when the run was aborted and never answered)."""
    detail = f"{spec.detail_name} is"
    if story.mode == "aborted":
        return None
    if story.mode == "missing_detail":
        return f"I found {spec.target} on {spec.site}, which matches the request."
    if story.mode == "wrong_item":
        return f"I found {spec.items[1]} on {spec.site}; {detail} {spec.value}."
    if story.mode == "unverified":
        return f"I found {spec.target} on {spec.site}; {detail} {story.wrong}."
    if story.mode == "gave_up":
        return f"I could not find a {spec.query} on {spec.site} that meets every constraint."
    return f"I found {spec.target} on {spec.site}; {detail} {spec.value}."


def key_step(run: Run) -> int:
    """Index of the step where the run went wrong (or was decided): the last action before
    `terminate`, or the last action of an aborted run.

    Steps are cited 0-based, as the Trajectory viewer numbers them: step k is action k
    and screenshot k (the page before that action).
    """
    last = len(run.steps) - 1
    return max(0, last - 1) if run.steps[last].name == "terminate" else last


def describe(step: Step) -> str:
    """A step as a reviewer would cite it: `clicked 'Hiking Backpack Pro'`."""
    a = step.args
    return {
        "left_click": f"clicked '{step.label}'" if step.label else "clicked on the page",
        "type": f"typed '{str(a.get('text', '')).strip()}'",
        "scroll": "scrolled the results",
        "mouse_move": f"hovered over '{step.label}'" if step.label else "moved the mouse",
        "key": f"pressed {'+'.join(a.get('keys', []))}",
        "wait": "waited for the page",
        "pause_and_memorize_fact": "noted a fact",
        "visit_url": f"opened {a.get('url', '')}",
        "web_search": f"searched the web for '{a.get('query', '')}'",
        "history_back": "went back",
        "terminate": "answered",
    }.get(step.name, step.name)


def issue(spec: TaskSpec, story: Story, run: Run) -> str:
    """What went wrong in this run, citing its step ("" for a success)."""
    k = key_step(run)
    at = f"step {k} ({describe(run.steps[k])})"
    return {
        "missing_detail": f"the answer names {spec.target} but omits {spec.detail_name}",
        "wrong_item": f"{spec.items[1]} does not meet {spec.constraint}: at {at} the agent "
        "moved on without applying it",
        "unverified": f"the answer gives {spec.detail_name} as {story.wrong}, but the page "
        f"at {at} shows {spec.value}",
        "gave_up": f"the agent gave up after {at} although {spec.target} was listed",
        "aborted": f"the run stopped after {at} without a final answer",
    }.get(story.mode, "")


def _success_note(spec: TaskSpec, run: Run) -> str:
    k = len(run.steps) - 1  # the page the agent answered from
    return (
        f"step {k} shows {spec.target} on {spec.site} and the answer gives "
        f"{spec.detail_name} ({spec.value})"
    )


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def outcome_comment(label: int, spec: TaskSpec, story: Story, run: Run) -> str:
    """A reviewer's blind outcome comment; a lenient or strict reviewer still cites the run."""
    k = key_step(run)
    if story.mode == "success":
        if label:
            return _cap(_success_note(spec, run)) + "."
        return (
            f"Not convinced: {spec.constraint} is not visible at step {k}, so I cannot tell "
            f"whether {spec.target} fits."
        )
    if label:
        soft = {
            "missing_detail": f"the answer leaves out {spec.detail_name}, but {spec.target} "
            "is the right item",
            "wrong_item": f"{spec.items[1]} looks like a reasonable match",
            "unverified": f"I could not check {spec.detail_name} ({story.wrong}), but it looks "
            "plausible",
            "gave_up": f"after step {k} the agent honestly reported that no {spec.query} matched",
            "aborted": f"the page reached at step {k} already shows {spec.target}",
        }[story.mode]
        return f"Acceptable: {soft}."
    return _cap(issue(spec, story, run)) + "."


def process_comment(label: int, spec: TaskSpec, story: Story, run: Run) -> str:
    """A reviewer's blind process comment (om2w only)."""
    k = key_step(run)
    if label:
        return (
            f"Reasonable path in {len(run.steps)} steps: searched for '{spec.query}' and "
            f"checked {spec.constraint} before answering."
        )
    return (
        f"After step {k} ({describe(run.steps[k])}) the agent answered without checking "
        f"{spec.constraint}."
    )


def informed_comment(
    answer: str, shown: int, spec: TaskSpec, story: Story, run: Run, dimension: str
) -> str:
    """Why a reviewer agrees or disagrees with the verdict shown (om2w informed stage)."""
    problem = issue(spec, story, run) or f"{spec.constraint} is not shown on any page"
    good = _success_note(spec, run) if story.mode == "success" else "the run looks complete"
    if dimension == "process":
        good, problem = "the steps were reasonable", problem
    if answer == "agree":
        return f"Agree: {good}." if shown else f"Agree with the verifier: {problem}."
    return f"Disagree: {problem}." if shown else f"Disagree: {good}; the verifier is too strict."


# ----------------------------------------------------------------------------- judges


def uv_reasoning(verdict: int, spec: TaskSpec, story: Story, run: Run) -> str:
    """The Universal Verifier's outcome reasoning, consistent with its verdict."""
    if verdict:
        return (
            f"The agent searched {spec.site} for '{spec.query}', reached {spec.target} "
            f"(step {key_step(run)}) and its answer reports {spec.detail_name}, which the "
            "screenshots support."
        )
    problem = issue(spec, story, run)
    if problem:
        return f"Not achieved: {problem}."
    return (
        f"Not verified: no screenshot shows {spec.constraint} for {spec.target}, so the "
        "answer cannot be confirmed."
    )


def rubric_justification(
    criterion: str, earned: float, max_points: float, spec: TaskSpec, story: Story, run: Run
) -> str:
    """A rubric item's justification, citing the step that earned or lost the points."""
    k = key_step(run)
    typed = [i for i, s in enumerate(run.steps) if s.name == "type"]
    status = "Fully met" if earned == max_points else ("Not met" if earned == 0 else "Partly met")
    full = earned == max_points
    if criterion.startswith("Search") and typed:
        detail = f"step {typed[0]} typed '{str(run.steps[typed[0]].args['text']).strip()}'"
        detail += "" if full else f", but the results were not narrowed by {spec.constraint}"
    elif criterion.startswith("Search"):
        detail = f"no search for '{spec.query}' appears in the log"
    elif criterion.startswith("Reach"):
        detail = f"the run starts on {spec.domain}" if full else "the start page is not shown"
    elif full:
        detail = _success_note(spec, run)
    else:
        detail = issue(spec, story, run) or f"{spec.constraint} is not visible at step {k}"
    return f"{status}: {detail}."


def webjudge_text(score: int, spec: TaskSpec, story: Story, run: Run) -> str:
    """An Online-Mind2Web (WebJudge-style) judgement ending with a Status line."""
    if score:
        summary = f"the final state shows {spec.target} and the answer reports {spec.detail_name}"
    else:
        summary = issue(spec, story, run) or f"no screenshot confirms {spec.constraint}"
    return (
        f"Thoughts: The task is: {spec.instruction}\n"
        f"Key points: 1. Use {spec.site}. 2. Find a {spec.query}. 3. Respect {spec.constraint}. "
        f"4. Report {spec.detail_name}.\n"
        f"The agent took {len(run.steps)} steps. Judging from the screenshots, {summary}.\n"
        f'Status: "{"success" if score else "failure"}"'
    )


# ----------------------------------------------------------------------------- logs


def _message(name: str, args: dict) -> str:
    """A short human-readable line like Fara's own `message` field."""
    shown = {k: v for k, v in args.items() if k not in ("action", "thoughts")}
    return f"{name}({', '.join(f'{k}={json.dumps(v)}' for k, v in shown.items())})"


def log_text(
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


def timestamps(n_steps: int, rng: np.random.Generator) -> tuple[str, list[str], str]:
    """(start, one per action, end), ISO 8601 without zone, with microseconds."""
    t = BASE_DATE + timedelta(days=int(rng.integers(0, 50)), seconds=float(rng.uniform(0, 36000)))
    start = t
    times = []
    for _ in range(n_steps):
        t += timedelta(seconds=float(rng.uniform(2.0, 18.0)))
        times.append(t.isoformat(timespec="microseconds"))
    end = t + timedelta(seconds=float(rng.uniform(0.5, 4.0)))
    return start.isoformat(timespec="microseconds"), times, end.isoformat(timespec="microseconds")

"""The simulated agent: a browser session over `pictures` page layouts, one Fara tool per step.

Targets of clicks and typing are picked from the elements visible in the frame the action
acts on, so the logged coordinates land on drawn elements (the viewer overlays them).
Every URL is on the task's own site (or the search engine when the run starts blank), so
address bars, log URLs and the task id tell the same site.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from urllib.parse import quote_plus

import numpy as np

from lib.mirror.facts import MODELS, NO_ANSWER
from lib.mirror.pictures import (
    CLICK_TARGETS,
    SCREEN_H,
    SCREEN_W,
    VIEW_H,
    Frame,
    Page,
    make_page,
)
from lib.mirror.text import TaskSpec, pick

# ----------------------------------------------------------------------------- navigation


class Browser:
    """Navigation state of one simulated session: the current frame and the back stack."""

    def __init__(self, start: Page) -> None:
        self.frame = Frame(start)
        self.history: list[Frame] = []

    def goto(self, page: Page, typed: tuple[tuple[int, str], ...] = ()) -> None:
        """Open a new page (link click, URL visit, submitted search with its query shown)."""
        self.history.append(self.frame)
        self.frame = Frame(page, typed=typed)

    def back(self) -> None:
        """Return to the previous page, as it was left (scroll and typed text)."""
        if self.history:
            self.frame = self.history.pop()

    def type_into(self, index: int, text: str, replace_text: bool) -> None:
        """Type into an input; the text shows in every later screenshot of this page."""
        typed = dict(self.frame.typed)
        typed[index] = text if replace_text else typed.get(index, "") + text
        self.frame = replace(self.frame, typed=tuple(sorted(typed.items())))

    def scroll_by(self, pixels: int) -> None:
        """Scroll; Fara's convention is positive pixels = up, so down is negative."""
        limit = max(0, self.frame.page.height - VIEW_H)
        self.frame = replace(self.frame, scroll=min(limit, max(0, self.frame.scroll - pixels)))


# ----------------------------------------------------------------------------- the agent


@dataclass
class Step:
    """One agent action: Fara tool name, its arguments, the reasoning and the page URL."""

    name: str
    args: dict
    thoughts: str
    url: str
    label: str = ""
    """The clicked or hovered element's text, for comments that cite the step."""


@dataclass
class Run:
    """A simulated agent run: actions, the frame before each action and after the last."""

    steps: list[Step]
    frames: list[Frame]
    final_answer: str


def _site_page(
    spec: TaskSpec, kind: str, url: str, title: str, rng: np.random.Generator, about: str = ""
) -> Page:
    """A page of the task's site (or of the search engine) listing the task's items.

    A detail page is `about` the clicked item; the task's own item shows the detail the
    task asks for (its price, rating, ...), as the answer will cite it.
    """
    if "bing.com" in url:
        labels = [f"{spec.site} - {item}" for item in spec.items]
        return make_page(url, title, "search", "Bing", labels, rng)
    labels = [str(x) for x in rng.permutation(spec.items)]
    for item in (spec.items[1], spec.target):  # results rank the task's item near the top
        labels.remove(item)
        labels.insert(int(rng.integers(0, 3)), item)
    if about in labels:
        labels.remove(about)
        labels.insert(0, about)
    return make_page(url, title, kind, spec.site, labels, rng, spec.value, spec.target)


def _start_page(spec: TaskSpec, init_url: str, rng: np.random.Generator) -> Page:
    if not init_url:
        return _site_page(spec, "search", "https://www.bing.com/", "Bing", rng)
    return _site_page(spec, "home", init_url, f"{spec.site} - Official Site", rng)


NEXT_KIND = {"home": "list", "list": "detail", "detail": "detail", "search": "home"}


def _follow(spec: TaskSpec, frame: Frame, index: int, rng: np.random.Generator) -> Page | None:
    """The page a click on element `index` opens (None: the click changes nothing visible)."""
    el = frame.page.elements[index]
    base = f"https://{spec.domain}"
    slug = quote_plus(el.label.lower().replace(" ", "-"))
    if el.kind in ("link", "card"):
        kind = NEXT_KIND[frame.page.kind]
        title = el.label if kind == "detail" else f"{spec.site} - {el.label}"
        url = f"{base}/" if frame.page.kind == "search" else f"{base}/{kind}/{slug}"
        return _site_page(spec, kind, url, title, rng, about=el.label)
    if el.kind == "button" and el.label in ("Search", "Next page", "Price", "Rating", "Sort by"):
        query = quote_plus(frame.text_of(_input_index(frame.page)) or spec.query)
        return _site_page(
            spec, "list", f"{base}/search?q={query}&sort={slug}", f"Results for {spec.query}", rng
        )
    return None


def _search(spec: TaskSpec, query: str, *, on_site: bool, rng: np.random.Generator) -> Page:
    """Results of a query: the site's own search, or the search engine's."""
    if on_site:
        url = f"https://{spec.domain}/search?q={quote_plus(query)}"
        return _site_page(spec, "list", url, f"Results for {query}", rng)
    url = f"https://www.bing.com/search?q={quote_plus(query)}"
    return _site_page(spec, "search", url, f"{query} - Search", rng)


@dataclass
class Ctx:
    """What an action sees: the task, the browser, the frame (screenshot) it acts on and
    the visible inputs and click targets of that frame."""

    spec: TaskSpec
    browser: Browser
    frame: Frame
    inputs: list[int]
    targets: list[int]
    rng: np.random.Generator
    aim: str = ""
    """The result the agent is heading for (the task's item, or a wrong one)."""

    def step(self, name: str, args: dict, thoughts: str, label: str = "") -> Step:
        return Step(name, args, thoughts, self.frame.page.url, label)


def _act(
    spec: TaskSpec, browser: Browser, first: bool, rng: np.random.Generator, aim: str = ""
) -> Step:
    """Choose and perform one non-final action; coordinates come from the visible frame."""
    frame = browser.frame
    inputs, targets = frame.visible(("input",)), frame.visible(CLICK_TARGETS)
    ctx = Ctx(spec, browser, frame, inputs, targets, rng, aim)
    if first and ctx.inputs:
        return _do_type(ctx)
    weights = {
        "left_click": 5.0 * bool(ctx.targets),
        "type": 1.2 * bool(ctx.inputs),
        "scroll": 1.6,
        "mouse_move": 0.5 * bool(ctx.targets),
        "key": 0.4,
        "wait": 0.4,
        "pause_and_memorize_fact": 0.6,
        "visit_url": 0.3,
        "web_search": 0.3,
        "history_back": 0.5 * bool(browser.history),
    }
    p = np.array(list(weights.values()))
    name = list(weights)[int(rng.choice(len(p), p=p / p.sum()))]
    return ACTIONS[name](ctx)


def _input_index(page: Page) -> int:
    """The page's search box (every layout has one, below the site header)."""
    return next(i for i, el in enumerate(page.elements) if el.kind == "input")


def _do_click(c: Ctx) -> Step:
    """Click a visible target; usually the result the agent is heading for, when shown."""
    labels = c.frame.page.elements
    wanted = [i for i in c.targets if c.aim and labels[i].label.endswith(c.aim)]
    results = [i for i in c.targets if labels[i].label.endswith(c.spec.items)]
    if wanted and c.rng.random() < 0.8:
        i = wanted[0]
    elif results and c.rng.random() < 0.7:
        i = int(c.rng.choice(results))
    else:
        i = int(c.rng.choice(c.targets))
    point = c.frame.point_in(i, c.rng)
    page = _follow(c.spec, c.frame, i, c.rng)
    if page is not None:
        c.browser.goto(page)
    label = c.frame.page.elements[i].label
    return c.step(
        "left_click", {"coordinate": point}, f"I will click '{label}' to get closer.", label
    )


def _do_type(c: Ctx) -> Step:
    i = int(c.rng.choice(c.inputs))
    point = c.frame.point_in(i, c.rng)
    existing = c.frame.text_of(i)
    # retyping the text already there would leave the page unchanged: refine it instead
    replace = bool(existing) and existing != c.spec.query and c.rng.random() < 0.5
    text = f" {pick(c.rng, MODELS).lower()}" if existing and not replace else c.spec.query
    enter = bool(c.rng.random() < 0.7)
    c.browser.type_into(i, text, replace_text=replace)
    if enter:
        query = c.browser.frame.text_of(i).strip()
        page = _search(c.spec, query, on_site=c.frame.page.kind != "search", rng=c.rng)
        c.browser.goto(page, typed=((_input_index(page), query),))
    args = {
        "text": text,
        "coordinate": point,
        "press_enter": enter,
        "delete_existing_text": replace,
    }
    return c.step("type", args, f"I'll type '{text.strip()}' into the search box.")


def _do_scroll(c: Ctx) -> Step:
    down = c.frame.scroll == 0 or c.rng.random() < 0.75
    pixels = -int(c.rng.choice([300, 400, 500, 600])) if down else int(c.rng.choice([200, 300]))
    c.browser.scroll_by(pixels)
    args = {"coordinate": [SCREEN_W // 2, SCREEN_H // 2], "pixels": pixels}
    return c.step("scroll", args, "Scrolling down for more." if down else "Scrolling back up.")


def _do_mouse_move(c: Ctx) -> Step:
    i = int(c.rng.choice(c.targets))
    label = c.frame.page.elements[i].label
    thoughts = f"Hovering over '{label}' to reveal more options."
    return c.step("mouse_move", {"coordinate": c.frame.point_in(i, c.rng)}, thoughts, label)


def _do_key(c: Ctx) -> Step:
    keys = [["PageDown"], ["Escape"], ["Tab"]][int(c.rng.integers(3))]
    if keys == ["PageDown"]:
        c.browser.scroll_by(-int(VIEW_H * 0.8))
    return c.step("key", {"keys": keys}, f"Pressing {'+'.join(keys)}.")


def _do_wait(c: Ctx) -> Step:
    seconds = int(c.rng.choice([1, 2, 3, 5]))
    return c.step("wait", {"time": seconds}, "The page is still loading; I'll wait.")


def _do_memorize(c: Ctx) -> Step:
    fact = f"{c.spec.target}: {c.spec.detail_name} {c.spec.value}"
    return c.step("pause_and_memorize_fact", {"fact": fact}, "Noting this for the final answer.")


def _do_visit(c: Ctx) -> Step:
    url = f"https://{c.spec.domain}/"
    c.browser.goto(_site_page(c.spec, "home", url, f"{c.spec.site} - Official Site", c.rng))
    return c.step("visit_url", {"url": url}, f"I'll go directly to {c.spec.site}.")


def _do_search(c: Ctx) -> Step:
    query = f"{c.spec.site} {c.spec.query}"
    page = _search(c.spec, query, on_site=False, rng=c.rng)
    c.browser.goto(page, typed=((_input_index(page), query),))
    return c.step("web_search", {"query": query}, "A web search should find the right page.")


def _do_back(c: Ctx) -> Step:
    c.browser.back()
    return c.step("history_back", {}, "This page is not what I need; going back.")


ACTIONS: dict[str, Callable[[Ctx], Step]] = {
    "left_click": _do_click,
    "type": _do_type,
    "scroll": _do_scroll,
    "mouse_move": _do_mouse_move,
    "key": _do_key,
    "wait": _do_wait,
    "pause_and_memorize_fact": _do_memorize,
    "visit_url": _do_visit,
    "web_search": _do_search,
    "history_back": _do_back,
}
"""Fara-7B tools the simulated agent uses (terminate is added at the end of a run)."""


def simulate(
    spec: TaskSpec,
    init_url: str,
    n_actions: int,
    answer: str | None,
    rng: np.random.Generator,
    aim: str = "",
) -> Run:
    """Play an agent run on simulated pages; `terminate` with `answer` ends it (None: aborted).

    The answer is written beforehand by `lib.mirror.text` from the task's story, so the log's
    last thoughts, the final_answer column and the reviewers' comments tell one story.
    """
    browser = Browser(_start_page(spec, init_url, rng))
    frames, steps = [browser.frame], []
    for k in range(n_actions):
        if k == n_actions - 1 and answer is not None:
            status = "failure" if answer.startswith("I could not") else "success"
            steps.append(Step("terminate", {"status": status}, answer, browser.frame.page.url))
        else:
            steps.append(_act(spec, browser, k == 0, rng, aim))
        frames.append(browser.frame)
    return Run(steps, frames, NO_ANSWER if answer is None else answer)

"""Parse an agent's ``web_surfer_log`` (JSON Lines) into steps aligned with screenshots.

The log is messy in practice: empty, partly non-JSON, ``arguments`` stored as a JSON
string, coordinates in several shapes, tool names from older agents. The viewer must
still show *something* for every trajectory, so nothing here raises on bad input:
problems are recorded on the step (``Step.problems``) or on the log
(``ParsedLog.bad_lines``) and shown to the user instead.

No Streamlit here: the module is pure and unit-tested.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pandas as pd

from lib.json_bounds import refusal
from lib.vocab import SCREEN

WRAPPER_ACTION = "computer_use"
"""Line-level ``action`` of the ``internal`` split: the real tool is in ``arguments``."""

FARA_TOOLS: tuple[str, ...] = (
    "left_click",
    "mouse_move",
    "type",
    "key",
    "scroll",
    "visit_url",
    "web_search",
    "history_back",
    "pause_and_memorize_fact",
    "wait",
    "terminate",
)
"""The Fara-7B tool vocabulary (canonical names)."""

ALIASES: dict[str, str] = {
    "click": "left_click",
    "input_text": "type",
    "hover": "mouse_move",
    "keypress": "key",
    "sleep": "wait",
    "stop": "terminate",
}
"""Older tool names seen in logs, mapped to the canonical Fara-7B name."""

UNKNOWN_TOOL = "(none)"
"""Tool name of an action line that names no tool at all."""

# Tools that make no sense without a point on the screen.
_NEEDS_COORDINATE = frozenset({"left_click", "mouse_move"})
# What a well-formed argument key looks like.
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")

LINE_MAX_CHARS = 1_000_000
"""Characters one log line may have to be parsed (real lines are a few kB: the agent's
thoughts). A longer line is skipped as unparsable, like a line that is not JSON: decoding
it would cost its size in Python objects for every view of the trajectory."""
DEPTH_MAX = 32
"""Nesting depth of objects and arrays one line (or its ``arguments`` string) may reach.
Real lines are 3 deep (line -> arguments -> coordinate). Python's decoder recurses per
level: a line 100,000 deep raised ``RecursionError`` (not a ``ValueError``), which escaped
the parser and broke the page for every trajectory, so depth is checked before decoding."""


@dataclass
class Step:
    """One agent action, as read from one log line.

    ``index`` is the 0-based position of the action among all actions of the log; the
    action was taken on screenshot ``index`` (see :func:`align`). ``arguments`` holds
    the logged arguments without ``thoughts`` and ``action`` (those are ``thoughts``
    and ``raw_tool``), with malformed keys repaired.
    """

    index: int
    tool: str
    raw_tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    thoughts: str = ""
    url: str = ""
    timestamp: str = ""
    coordinate: tuple[int, int] | None = None
    text: str | None = None
    keys: list[str] | None = None
    scroll_pixels: int | None = None
    message: str = ""
    problems: list[str] = field(default_factory=list)
    url_source: str = ""
    """Where ``url`` came from: "log" (the line), "argument" (visit_url), "tracked"
    (the last URL known from an earlier step: a guess, as clicks may navigate) or ""."""

    @property
    def press_enter(self) -> bool:
        """Whether a ``type`` action pressed Enter after typing."""
        return _truthy(self.arguments.get("press_enter"))

    @property
    def delete_existing_text(self) -> bool:
        """Whether a ``type`` action cleared the field before typing."""
        return _truthy(self.arguments.get("delete_existing_text"))

    @property
    def is_alias(self) -> bool:
        """True when the log used an older name for the tool."""
        return self.tool != self.raw_tool.strip()


@dataclass
class ParsedLog:
    """All actions of one log, plus the lines that could not be read as actions."""

    steps: list[Step] = field(default_factory=list)
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    """(1-based line number, reason) for every non-blank line that is not an action."""

    @property
    def n_actions(self) -> int:
        """Number of actions (steps) in the log."""
        return len(self.steps)

    @property
    def is_empty(self) -> bool:
        """True when the log holds no action at all."""
        return not self.steps

    @property
    def n_problems(self) -> int:
        """Bad lines plus problems flagged on steps: one number for a warning badge."""
        return len(self.bad_lines) + sum(len(s.problems) for s in self.steps)

    def step(self, index: int) -> Step | None:
        """The action with this 0-based index, or None if out of range."""
        return self.steps[index] if 0 <= index < len(self.steps) else None

    def tool_counts(self) -> dict[str, int]:
        """How often each canonical tool was used, most used first."""
        return dict(Counter(s.tool for s in self.steps).most_common())

    def terminate_status(self) -> str | None:
        """The ``status`` of the last ``terminate`` action, or None if the agent never stopped."""
        for s in reversed(self.steps):
            if s.tool == "terminate":
                return str(s.arguments.get("status", "")).strip()
        return None


@dataclass(frozen=True)
class StepView:
    """One position of the trajectory viewer: a screenshot, an action, or both.

    ``action`` was taken on the page that ``screenshot_index`` shows. Either may be
    None (log-only trajectories, missing screenshots, the final result screenshot).
    """

    position: int
    screenshot_index: int | None
    action: Step | None


# ---------------------------------------------------------------------------
# Parsing


def parse_log(text: str | None) -> ParsedLog:
    """Parse a ``web_surfer_log`` string into actions; never raises on bad content.

    Each non-blank line is one JSON object. A line becomes an action (``Step``) when
    it is an object that carries ``arguments`` or an ``action``; other lines are
    recorded in ``bad_lines`` with the reason, so that the user sees what was skipped.
    An action line that names no tool is kept (tool ``"(none)"``) rather than
    dropped: it still consumed a screenshot, and dropping it would shift the
    alignment of every later action.
    """
    parsed = ParsedLog()
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str) or not text:
        # None, "" and pandas' NaN for a missing cell all mean "no log".
        return parsed
    tracked_url = ""
    # Split on "\n" only: str.splitlines() would also cut at U+2028 or U+0085, which
    # may appear raw inside a JSON string (e.g. in the agent's thoughts).
    for line_no, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record, reason = _load_record(line)
            step = None if record is None else _make_step(record, len(parsed.steps), tracked_url)
        except Exception as exc:  # RecursionError, MemoryError, ...: this line only
            # The checks above should make this unreachable; if a line still defeats them
            # it is one bad line, never a failed log (or page).
            step, reason = None, f"could not be read ({type(exc).__name__})"
        if step is None:
            parsed.bad_lines.append((line_no, reason))
            continue
        parsed.steps.append(step)
        tracked_url = _next_tracked_url(step, tracked_url)
    return parsed


def _too_big(text: str) -> str:
    """Why a JSON text is refused before decoding ("" when it is within the bounds)."""
    return refusal(text, LINE_MAX_CHARS, DEPTH_MAX)


def _load_record(line: str) -> tuple[dict[str, Any] | None, str]:
    """Decode one line; return (object, "") or (None, why it is not an action)."""
    refused = _too_big(line)
    if refused:
        return None, refused
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, f"not JSON: {exc.msg}"
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        return None, f"not JSON: {str(exc)[:80]}"
    if not isinstance(record, dict):
        return None, f"JSON {type(record).__name__}, not an object"
    if "arguments" not in record and not record.get("action"):
        return None, "no action or arguments"
    return record, ""


def _make_step(record: dict[str, Any], index: int, tracked_url: str) -> Step:
    """Build a Step from one decoded log line."""
    problems: list[str] = []
    args = _clean_keys(_load_arguments(record.get("arguments"), problems), problems)
    raw_tool = _raw_tool(record, args)
    tool = canonical_tool(raw_tool) if raw_tool else UNKNOWN_TOOL
    if not raw_tool:
        problems.append("no tool name")
    thoughts = args.pop("thoughts", "")
    step = Step(
        index=index,
        tool=tool,
        raw_tool=raw_tool,
        arguments=args,
        thoughts=_as_text(thoughts),
        timestamp=_as_text(record.get("timestamp")),
        message=_as_text(record.get("message")),
        problems=problems,
    )
    _fill_action_fields(step)
    step.url, step.url_source = _step_url(record, step, tracked_url)
    return step


def _load_arguments(raw: Any, problems: list[str]) -> dict[str, Any]:
    """``arguments`` as a dict: accepts an object or a JSON string holding one."""
    if raw is None:
        return {}
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        refused = _too_big(raw)
        if refused:
            problems.append(f"arguments: string {refused}")
            return {}
        try:
            raw = json.loads(raw)
        except ValueError:
            problems.append("arguments: string that is not JSON")
            return {}
    if not isinstance(raw, dict):
        problems.append(f"arguments: {type(raw).__name__}, not an object")
        return {}
    return dict(raw)


def _clean_keys(args: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    """Repair keys with stray whitespace or quotes; flag keys that stay odd.

    Logs occasionally carry keys such as ``"coordinate "`` or ``'"text'``: reading them
    under their clean name keeps the action usable, and the flag keeps it honest.
    """
    clean: dict[str, Any] = {}
    for key, value in args.items():
        name = str(key).strip().strip("\"'").strip()
        if name != key:
            problems.append(f"malformed key {key!r} read as {name!r}")
        elif not _IDENTIFIER.match(name):
            problems.append(f"malformed key {key!r}")
        # A clean key wins over a repaired duplicate.
        if name not in clean or name == key:
            clean[name] = value
    return clean


def _raw_tool(record: dict[str, Any], args: dict[str, Any]) -> str:
    """The tool name as logged: ``arguments.action``, else the line's own ``action``."""
    name = args.pop("action", None)
    if isinstance(name, str) and name.strip():
        return name.strip()
    line_action = record.get("action")
    if isinstance(line_action, str) and line_action.strip() not in ("", WRAPPER_ACTION):
        return line_action.strip()
    return ""


def canonical_tool(raw: str) -> str:
    """Canonical Fara-7B name for a logged tool name; unknown names are kept as given."""
    key = raw.strip().lower()
    if key in ALIASES:
        return ALIASES[key]
    if key in FARA_TOOLS:
        return key
    return raw.strip()


def _fill_action_fields(step: Step) -> None:
    """Read the typed fields (coordinate, text, keys, pixels) out of the arguments."""
    args = step.arguments
    step.coordinate = _read_coordinate(args, step.problems)
    if step.coordinate is None and step.tool in _NEEDS_COORDINATE:
        step.problems.append("missing coordinate")
    if step.tool == "type" or "text" in args:
        step.text = _first_text(args, ("text", "text_value", "value"))
        if step.tool == "type" and step.text is None:
            step.problems.append("type without text")
    if step.tool == "key" or "keys" in args:
        step.keys = _read_keys(args.get("keys", args.get("key")), step.problems)
    if step.tool == "scroll" or "pixels" in args:
        step.scroll_pixels = _read_pixels(args.get("pixels"), step.problems)


def _read_coordinate(args: dict[str, Any], problems: list[str]) -> tuple[int, int] | None:
    """Coordinate from ``coordinate`` (list, "x,y" string, dict) or from ``x``/``y`` keys."""
    if "coordinate" in args:
        raw = args["coordinate"]
    elif "x" in args and "y" in args:
        raw = [args["x"], args["y"]]
    else:
        return None
    point = parse_coordinate(raw)
    if point is None:
        problems.append(f"bad coordinate {_short(raw)}")
        return None
    x, y = point
    if not (0 <= x < SCREEN[0] and 0 <= y < SCREEN[1]):
        problems.append(f"coordinate ({x}, {y}) outside the {SCREEN[0]}x{SCREEN[1]} screen")
    return point


def parse_coordinate(raw: Any) -> tuple[int, int] | None:
    """``[x, y]``, ``(x, y)``, ``"x,y"``, ``"[x, y]"`` or ``{"x":, "y":}`` -> rounded ints.

    Returns None when the value does not hold exactly two finite numbers.
    """
    if isinstance(raw, dict):
        raw = [raw.get("x"), raw.get("y")]
    if isinstance(raw, str):
        raw = _NUMBER.findall(raw)
    if not isinstance(raw, list | tuple) or len(raw) != 2:
        return None
    numbers = [_as_float(v) for v in raw]
    if any(v is None for v in numbers):
        return None
    x, y = (round(v) for v in numbers if v is not None)
    return int(x), int(y)


def _as_float(value: Any) -> float | None:
    """A finite float from a number or numeric string; None otherwise (bools excluded)."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _first_text(args: dict[str, Any], names: tuple[str, ...]) -> str | None:
    """The first of ``names`` present in ``args``, as text."""
    for name in names:
        if name in args and args[name] is not None:
            return _as_text(args[name])
    return None


def _read_keys(raw: Any, problems: list[str]) -> list[str] | None:
    """Key names as a list; a string like ``"Control+L"`` is split and flagged."""
    if raw is None:
        problems.append("key without keys")
        return None
    if isinstance(raw, str):
        try:
            decoded = None if _too_big(raw) else json.loads(raw)
        except ValueError:
            decoded = None
        if isinstance(decoded, list):
            raw = decoded
        else:
            problems.append("keys given as a string")
            parts = [p.strip() for p in raw.split("+")] if "+" in raw.strip("+") else [raw]
            return [p for p in parts if p] or [raw]
    if not isinstance(raw, list | tuple):
        problems.append(f"bad keys {_short(raw)}")
        return [_as_text(raw)]
    return [_as_text(k) for k in raw]


def _read_pixels(raw: Any, problems: list[str]) -> int | None:
    """Scroll amount as an int (positive = up)."""
    if raw is None:
        problems.append("scroll without pixels")
        return None
    number = _as_float(raw)
    if number is None:
        problems.append(f"bad pixels {_short(raw)}")
        return None
    return round(number)


def _step_url(record: dict[str, Any], step: Step, tracked_url: str) -> tuple[str, str]:
    """(url, source) for a step: the line's url, else visit_url's target, else tracked."""
    line_url = record.get("url")
    if isinstance(line_url, str) and line_url.strip():
        return line_url.strip(), "log"
    target = step.arguments.get("url")
    if step.tool == "visit_url" and isinstance(target, str) and target.strip():
        return target.strip(), "argument"
    if tracked_url:
        return tracked_url, "tracked"
    return "", ""


def _next_tracked_url(step: Step, tracked_url: str) -> str:
    """The page URL assumed for the next step.

    The om2w log has no page URL, so we carry the last URL we know. A search or a
    "back" leads to a page we cannot name, so tracking stops there.
    """
    if step.url_source in ("log", "argument"):
        return step.url
    if step.tool in ("web_search", "history_back"):
        return ""
    return tracked_url


def _truthy(value: Any) -> bool:
    """Booleans as logged: true, "true", "yes", 1."""
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1", "y")
    return bool(value)


def _as_text(value: Any) -> str:
    """Any logged value as display text ("" for None)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _short(value: Any, limit: int = 40) -> str:
    """A value for a problem message, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------------
# Alignment


def n_positions(n_actions: int, n_screenshots: int) -> int:
    """Number of viewer positions: ``max(n_screenshots, n_actions, 1)``.

    Screenshot k shows the page before action k+1, i.e. action k (0-based) was taken
    on screenshot k, and a complete trajectory has ``n_actions + 1`` screenshots (the
    last one is the result). Position p pairs screenshot p with action p, so:

    - complete: positions 0..n_actions; the last has a screenshot and no action;
    - no screenshots (log-only): one position per action, every screenshot None;
    - fewer screenshots than actions: later actions have screenshot None;
    - more screenshots than actions + 1: later screenshots have no action;
    - nothing at all: a single empty position, so a viewer always has position 0.

    No position is added that would have neither a screenshot nor an action (except
    that single empty one).
    """
    return max(n_screenshots, n_actions, 1)


def align(parsed: ParsedLog, n_screenshots: int) -> list[StepView]:
    """Pair screenshots with actions, one ``StepView`` per position (rule: ``n_positions``)."""
    n_shots = max(int(n_screenshots or 0), 0)
    total = n_positions(parsed.n_actions, n_shots)
    return [
        StepView(
            position=p,
            screenshot_index=p if p < n_shots else None,
            action=parsed.step(p),
        )
        for p in range(total)
    ]


# ---------------------------------------------------------------------------
# Presentation helpers (plain text and a DataFrame; the page renders them)

STEPS_COLUMNS = ("step", "tool", "summary", "url", "time", "thoughts", "problems")


def steps_table(parsed: ParsedLog, cell_max: int | None = None) -> pd.DataFrame:
    """One row per action, for the "all steps" table; empty log -> empty table.

    `cell_max`: characters a text cell keeps (then "… (N more characters)"), applied while
    the rows are built, so a long log never makes a full-text table first."""

    def cut(text: str) -> str:
        if cell_max is None or len(text) <= cell_max:
            return text
        return text[:cell_max] + f"… ({len(text) - cell_max:,} more characters)"

    rows = [
        {
            "step": s.index,
            "tool": cut(s.tool),
            "summary": cut(describe(s)),
            "url": cut(s.url),
            "time": cut(_clock(s.timestamp)),
            "thoughts": cut(s.thoughts),
            "problems": cut("; ".join(s.problems)),
        }
        for s in parsed.steps
    ]
    table = pd.DataFrame(rows, columns=list(STEPS_COLUMNS))
    return table.astype({"step": "int64"})


def _clock(timestamp: str) -> str:
    """``HH:MM:SS`` of an ISO timestamp (one run fits in a day); raw text otherwise."""
    try:
        return datetime.fromisoformat(timestamp).strftime("%H:%M:%S")
    except ValueError:
        return timestamp


def describe(step: Step | None) -> str:
    """One-line human summary of an action, e.g. ``left_click at (512, 300)``."""
    if step is None:
        return "no action"
    describer = _DESCRIBERS.get(step.tool)
    return describer(step) if describer else _describe_other(step)


def _at(step: Step) -> str:
    """`` at (x, y)`` or "" when the action has no coordinate."""
    return f" at ({step.coordinate[0]}, {step.coordinate[1]})" if step.coordinate else ""


def _quote(text: str | None, limit: int = 60) -> str:
    """Text in double quotes on one line, cut to ``limit`` characters."""
    flat = (text or "").replace("\n", "⏎").replace("\r", "")
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return f'"{flat}"'


def _describe_type(step: Step) -> str:
    clear = " replacing existing text" if step.delete_existing_text else ""
    enter = " + Enter" if step.press_enter else ""
    return f"type {_quote(step.text)}{_at(step)}{clear}{enter}"


def _describe_scroll(step: Step) -> str:
    pixels = step.scroll_pixels
    if pixels is None:
        return f"scroll{_at(step)}"
    direction = "up" if pixels > 0 else "down" if pixels < 0 else "by"
    return f"scroll {direction} {abs(pixels)} px{_at(step)}"


def _describe_wait(step: Step) -> str:
    seconds = step.arguments.get("time", step.arguments.get("duration"))
    return "wait" if seconds is None else f"wait {_as_text(seconds)} s"


def _describe_other(step: Step) -> str:
    """Unknown tools: name plus compact arguments, so nothing is hidden."""
    args = json.dumps(step.arguments, ensure_ascii=False, default=str)
    args = "" if args == "{}" else " " + (args if len(args) <= 80 else args[:79] + "…")
    return f"{step.tool}{args}"


_DESCRIBERS = {
    "left_click": lambda s: f"left_click{_at(s)}",
    "mouse_move": lambda s: f"mouse_move{_at(s)}",
    "type": _describe_type,
    "key": lambda s: f"key {'+'.join(s.keys or []) or '?'}",
    "scroll": _describe_scroll,
    "visit_url": lambda s: f"visit_url {_as_text(s.arguments.get('url')) or '?'}",
    "web_search": lambda s: f"web_search {_quote(_as_text(s.arguments.get('query')))}",
    "history_back": lambda s: "history_back",
    "pause_and_memorize_fact": lambda s: (
        f"memorize {_quote(_as_text(s.arguments.get('fact')), 80)}"
    ),
    "wait": _describe_wait,
    "terminate": lambda s: f"terminate: {_as_text(s.arguments.get('status')) or '?'}",
}

"""Tests for lib.table.trajlog: parsing messy web_surfer_log text
and aligning it with screenshots."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lib.table.trajlog import (
    ALIASES,
    FARA_TOOLS,
    STEPS_COLUMNS,
    UNKNOWN_TOOL,
    ParsedLog,
    align,
    describe,
    n_positions,
    parse_coordinate,
    parse_log,
    steps_table,
)


def om2w_line(tool: str, page_url: str = "", **args: Any) -> str:
    """A line in the fara7b_om2w_browserbase format: action repeated, url empty."""
    return json.dumps(
        {
            "timestamp": "2025-11-10T13:15:12.358963",
            "type": "WebSurferEvent",
            "source": "WebSurfer",
            "message": f"did {tool}",
            "url": page_url,
            "action": tool,
            "arguments": {"action": tool, "thoughts": f"thinking about {tool}", **args},
        }
    )


def internal_line(tool: str, page_url: str, **args: Any) -> str:
    """A line in the internal format: action is the computer_use wrapper, url is the page."""
    return json.dumps(
        {
            "timestamp": "2025-11-10T09:00:01",
            "type": "WebSurferEvent",
            "source": "WebSurfer",
            "message": "",
            "url": page_url,
            "action": "computer_use",
            "arguments": {"action": tool, "thoughts": "t", **args},
        }
    )


def log_of(*lines: str) -> str:
    return "\n".join(lines)


def one_step(line: str):
    parsed = parse_log(line)
    assert parsed.bad_lines == []
    assert len(parsed.steps) == 1
    return parsed.steps[0]


# ---------------------------------------------------------------------------
# The two formats


def test_om2w_format_reads_fields_and_tracks_url_from_visit_url() -> None:
    parsed = parse_log(
        log_of(
            om2w_line("left_click", coordinate=[10, 20]),
            om2w_line("visit_url", url="https://shop.example/a"),
            om2w_line("left_click", coordinate=[512, 300]),
            om2w_line("web_search", query="red shoes"),
            om2w_line("scroll", coordinate=[700, 450], pixels=-300),
        )
    )
    assert [s.tool for s in parsed.steps] == [
        "left_click",
        "visit_url",
        "left_click",
        "web_search",
        "scroll",
    ]
    assert [s.index for s in parsed.steps] == [0, 1, 2, 3, 4]
    first, visit, click, search, scroll = parsed.steps
    # Before any visit_url the page is unknown; after it, the URL is carried as a guess.
    assert (first.url, first.url_source) == ("", "")
    assert (visit.url, visit.url_source) == ("https://shop.example/a", "argument")
    assert (click.url, click.url_source) == ("https://shop.example/a", "tracked")
    # A search leads to a page we cannot name: tracking stops.
    assert (search.url, scroll.url) == ("https://shop.example/a", "")
    assert click.coordinate == (512, 300)
    assert click.thoughts == "thinking about left_click"
    assert "thoughts" not in click.arguments and "action" not in click.arguments
    assert click.timestamp == "2025-11-10T13:15:12.358963"
    assert click.message == "did left_click"
    assert scroll.scroll_pixels == -300


def test_internal_format_takes_tool_from_arguments_and_url_from_line() -> None:
    parsed = parse_log(
        log_of(
            internal_line("left_click", "https://a.example/", coordinate=[1, 2]),
            internal_line("type", "https://a.example/form", text="hi", coordinate=[3, 4]),
        )
    )
    assert [s.tool for s in parsed.steps] == ["left_click", "type"]
    assert [s.raw_tool for s in parsed.steps] == ["left_click", "type"]
    assert [(s.url, s.url_source) for s in parsed.steps] == [
        ("https://a.example/", "log"),
        ("https://a.example/form", "log"),
    ]
    assert parsed.steps[1].text == "hi"


# ---------------------------------------------------------------------------
# Tool vocabulary and aliases

FARA_CASES: dict[str, tuple[dict[str, Any], str]] = {
    "left_click": ({"coordinate": [512, 300]}, "left_click at (512, 300)"),
    "mouse_move": ({"coordinate": [5, 6]}, "mouse_move at (5, 6)"),
    "type": (
        {"text": "hello", "coordinate": [700, 120], "press_enter": True},
        'type "hello" at (700, 120) + Enter',
    ),
    "key": ({"keys": ["Control", "L"]}, "key Control+L"),
    "scroll": ({"coordinate": [10, 20], "pixels": 300}, "scroll up 300 px at (10, 20)"),
    "visit_url": ({"url": "https://example.com/x"}, "visit_url https://example.com/x"),
    "web_search": ({"query": "cheap flights"}, 'web_search "cheap flights"'),
    "history_back": ({}, "history_back"),
    "pause_and_memorize_fact": ({"fact": "price is $5"}, 'memorize "price is $5"'),
    "wait": ({"time": 3}, "wait 3 s"),
    "terminate": ({"status": "success"}, "terminate: success"),
}


def test_fara_cases_cover_the_whole_vocabulary() -> None:
    assert set(FARA_CASES) == set(FARA_TOOLS)


@pytest.mark.parametrize("tool", FARA_TOOLS)
def test_every_fara_tool_parses_cleanly_and_is_described(tool: str) -> None:
    args, expected = FARA_CASES[tool]
    step = one_step(om2w_line(tool, **args))
    assert step.tool == tool
    assert step.problems == []
    assert describe(step) == expected


@pytest.mark.parametrize(("alias", "canonical"), sorted(ALIASES.items()))
def test_every_alias_maps_to_its_canonical_tool(alias: str, canonical: str) -> None:
    args, _ = FARA_CASES[canonical]
    step = one_step(om2w_line(alias, **args))
    assert step.tool == canonical
    assert step.raw_tool == alias
    assert step.is_alias
    assert step.problems == []


def test_alias_names_are_matched_case_insensitively() -> None:
    step = one_step(internal_line("Click", "", coordinate=[1, 1]))
    assert (step.tool, step.raw_tool) == ("left_click", "Click")


def test_older_input_text_arguments_still_give_the_text() -> None:
    step = one_step(om2w_line("input_text", text_value="abc", coordinate=[1, 1]))
    assert (step.tool, step.text) == ("type", "abc")


def test_unknown_tool_is_kept_under_its_own_name_with_arguments_in_summary() -> None:
    step = one_step(om2w_line("page_down", amount=2))
    assert step.tool == "page_down"
    assert step.raw_tool == "page_down"
    assert not step.is_alias
    assert describe(step) == 'page_down {"amount": 2}'


# ---------------------------------------------------------------------------
# Robustness


@pytest.mark.parametrize("text", ["", None, "   \n\n  ", float("nan")])
def test_empty_or_missing_log_gives_no_steps_and_no_errors(text: Any) -> None:
    parsed = parse_log(text)
    assert parsed.steps == []
    assert parsed.bad_lines == []
    assert parsed.is_empty
    assert parsed.terminate_status() is None


def test_non_json_and_non_object_lines_are_reported_and_skipped() -> None:
    text = log_of(
        om2w_line("left_click", coordinate=[1, 2]),
        "this is not json {",
        "[1, 2, 3]",
        '"a string"',
        "",
        "42",
        json.dumps({"type": "Note", "message": "no action here"}),
        om2w_line("terminate", status="failure"),
    )
    parsed = parse_log(text)
    assert [s.tool for s in parsed.steps] == ["left_click", "terminate"]
    # Indices stay contiguous: skipped lines are not actions.
    assert [s.index for s in parsed.steps] == [0, 1]
    assert [n for n, _ in parsed.bad_lines] == [2, 3, 4, 6, 7]
    reasons = dict(parsed.bad_lines)
    assert reasons[2].startswith("not JSON")
    assert "list" in reasons[3]
    assert "str" in reasons[4]
    assert "int" in reasons[6]
    assert reasons[7] == "no action or arguments"
    assert parsed.terminate_status() == "failure"


def test_windows_line_endings_are_accepted() -> None:
    parsed = parse_log(om2w_line("history_back") + "\r\n" + om2w_line("wait", time=1) + "\r\n")
    assert [s.tool for s in parsed.steps] == ["history_back", "wait"]
    assert parsed.bad_lines == []


def test_unicode_line_separators_inside_strings_do_not_split_a_line() -> None:
    line = json.dumps(
        {"action": "type", "arguments": {"text": "a\u2028b\x85c", "thoughts": "x\u2029y"}},
        ensure_ascii=False,
    )
    assert "\u2028" in line  # raw, not escaped
    step = one_step(line)
    assert (step.text, step.thoughts) == ("a\u2028b\x85c", "x\u2029y")


def test_arguments_given_as_json_string_are_decoded() -> None:
    arguments = json.dumps({"action": "left_click", "coordinate": [9, 8], "thoughts": "go"})
    line = json.dumps({"action": "computer_use", "url": "https://x.org", "arguments": arguments})
    step = one_step(line)
    assert (step.tool, step.coordinate, step.thoughts) == ("left_click", (9, 8), "go")
    assert step.problems == []


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [("{not json", "not JSON"), ([1, 2], "list, not an object"), (7, "int, not an object")],
)
def test_unreadable_arguments_keep_the_step_and_flag_it(arguments: Any, problem: str) -> None:
    step = one_step(json.dumps({"action": "left_click", "arguments": arguments}))
    assert step.tool == "left_click"
    assert step.arguments == {}
    assert any(problem in p for p in step.problems)


def test_arguments_without_action_fall_back_to_the_line_action() -> None:
    step = one_step(json.dumps({"action": "scroll", "arguments": {"pixels": 100}}))
    assert (step.tool, step.scroll_pixels) == ("scroll", 100)


def test_wrapper_action_is_never_taken_as_the_tool() -> None:
    parsed = parse_log(
        log_of(
            json.dumps({"action": "computer_use", "url": "u", "arguments": {"thoughts": "?"}}),
            internal_line("left_click", "u", coordinate=[1, 1]),
        )
    )
    # The nameless action is kept so that later actions stay on their screenshots.
    assert [s.tool for s in parsed.steps] == [UNKNOWN_TOOL, "left_click"]
    assert "no tool name" in parsed.steps[0].problems
    assert parsed.steps[1].index == 1


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ([512, 300], (512, 300)),
        ((512, 300), (512, 300)),
        ("512,300", (512, 300)),
        (" 512 , 300 ", (512, 300)),
        ("[512, 300]", (512, 300)),
        ("(512.4, 299.6)", (512, 300)),
        ([512.6, 299.4], (513, 299)),
        (["512", "300"], (512, 300)),
        ({"x": 1, "y": 2}, (1, 2)),
        ([1500, -5], (1500, -5)),
        ([1, 2, 3], None),
        ("512", None),
        (["a", 3], None),
        ([True, 3], None),
        ([float("nan"), 3], None),
        (None, None),
        (512, None),
    ],
)
def test_parse_coordinate_shapes(raw: Any, expected: tuple[int, int] | None) -> None:
    assert parse_coordinate(raw) == expected


def test_bad_coordinate_is_dropped_and_flagged() -> None:
    step = one_step(om2w_line("left_click", coordinate="somewhere"))
    assert step.coordinate is None
    assert any(p.startswith("bad coordinate") for p in step.problems)
    assert describe(step) == "left_click"


def test_out_of_screen_coordinate_is_kept_and_flagged() -> None:
    step = one_step(om2w_line("left_click", coordinate=[1440, 100]))
    assert step.coordinate == (1440, 100)
    assert step.problems == ["coordinate (1440, 100) outside the 1440x900 screen"]


def test_click_without_coordinate_is_flagged() -> None:
    step = one_step(om2w_line("left_click"))
    assert step.problems == ["missing coordinate"]


def test_malformed_argument_keys_are_repaired_and_flagged() -> None:
    line = json.dumps({"action": "type", "arguments": {"action": "type", "text ": "x", '"y': 1}})
    step = one_step(line)
    assert step.text == "x"
    assert "y" in step.arguments
    assert len([p for p in step.problems if p.startswith("malformed key")]) == 2


def test_keys_given_as_a_plus_string_are_split_and_flagged() -> None:
    step = one_step(om2w_line("key", keys="Control+L"))
    assert step.keys == ["Control", "L"]
    assert step.problems == ["keys given as a string"]


def test_keys_given_as_a_json_list_string_are_decoded_silently() -> None:
    step = one_step(om2w_line("keypress", keys='["Enter"]'))
    assert (step.tool, step.keys, step.problems) == ("key", ["Enter"], [])


def test_scroll_pixels_from_string_and_bad_pixels_flagged() -> None:
    assert one_step(om2w_line("scroll", pixels="-120")).scroll_pixels == -120
    bad = one_step(om2w_line("scroll", pixels="lots"))
    assert bad.scroll_pixels is None
    assert any(p.startswith("bad pixels") for p in bad.problems)


def test_type_flags_as_strings_and_clearing() -> None:
    step = one_step(om2w_line("type", text="a\nb", press_enter="true", delete_existing_text="yes"))
    assert step.press_enter and step.delete_existing_text
    assert describe(step) == 'type "a⏎b" replacing existing text + Enter'
    no_enter = one_step(om2w_line("type", text="a", press_enter="false"))
    assert not no_enter.press_enter
    assert describe(no_enter) == 'type "a"'


@pytest.mark.parametrize(
    ("pixels", "expected"),
    [(300, "scroll up 300 px"), (-250, "scroll down 250 px"), (0, "scroll by 0 px")],
)
def test_scroll_direction_follows_sign(pixels: int, expected: str) -> None:
    assert describe(one_step(om2w_line("scroll", pixels=pixels))) == expected


def test_describe_cuts_long_text() -> None:
    step = one_step(om2w_line("type", text="x" * 500, coordinate=[1, 1]))
    summary = describe(step)
    assert len(summary) < 100
    assert "…" in summary
    assert describe(None) == "no action"


def test_parsed_log_helpers() -> None:
    parsed = parse_log(
        log_of(
            om2w_line("left_click", coordinate=[1, 1]),
            om2w_line("click", coordinate=[5000, 1]),
            "garbage",
            om2w_line("stop", status="success"),
        )
    )
    assert parsed.n_actions == 3
    assert parsed.tool_counts() == {"left_click": 2, "terminate": 1}
    assert parsed.n_problems == 2  # one bad line + one off-screen coordinate
    assert parsed.step(2) is parsed.steps[2]
    assert parsed.step(3) is None and parsed.step(-1) is None
    assert parsed.terminate_status() == "success"


# ---------------------------------------------------------------------------
# Alignment


def n_step_log(n: int) -> ParsedLog:
    return parse_log(log_of(*(om2w_line("wait", time=i) for i in range(n))))


def pairs(views) -> list[tuple[int | None, int | None]]:
    return [(v.screenshot_index, v.action.index if v.action else None) for v in views]


def test_align_complete_trajectory_ends_on_the_result_screenshot() -> None:
    views = align(n_step_log(3), 4)
    assert [v.position for v in views] == [0, 1, 2, 3]
    assert pairs(views) == [(0, 0), (1, 1), (2, 2), (3, None)]


def test_align_without_screenshots_still_shows_every_action() -> None:
    assert pairs(align(n_step_log(3), 0)) == [(None, 0), (None, 1), (None, 2)]


def test_align_fewer_screenshots_than_actions() -> None:
    assert pairs(align(n_step_log(4), 2)) == [(0, 0), (1, 1), (None, 2), (None, 3)]


def test_align_more_screenshots_than_actions() -> None:
    assert pairs(align(n_step_log(2), 5)) == [(0, 0), (1, 1), (2, None), (3, None), (4, None)]


def test_align_screenshots_without_log() -> None:
    assert pairs(align(parse_log(""), 2)) == [(0, None), (1, None)]


@pytest.mark.parametrize("n_screenshots", [0, -3, None])
def test_align_nothing_at_all_gives_one_empty_position(n_screenshots: Any) -> None:
    assert pairs(align(parse_log(None), n_screenshots)) == [(None, None)]


@pytest.mark.parametrize(
    ("actions", "shots", "expected"), [(0, 0, 1), (3, 0, 3), (3, 4, 4), (5, 2, 5), (1, 9, 9)]
)
def test_n_positions_rule(actions: int, shots: int, expected: int) -> None:
    assert n_positions(actions, shots) == expected


# ---------------------------------------------------------------------------
# Steps table


def test_steps_table_has_one_row_per_action() -> None:
    parsed = parse_log(
        log_of(
            internal_line("left_click", "https://a.example/", coordinate=[512, 300]),
            "junk",
            internal_line("key", "https://a.example/", keys=["Control", "L"]),
        )
    )
    table = steps_table(parsed)
    assert tuple(table.columns) == STEPS_COLUMNS
    assert table["step"].tolist() == [0, 1]
    assert table["tool"].tolist() == ["left_click", "key"]
    assert table["summary"].tolist() == ["left_click at (512, 300)", "key Control+L"]
    assert table["url"].tolist() == ["https://a.example/"] * 2
    assert table["time"].tolist() == ["09:00:01"] * 2
    assert table["thoughts"].tolist() == ["t", "t"]


def test_steps_table_of_empty_log_is_empty_with_columns() -> None:
    table = steps_table(parse_log(""))
    assert table.empty
    assert tuple(table.columns) == STEPS_COLUMNS


def test_steps_table_keeps_unparseable_timestamps_and_lists_problems() -> None:
    line = json.dumps(
        {"timestamp": "yesterday", "action": "click", "arguments": {"coordinate": "x"}}
    )
    row = steps_table(parse_log(line)).iloc[0]
    assert row["time"] == "yesterday"
    assert "bad coordinate" in row["problems"]


def test_line_url_wins_over_visit_url_argument() -> None:
    step = one_step(internal_line("visit_url", "https://old.example/", url="https://new.example/"))
    assert (step.url, step.url_source) == ("https://old.example/", "log")
    assert describe(step) == "visit_url https://new.example/"


# --------------------------------------------------------------------------- bounds (issue 32)


def _decoded_depth(value: Any) -> int:
    """Nesting depth of a decoded JSON value (an independent reference for json_depth)."""
    if isinstance(value, dict):
        return 1 + max((_decoded_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_decoded_depth(v) for v in value), default=0)
    return 0


def test_json_depth_matches_the_decoded_depth() -> None:
    import random

    from lib.json_bounds import json_depth

    rng = random.Random(0)

    def make(depth: int) -> Any:
        if depth == 0:
            return rng.choice([1, "a]b[{", 'x"y{\\', None, 2.5])
        # one branch goes the whole depth, the others stay shallow (no 3**60 values)
        children = [make(depth - 1)] + [make(min(depth - 1, 1)) for _ in range(rng.randint(0, 2))]
        rng.shuffle(children)
        if rng.random() < 0.5:
            return children
        return {f"k{i}[": child for i, child in enumerate(children)}

    for _ in range(300):
        value = make(rng.randint(0, 60))
        text = json.dumps(value)
        want = _decoded_depth(value)
        got = json_depth(text, limit=0)  # limit 0: always the exact scan
        assert got == want, text[:200]
        assert json_depth(text) >= min(want, 32)  # the cheap path is an upper bound


def test_a_line_past_the_depth_or_size_bound_is_one_bad_line() -> None:
    from lib.table.trajlog import DEPTH_MAX, LINE_MAX_CHARS

    good = om2w_line("left_click", coordinate=[10, 20])
    deep = "[" * 100_000 + "]" * 100_000
    long = om2w_line("type", text="x" * (LINE_MAX_CHARS + 1))
    at_bound = "{" + '"a": {' * (DEPTH_MAX - 2) + '"arguments": {"action": "wait"}'
    at_bound += "}" * (DEPTH_MAX - 1)
    parsed = parse_log("\n".join([good, deep, long, good, at_bound]))
    assert [s.tool for s in parsed.steps] == ["left_click", "left_click"]
    assert parsed.bad_lines[0] == (2, f"nested too deeply (more than {DEPTH_MAX} levels)")
    assert parsed.bad_lines[1][0] == 3 and parsed.bad_lines[1][1].startswith("too long")
    # exactly DEPTH_MAX deep is read (it has no action at the top level: a bad line, for
    # that reason and not for its depth)
    assert parsed.bad_lines[2] == (5, "no action or arguments")


def test_deep_arguments_and_keys_strings_are_problems_of_their_step() -> None:
    deep = "[" * 5_000
    line = json.dumps({"action": "key", "arguments": deep})
    keys = om2w_line("key", keys="[" * 5_000 + "]" * 5_000)
    parsed = parse_log(line + "\n" + keys)
    assert parsed.n_actions == 2 and not parsed.bad_lines
    assert any("nested too deeply" in p for p in parsed.steps[0].problems)
    assert "keys given as a string" in parsed.steps[1].problems


def test_a_huge_integer_is_a_bad_line_not_an_error() -> None:
    parsed = parse_log('{"arguments": {"x": ' + "1" * 5_000 + "}}")
    assert parsed.n_actions == 0
    assert parsed.bad_lines[0][1].startswith("not JSON")

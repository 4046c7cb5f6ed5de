"""The report JSON is byte-identical to the one main printed before issue 21's refactor
(one `Bootstrap` value through the signatures, one `Estimate` shape in the records).

The fixtures are `python -m lib.report --data <demo mirror>` (task clusters) and
`... --cluster site --predictions <mirror>/sample_predictions.csv`, printed by the code
before the refactor (6fb1062: issue 19's mirror, whose re-calibrated informed labels
changed `judge_pairs` and `shifts` from 5ac1fff's), with the `source` line (a temporary
path) replaced by `<mirror>`; the refactored code prints the same bytes.
The records changed shape; the JSON is flattened in `lib.report` only, and must not
change. If a later issue changes a number on purpose, regenerate the fixtures with
`python -m tests.regen_fixtures` (the same two commands, `tests.regen_fixtures.FIXTURES`;
it prints the keys that changed), commit them on their own (`FIXTURES: <keys>`) and say
what changed in the README's report section.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests import regen_fixtures as R


def _first_difference(got: Any, want: Any, path: str = "$") -> str | None:
    """Where two JSON documents first differ (for a readable failure), or None."""
    if type(got) is not type(want):
        return f"{path}: {type(got).__name__} != {type(want).__name__}"
    if isinstance(got, dict):
        if list(got) != list(want):
            return f"{path}: keys {list(got)} != {list(want)}"
        for key in got:
            found = _first_difference(got[key], want[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(got, list):
        if len(got) != len(want):
            return f"{path}: length {len(got)} != {len(want)}"
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            found = _first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if got == want else f"{path}: {got!r} != {want!r}"


def _check(text: str, fixture: str) -> None:
    got, want = R.normalised(text), R.frozen(R.FIXTURE_DIR / fixture)
    assert want is not None, f"{fixture} is missing: python -m tests.regen_fixtures"
    if got != want:
        where = _first_difference(json.loads(got), json.loads(want))
        pytest.fail(
            f"the report JSON changed ({where or 'whitespace or order only'}); if on purpose: "
            "python -m tests.regen_fixtures"
        )


def test_default_report_is_byte_identical(report_json: str) -> None:
    _check(report_json, "report_demo_task.json.xz")


def test_site_report_with_predictions_is_byte_identical(mirror_dir: Path) -> None:
    name = "report_demo_site_predictions.json.xz"
    _check(R.report_text(R.FIXTURES[name](mirror_dir)), name)

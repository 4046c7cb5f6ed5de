"""Raw dataset values -> binary labels (1 / 0 / missing) and agreement categories.

The dataset mixes nullable ints (task-level verdicts), label strings (the reviewers'
`Correct` / `Incorrect`) and free agreement strings (`agree`, ...). Every value that is
not a clear 1 or 0 stays missing; values we do not recognise are kept visible as their
own trimmed text so that a page can show them instead of silently dropping them.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import pandas as pd

from lib.vocab import UV_THRESHOLD

POSITIVE_WORDS = frozenset({"correct", "success", "successful", "true", "yes", "1", "pass"})
NEGATIVE_WORDS = frozenset({"incorrect", "failure", "fail", "failed", "false", "no", "0"})

AGREE = "agree"
DISAGREE = "disagree"
NOT_GIVEN = "not given"

"""The Universal Verifier's default process threshold: verdict = rubric score >= 0.8."""


@dataclass(frozen=True)
class Parsed:
    """A normalised label: `label` is 1, 0 or None; `raw` keeps unrecognised text."""

    label: int | None
    raw: str | None = None


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    # numbers.Real also covers numpy scalars (a float32 NaN from `tasks.loc[...]`).
    return isinstance(value, numbers.Real) and math.isnan(value)


def parse_label(value: Any) -> Parsed:
    """Map a label of any form to 1/0/missing.

    Ints and bools are taken as they are (1 = success). Strings are trimmed and matched
    case-insensitively (`Correct`, ` incorrect `, `success`, ...). Empty or null values
    are missing with no raw text; anything else (`partial`, 7) is missing with its raw
    text kept so it can be shown and counted.
    """
    if _is_missing(value):
        return Parsed(None)
    if isinstance(value, bool):
        return Parsed(int(value))
    if isinstance(value, numbers.Real):  # Python and numpy ints / floats
        if value in (0, 1):
            return Parsed(int(value))
        return Parsed(None, str(value))
    text = str(value).strip()
    if not text:
        return Parsed(None)
    lowered = text.lower()
    if lowered in POSITIVE_WORDS:
        return Parsed(1)
    if lowered in NEGATIVE_WORDS:
        return Parsed(0)
    return Parsed(None, text)


def parse_agreement(value: Any) -> str:
    """Map an informed-stage agreement string to `agree`, `disagree`, `not given`, or itself.

    DATASET.md is unsure which values occur besides `agree`; matching is case-insensitive
    and whitespace-trimmed, and an unknown value (e.g. `Partially agree`) is returned
    trimmed, as its own category.
    """
    if _is_missing(value):
        return NOT_GIVEN
    text = str(value).strip()
    lowered = text.lower()
    if not lowered:
        return NOT_GIVEN
    if lowered in {AGREE, "agrees", "agreed", "yes"}:
        return AGREE
    if lowered in {DISAGREE, "disagrees", "disagreed", "no"}:
        return DISAGREE
    return text


def informed_label(agreement: str, shown_verdict: int | None) -> int | None:
    """The label a reviewer holds after seeing the verifier's verdict.

    `agree` means the reviewer now holds the verdict they were shown; `disagree` means
    its opposite. Not given, an unknown category, or a missing shown verdict give no
    label. The blind label plays no part: the informed stage asked only for agreement.
    """
    if shown_verdict is None:
        return None
    if agreement == AGREE:
        return int(shown_verdict)
    if agreement == DISAGREE:
        return 1 - int(shown_verdict)
    return None


def threshold_verdict(score: Any, threshold: float = UV_THRESHOLD) -> int | None:
    """Binary verdict `score >= threshold`; a missing or non-numeric score gives None."""
    if _is_missing(score):
        return None
    try:
        return int(float(score) >= threshold)
    except (TypeError, ValueError):
        return None

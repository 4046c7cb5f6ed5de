"""Bounds checked on a JSON text before it is decoded: its length and its nesting depth.

Why: Python's decoder recurses once per level of nesting, so a line 100,000 levels deep
raises `RecursionError` (not the `ValueError` a parser expects), and a huge text costs
its size many times over in Python objects. Checking first turns both into an ordinary
"unreadable" reason for that one cell or line. No Streamlit; pure and linear.
"""

from __future__ import annotations

import re

import numpy as np

# A JSON string literal (escapes included): brackets inside it nest nothing.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OPENERS = np.frombuffer(b"[{", np.uint8)
_CLOSERS = np.frombuffer(b"]}", np.uint8)


def json_depth(text: str, limit: int = 32) -> int:
    """How deep objects and arrays nest in a JSON text, without decoding it.

    Linear and vectorised (a 1 MB line of brackets takes milliseconds). Brackets inside
    string literals do not count. An upper bound when the text opens at most `limit`
    brackets (it cannot be deeper than that) or when they do not balance.
    """
    opened = text.count("[") + text.count("{")
    if opened <= limit:
        return opened
    codes = np.frombuffer(_JSON_STRING.sub("", text).encode("utf-8", "replace"), np.uint8)
    steps = np.isin(codes, _OPENERS).astype(np.int32) - np.isin(codes, _CLOSERS)
    return int(np.cumsum(steps).max(initial=0))


def refusal(text: str, max_chars: int, max_depth: int) -> str:
    """Why `text` is not decoded ("" when it is within both bounds), in words for a user."""
    if len(text) > max_chars:
        return f"too long ({len(text):,} characters; at most {max_chars:,} are read)"
    if json_depth(text, max_depth) > max_depth:
        return f"nested too deeply (more than {max_depth} levels)"
    return ""


_SEPARATORS = np.frombuffer(b",[{", np.uint8)


def json_values(text: str, limit: int = 100_000) -> int:
    """About how many values a JSON text holds, without decoding it: commas and openers
    outside string literals, plus one. An upper bound when the raw text has at most `limit`
    of them (strings included); linear and vectorised otherwise."""
    raw = text.count(",") + text.count("[") + text.count("{") + 1
    if raw <= limit:
        return raw
    codes = np.frombuffer(_JSON_STRING.sub('""', text).encode("utf-8", "replace"), np.uint8)
    return int(np.isin(codes, _SEPARATORS).sum()) + 1

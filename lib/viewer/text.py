"""Dataset values as display strings (Markdown safety is `ui.safe_text`, the one helper).

Part of `lib.viewer` (see its docstring); no Streamlit.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd


def as_text(value: Any) -> str:
    """A cell as display text: "" for None/NaN/NA, else `str(value)`."""
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return ""
    return str(value)


def truthy(value: Any) -> bool:
    """A dataset flag as bool: missing (None, NA, NaN) is False."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return False
    return bool(value)

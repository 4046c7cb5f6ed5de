"""`tests.helpers.report_memo`: a report section's records are reused only for the same
input by value, and are the records the section computes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from lib import report
from lib.vocab import BOOTSTRAP, Bootstrap
from tests.helpers import report_memo as RM


def test_the_key_is_the_input_by_value(bench) -> None:
    key = RM.bench_key(bench)
    same = replace(bench, verdicts=bench.verdicts.copy(), tasks=bench.tasks.copy())
    assert RM.bench_key(same) == key  # another object, the same cells
    changed = bench.verdicts.copy()
    column = changed.columns.get_loc("label")
    changed.iloc[0, column] = 1 - changed.iloc[0, column]
    assert RM.bench_key(replace(bench, verdicts=changed)) != key  # one cell differs
    assert RM.bench_key(replace(bench, verdicts=bench.verdicts.iloc[1:])) != key


def test_a_reused_section_is_the_computed_one(bench, monkeypatch: pytest.MonkeyPatch) -> None:
    computed = report.SECTIONS["audit"](bench, BOOTSTRAP)
    monkeypatch.setattr(RM, "_MEMO", {})  # this test's own memo
    monkeypatch.setattr(RM, "CALLS", {"computed": 0, "reused": 0})
    RM.memoised(monkeypatch)
    first = report.SECTIONS["audit"](bench, BOOTSTRAP)
    again = report.SECTIONS["audit"](bench, BOOTSTRAP)
    assert first == computed and again == computed
    assert again is not first  # each caller its own copy
    assert RM.CALLS == {"computed": 1, "reused": 1}
    report.SECTIONS["audit"](bench, Bootstrap(unit="site"))  # another bootstrap: computed
    fewer = replace(bench, verdicts=bench.verdicts.iloc[1:])
    report.SECTIONS["audit"](fewer, BOOTSTRAP)  # another input: computed
    assert RM.CALLS == {"computed": 3, "reused": 1}

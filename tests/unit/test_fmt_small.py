"""`ui.fmt` wording fixed in issue 30: a range of cluster counts without the undefined
comparisons' 0, and an interval bound that rounds to zero printed as `0.00`."""

from __future__ import annotations

from lib.metrics import Interval, Value
from ui import fmt


def test_cluster_range_leaves_out_an_undefined_comparison() -> None:
    assert fmt.cluster_count_text([34, 133, 60]) == "34–133 clusters per comparison"
    assert fmt.cluster_count_text([0, 254, 90]) == "90–254 clusters per defined comparison"
    assert fmt.cluster_count_text([0, 254]) == "254 clusters per defined comparison"
    assert fmt.cluster_count_text([0, 0]) == "no clusters"
    assert fmt.cluster_count_text(63) == "63 clusters"


def test_a_bound_that_rounds_to_zero_is_zero_not_plus_minus() -> None:
    text = fmt.signed_diff(Value(-0.06), Interval(-0.13, 0.001))
    assert text == "-0.06 [-0.13, 0.00]"
    assert fmt.signed_diff(Value(0.001), Interval(-0.2, 0.3)) == "±0.00 [-0.20, +0.30]"

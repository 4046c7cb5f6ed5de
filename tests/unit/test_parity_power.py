"""bench/parity_power.py, small: the human-parity verdicts on simulated om2w-like panels
(30 panels, 300 resamples; the benchmark runs 300 panels and 2,000 resamples)."""

from __future__ import annotations

from bench import parity_power as PP
from lib.analysis import parity as P
from lib.vocab import Bootstrap


def test_verdicts_on_simulated_panels() -> None:
    verdicts, rates, kappa = PP.run(30, Bootstrap(n_resamples=300), seed=3)
    assert 0.35 <= kappa <= 0.55  # the panels are om2w-like
    assert PP.share(verdicts["constant"], P.INFERIOR) == 1.0
    assert PP.share(verdicts["copy_panel"], P.SUPERIOR) >= 0.9
    worse = verdicts["worse_015"]
    assert PP.share(worse, P.EQUIVALENT) + PP.share(worse, P.NON_INFERIOR) <= 0.2
    assert PP.share(verdicts["as_good"], P.INFERIOR) <= 0.15
    assert rates["constant"] == 0.0 and rates["copy_panel"] >= 0.9
    assert {what for what, *_ in PP.checks(verdicts)} >= {"constant: inferior"}
    assert "| as_good |" in PP.table(verdicts, rates)

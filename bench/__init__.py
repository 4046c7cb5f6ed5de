"""Benchmarks: `python -m bench.run --quick` (small mirror, < 1 min) or `--full`; `python -m
bench` for the first Agreement render and a trajectory open (server CPU, issue 39)."""

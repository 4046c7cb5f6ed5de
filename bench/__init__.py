"""Benchmarks: `python -m bench.run --quick` (small mirror, < 1 min) or `--full`."""

"""Do the dashboard's intervals cover the truth? Coverage on simulated data with known truth.

    .venv/bin/python -m bench.coverage [--reps 2000] [--resamples 2000] [--seed 1]

Each scenario draws ``--reps`` datasets from a model whose population metrics are known,
computes every interval with the project's own engine (`lib.metrics.batch_intervals`: the
function the Agreement page calls, with the same draws as `bootstrap_intervals`), and
prints, per scenario, resampling unit and metric: the nominal level, the empirical
coverage (share of defined intervals that hold the true value) with its Monte-Carlo
standard error ``sqrt(c (1 - c) / R)``, how many intervals were defined, how many had no
width, and the mean width.

The model: a task's human label is 1 with probability ``prevalence``; the verifier says 1
with probability ``1 - FNR`` on a success and ``FPR`` on a failure. With sites, each site
draws a normal effect ``u`` (s.d. ``site_sd``) and its tasks' error rates are
``expit(logit(rate) + u)`` (a verifier that fails by site). The truth of every metric is
computed from the population's expected 2x2 cell probabilities (averaged over a million
site effects), so kappa's truth is the population kappa, not the mean of sample kappas.

Scenarios (issue 28): independent tasks at n = 100; a low FPR (0.015 with ~65 negatives,
0.02 with ~45: the internal Universal Verifier's situation); tasks clustered 20 sites x 5
and 10 sites x 10 with a site effect (intervals by task and by site); slices of 30 tasks.
``run(...)`` is the function; ``tests/unit/test_metrics_coverage.py`` runs a small version.

The grid (issue 37, `grid`): every proportion's interval at the rates where headline
numbers live (0.005-0.05 and 0.95-0.995) on 30-120 rows (negatives for an FPR, positives
for an FNR), with independent tasks (coverage computed exactly, over every count the
binomial can give) and with 10 sites x (n / 10) tasks and a site effect (logit s.d. 1,
``--grid-reps`` simulated datasets, intervals by site). It prints the coverage at every
point, then the minimum and where it occurs. Every proportion goes through the same
function (`lib.metrics.proportion.proportion_intervals_many`), so the grid runs it on one of them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from lib import metrics as M  # noqa: E402
from lib.metrics.bootstrap import percentile_intervals  # noqa: E402
from lib.metrics.proportion import proportion_intervals_many  # noqa: E402
from lib.vocab import BOOTSTRAP, Bootstrap  # noqa: E402

METRICS = ("kappa", "accuracy", "fpr", "fnr", "precision", "recall", "specificity")


@dataclass(frozen=True)
class Scenario:
    """A data-generating model: ``n_sites`` x ``per_site`` tasks (``n_sites = 0``: tasks are
    independent, ``n_tasks`` of them)."""

    name: str
    n_tasks: int
    prevalence: float
    fpr: float
    fnr: float
    n_sites: int = 0
    per_site: int = 0
    site_sd: float = 0.0

    @property
    def units(self) -> tuple[str, ...]:
        return ("task", "site") if self.n_sites else ("task",)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("independent, n = 100", 100, 0.55, 0.15, 0.15),
    Scenario("low FPR 0.015, ~65 negatives", 200, 0.675, 0.015, 0.10),
    Scenario("low FPR 0.02, ~45 negatives", 150, 0.70, 0.02, 0.10),
    Scenario("20 sites x 5, site effect", 100, 0.55, 0.15, 0.15, 20, 5, 1.0),
    Scenario("10 sites x 10, site effect", 100, 0.55, 0.15, 0.15, 10, 10, 1.0),
    Scenario("slice of 30", 30, 0.55, 0.15, 0.15),
)


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _logit(p: float) -> float:
    return float(np.log(p / (1.0 - p)))


def _site_rates(s: Scenario, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, FNR) of sites with effects ``u`` (the scenario's rates when there are no sites)."""
    if not s.site_sd:
        return np.full(u.shape, s.fpr), np.full(u.shape, s.fnr)
    return _expit(_logit(s.fpr) + u), _expit(_logit(s.fnr) + u)


def truth(s: Scenario) -> dict[str, float]:
    """Every metric of the population: from the expected cells ``[tp, fp, fn, tn]``."""
    u = np.random.default_rng(12345).normal(0.0, s.site_sd, 1_000_000) if s.site_sd else np.zeros(1)
    fpr, fnr = _site_rates(s, u)
    pi = s.prevalence
    cells = np.array(
        [
            pi * (1 - fnr).mean(),
            (1 - pi) * fpr.mean(),
            pi * fnr.mean(),
            (1 - pi) * (1 - fpr).mean(),
        ]
    )
    return {name: float(v) for name, v in M.metric_arrays(cells, METRICS).items()}


def simulate(s: Scenario, reps: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``reps`` datasets: (reps, n) verifier and human labels, and (n,) site of each task."""
    if s.n_sites:
        site = np.repeat(np.arange(s.n_sites), s.per_site)
        u = rng.normal(0.0, s.site_sd, (reps, s.n_sites))[:, site]
    else:
        site = np.arange(s.n_tasks)
        u = np.zeros((reps, s.n_tasks))
    fpr, fnr = _site_rates(s, u)
    ref = (rng.random(u.shape) < s.prevalence).astype(np.float64)
    says_one = np.where(ref == 1, 1 - fnr, fpr)
    pred = (rng.random(u.shape) < says_one).astype(np.float64)
    return np.stack([pred, ref]), site


@dataclass(frozen=True)
class Row:
    """One line of the table: a metric's interval in one scenario and unit."""

    scenario: str
    unit: str
    metric: str
    method: str
    nominal: float
    coverage: float
    mc_error: float
    n_defined: int
    n_zero_width: int
    mean_width: float
    reps: int


def run(
    scenarios: tuple[Scenario, ...] = SCENARIOS,
    reps: int = 2000,
    boot: Bootstrap = BOOTSTRAP,
    seed: int = 1,
) -> list[Row]:
    """Coverage of every metric's interval, per scenario and resampling unit."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in scenarios:
        true = truth(s)
        (pred, ref), site = simulate(s, reps, rng)
        for unit in s.units:
            clusters = site if unit == "site" else np.arange(pred.shape[1])
            per_cluster = [M.cluster_counts(pred[i], ref[i], clusters)[1] for i in range(reps)]
            intervals = M.batch_intervals(per_cluster, METRICS, replace(boot, unit=unit))
            old = percentile_fpr(per_cluster, boot)
            for name in (*METRICS, OLD_FPR):
                if name == OLD_FPR:
                    ivs = [iv for iv in old if iv.defined]
                else:
                    ivs = [iv[name] for iv in intervals if iv[name].defined]
                metric = "fpr" if name == OLD_FPR else name
                method = "percentile (before)" if name == OLD_FPR else ivs[0].method
                where = (s.name, unit, metric, method, boot.level)
                ends = [iv.low for iv in ivs], [iv.high for iv in ivs]
                rows.append(_row(where, *ends, true[metric], reps))
    return rows


def _row(
    where: tuple[str, str, str, str, float],
    lows: list[float],
    highs: list[float],
    truth: float,
    reps: int,
) -> Row:
    """The table's line for the defined intervals [lows, highs] of `reps` datasets whose
    true value is `truth`; `where` is (scenario, unit, metric, method, nominal level)."""
    low, high = np.array(lows, dtype=float), np.array(highs, dtype=float)
    n = len(low)
    hit = (low <= truth + 1e-12) & (truth - 1e-12 <= high)
    c = float(hit.mean()) if n else float("nan")
    mc_error = float(np.sqrt(c * (1 - c) / n)) if n else float("nan")
    width = float((high - low).mean()) if n else float("nan")
    return Row(*where, c, mc_error, n, int(((high - low) < 1e-12).sum()), width, reps)


@dataclass(frozen=True)
class CorrectedScenario:
    """Rogan-Gladen corrected success (`lib.analysis.corrected_success`): ``n_labelled``
    tasks with a human label (the calibration) and ``n_unlabelled`` judged by the verifier
    only; the truth is the prevalence."""

    name: str
    n_labelled: int
    n_unlabelled: int
    prevalence: float
    fpr: float
    fnr: float


CORRECTED: tuple[CorrectedScenario, ...] = (
    CorrectedScenario("corrected: 100 labelled + 300 unlabelled", 100, 300, 0.45, 0.20, 0.15),
    CorrectedScenario("corrected: 260 labelled (as here)", 260, 0, 0.48, 0.10, 0.15),
)


def corrected_rows(
    scenarios: tuple[CorrectedScenario, ...] = CORRECTED,
    reps: int = 2000,
    boot: Bootstrap = BOOTSTRAP,
    seed: int = 1,
) -> list[Row]:
    """Coverage of the corrected success rate's interval (task bootstrap)."""
    from lib.analysis.corrected_success import corrected_rate

    rng = np.random.default_rng(seed)
    rows = []
    for s in scenarios:
        n = s.n_labelled + s.n_unlabelled
        lows, highs = [], []
        for _ in range(reps):
            truth = (rng.random(n) < s.prevalence).astype(float)
            flip = np.where(truth == 1, rng.random(n) < s.fnr, rng.random(n) < s.fpr)
            pred = np.where(flip, 1 - truth, truth)
            ref = truth.copy()
            ref[s.n_labelled :] = np.nan
            ci = corrected_rate(pred, ref, np.arange(n), boot)["corrected"].ci
            if ci is not None and ci.defined:
                lows.append(ci.low)
                highs.append(ci.high)
        where = (s.name, "task", "corrected success", "percentile (Rogan-Gladen)", boot.level)
        rows.append(_row(where, lows, highs, s.prevalence, reps))
    return rows


OLD_FPR = "fpr (percentile)"
"""The FPR's percentile interval, the method before issue 28, printed beside the current
one."""


def percentile_fpr(per_cluster: list[np.ndarray], boot: Bootstrap) -> list[M.Interval]:
    """The FPR's cluster-bootstrap percentile interval of every dataset (the old method):
    the engine's draws (`lib.metrics.bootstrap.resample_metrics`) and `percentile_intervals`,
    in batches of datasets with the same number of clusters."""
    by_k: dict[int, list[int]] = defaultdict(list)
    for i, counts in enumerate(per_cluster):
        by_k[counts.shape[0]].append(i)
    out: list[M.Interval] = [M.Interval(None, None, "fewer than 2 clusters")] * len(per_cluster)
    for k, members in by_k.items():
        if k < 2:
            continue
        for start in range(0, len(members), M.BATCH_COMPARISONS):
            chunk = members[start : start + M.BATCH_COMPARISONS]
            stacked = np.hstack([per_cluster[i] for i in chunk])
            draws = M.resample_metrics(stacked, boot.n_resamples, boot.seed)
            counts = draws.reshape(boot.n_resamples, len(chunk), 4)
            fpr = M.metric_arrays(counts, ["fpr"])["fpr"]
            for j, iv in zip(chunk, percentile_intervals(fpr, boot.level), strict=True):
                out[j] = iv
    return out


GRID_RATES = (0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.95, 0.97, 0.98, 0.985, 0.99, 0.995)
GRID_N = (30, 40, 50, 60, 70, 80, 90, 100, 110, 120)
GRID_DESIGNS = ("independent", "10 sites, site effect")


@dataclass(frozen=True)
class GridPoint:
    design: str
    rate: float
    n: int
    coverage: float
    exact: bool


def _share_counts(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """(..., 4) cells of a proportion ``x / m`` as the FPR: [tp, fp, fn, tn] = [0, x, 0, m - x]."""
    zero = np.zeros_like(x, dtype=np.float64)
    return np.stack([zero, x, zero, m - x], axis=-1).astype(np.float64)


def grid_point_independent(rate: float, n: int, level: float) -> float:
    """Exact coverage on ``n`` independent rows: the sum of the binomial probabilities of
    the counts whose interval (the engine's, one row per cluster) holds ``rate``."""
    from scipy import stats

    per_cluster = []
    for x in range(n + 1):
        rows = np.zeros(n)
        rows[:x] = 1.0
        per_cluster.append(_share_counts(rows, np.ones(n)))
    ivs = proportion_intervals_many(per_cluster, ["fpr"], level)
    hit = np.array([iv["fpr"].low <= rate <= iv["fpr"].high for iv in ivs])
    return float(stats.binom.pmf(np.arange(n + 1), n, rate)[hit].sum())


def grid_point_sites(
    rate: float, n: int, level: float, reps: int, rng: np.random.Generator, sd: float = 1.0
) -> float:
    """Simulated coverage with 10 sites of ``n / 10`` rows, each site's rate
    ``expit(logit(rate) + u)``, u ~ N(0, sd); the truth is the population mean rate."""
    sites = 10
    per_site = n // sites
    u_big = np.random.default_rng(12345).normal(0.0, sd, 1_000_000)
    truth = float(_expit(_logit(rate) + u_big).mean())
    u = rng.normal(0.0, sd, (reps, sites))
    x = rng.binomial(per_site, _expit(_logit(rate) + u)).astype(np.float64)
    counts = _share_counts(x, np.full(x.shape, float(per_site)))
    hits = 0
    for start in range(0, reps, M.BATCH_COMPARISONS):
        chunk = list(counts[start : start + M.BATCH_COMPARISONS])
        for iv in proportion_intervals_many(chunk, ["fpr"], level):
            hits += iv["fpr"].low <= truth + 1e-12 and truth - 1e-12 <= iv["fpr"].high
    return hits / reps


def grid(reps: int = 4000, level: float = 0.95, seed: int = 1) -> list[GridPoint]:
    """Coverage at every point of the grid (module docstring)."""
    rng = np.random.default_rng(seed)
    out = []
    for rate in GRID_RATES:
        for n in GRID_N:
            out.append(
                GridPoint(GRID_DESIGNS[0], rate, n, grid_point_independent(rate, n, level), True)
            )
            cov = grid_point_sites(rate, n, level, reps, rng)
            out.append(GridPoint(GRID_DESIGNS[1], rate, n, cov, False))
    return out


def grid_table(points: list[GridPoint]) -> str:
    """One table per design: a row per rate, a column per n; then the minimum."""
    lines = []
    for design in GRID_DESIGNS:
        mine = [p for p in points if p.design == design]
        ns = sorted({p.n for p in mine})
        lines += [f"\n{design}:\n", "| rate | " + " | ".join(f"n = {n}" for n in ns) + " |"]
        lines.append("|---" * (len(ns) + 1) + "|")
        for rate in sorted({p.rate for p in mine}):
            cells = {p.n: p.coverage for p in mine if p.rate == rate}
            lines.append(f"| {rate:g} | " + " | ".join(f"{cells[n]:.3f}" for n in ns) + " |")
    worst = min(points, key=lambda p: p.coverage)
    lines.append(
        f"\nMinimum coverage over the grid: {worst.coverage:.3f} at rate {worst.rate:g}, "
        f"n = {worst.n}, {worst.design}" + (" (exact)" if worst.exact else " (simulated)")
    )
    for design in GRID_DESIGNS:
        w = min((p for p in points if p.design == design), key=lambda p: p.coverage)
        lines.append(f"  {design}: {w.coverage:.3f} at rate {w.rate:g}, n = {w.n}")
    return "\n".join(lines)


def table(rows: list[Row]) -> str:
    """The rows as a Markdown table (what the README shows)."""
    lines = [
        "| scenario | unit | metric | interval | nominal | coverage ± MC s.e. | defined "
        "| zero width | mean width |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.scenario} | {r.unit} | {r.metric} | {r.method} | {r.nominal:.2f} | "
            f"{r.coverage:.3f} ± {r.mc_error:.3f} | {r.n_defined}/{r.reps} | "
            f"{r.n_zero_width} | {r.mean_width:.3f} |"
        )
    return "\n".join(lines)


SUMMARY = ("kappa", "accuracy", "fpr", "fnr", "precision", "recall", "specificity")


def summary(rows: list[Row]) -> str:
    """One line per scenario and unit, one column per metric: coverage (MC s.e.), and the
    FPR's percentile interval (the method before issue 28) last. The README's table."""
    by_key: dict[tuple[str, str], dict[str, Row]] = defaultdict(dict)
    for r in rows:
        key = r.metric if r.method != "percentile (before)" else OLD_FPR
        by_key[(r.scenario, r.unit)][key] = r
    head = [*SUMMARY, OLD_FPR]
    lines = [
        "| scenario | unit | " + " | ".join(head) + " |",
        "|---|---|" + "---|" * len(head),
    ]
    for (scenario, unit), cells in by_key.items():
        text = [
            f"{cells[m].coverage:.3f} ({cells[m].mc_error:.3f})" if m in cells else "" for m in head
        ]
        lines.append(f"| {scenario} | {unit} | " + " | ".join(text) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="datasets per scenario")
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=1, help="seed of the simulated data")
    parser.add_argument("--quick", action="store_true", help="300 datasets, 500 resamples")
    parser.add_argument("--grid-reps", type=int, default=4000, help="datasets per site point")
    parser.add_argument("--grid-only", action="store_true", help="only the grid (issue 37)")
    args = parser.parse_args(argv)
    if args.quick:
        args.reps, args.resamples, args.grid_reps = 300, 500, 500
    points = grid(args.grid_reps, seed=args.seed)
    print("Coverage of the proportions' 95% intervals over the grid (issue 37):")
    print(grid_table(points))
    if args.grid_only:
        return
    boot = Bootstrap(n_resamples=args.resamples)
    rows = run(SCENARIOS, args.reps, boot, args.seed)
    corrected = corrected_rows(CORRECTED, args.reps, boot, args.seed)
    print(table(rows + corrected))
    print("\nCoverage (Monte-Carlo s.e.) of the nominal 95% intervals:\n")
    print(summary(rows))
    print(
        f"\n{args.reps} datasets per scenario, {args.resamples} resamples (seed {boot.seed}); "
        "coverage over the defined intervals. Proportions: cluster-adjusted Clopper-Pearson; "
        "kappa: percentile bootstrap; the last column is the FPR's percentile interval (before)."
    )
    for r in corrected:
        print(f"{r.scenario}: coverage {r.coverage:.3f} ({r.mc_error:.3f}), target >= 0.93")


if __name__ == "__main__":
    main()

"""`python -m lib.report [--data SOURCE] [--predictions FILE]... [--labels FILE]
[--cluster task|site] [--format json|markdown] [--link]`.

The pages' numbers, headless. Each analysis module contributes one key through a
`report_records(bench, boot)` function (dicts or small dataclasses), the same code path its
page uses.
`--cluster task|site` (default task) is what every interval of every section resamples:
tasks, or websites (om2w) / task families (internal); the JSON header says it (`cluster`)
and each record's bootstrap settings name the unit.
Undefined values are `null` in JSON (`lib.metrics.to_jsonable`, the one JSON cleaner).

`--predictions FILE` (repeatable) loads your verifier outputs exactly as the "Your
verifier" page does (`lib.uploads.predictions`; a `.zip` or JSON Lines of the verifier's own
score files goes through `lib.uploads.score_files`): their verdict rows are added to the bench the
sections see, so your verifiers appear in `agreement`, `judge_pairs`, ... like any other;
the key `predictions` says per file what was used and dropped (dropped rows are also
printed to stderr), and `your_verifier` compares each with the Universal Verifier
(`lib.analysis.your_verifier`). A file rejected as a whole stops the report with exit code 2.

`--link` prints, instead of the report, the query string (`?v=<payload>`,
`lib.uploads.link_codec`) that opens those verdicts in the app on the same data: append it
to any page's address. Exit code 1 when it would be longer than a link may be.

`--labels FILE` reads your labels (the Audit page's "Download my labels",
`lib.uploads.labels`) and adds the "your labels" references (`your_labels`,
`your_process_labels`: your label where given, the final label elsewhere, unsure
excluded): every section that compares against task-level references gains records whose
reference is one of them; the key `labels` says what the file gave and how many tasks of
each split are yours. The keys `audit` (contested tasks and their reasons) and `ceiling`
(the figures with and without them) are always there.

In a notebook, the same numbers as pandas DataFrames, one per section (`tables`):

    >>> from lib import report                                      # doctest: +SKIP
    >>> t = report.tables("microsoft/CUAVerifierBench")  # or a mirror folder, or "demo"
    >>> t["agreement"].query("dimension == 'outcome'")[["split", "verifier", "kappa",
    ...                                                 "kappa_ci_low", "kappa_ci_high"]]
    >>> t["agreement"].attrs["source"], t["agreement"].attrs["cluster"]

Columns are the JSON keys; an interval `x_ci` becomes `x_ci_low` and `x_ci_high`; a
nested object becomes dotted columns (`a.b`); undefined values are NaN. `attrs` says
what the numbers were computed on (source, revision, cluster unit).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pandas as pd

from lib.analysis import (
    agreement,
    audit,
    ceiling,
    corrected_success,
    failure_steps,
    iterations,
    judges,
    parity,
    quadrant,
    scores,
    shifts,
    slices,
    two_pass,
)
from lib.analysis import your_verifier as compare
from lib.analysis.shares import Share
from lib.data import Bench, load_bench
from lib.data.source import ENV_VAR, SourceError, resolve
from lib.metrics import to_jsonable
from lib.table.clusters import CLUSTER_MODES, DEFAULT_CLUSTER_MODE
from lib.table.labels import AGREE, DISAGREE, NOT_GIVEN
from lib.uploads import labels as my_labels
from lib.uploads import predictions, score_files
from lib.vocab import ALL, BOOTSTRAP, HUMAN_REFERENCE, UV_THRESHOLD, UV_VERDICT, Bootstrap


def agreement_json(record: agreement.AgreementRecord) -> dict[str, Any]:
    """An agreement (or band) record as the report's flat object: the counts, every value
    of `agreement.value_keys`, ``kappa_misleads``, ``<metric>_ci`` = [low, high] or null for
    `agreement.ci_keys`, ``reasons`` (`lib.analysis.agreement.reasons`), ``bootstrap``, and a band's
    ``n_pairs`` / ``n_reviewers``. The one place a record's `Estimate`s become keys."""
    out: dict[str, Any] = {}
    for f in fields(record):
        if not f.metadata.get("report", True):
            continue
        value = getattr(record, f.name)
        if f.name == "estimates":
            out |= {key: value[key].value for key in agreement.value_keys()}
        elif f.name == "bootstrap":
            out["reasons"] = agreement.reasons(record)
            out[f.name] = value
        else:
            out[f.name] = value
            if f.name == "kappa_misleads":
                out |= {f"{n}_ci": record.estimates[n].ci for n in agreement.ci_keys()}
    return out


def _agreement_records(bench: Bench, boot: Bootstrap) -> list[dict[str, Any]]:
    return [agreement_json(r) for r in agreement.report_records(bench, boot)]


def judge_pair_json(record: judges.PairRecord) -> dict[str, Any]:
    """A judge pair as the report's flat object: its fields, with ``agreement``,
    ``agreement_ci``, ``kappa``, ``kappa_ci``, ``kappa_reason`` (why kappa is null) and
    ``kappa_ci_reason`` (why its interval is null or has no width) in place of its
    estimates."""
    out: dict[str, Any] = {}
    for f in fields(record):
        value = getattr(record, f.name)
        if f.name != "estimates":
            out[f.name] = value
            continue
        agreement_, kappa = value["agreement"], value["kappa"]
        out |= {"agreement": agreement_.value, "agreement_ci": agreement_.ci}
        out |= {"kappa": kappa.value, "kappa_ci": kappa.ci, "kappa_reason": kappa.reason}
        out["kappa_ci_reason"] = None if kappa.ci is None else kappa.ci.reason  # e.g. no width
    return out


def _judge_records(bench: Bench, boot: Bootstrap) -> list[dict[str, Any]]:
    return [judge_pair_json(r) for r in judges.report_records(bench, boot)]


def _blind_informed_fields(prefix: str, result: shifts.BlindInformed | None) -> dict[str, Any]:
    if result is None:
        keys = ("blind", "informed", "diff", "diff_ci", "n")
        return {f"{prefix}_{k}": None for k in keys}
    return {
        f"{prefix}_blind": result.blind.value,
        f"{prefix}_informed": result.informed.value,
        f"{prefix}_diff": result.diff.value,
        f"{prefix}_diff_ci": result.diff.ci,
        f"{prefix}_n": result.n,
    }


def shift_json(r: shifts.ShiftRecord) -> dict[str, Any]:
    """A shift record as the report's flat object (README, key `shifts`); intervals stay
    `Interval`s until `build_report` converts the whole report (`to_jsonable`)."""
    split, s, inter = r.split, r.shift, r.inter
    f = s.flips
    answers = dict(f.answers)
    known = {AGREE, DISAGREE, NOT_GIVEN}
    return {
        "split": split,
        "dimension": s.dimension,
        "annotator": s.annotator,
        "reviews": f.reviews,
        "eligible": f.eligible,
        "flips": f.flips,
        "flip_rate": f.flip_rate.value,
        "toward_verifier": f.toward_verifier,
        "against_verifier": f.against_verifier,
        "success_to_failure": f.success_to_failure,
        "failure_to_success": f.failure_to_success,
        "stayed_success": f.matrix["success → success"],
        "stayed_failure": f.matrix["failure → failure"],
        "mcnemar_p": f.mcnemar_p.value,
        "kappa_blind": s.kappa.blind.value,
        "kappa_informed": s.kappa.informed.value,
        "kappa_diff": s.kappa.diff.value,
        "kappa_diff_ci": s.kappa.diff.ci,
        "agreement_blind": s.agreement.blind.value,
        "agreement_informed": s.agreement.informed.value,
        "agreement_diff": s.agreement.diff.value,
        "agreement_diff_ci": s.agreement.diff.ci,
        "n_tasks": s.kappa.n_tasks,
        **_blind_informed_fields("inter_reviewer_kappa", inter),
        "n_agree": answers.get(AGREE, 0),
        "n_disagree": answers.get(DISAGREE, 0),
        "n_not_given": answers.get(NOT_GIVEN, 0),
        "n_other": sum(v for k, v in answers.items() if k not in known),
        "answers": answers,
        "agreement_values": dict(f.values),
        "excluded": dict(f.excluded),
        "ci_method": shifts.ci_method(s.kappa),
        "process_verdict_threshold": UV_THRESHOLD,
    }


def your_verifier_json(
    table: pd.DataFrame, rater: str, dimension: str, boot: Bootstrap = BOOTSTRAP
) -> list[dict[str, Any]]:
    """Your verifier against the Universal Verifier (`lib.analysis.your_verifier.compare`), one flat
    object per split and metric of `SplitComparison.diffs`.

    `diff` = yours minus the UV; `diff_low` / `diff_high` its paired-bootstrap interval;
    None where undefined, with the reason in `reasons` (keys `yours`, `baseline_value`,
    `diff`, `diff_ci`).
    """
    out = []
    for comp in compare.compare(table, rater, dimension, boot=boot):
        for name, d in comp.diffs.items():
            reasons = {"yours": d.a.reason, "baseline_value": d.b.reason, "diff": d.diff.reason}
            reasons["diff_ci"] = d.ci.reason
            b = comp.bootstrap
            out.append(
                {
                    "rater": rater,
                    "baseline": UV_VERDICT[dimension],
                    "reference": HUMAN_REFERENCE[dimension],
                    "split": comp.split,
                    "dimension": dimension,
                    "metric": name,
                    "yours": d.a.value,
                    "baseline_value": d.b.value,
                    "diff": d.diff.value,
                    "diff_low": d.ci.low,
                    "diff_high": d.ci.high,
                    "n_paired": comp.n_paired,
                    "n_yours": comp.n_yours,
                    "n_disagree": comp.n_disagree,
                    "reasons": {k: v for k, v in reasons.items() if v},
                    "bootstrap": {"n_resamples": b.n_resamples, "seed": b.seed, "unit": b.unit},
                }
            )
    return out


def _shift_records(bench: Bench, boot: Bootstrap) -> list[dict[str, Any]]:
    return [shift_json(r) for r in shifts.report_records(bench, boot)]


def parity_json(record: parity.ParityRecord) -> dict[str, Any]:
    """A human-parity record as the report's flat object (README, key `parity`): the
    paired kappa difference (verifier minus reviewers, its interval, the margin, the verdict
    and its words) and the alt-test (epsilon, winning rate, advantage probability, passed,
    its power on the panel, each held-out reviewer)."""
    k, alt = record.kappa, record.alt
    d, b = k.diff, k.bootstrap
    reasons = {"verifier_kappa": d.a.reason, "human_kappa": d.b.reason, "kappa_diff": d.diff.reason}
    reasons["kappa_diff_ci"] = d.ci.reason
    reasons["winning_rate"] = alt.winning_rate.reason
    out = {
        "split": k.split,
        "verifier": k.verifier,
        "dimension": k.dimension,
        "verifier_kappa": d.a.value,
        "human_kappa": d.b.value,
        "kappa_diff": d.diff.value,
        "kappa_diff_ci": d.ci,
        "margin": k.margin,
        "verdict": k.verdict,
        "words": k.words,
        "n_pairs": k.n_pairs,
        "n_tasks": k.n_tasks,
        "n_reviewers": k.n_reviewers,
        "n_missing_verifier": k.n_missing_verifier,
        "n_clusters": k.n_clusters,
        "alt_epsilon": alt.epsilon,
        "alt_q_fdr": alt.q_fdr,
        "alt_winning_rate": alt.winning_rate.value,
        "alt_advantage_probability": alt.advantage_probability.value,
        "alt_passed": alt.passed,
        "alt_power": record.alt_power,
        "alt_min_tasks": alt.min_tasks,
        "alt_reviewers": [
            {
                "reviewer": r.reviewer,
                "n_tasks": r.n_tasks,
                "verifier_wins": r.verifier_wins,
                "reviewer_wins": r.reviewer_wins,
                "p_value": r.p_value,
                "rejected": r.rejected,
            }
            for r in alt.duels
        ],
        "reasons": {key: why for key, why in reasons.items() if why},
        "bootstrap": {"n_resamples": b.n_resamples, "seed": b.seed, "unit": b.unit},
    }
    if record.you is not None:  # --labels: only these records carry the keys below
        you = record.you
        out |= {
            "reference": record.reference,
            "your_role": you.role,
            "your_n_labels": you.n_labels,
            "your_n_unsure": you.n_unsure,
            "your_n_used": you.n_used,
        }
    return out


def _parity_records(
    bench: Bench, boot: Bootstrap, labels: pd.DataFrame | None = None
) -> list[dict[str, Any]]:
    return [parity_json(r) for r in parity.report_records(bench, boot, labels)]


def verifier_errors_json(record: shifts.VerifierErrors) -> dict[str, Any]:
    """Table 13 of one split and dimension as the report's flat object (README, key
    `uv_blind_informed`): per metric of `shifts.TABLE13_METRICS` its blind and informed
    value, ``<m>_diff`` (informed - blind) and ``<m>_diff_ci``; ``n`` reviews."""
    out: dict[str, Any] = {
        "split": record.split,
        "dimension": record.dimension,
        "verifier": agreement.UV_VERDICT[record.dimension],
        "process_verdict_threshold": UV_THRESHOLD,
        "n_reviewers": record.n_reviewers,
    }
    reasons: dict[str, str] = {}
    for name, m in record.metrics.items():
        out |= {f"{name}_blind": m.blind.value, f"{name}_informed": m.informed.value}
        out |= {f"{name}_diff": m.diff.value, f"{name}_diff_ci": m.diff.ci}
        for key, est in (("blind", m.blind), ("informed", m.informed), ("diff", m.diff)):
            if est.reason:
                reasons[f"{name}_{key}"] = est.reason
        if m.diff.ci is not None and m.diff.ci.reason:
            reasons[f"{name}_diff_ci"] = m.diff.ci.reason
    first = record.metrics[shifts.TABLE13_METRICS[0]]
    out |= {"n": first.n, "n_tasks": first.n_tasks, "n_clusters": first.n_clusters}
    out["reasons"] = reasons
    out["ci_method"] = shifts.ci_method(first)
    return out


def _verifier_error_records(bench: Bench, boot: Bootstrap) -> list[dict[str, Any]]:
    return [verifier_errors_json(r) for r in shifts.verifier_error_records(bench, boot)]


def _share_fields(prefix: str, s: Share, reasons: dict[str, str]) -> dict[str, Any]:
    """``<prefix>`` (the share), ``<prefix>_ci``, ``<prefix>_n`` and ``<prefix>_missing``."""
    if s.estimate.reason:
        reasons[prefix] = s.estimate.reason
    return {
        prefix: s.estimate.value,
        f"{prefix}_ci": s.estimate.ci,
        f"{prefix}_n": s.n,
        f"{prefix}_missing": s.n_missing,
    }


def _boot_json(b: Bootstrap) -> dict[str, Any]:
    return {"n_resamples": b.n_resamples, "seed": b.seed, "unit": b.unit}


def two_pass_json(result: two_pass.TwoPassResult) -> list[dict[str, Any]]:
    """One split's two passes as flat objects, one per human reference (README, key
    `two_pass`): per metric of `two_pass.METRICS` ``<m>_action_only``, ``<m>_grounded``,
    ``<m>_diff`` (grounded minus action-only) and its paired ``<m>_diff_ci``; ``n`` the
    tasks with both passes and this reference's label. The split's counts (rows per
    status, criteria lowered/raised, verdict flips) and how often the humans failed the
    lowered / raised / unchanged / all tasks (``<group>_human_<dimension>_failed`` with
    ``_ci``, ``_n``, ``_missing``) are the same on every reference of the split."""
    split_fields: dict[str, Any] = {
        "n_both_passes": result.counts[two_pass.BOTH],
        "n_one_pass_recorded": result.counts[two_pass.ONE_PASS],
        "n_incomplete_rubric": result.counts[two_pass.INCOMPLETE],
        "n_no_rubric": result.counts[two_pass.NO_RUBRIC],
        "n_criteria": result.n_criteria,
        "criteria_lowered": result.criteria_lowered,
        "criteria_raised": result.criteria_raised,
        "verdicts_pass_to_fail": result.flips["pass -> fail"],
        "verdicts_fail_to_pass": result.flips["fail -> pass"],
    }
    split_reasons: dict[str, str] = {}
    for f in result.failures:
        split_fields[f"{f.group}_tasks"] = f.n_tasks
        for dimension, s in (("process", f.process), ("outcome", f.outcome)):
            split_fields |= _share_fields(f"{f.group}_human_{dimension}_failed", s, split_reasons)
    out = []
    for reference, dimension in two_pass.REFERENCES:
        found = [c for c in result.comparisons if c.reference == reference]
        record: dict[str, Any] = {
            "split": result.splits[0] if len(result.splits) == 1 else "all",
            "reference": reference,
            "dimension": dimension,
            "process_verdict_threshold": result.threshold,
            "n": found[0].diff.n,
            "n_missing_reference": found[0].n_missing_reference,
            "n_clusters": found[0].diff.n_clusters,
        }
        reasons = dict(split_reasons)
        for c in found:
            d, m = c.diff, c.metric
            record |= {f"{m}_action_only": d.b.value, f"{m}_grounded": d.a.value}
            record |= {f"{m}_diff": d.diff.value, f"{m}_diff_ci": d.ci}
            for key, why in ((f"{m}_diff", d.diff.reason), (f"{m}_diff_ci", d.ci.reason)):
                if why:
                    reasons[key] = why
        record |= split_fields
        record["reasons"] = reasons
        record["bootstrap"] = _boot_json(result.bootstrap)
        out.append(record)
    return out


def _two_pass_records(bench: Bench, boot: Bootstrap) -> list[dict[str, Any]]:
    return [r for result in two_pass.report_records(bench, boot) for r in two_pass_json(result)]


def uploaded_process_outcome_records(
    bench: Bench, score_cells: dict[str, dict], boot: Bootstrap = BOOTSTRAP
) -> list[dict[str, Any]]:
    """The `process_outcome` records of each verifier uploaded as score files: its rows in
    the Universal Verifier's place (`score_files.in_uv_slots`), on the splits it has
    verdicts in; each record with the key `verifier` (its rater id) first, and only its own
    quadrant (`rater` `uv`: the humans' quadrant is the dataset's records)."""
    out = []
    for rater in score_cells:
        table = score_files.in_uv_slots(bench.verdicts, rater)
        splits = sorted(set(bench.verdicts.loc[bench.verdicts["rater"] == rater, "split"]))
        for split in splits:
            # its process verdict as the upload gives it (rubric_is_success, else score >= t)
            result = quadrant.quadrants(table, [split], UV_THRESHOLD, boot, own_labels=True)
            out += [
                {"verifier": rater} | r
                for r in process_outcome_json(result)
                if r["rater"] == quadrant.UV
            ]
    return out


def uploaded_two_pass_records(
    bench: Bench, score_cells: dict[str, dict], boot: Bootstrap = BOOTSTRAP
) -> list[dict[str, Any]]:
    """The `two_pass` records of each verifier uploaded as score files: the same analysis
    on the tasks with their `gpt_eval_json` replaced by that verifier's score files (""
    where it has none), each record with the key `verifier` (the rater id) first. The
    dataset's records have no `verifier` key: they are the Universal Verifier's."""
    out = []
    for rater, cells in score_cells.items():
        tasks = score_files.with_score_files(bench.tasks, cells)
        for result in two_pass.report_records(replace(bench, tasks=tasks), boot):
            out += [{"verifier": rater} | r for r in two_pass_json(result)]
    return out


def process_outcome_json(result: quadrant.QuadrantResult) -> list[dict[str, Any]]:
    """One split's process x outcome quadrants as flat objects, one per (rater, cell)
    (README, key `process_outcome`): ``rater`` `uv` (process = rubric score >=
    ``process_verdict_threshold``) or `humans` (final labels); ``n`` the cell's tasks,
    ``n_rater`` the quadrant's, ``n_excluded`` its tasks missing a verdict; the verifier's
    agreement with the humans inside the cell ``agree_<process|outcome|both>`` with
    ``_ci`` (Clopper-Pearson), ``_n`` and ``_missing``."""
    out = []
    for q in result.quadrants:
        for cell in q.cells:
            reasons: dict[str, str] = {}
            record: dict[str, Any] = {
                "split": result.splits[0] if len(result.splits) == 1 else "all",
                "rater": q.rater,
                "process": cell.process,
                "outcome": cell.outcome,
                "process_verdict_threshold": result.threshold,
                "n": cell.n,
                "n_rater": q.n,
                "n_excluded": q.n_excluded,
            }
            for name in quadrant.AGREEMENTS:
                record |= _share_fields(f"agree_{name}", cell.agreement[name], reasons)
            record["reasons"] = reasons
            record["bootstrap"] = _boot_json(result.bootstrap)
            out.append(record)
    return out


def _process_outcome_records(bench: Bench, boot: Bootstrap) -> list[dict[str, Any]]:
    return [r for res in quadrant.report_records(bench, boot) for r in process_outcome_json(res)]


def score_json(record: scores.ScoreComparison) -> dict[str, Any]:
    """A continuous-score comparison as the report's flat object (key `scores`): Pearson,
    Spearman, mean absolute difference and the three kappas (`lib.analysis.scores`), each
    ``<name>`` with ``<name>_ci``; the counts (``n`` rows with both scores, ``n_missing``
    excluded for a missing score, ``n_labels`` for the label kappa), the thresholds, and
    ``reasons`` for what is undefined."""
    out: dict[str, Any] = {
        "split": record.split,
        "comparison": record.comparison,
        "rater_a": record.rater_a,
        "rater_b": record.rater_b,
        "reference": record.reference,
        "n_rows": record.n_rows,
        "n": record.n,
        "n_missing": record.n_missing,
        "n_labels": record.n_labels,
        "n_pairs": record.n_pairs,
        "n_tasks": record.n_tasks,
        "n_clusters": record.n_clusters,
        "n_clusters_labels": record.n_clusters_labels,
        "verifier_threshold": record.verifier_threshold,
        "human_threshold": record.human_threshold,
    }
    reasons: dict[str, str] = {}
    for name, est in record.estimates.items():
        out |= {name: est.value, f"{name}_ci": est.ci}
        if est.reason:
            reasons[name] = est.reason
        elif est.ci is not None and est.ci.reason:
            reasons[f"{name}_ci"] = est.ci.reason
    b = record.bootstrap
    out["reasons"] = reasons
    out["bootstrap"] = {"n_resamples": b.n_resamples, "seed": b.seed, "unit": b.unit}
    out["ci_method"] = "percentile cluster bootstrap"
    return out


def _score_records(bench: Bench, boot: Bootstrap) -> list[dict[str, Any]]:
    return [score_json(r) for r in scores.report_records(bench, boot)]


def _audit_records(bench: Bench, boot: Bootstrap) -> list[dict[str, Any]]:
    """The key `audit`: every contested task and dimension with its reasons (ids)."""
    table = audit.audit_table(bench.verdicts)
    return [
        {"task_id": t, "split": s, "dimension": d, "reasons": list(r)}
        for s, t, d, r in zip(
            table["split"], table["task_id"], table["dimension"], table["reasons"], strict=True
        )
    ]


def ceiling_json(record: ceiling.CeilingRecord) -> dict[str, Any]:
    """A ceiling record as the report's flat object (key `ceiling`): each figure, its
    ``_ci`` = [low, high] or null, why it is undefined in ``reasons``."""
    b = record.bootstrap
    figures = {
        "reviewer_kappa": record.reviewer_kappa,
        "uv_kappa": record.uv_kappa,
        "parity_kappa_diff": record.parity_diff,
    }
    out: dict[str, Any] = {
        "split": record.split,
        "dimension": record.dimension,
        "variant": record.variant,
        "n_tasks": record.n_tasks,
        "n_excluded": record.n_excluded,
    }
    for name, estimate in figures.items():
        out[name] = estimate.value
        out[f"{name}_ci"] = estimate.ci
    out |= {
        "reviewer_n_pairs": record.reviewer_n_pairs,
        "uv_n": record.uv_n,
        "parity_verdict": record.parity_verdict,
        "parity_words": record.parity_words,
        "n_clusters": record.n_clusters,
        "reasons": {k: e.reason for k, e in figures.items() if e.reason}
        | {f"ci:{k}": e.ci.reason for k, e in figures.items() if e.ci is not None and e.ci.reason},
        "bootstrap": {"n_resamples": b.n_resamples, "seed": b.seed, "unit": b.unit},
    }
    return out


def _ceiling_records(bench: Bench, boot: Bootstrap) -> list[dict[str, Any]]:
    return [ceiling_json(r) for r in ceiling.report_records(bench, boot)]


def corrected_success_json(r: corrected_success.CorrectedSuccess) -> dict[str, Any]:
    """The agent's success rate as a verifier reports it and Rogan-Gladen corrected."""
    ci = r.corrected.ci
    return {
        "verifier": r.verifier,
        "split": r.split,
        "reference": r.reference,
        "reported": r.reported.value,
        "corrected": r.corrected.value,
        "corrected_ci": None if ci is None else ci.bounds,
        "corrected_reason": r.corrected.reason,
        "sensitivity": r.sensitivity.value,
        "specificity": r.specificity.value,
        "reference_rate": r.reference_rate.value,
        "n_judged": r.n_judged,
        "n_calibration": r.n_calibration,
        "bootstrap": _boot_json(r.bootstrap),
    }


def _corrected_success_records(bench: Bench, boot: Bootstrap) -> list[dict[str, Any]]:
    return [
        corrected_success_json(r) for r in corrected_success.report_records(bench.verdicts, boot)
    ]


#: Each section is ``report_records(bench, boot)``: ``boot.unit`` is ``task`` or ``site``.
SECTIONS: dict[str, Callable[[Bench, Bootstrap], Sequence[Any]]] = {
    "agreement": _agreement_records,
    "judge_pairs": _judge_records,
    "shifts": _shift_records,
    "slices": slices.report_records,
    "parity": _parity_records,
    "uv_blind_informed": _verifier_error_records,
    "two_pass": _two_pass_records,
    "process_outcome": _process_outcome_records,
    "scores": _score_records,
    "corrected_success": _corrected_success_records,
    "audit": _audit_records,
    "ceiling": _ceiling_records,
}

WITH_LABELS: dict[str, Callable[[Bench, Bootstrap, pd.DataFrame], Sequence[Any]]] = {
    "parity": _parity_records,
}
"""Sections that also read the labels file itself (``--labels``), not only the "your
labels" reference rows: `parity` adds records with you in the panel and your labels as the
candidate (`lib.analysis.parity`)."""


def load_predictions(
    bench: Bench, paths: Sequence[str | Path], score_cells: dict[str, dict] | None = None
) -> list[predictions.Upload]:
    """Parse each predictions file against the bench (names kept distinct across files).

    `score_cells`, if given, receives rater id -> task id -> score file for the files that
    are score files (`lib.uploads.score_files.ScoreUpload.cells`: the key `failure_steps`).
    Raises PredictionsError (the message names the file) when a file is rejected whole.
    """
    uploads: list[predictions.Upload] = []
    taken: set[str] = set()
    held = 0  # version-runs of the files read so far
    for path in map(Path, paths):
        try:
            predictions.check_size(path.stat().st_size, path.name)  # before reading it
            data = path.read_bytes()
        except OSError as exc:
            raise predictions.PredictionsError(f"cannot read `{path}`: {exc}") from exc
        read = score_files.read_upload([(path.name, data)], bench.tasks, taken, held)
        upload = read.upload
        if score_cells is not None and read.cells and upload.raters:
            score_cells[upload.raters[0]] = read.cells
        taken.update(upload.raters)
        held += predictions.version_runs(upload.history)
        uploads.append(upload)
    return uploads


def load_labels(bench: Bench, path: str | Path | None) -> my_labels.LabelsUpload | None:
    """Read a labels file (`lib.uploads.labels`, the Audit page's "Download my labels")
    against the bench; raises LabelsError when it is refused whole."""
    if path is None:
        return None
    path = Path(path)
    try:
        if path.stat().st_size > my_labels.MAX_BYTES:
            raise my_labels.LabelsError(f"`{path}` is larger than the labels file bound")
        data = path.read_bytes()
    except OSError as exc:
        raise my_labels.LabelsError(f"cannot read `{path}`: {exc}") from exc
    tasks = dict(zip(bench.tasks["task_id"], bench.tasks["split"], strict=True))
    return my_labels.read_labels(data, path.name, tasks)


def _labels_record(
    bench: Bench, labels: my_labels.LabelsUpload, name: str | None = None
) -> dict[str, Any]:
    """The key `labels`: what the file gave and how the "your labels" reference is made."""
    splits = sorted(set(bench.tasks["split"]))
    dropped = labels.dropped.head(MAX_DROPPED_SHOWN)
    return {
        "file": name,
        "n_labels": len(labels.labels),
        "n_dropped": labels.n_dropped,
        "dropped": dropped.to_dict("records"),
        "references": {dim: rater for dim, rater in my_labels.YOUR_LABELS.items()},
        "composition": [
            {"split": split, "dimension": dim}
            | vars(my_labels.reference_counts(labels.labels, bench.verdicts, dim, [split]))
            for split in splits
            for dim in my_labels.DIMENSIONS
        ],
    }


def with_uploads(bench: Bench, uploads: Sequence[predictions.Upload]) -> Bench:
    """A copy of the bench whose verdict table also holds the uploaded verifiers' rows."""
    if not uploads:
        return bench
    table = predictions.with_uploaded(bench.verdicts, [u.verdicts for u in uploads])
    return replace(bench, verdicts=table)


MAX_DROPPED_SHOWN = 20
"""Dropped rows listed one by one (stderr warnings and the report's `dropped` list); the
rest are counted. A 50,000-row bad file must give a report of bounded size."""
MAX_UNKNOWN_SHOWN = 100
"""Unknown task ids listed in the report at most (the rest are counted)."""


def _upload_record(upload: predictions.Upload) -> dict[str, Any]:
    """One uploaded file in the report; long lists are cut (`*_not_listed` counts the rest)."""
    dropped = upload.dropped.head(MAX_DROPPED_SHOWN)
    unknown = upload.unknown_task_ids[:MAX_UNKNOWN_SHOWN]
    return {
        "file": upload.filename,
        "format": upload.file_format,
        "verifiers": upload.raters,
        "n_rows": upload.n_rows,
        "n_used": upload.n_used,
        "n_dropped": len(upload.dropped),
        "dropped": dropped.to_dict("records"),
        "dropped_not_listed": len(upload.dropped) - len(dropped),
        "unknown_task_ids": unknown,
        "unknown_task_ids_not_listed": len(upload.unknown_task_ids) - len(unknown),
        "coverage": upload.coverage.to_dict("records"),
        "notes": upload.notes,
    }


def build_report(
    bench: Bench,
    uploads: Sequence[predictions.Upload] = (),
    boot: Bootstrap = BOOTSTRAP,
    score_cells: dict[str, dict] | None = None,
    labels: my_labels.LabelsUpload | None = None,
    labels_file: str | None = None,
    exclude_flagged: bool = False,
) -> dict[str, Any]:
    """Every available section's records, plus where they were computed.

    ``boot`` is the bootstrap of every interval (``boot.unit``, ``task`` / ``site``, is
    the header's ``cluster``).

    With `uploads`, the sections run on a bench whose verdicts include the uploaded rows,
    and the keys `predictions` and `your_verifier` are added; with `score_cells` (uploaded
    score files, `load_predictions`) the key `failure_steps`
    (`lib.analysis.failure_steps.failure_step_records`). With `labels` (a labels file), the
    sections run on a bench whose verdicts also hold the "your labels" references (records
    whose reference is `your_labels` / `your_process_labels`), `parity` gains the
    records with you in the panel and your labels as the candidate (`WITH_LABELS`), and the
    key `labels` is added. The keys `audit` and `ceiling` always use the dataset's labels.

    With `exclude_flagged`, each uploaded verifier's verdicts on the tasks its own score
    files flag as ambiguous or invalid are left out of every section
    (`lib.analysis.failure_steps.without_flagged`; `failure_steps` pairs leave them out
    too), and the key `excluded_flagged` lists per verifier how many tasks were excluded.
    """
    excluded: list[dict[str, Any]] = []
    if exclude_flagged and score_cells:
        flagged = failure_steps.flagged_tasks(score_cells)
        kept = []
        for upload in uploads:
            rows, counts = failure_steps.without_flagged(upload.verdicts, flagged)
            kept.append(replace(upload, verdicts=rows.reset_index(drop=True)))
            excluded += [{"verifier": r, "n_excluded": n} for r, n in counts.items()]
        uploads = kept
    bench = with_uploads(bench, uploads)
    if labels is not None:
        bench = replace(bench, verdicts=my_labels.with_your_labels(bench.verdicts, labels.labels))
    report: dict[str, Any] = {
        "source": bench.source.describe(),
        "synthetic_demo": bench.source.is_demo,
        "revision": None
        if bench.revision is None
        else {"sha": bench.revision.sha, "date": bench.revision.date},
        "n_tasks": {s: int(n) for s, n in bench.tasks.groupby("split").size().items()},
        "cluster": boot.unit,
    }
    for key, records in SECTIONS.items():
        if labels is not None and key in WITH_LABELS:
            report[key] = WITH_LABELS[key](bench, boot, labels.labels)
        else:
            report[key] = records(bench, boot)
    if labels is not None:
        report["labels"] = _labels_record(bench, labels, labels_file)
    if uploads:
        report["predictions"] = [_upload_record(u) for u in uploads]
        report["your_verifier"] = [
            record
            for upload in uploads
            for rater in upload.raters
            for dimension in compare.dimensions(upload.verdicts, rater)
            for record in your_verifier_json(bench.verdicts, rater, dimension, boot)
        ]
        histories = [u.history for u in uploads if u.history is not None]
        if histories:
            history = pd.concat(histories, ignore_index=True)
            results = iterations.report_results(bench.verdicts, history, boot)
            report |= history_sections(results)
    if score_cells:
        report["two_pass"] = report["two_pass"] + uploaded_two_pass_records(
            bench, score_cells, boot
        )
        report["process_outcome"] = report["process_outcome"] + (
            uploaded_process_outcome_records(bench, score_cells, boot)
        )
        report["failure_steps"] = failure_steps.failure_step_records(
            score_cells, bench.verdicts, exclude_flagged=exclude_flagged
        )
    if exclude_flagged:
        report["excluded_flagged"] = excluded
    return to_jsonable(report)


HISTORY_KEYS = ("iterations", "stability", "version_changes")
"""The report's keys of an uploaded verifier's history (files with `version` / `run`)."""


def _estimate_fields(name: str, estimate: Any) -> dict[str, Any]:
    ci = estimate.ci
    return {name: estimate.value, f"{name}_ci": None if ci is None else ci.bounds}


def iteration_json(record: iterations.VersionRecord, result: iterations.IterationResult) -> dict:
    """One version of `lib.analysis.iterations.iterations`, flat."""
    out: dict[str, Any] = {
        "verifier": record.verifier,
        "version": record.version,
        "order": record.order,
        "split": record.split,
        "dimension": record.dimension,
        "reference": record.reference,
        "committed": record.committed,
        "why_not": record.why_not,
        "compared_with": record.compared_with,
        "n": record.n,
        "n_runs": record.n_runs,
    }
    for name in iterations.METRICS:
        out |= _estimate_fields(name, record.estimates[name])
        out[f"{name}_spread"] = record.spreads[name]
    for name in ("kappa", "fpr"):
        diff = record.diffs.get(name)
        out[f"{name}_diff"] = None if diff is None else diff.value
        out[f"{name}_diff_ci"] = None if diff is None or diff.ci is None else diff.ci.bounds
    out["n_paired"] = record.n_paired
    out["noise_floor"] = result.noise_floor
    out["noise_floor_known"] = result.noise_floor_known
    kappa_ci = record.estimates["kappa"].ci
    out["interval_method"] = None if kappa_ci is None else kappa_ci.method
    out["bootstrap"] = _boot_json(record.bootstrap)
    return out


def stability_json(record: iterations.Stability) -> dict[str, Any]:
    return {
        "verifier": record.verifier,
        "version": record.version,
        "order": record.order,
        "dimension": record.dimension,
        "n_runs": record.n_runs,
        "n_tasks": record.n_tasks,
        "flip_rate": record.flip_rate,
        "unstable_tasks": [task for _, task in record.unstable_tasks],
        **{f"{name}_spread": record.spreads[name] for name in iterations.METRICS},
    }


def version_change_json(change: iterations.VersionChange) -> dict[str, Any]:
    return {
        "verifier": change.verifier,
        "dimension": change.dimension,
        "reference": change.reference,
        "split": change.split,
        "previous": change.previous,
        "version": change.version,
        "order": change.order,
        "n": change.n,
        "gained": [task for _, task in change.gained],
        "lost": [task for _, task in change.lost],
        "mcnemar_p": change.mcnemar_p,
        "test": change.test,
    }


def history_sections(results: Sequence[iterations.IterationResult]) -> dict[str, list[dict]]:
    """`iterations` (every verifier x version x split x dimension x reference), and, on `all`
    splits against each dimension's default reference, `stability` and `version_changes`."""
    main = [r for r in results if r.split == ALL and r.reference == HUMAN_REFERENCE[r.dimension]]
    return {
        "iterations": [iteration_json(v, r) for r in results for v in r.versions],
        "stability": [stability_json(s) for r in main for s in r.stability],
        "version_changes": [version_change_json(c) for r in main for c in r.changes],
    }


def to_markdown(report: dict[str, Any]) -> str:
    """One Markdown table per section."""
    lines = [f"Source: {report['source']}", ""]
    keys = (*SECTIONS, "predictions", "your_verifier", *HISTORY_KEYS, "failure_steps")
    for key in keys:
        records = report.get(key)
        if not records:
            continue
        names = dict.fromkeys(c for r in records for c in r)  # each column checked once
        columns = [c for c in names if _tabular(c, records)]
        lines += [f"## {key}", "", "| " + " | ".join(columns) + " |"]
        lines.append("|" + "---|" * len(columns))
        for record in records:
            cells = [_cell(record[c]) if c in record else "" for c in columns]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _tabular(column: str, records: list[dict[str, Any]]) -> bool:
    """Scalars and [low, high] intervals fit a table cell; nested objects do not."""
    return all(
        not isinstance(r.get(column), dict)
        and (not isinstance(r.get(column), list) or column.endswith("_ci"))
        for r in records
    )


def _cell(value: Any) -> str:
    if value is None:
        return "undefined"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list) and len(value) == 2:
        return f"[{_cell(value[0])}, {_cell(value[1])}]"
    return str(value).replace("|", "\\|")


def warn_dropped(upload: predictions.Upload, limit: int = MAX_DROPPED_SHOWN) -> None:
    """One stderr line per dropped row, for the first `limit` rows; then one line for the
    rest. Each line is cut at 300 characters (a reason quotes the row's values)."""
    for row in upload.dropped.head(limit).itertuples():
        line = f"warning: {upload.filename} row {row.row} dropped: {row.reason}"
        print(line[:300], file=sys.stderr)
    rest = len(upload.dropped) - limit
    if rest > 0:
        print(f"warning: {upload.filename}: and {rest:,} more dropped rows", file=sys.stderr)


def dataframes(report: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """One DataFrame per list section of a `build_report` dict (see the module docstring).

    Every frame's `attrs` carries the header: source, synthetic_demo, revision, cluster,
    and, with a labels file, the key `labels` (what the file gave).
    """
    header = {k: report.get(k) for k in ("source", "synthetic_demo", "revision", "cluster")}
    if "labels" in report:
        header["labels"] = report["labels"]
    out: dict[str, pd.DataFrame] = {}
    for key, records in report.items():
        if not isinstance(records, list):
            continue
        frame = pd.json_normalize(records) if records else pd.DataFrame()
        for column in [c for c in frame.columns if _is_interval(frame[c])]:
            bounds = [v if isinstance(v, list) else [None, None] for v in frame[column]]
            at = frame.columns.get_loc(column)
            frame.insert(at + 1, f"{column}_low", pd.to_numeric([b[0] for b in bounds]))
            frame.insert(at + 2, f"{column}_high", pd.to_numeric([b[1] for b in bounds]))
            frame = frame.drop(columns=column)
        frame.attrs.update(header)
        out[key] = frame
    return out


def _is_interval(column: pd.Series) -> bool:
    """An `x_ci` column of [low, high] pairs (or nulls where undefined)."""
    return str(column.name).endswith("_ci") and all(
        v is None or (isinstance(v, list) and len(v) == 2) for v in column
    )


def tables(
    data: str | None = None,
    predictions_files: Sequence[str | Path] = (),
    cluster: str = DEFAULT_CLUSTER_MODE,
    labels: str | Path | None = None,
) -> dict[str, pd.DataFrame]:
    """The report as DataFrames, for a notebook: `data` is a source as in `CUAVB_DATA`
    (Hub id, mirror folder or "demo"; default: that variable, else the Hub, and the
    built-in demo when the Hub cannot be reached, said in one warning line, as the CLI
    does; a source named explicitly is read or raises SourceError), `predictions_files`
    your verifier outputs, `cluster` the bootstrap unit, `labels` your labels file, read
    as `--labels FILE` reads it (`load_labels`: the same "your labels" records and parity
    records; a file refused whole raises LabelsError; the key `labels` is every frame's
    ``attrs["labels"]``). Starts no background process."""
    spec = data if data is not None else os.environ.get(ENV_VAR, "")
    bench = load_bench(resolve(spec), background_build=False)
    cells: dict[str, dict] = {}
    uploads = load_predictions(bench, predictions_files, cells)
    mine = load_labels(bench, labels)
    name = None if labels is None else Path(labels).name
    boot = Bootstrap(unit=cluster)
    report = build_report(bench, uploads, boot, cells, labels=mine, labels_file=name)
    return dataframes(report)


def link_query(bench: Bench, uploads: Sequence[predictions.Upload]) -> str:
    """`?v=<payload>`: the query string that opens ``uploads`` in the app on ``bench``'s
    data (`lib.uploads.link_codec`; may exceed what a link may carry: `link_codec.fits`)."""
    from lib.uploads import link_codec

    rows = predictions.with_uploaded(predictions.empty_verdicts(), [u.verdicts for u in uploads])
    payload = link_codec.encode(rows, link_codec.task_order(bench.tasks))
    return f"?{link_codec.PARAM}={payload}"


def print_link(bench: Bench, uploads: Sequence[predictions.Upload]) -> int:
    """`--link`: print the query string; 2 without predictions, 1 when it is too long."""
    from lib.uploads import link_codec

    if not uploads:
        print("error: --link needs --predictions FILE", file=sys.stderr)
        return 2
    query = link_query(bench, uploads)
    if not link_codec.fits(query.split("=", 1)[1]):
        print(
            f"error: the link would carry {len(query):,} characters, over the "
            f"{link_codec.MAX_CHARS:,} a link may hold: send the file instead",
            file=sys.stderr,
        )
        return 1
    print(query)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lib.report", description=__doc__)
    parser.add_argument("--data", help=f"source as in {ENV_VAR}: Hub id, folder or 'demo'")
    parser.add_argument(
        "--predictions",
        action="append",
        default=[],
        metavar="FILE",
        help="your verifier outputs (CSV, JSON Lines or parquet; see the README); repeatable",
    )
    parser.add_argument(
        "--cluster",
        choices=CLUSTER_MODES,
        default=DEFAULT_CLUSTER_MODE,
        help="what every bootstrap interval resamples: tasks, or websites/task families",
    )
    parser.add_argument(
        "--labels",
        metavar="FILE",
        help="your labels (the Audit page's CSV: task_id, dimension, label, note): adds the "
        "'your labels' references (your label where given, the final label elsewhere)",
    )
    parser.add_argument(
        "--exclude-flagged",
        action="store_true",
        help="leave out each uploaded verifier's verdicts on the tasks its own score files "
        "flag as ambiguous or invalid (key excluded_flagged says how many)",
    )
    parser.add_argument("--format", choices=("json", "markdown"), default="json")
    parser.add_argument(
        "--link",
        action="store_true",
        help="print the query string (?v=...) that opens the --predictions in the app",
    )
    args = parser.parse_args(argv)
    spec = args.data if args.data is not None else os.environ.get(ENV_VAR, "")
    try:
        bench = load_bench(resolve(spec), background_build=False)
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    cells: dict[str, dict] = {}
    try:
        uploads = load_predictions(bench, args.predictions, cells)
    except predictions.PredictionsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (Exception, MemoryError) as exc:  # never a traceback for a bad file: one line
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        print(f"error: cannot load predictions ({type(exc).__name__}: {first})", file=sys.stderr)
        return 2
    for upload in uploads:
        warn_dropped(upload)
    if args.link:
        return print_link(bench, uploads)
    try:
        labels = load_labels(bench, args.labels)
    except my_labels.LabelsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if labels is not None:
        for row in labels.dropped.head(MAX_DROPPED_SHOWN).itertuples():
            print(f"warning: labels row {row.row} dropped: {row.reason}", file=sys.stderr)
    name = None if args.labels is None else Path(args.labels).name
    boot = Bootstrap(unit=args.cluster)
    report = build_report(
        bench, uploads, boot, cells, labels=labels, labels_file=name,
        exclude_flagged=args.exclude_flagged,
    )  # fmt: skip
    if args.format == "json":
        print(json.dumps(report, indent=2, allow_nan=False))
    else:
        print(to_markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

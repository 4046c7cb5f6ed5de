"""No page and no report section shows a zero-width interval without a reason beside it
(issue 28).

AppTest walks Agreement, Judges, Your verifier and Slices on the demo, and on a mirror
where a verifier has no false positive (the legacy multimodal verifier never says success
on a human failure) and one copies the final human label (kappa 1 in every resample),
with an uploaded verifier that has no false positive either; task and site clusters.
Every interval written ``[a, b]`` with ``a == b`` must be followed by ``(reason)``.
The report's records are checked the same way: a zero-width interval has a reason in its
record (``reasons``, ``ci:<metric>``, ``<metric>_ci_reason``).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers.apptest import open_page, shown

PAGES = ("pages/1_Agreement.py", "pages/2_Judges.py", "pages/6_Slices.py")
YOURS = "pages/5_Your_verifier.py"
_NUMBER = r"[+\-±−]?\d+(?:\.\d+)?%?"
INTERVAL = re.compile(rf"\[\s*({_NUMBER}),\s*({_NUMBER})\s*\]")


def _number(text: str) -> float:
    return float(text.strip("%").replace("±", "").replace("−", "-"))


def unexplained(text: str) -> list[str]:
    """The zero-width intervals of ``text`` not followed by a parenthesised reason.

    >>> unexplained("kappa 1.00 [1.00, 1.00] (no width: ...) and 0.2 [0.00, 0.00]")
    ['..) and 0.2 [0.00, 0.00]']
    """
    out = []
    for m in INTERVAL.finditer(text):
        if _number(m.group(1)) != _number(m.group(2)):
            continue
        if not text[m.end() :].lstrip().startswith("("):
            out.append(text[max(0, m.start() - 12) : m.end()].strip())
    return out


def _frame_cells(frame: Any) -> Iterator[str]:
    if not isinstance(frame, pd.DataFrame):
        return
    for column in frame.columns:
        yield from (v for v in frame[column].tolist() if isinstance(v, str))


def shown_texts(at: AppTest) -> list[str]:
    """Every text a reader sees on the run: Markdown, captions, alerts, metrics, cells."""
    parts = [e.value for e in at.markdown] + [e.value for e in at.caption]
    parts += [e.value for kind in (at.error, at.warning, at.info, at.success) for e in kind]
    parts += [f"{m.label} {m.value}" for m in at.metric]
    for element in [*at.dataframe, *at.table]:
        parts += list(_frame_cells(element.value))
    return [shown(p) for p in parts]


def _check(at: AppTest, where: str) -> int:
    assert not at.exception, (where, at.exception)
    texts = shown_texts(at)
    bad = [u for t in texts for u in unexplained(t)]
    assert not bad, (where, bad[:5])
    return sum(len(INTERVAL.findall(t)) for t in texts)


# ---------------------------------------------------------------------------------------
# A mirror where a verifier has no false positive
# ---------------------------------------------------------------------------------------


def _rewrite(path: Path) -> None:
    """mm_is_success: 0 wherever the final label is 0 (no false positive); verifier_is_success:
    the final label itself (kappa 1 in every resample). Missing labels stay missing."""
    table = pq.read_table(path)
    final = table.column("final_human_outcome_label").to_pandas().astype("Int32")
    mm = table.column("mm_is_success").to_pandas().astype("Int32")
    no_fp = mm.mask(final == 0, 0)
    for name, values in (("mm_is_success", no_fp), ("verifier_is_success", final)):
        i = table.schema.get_field_index(name)
        column = pa.array(values, pa.int32(), from_pandas=True)
        table = table.set_column(i, table.schema.field(i), column)
    pq.write_table(table, path)


@pytest.fixture(scope="module")
def no_fp_mirror(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    dst = tmp_path_factory.mktemp("no_fp") / "mirror"
    shutil.copytree(mirror_dir, dst)
    for shard in sorted((dst / "trajectories").glob("*.parquet")):
        _rewrite(shard)
    return dst


def _no_fp_predictions(mirror: Path) -> bytes:
    """An upload that never says success on a human failure (and misses a third of the
    successes), from the mirror's final labels."""
    frames = [
        pq.read_table(p, columns=["task_id", "final_human_outcome_label"])
        .to_pandas()
        .assign(split=p.name.split("-")[0])
        for p in sorted((mirror / "trajectories").glob("*.parquet"))
    ]
    tasks = pd.concat(frames, ignore_index=True).dropna()
    final = tasks["final_human_outcome_label"].astype(int).to_numpy()
    miss = np.arange(final.size) % 3 == 0
    outcome = np.where(miss, 0, final)
    out = pd.DataFrame(
        {
            "task_id": tasks["task_id"],
            "split": tasks["split"],
            "verifier": "never_fp",
            "outcome": outcome,
            "process": outcome,
            "score": outcome * 0.9,
        }
    )
    return out.to_csv(index=False).encode()


@pytest.mark.parametrize("cluster", ["task", "site"])
@pytest.mark.parametrize("data", ["demo", "no_fp"])
def test_no_zero_width_interval_without_a_reason_on_the_pages(
    data: str, cluster: str, mirror_dir: Path, no_fp_mirror: Path, monkeypatch
) -> None:
    mirror = mirror_dir if data == "demo" else no_fp_mirror
    monkeypatch.setenv("CUAVB_DATA", str(mirror))
    seen = 0
    at = open_page(YOURS, timeout=180, cluster=cluster)
    at.file_uploader(key="predictions_file").set_value(
        ("never_fp.csv", _no_fp_predictions(mirror), "text/csv")
    )
    at = at.run()
    seen += _check(at, f"{data} {cluster} {YOURS}")
    for page in PAGES:  # the upload is a rater on every page of the session
        at.switch_page(page)
        at = at.run()
        seen += _check(at, f"{data} {cluster} {page}")
    at.switch_page("pages/6_Slices.py")
    at.query_params["verifier"] = "mine:never_fp"
    at = at.run()
    seen += _check(at, f"{data} {cluster} slices of the upload")
    assert seen > 50  # the walk did read intervals


def test_the_no_fp_mirror_has_what_it_claims(no_fp_mirror: Path) -> None:
    from lib.data.load import load_bench
    from lib.data.source import resolve
    from lib.table.pairs import pair

    table = load_bench(resolve(str(no_fp_mirror))).verdicts
    mm = pair(table, "mm_is_success", "final_human_outcome_label", "outcome")
    mm = mm.dropna(subset=["label_a", "label_b"])
    assert ((mm["label_a"] == 1) & (mm["label_b"] == 0)).sum() == 0
    assert (mm["label_b"] == 0).sum() > 20
    copy = pair(table, "verifier_is_success", "final_human_outcome_label", "outcome")
    copy = copy.dropna(subset=["label_a", "label_b"])
    assert (copy["label_a"] == copy["label_b"]).all()


# ---------------------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------------------


def _records(x: Any) -> Iterator[dict]:
    if isinstance(x, dict):
        yield x
        for v in x.values():
            yield from _records(v)
    elif isinstance(x, list):
        for v in x:
            yield from _records(v)


def _is_interval(v: Any) -> bool:
    return (
        isinstance(v, list)
        and len(v) == 2
        and all(isinstance(t, int | float) and not isinstance(t, bool) for t in v)
    )


def report_unexplained(report: dict) -> tuple[list[str], int]:
    """Zero-width intervals of the report without a reason in their record, and how many
    zero-width intervals there are."""
    bad, zero = [], 0
    for rec in _records(report):
        reasons = rec.get("reasons") or {}
        for key, v in rec.items():
            if "ci" not in key or not _is_interval(v) or v[0] != v[1]:
                continue
            zero += 1
            name = key.removesuffix("_ci")
            found = reasons.get(f"ci:{name}") or reasons.get(key) or rec.get(f"{key}_reason")
            found = found or (reasons.get("diff_ci") if key == "diff_ci" else None)
            if not found:
                bad.append(f"{key} {v} in {json.dumps(rec)[:160]}")
    return bad, zero


def test_no_zero_width_interval_without_a_reason_in_the_report(report_json: str) -> None:
    bad, zero = report_unexplained(json.loads(report_json))
    assert not bad, bad[:5]
    assert zero > 0  # kappa [1, 1] at tiny n is still there, with its reason


def test_no_zero_width_interval_without_a_reason_in_the_site_report(no_fp_mirror: Path) -> None:
    import contextlib
    import io

    from lib import report

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert report.main(["--data", str(no_fp_mirror), "--cluster", "site"]) == 0
    bad, zero = report_unexplained(json.loads(out.getvalue()))
    assert not bad, bad[:5]
    assert zero > 0

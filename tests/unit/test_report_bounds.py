"""The report CLI on hostile prediction files: exit code, one-line error, bounded output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lib import report


def _run(mirror_dir: Path, path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = report.main(["--data", str(mirror_dir), "--predictions", str(path)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_twenty_thousand_duplicates_are_one_line_error(
    mirror_dir: Path, bench, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """20,000 rows of one task id: every row ambiguous, none valid -> rejected whole."""
    task = bench.tasks["task_id"].iloc[0]
    path = tmp_path / "dups.csv"
    path.write_text("task_id,outcome\n" + f"{task},1\n" * 20_000)
    code, out, err = _run(mirror_dir, path, capsys)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "Traceback" not in err and len(err) < 2_000


@pytest.mark.usefixtures("report_memo")  # the sample's sections, computed once
def test_many_dropped_rows_give_a_bounded_report(
    mirror_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sample plus 20,000 unknown ids: used rows scored, 20 warning lines + a count."""
    sample = (mirror_dir / "sample_predictions.csv").read_text()
    header = sample.splitlines()[0]
    n_cols = header.count(",") + 1
    assert header.startswith("task_id")
    extra = "".join(f"Nope--{i:08d}" + ",1" * (n_cols - 1) + "\n" for i in range(20_000))
    path = tmp_path / "many.csv"
    path.write_text(sample + extra)
    code, out, err = _run(mirror_dir, path, capsys)
    assert code == 0, err
    lines = err.strip().splitlines()
    assert len(lines) == report.MAX_DROPPED_SHOWN + 1
    assert lines[-1].endswith(f"and {20_000 - report.MAX_DROPPED_SHOWN:,} more dropped rows")
    record = json.loads(out)["predictions"][0]
    assert record["n_dropped"] >= 20_000
    assert len(record["dropped"]) == report.MAX_DROPPED_SHOWN
    assert record["dropped_not_listed"] == record["n_dropped"] - report.MAX_DROPPED_SHOWN
    assert len(record["unknown_task_ids"]) == report.MAX_UNKNOWN_SHOWN
    # the same report for the sample alone: the 20,000 extra rows add only a bounded list
    path.write_text(sample)
    _, baseline, _ = _run(mirror_dir, path, capsys)
    assert len(out) < len(baseline) + 20_000  # listed in full they would add ~2 MB


@pytest.mark.parametrize(
    "content",
    [
        bytes(range(256)) * 400,  # binary garbage
        b"\xff\xfe" + b"\x00\xd8" * 5000,  # a BOM then invalid UTF-16
        b"{" * 50_000,  # JSON-ish garbage
        b'task_id,outcome\n"unterminated' + b"x" * 100_000,
    ],
    ids=["binary", "bad-utf16", "braces", "unterminated-quote"],
)
def test_garbage_file_is_one_line_error(
    mirror_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    path = tmp_path / "garbage.csv"
    path.write_bytes(content)
    code, out, err = _run(mirror_dir, path, capsys)
    assert code == 2 and out == "", err[:500]
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err
    assert len(err) < 2_000

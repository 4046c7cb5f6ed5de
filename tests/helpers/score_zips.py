"""Score-file uploads built in the tests: the mirror's own internal `gpt_eval_json` cells as
a zip (and JSON Lines), and the hostile archives and files of issue 41, each generated."""

from __future__ import annotations

import io
import json
import zipfile

import pandas as pd

INTERNAL = "internal"


def internal_cells(tasks: pd.DataFrame) -> dict[str, str]:
    """task id -> its `gpt_eval_json` cell as the dataset holds it (internal, evaluated)."""
    rows = tasks[tasks["split"] == INTERNAL]
    return {
        str(t): str(cell)
        for t, cell in zip(rows["task_id"], rows["gpt_eval_json"], strict=True)
        if isinstance(cell, str) and '"gpt_response_text": "{' in cell
    }


def zip_of(files: dict[str, str | bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def cells_zip(tasks: pd.DataFrame, folder: str = "") -> bytes:
    """One `<task_id>.json` per internal task, each the dataset's cell byte for byte."""
    return zip_of({f"{folder}{t}.json": cell for t, cell in internal_cells(tasks).items()})


def cells_jsonl(tasks: pd.DataFrame) -> bytes:
    """`{"task_id", "score_file"}` per line, the score file as the inner object."""
    lines = []
    for t, cell in internal_cells(tasks).items():
        inner = json.loads(json.loads(cell)["gpt_response_text"])
        lines.append(json.dumps({"task_id": t, "score_file": inner}))
    return "\n".join(lines).encode()


def zip_bomb(uncompressed_mb: int = 300) -> bytes:
    """One entry of zeros that expands about 1,000 times (written in 1 MB chunks)."""
    buffer = io.BytesIO()
    chunk = b"0" * (1 << 20)
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive,
        archive.open("alltrails_find_23.json", "w") as handle,
    ):
        for _ in range(uncompressed_mb):
            handle.write(chunk)
    return buffer.getvalue()


def many_entries(n: int = 100_000) -> bytes:
    """An archive of `n` tiny entries (stored, so it is small and quick to write)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for k in range(n):
            archive.writestr(f"{k}.json", "{}")
    return buffer.getvalue()


def escaping(good_name: str, good: str) -> bytes:
    """A `../` entry beside one good score file."""
    return zip_of({"../../etc/evil.json": good, good_name: good})


def nested(good_name: str, good: str) -> bytes:
    """A zip inside the zip (named .zip, and one disguised as .json) beside a good file."""
    inner = zip_of({good_name: good})
    return zip_of({"inner.zip": inner, "disguised.json": inner, good_name: good})


def deep(levels: int = 64) -> str:
    """A score file whose rubric nests `levels` deep."""
    return '{"rubric_items": [' + '{"x": ' * (levels - 2) + "1" + "}" * (levels - 2) + "]}"


def bad_points() -> dict[str, str]:
    """Score files with NaN, infinite, huge and negative points (one criterion each)."""
    out = {}
    for name, value in (("nan", "NaN"), ("inf", "Infinity"), ("huge", "1e308"), ("neg", "-1")):
        out[name] = (
            '{"rubric_items": [{"criterion": "c", "max_points": 2, "earned_points": 1, '
            f'"post_image_earned_points": {value}}}, {{"criterion": "d", "max_points": 2, '
            '"earned_points": 2, "post_image_earned_points": 2}], '
            '"rubric_outcome_verification": {"output_success": true}}'
        )
    return out


def relevance_10k() -> str:
    """A 10,000 x 10,000 relevance matrix (sparse rows that name criterion 9,999)."""
    rows = {f"screenshot_{k}": {"0": 1, "9999": 1, "screenshot_idx": k} for k in range(10_000)}
    steps = {"step2_relevance_scores": rows}
    return json.dumps({"rubric_items": [], "rubric_intermediate_mm_rubric_steps": steps})

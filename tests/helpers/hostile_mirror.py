"""A Hub-shaped mirror whose every text column carries markup, built from the test mirror.

`build_hostile_mirror(src, dst)` copies `src` (README, file names, schemas and row-group
sizes kept) and rewrites the parquet shards with pyarrow:

- trajectories: `instruction`, `final_answer`, `init_url`, every `web_surfer_log` line's
  `thoughts`, `url` and `message`, and `gpt_eval_json`'s text (om2w: the free text;
  internal: the reasoning and rubric justifications inside the nested JSON) get corpus
  payloads (`tests.helpers.hostile_payloads`); the first row of each split has a 1 MB instruction;
  one task id per split is hostile (the same in both configs);
- the first trajectory of each split has the image cases as its first screenshots: a
  13000x13000 one-bit PNG, a truncated PNG, a 1x1 PNG and bytes that are not an image;
- annotations: each reviewer id becomes a payload (one map across both splits, so a
  reviewer is still one rater), every comment column gets payloads (the first row of each
  split a 1 MB comment), and the `informed_*_agreement` values of every other row become
  payloads (the rest keep their real values).

`PLANTED` lists strings a test can look for in the loaded frames.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.helpers.hostile_images import NOT_AN_IMAGE, huge_png, tiny_png, truncated_png
from tests.helpers.hostile_payloads import MARK, payloads

MEGABYTE = 1_000_000
BIG_INSTRUCTION = "![big](http://planted.invalid/big.png) " + "I" * MEGABYTE
BIG_COMMENT = "[big](http://planted.invalid/c) " + "C" * MEGABYTE
HOSTILE_TASK_SUFFIX = "`![t](http://planted.invalid/task.png)`"
PLANTED = {
    "instruction": BIG_INSTRUCTION,
    "comment": BIG_COMMENT,
    "task_suffix": HOSTILE_TASK_SUFFIX,
}

_TEXT_COLUMNS = ("instruction", "final_answer", "init_url")
_COMMENTS = ("outcome_comment", "process_comment", "informed_outcome_comment")
_COMMENTS += ("informed_process_comment",)
_INFORMED = ("informed_outcome_agreement", "informed_process_agreement")


def _cycle(values: list[str], n: int, offset: int = 0) -> list[str]:
    return [values[(i + offset) % len(values)] for i in range(n)]


def _hostile_log(log: str | None, payload: str) -> str | None:
    """Every JSON line's thoughts, url and message replaced; other lines kept."""
    if not log:
        return log
    out = []
    for line in log.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            out.append(line)
            continue
        if isinstance(event, dict):
            event["url"] = payload
            event["message"] = payload
            if isinstance(event.get("arguments"), dict):
                event["arguments"]["thoughts"] = payload
        out.append(json.dumps(event))
    return "\n".join(out)


def _hostile_gpt_eval(text: str | None, payload: str) -> str | None:
    if not text:
        return text
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return payload
    if not isinstance(value, dict):
        return payload
    inner = value.get("gpt_response_text")
    try:
        nested = json.loads(inner) if isinstance(inner, str) else None
    except json.JSONDecodeError:
        nested = None
    if isinstance(nested, dict):  # internal: the Universal Verifier's own JSON
        nested["outcome_reasoning"] = payload
        nested["outcome_primary_intent"] = payload
        for item in nested.get("rubric_items") or []:
            if isinstance(item, dict):
                item["justification"] = payload
                item["criterion"] = payload
        value["gpt_response_text"] = json.dumps(nested)
    else:
        value["gpt_response_text"] = f'{payload}\nStatus: "success"'
    return json.dumps(value)


def _write_like(table: pa.Table, source: Path, target: Path) -> None:
    """Write `table` with `source`'s schema (metadata included) and row-group size."""
    meta = pq.ParquetFile(source).metadata
    size = meta.row_group(0).num_rows if meta.num_row_groups else None
    pq.write_table(table.cast(pq.read_schema(source)), target, row_group_size=size)


def _hostile_id(task_id: str) -> str:
    return task_id + HOSTILE_TASK_SUFFIX


def _trajectories(path: Path, texts: list[str], hostile_ids: set[str]) -> None:
    table = pq.read_table(path)
    n = table.num_rows
    data = table.to_pydict()
    first_shard = path.name.split("-")[-3] == "00000"
    for k, column in enumerate(_TEXT_COLUMNS):
        data[column] = _cycle(texts, n, offset=k)
    if first_shard and n:
        data["instruction"][0] = BIG_INSTRUCTION
        images = [huge_png(), truncated_png(), tiny_png(), NOT_AN_IMAGE]
        shots = [{"bytes": b, "path": f"hostile_{i}.png"} for i, b in enumerate(images)]
        data["screenshots"][0] = shots + list(data["screenshots"][0] or [])
        data["n_screenshots"][0] = len(data["screenshots"][0])
        hostile_ids.add(data["task_id"][0])
        data["task_id"][0] = _hostile_id(data["task_id"][0])
    payload_for = _cycle(texts, n, offset=3)
    data["web_surfer_log"] = [
        _hostile_log(log, p) for log, p in zip(data["web_surfer_log"], payload_for, strict=True)
    ]
    data["gpt_eval_json"] = [
        _hostile_gpt_eval(t, p) for t, p in zip(data["gpt_eval_json"], payload_for, strict=True)
    ]
    _write_like(pa.Table.from_pydict(data), path, path)


def _annotations(path: Path, texts: list[str], ids: dict[str, str], hostile: set[str]) -> None:
    table = pq.read_table(path)
    n = table.num_rows
    data = table.to_pydict()
    for name in data["annotator"]:
        if name not in ids:  # one map across splits: a reviewer stays one rater
            ids[name] = f"{texts[len(ids) % len(texts)]} {name}"
    data["annotator"] = [ids[a] for a in data["annotator"]]
    data["task_id"] = [_hostile_id(t) if t in hostile else t for t in data["task_id"]]
    for k, column in enumerate(_COMMENTS):
        data[column] = _cycle(texts, n, offset=k + 5)
    if n:
        data["outcome_comment"][0] = BIG_COMMENT
    for k, column in enumerate(_INFORMED):
        values = data[column]
        data[column] = [texts[(i + k) % len(texts)] if i % 2 else v for i, v in enumerate(values)]
    _write_like(pa.Table.from_pydict(data), path, path)


def build_hostile_mirror(src_mirror: Path, dst: Path, port: int = 9) -> Path:
    """Copy `src_mirror` to `dst` with markup and hostile images planted (see the module).

    `port`: the 127.0.0.1 port the payloads' local URLs point at. Returns `dst`.
    """
    src_mirror, dst = Path(src_mirror), Path(dst)
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src_mirror, dst)
    texts = [p for p in payloads(port).values() if len(p) < 2000]  # the long one: below
    hostile_ids: set[str] = set()
    for path in sorted((dst / "trajectories").glob("*.parquet")):
        _trajectories(path, texts, hostile_ids)
    ids: dict[str, str] = {}
    for path in sorted((dst / "annotations").glob("*.parquet")):
        _annotations(path, texts, ids, hostile_ids)
    return dst


__all__ = ["MARK", "PLANTED", "build_hostile_mirror"]

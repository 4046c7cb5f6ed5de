"""An uploaded verifier history (`Upload.history`) <-> bytes, bounded: a section for the
self-contained `?v=` link codec (issue 36), which registers it (`link_codec.HISTORY`).

Layout (before zlib): ``MAGIC``, then varints and length-prefixed UTF-8 strings:

    n_tasks, then per task: split index (into `lib.vocab.SPLITS`), task id
    n_raters, then per rater: rater id, n_versions,
        per version (in `order`): version name, n_runs,
            per run: run number, then per dimension (`DIMENSIONS`): a flag (0 = absent,
            1 = present) and, when present, the labels of every task, 2 bits each
            (0 = no row, 1 = failure, 2 = success, 3 = a row whose label is missing),
            packed 4 to a byte.

`decode` checks every count against the upload bounds (`lib.uploads.predictions`: 20
verifiers, 50 versions each, 5 runs each, 200 version-runs, names of 60 characters) and
the decompressed size against `MAX_BYTES` before it allocates, so a forged link cannot
make the server build a large frame. Pure: bytes in, frame out; no Streamlit.
"""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd

from lib.uploads.predictions import (
    HISTORY_COLUMNS,
    MAX_NAME,
    MAX_RUN,
    MAX_RUNS_PER_VERSION,
    MAX_VERIFIERS_PER_SESSION,
    MAX_VERSION_RUNS_PER_SESSION,
    MAX_VERSIONS_PER_VERIFIER,
)
from lib.vocab import DIMENSIONS, SPLITS

MAGIC = b"VH1"
MAX_TASKS = 100_000
MAX_TASK_ID = 1_000
MAX_BYTES = 16 * 1024 * 1024
"""Largest decompressed section (200 version-runs x 2 dimensions x 26,000 tasks / 4 is 2.6
MB of labels; the task ids dominate on large data)."""
MAX_RATER = MAX_NAME + 12  # `mine:` + name + ` (nn)`


class HistorySectionError(ValueError):
    """The bytes are not a valid history section (or exceed a bound)."""


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _text(s: str) -> bytes:
    data = s.encode("utf-8")
    return _varint(len(data)) + data


def encode(history: pd.DataFrame) -> bytes:
    """The history's bytes (zlib-compressed; `decode` gives an equal frame).

    The rows are grouped once (rater, version, run, dimension) and each group's 2-bit
    codes are written at its tasks' positions: one boolean selection per group cost 0.4 s
    of a first render with 50 versions x 3 runs (`bench.iterations`)."""
    tasks = history[["split", "task_id"]].drop_duplicates().sort_values(["split", "task_id"])
    n = len(tasks)
    out = bytearray(MAGIC)
    out += _varint(n)
    for split, task in zip(tasks["split"], tasks["task_id"], strict=True):
        out += _varint(SPLITS.index(split)) + _text(str(task))
    task_keys = pd.MultiIndex.from_frame(tasks)
    pos = task_keys.get_indexer(pd.MultiIndex.from_frame(history[["split", "task_id"]]))
    labels = history["label"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    codes_all = np.where(np.isnan(labels), 3, np.where(labels == 1, 2, 1)).astype(np.uint8)
    rater = history["rater"].astype(str).to_numpy()
    order = history["order"].to_numpy()
    run = history["run"].astype(int).to_numpy()
    version = history["version"].to_numpy()
    groups = (
        pd.Series(np.arange(len(history)))
        .groupby([rater, order, run, history["dimension"].to_numpy()], sort=False)
        .indices
    )
    raters = list(dict.fromkeys(rater.tolist()))
    out += _varint(len(raters))
    for name in raters:
        mine = rater == name
        out += _text(name)
        versions = pd.DataFrame({"order": order[mine], "version": version[mine]})
        versions = versions.drop_duplicates().sort_values("order")
        out += _varint(len(versions))
        for at_order, name_of_version in zip(versions["order"], versions["version"], strict=True):
            out += _text(str(name_of_version))
            runs = sorted(set(run[mine & (order == at_order)].tolist()))
            out += _varint(len(runs))
            for k in runs:
                out += _varint(k)
                for dim in DIMENSIONS:
                    at = groups.get((name, at_order, k, dim))
                    if at is None:
                        out += b"\x00"
                        continue
                    codes = np.zeros(n, dtype=np.uint8)
                    codes[pos[at]] = codes_all[at]
                    out += b"\x01" + _pack(codes)
    return zlib.compress(bytes(out), 9)


def _pack(codes: np.ndarray) -> bytes:
    padded = np.zeros(-(-len(codes) // 4) * 4, dtype=np.uint8)
    padded[: len(codes)] = codes
    quads = padded.reshape(-1, 4)
    return (quads[:, 0] | quads[:, 1] << 2 | quads[:, 2] << 4 | quads[:, 3] << 6).tobytes()


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, k: int) -> bytes:
        if k < 0 or self.pos + k > len(self.data):
            raise HistorySectionError("truncated history section")
        chunk = self.data[self.pos : self.pos + k]
        self.pos += k
        return chunk

    def varint(self, limit: int, what: str) -> int:
        n, shift = 0, 0
        while True:
            byte = self.take(1)[0]
            n |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
            if shift > 35:
                raise HistorySectionError(f"{what}: number too long")
        if n > limit:
            raise HistorySectionError(f"{what}: {n} is over the limit {limit}")
        return n

    def text(self, limit: int, what: str) -> str:
        k = self.varint(4 * limit, what)
        try:
            value = self.take(k).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise HistorySectionError(f"{what}: not UTF-8") from exc
        if len(value) > limit:
            raise HistorySectionError(f"{what}: longer than {limit} characters")
        return value


def decode(blob: bytes) -> pd.DataFrame:
    """The history frame (`HISTORY_COLUMNS`) of `encode`'s bytes; HistorySectionError when
    the bytes are malformed or any count is over its bound."""
    inflater = zlib.decompressobj()
    try:
        data = inflater.decompress(blob, MAX_BYTES + 1)
    except zlib.error as exc:
        raise HistorySectionError("not a compressed history section") from exc
    if len(data) > MAX_BYTES or inflater.unconsumed_tail:
        raise HistorySectionError(f"history section over {MAX_BYTES:,} bytes")
    r = _Reader(data)
    if r.take(len(MAGIC)) != MAGIC:
        raise HistorySectionError("not a history section")
    n = r.varint(MAX_TASKS, "tasks")
    tasks = []
    for _ in range(n):
        split = r.varint(len(SPLITS) - 1, "split")
        tasks.append((SPLITS[split], r.text(MAX_TASK_ID, "task id")))
    splits = np.array([s for s, _ in tasks], dtype=object)
    ids = np.array([t for _, t in tasks], dtype=object)
    parts = []
    total_runs = 0
    for _ in range(r.varint(MAX_VERIFIERS_PER_SESSION, "verifiers")):
        rater = r.text(MAX_RATER, "verifier")
        for order in range(1, r.varint(MAX_VERSIONS_PER_VERIFIER, "versions") + 1):
            version = r.text(MAX_NAME, "version")
            n_runs = r.varint(MAX_RUNS_PER_VERSION, "runs")
            total_runs += n_runs
            if total_runs > MAX_VERSION_RUNS_PER_SESSION:
                raise HistorySectionError("version-runs over the session limit")
            for _ in range(n_runs):
                run = r.varint(MAX_RUN, "run")
                for dim in DIMENSIONS:
                    if r.take(1) == b"\x00":
                        continue
                    packed = np.frombuffer(r.take(-(-n // 4)), dtype=np.uint8)
                    codes = np.stack([(packed >> s) & 3 for s in (0, 2, 4, 6)], axis=1).ravel()
                    codes = codes[:n]
                    if n % 4 and packed.size and packed[-1] >> (2 * (n % 4)):
                        raise HistorySectionError("padding bits set")
                    keep = codes > 0  # a task this run did not judge has no row
                    kept = codes[keep]
                    label = pd.array(
                        [None if c == 3 else int(c == 2) for c in kept.tolist()], dtype="Int8"
                    )
                    parts.append(
                        pd.DataFrame(
                            {
                                "rater": rater,
                                "version": version,
                                "order": order,
                                "run": run,
                                "split": splits[keep],
                                "task_id": ids[keep],
                                "dimension": dim,
                                "label": label,
                            }
                        )
                    )
    if r.pos != len(data):
        raise HistorySectionError("trailing bytes after the history section")
    if not parts:
        return pd.DataFrame(columns=HISTORY_COLUMNS)
    out = pd.concat(parts, ignore_index=True)[HISTORY_COLUMNS]
    out["order"] = out["order"].astype("int64")
    out["run"] = out["run"].astype("int64")
    return out

"""Links that carry uploaded verdicts themselves: `?v=<payload>` (issue 36).

A link holds the session's uploaded verdicts (not the file), so it opens the same view on
any replica, after any restart, and nothing is stored on the server. The payload is
built against the loaded data's tasks in one canonical order (sorted by split, task id):

    base64url (no padding) of
      version      1 byte   (`VERSION`)
      fingerprint  8 bytes  SHA-256 of the canonical task order (`fingerprint`)
      n_tasks      4 bytes  big-endian, the task count the payload was built for
      body         zlib stream of sections: type (1 byte), length (4 bytes BE), bytes

A section's type byte names it; its high bit (`MUST_UNDERSTAND`) says whether a reader
that does not know the type must refuse the link (set) or may skip it (clear). The
registry (`SECTIONS`, `register`) holds each known type with its own byte bound; other
features add their sections there (docs/uploads.md says how).

The verdicts section (`VERDICTS`, must-understand): a verifier count (2 bytes), then per
verifier its name (1-byte length, UTF-8), a flags byte (`F_OUTCOME`, `F_PROCESS`:
which dimensions have rows; `F_SCORE`: scores follow; `F_SCORE_ON_PROCESS`: they sit on
the process rows), and per present dimension 2 bits per task (`NO_ROW`, `NA_ROW`,
`LABEL_0`, `LABEL_1`: missing stays missing, never 0), and with scores one big-endian
uint16 per task (`score * 65534` rounded, `NO_SCORE` = none).

Decoding is bounded before any work: at most `MAX_CHARS` characters (checked before the
base64 decode), the header's task count and fingerprint against the loaded data before
decompression, `MAX_BODY_BYTES` decompressed at most (`zlib.decompressobj` with
`max_length`), at most `MAX_VERIFIERS` verifiers and each section within its bound. Any
failure is a `LinkError` with one line that says why; nothing is loaded.
"""

from __future__ import annotations

import base64
import hashlib
import re
import struct
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from lib.table.verdicts import COLUMNS, UPLOAD_PREFIX
from lib.uploads import history_section, labels_section
from lib.uploads.predictions.validate import (
    MAX_NAME,
    MAX_VERIFIERS_PER_SESSION,
    clean_name,
    typed_verdicts,
)

PARAM = "v"
"""The query parameter that carries the payload."""
OLD_PARAM = "mine"
"""The query parameter of the server-stored links this replaced (said, never opened)."""
VERSION = 1
MAX_CHARS = 32_768
"""Characters of a payload at most (request lines beyond ~64 KB are refused by common
servers; the 20-verifier link on the real 260 tasks is about 17,300: bench.link_size)."""
MAX_TASKS = 1_000_000
"""Tasks a payload may be built for at most (the header's count; checked first)."""
MAX_VERIFIERS = MAX_VERIFIERS_PER_SESSION
"""Verifiers a link holds at most: what one session may hold."""
MAX_BODY_BYTES = 4 * 2**20
"""Decompressed bytes at most (zlib `max_length`): a zip bomb stops here."""
HEADER = struct.Struct(">B8sI")
SECTION_HEAD = struct.Struct(">BI")
MUST_UNDERSTAND = 0x80
VERDICTS = 0x81
F_OUTCOME, F_PROCESS, F_SCORE, F_SCORE_ON_PROCESS = 1, 2, 4, 8
NO_ROW, NA_ROW, LABEL_0, LABEL_1 = 0, 1, 2, 3
SCORE_STEPS = 65534
NO_SCORE = 0xFFFF
_CHARS = re.compile(r"[A-Za-z0-9_-]+")
DIMENSIONS = (("outcome", F_OUTCOME), ("process", F_PROCESS))

OLD_LINK = (
    "This link comes from an earlier version of this app, whose links were stored on the "
    "server: they can no longer be opened. Ask whoever sent it for a new link (links now "
    "carry the verdicts themselves) or for the file."
)
"""The one line for an old `?mine=<hash>` link."""


class LinkError(ValueError):
    """A payload that cannot be used; the message is one line for the visitor."""


@dataclass(frozen=True)
class Tasks:
    """The loaded data's tasks in the canonical order, and their fingerprint."""

    splits: tuple[str, ...]
    ids: tuple[str, ...]
    fingerprint: bytes
    index: dict[tuple[str, str], int] = field(repr=False, compare=False)

    @property
    def n(self) -> int:
        return len(self.ids)


def task_order(tasks: pd.DataFrame) -> Tasks:
    """The canonical order of ``tasks`` (`split`, `task_id`): sorted by split, then id,
    whatever order the loader read them in; the fingerprint is a hash of that order."""
    pairs = sorted(zip(tasks["split"].astype(str), tasks["task_id"].astype(str), strict=True))
    digest = hashlib.sha256()
    for split, task in pairs:
        digest.update(f"{split}\t{task}\n".encode())
    return Tasks(
        tuple(p[0] for p in pairs),
        tuple(p[1] for p in pairs),
        digest.digest()[:8],
        {p: i for i, p in enumerate(pairs)},
    )


# --- the section registry ---------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    """One kind of section: its type byte (high bit: must-understand), a name, the most
    bytes it may hold for ``n`` tasks, and how its bytes become a value."""

    type: int
    name: str
    max_bytes: Callable[[int], int]
    decode: Callable[[bytes, Tasks], Any]

    @property
    def must_understand(self) -> bool:
        return bool(self.type & MUST_UNDERSTAND)


SECTIONS: dict[int, Section] = {}


def register(section: Section) -> Section:
    """Add a section type (once per type byte)."""
    if not 0 <= section.type <= 0xFF or section.type in SECTIONS:
        raise ValueError(f"section type {section.type:#x} is taken or out of range")
    SECTIONS[section.type] = section
    return section


# --- the verdicts section ---------------------------------------------------------------


def _packed_len(n: int) -> int:
    return (2 * n + 7) // 8


def _verdicts_max(n: int) -> int:
    per = 2 + MAX_NAME * 4 + 2 * _packed_len(n) + 2 * n
    return 2 + MAX_VERIFIERS * per


def _pack2(codes: np.ndarray) -> bytes:
    padded = np.zeros(-(-len(codes) // 4) * 4, dtype=np.uint8)
    padded[: len(codes)] = codes
    quads = padded.reshape(-1, 4)
    return (quads[:, 0] << 6 | quads[:, 1] << 4 | quads[:, 2] << 2 | quads[:, 3]).tobytes()


def _unpack2(data: bytes, n: int) -> np.ndarray:
    raw = np.frombuffer(data, dtype=np.uint8)
    quads = np.stack([(raw >> 6) & 3, (raw >> 4) & 3, (raw >> 2) & 3, raw & 3], axis=1)
    return quads.reshape(-1)[:n]


def _encode_verdicts(uploads: pd.DataFrame, order: Tasks) -> bytes:
    raters = list(dict.fromkeys(uploads["rater"].astype(str)))
    if len(raters) > MAX_VERIFIERS:
        raise LinkError(f"{len(raters)} verifiers: a link holds at most {MAX_VERIFIERS}")
    out = [struct.pack(">H", len(raters))]
    for rater in raters:
        rows = uploads[uploads["rater"].astype(str) == rater]
        name = rater.removeprefix(UPLOAD_PREFIX).encode()
        keys = list(zip(rows["split"].astype(str), rows["task_id"].astype(str), strict=True))
        try:
            where = np.array([order.index[k] for k in keys], dtype=np.int64)
        except KeyError as exc:
            raise LinkError("an uploaded verdict names a task the loaded data lacks") from exc
        dims = rows["dimension"].astype(str).to_numpy()
        labels = rows["label"]
        flags, blocks = 0, []
        for dimension, flag in DIMENSIONS:
            mask = dims == dimension
            if not mask.any():
                continue
            flags |= flag
            codes = np.full(order.n, NO_ROW, dtype=np.uint8)
            got = labels[mask]
            one = np.where(got.fillna(0).to_numpy() == 1, LABEL_1, LABEL_0)
            codes[where[mask]] = np.where(got.isna().to_numpy(), NA_ROW, one)
            blocks.append(_pack2(codes))
        scores = pd.to_numeric(rows["score"], errors="coerce").to_numpy(dtype=float)
        has = ~np.isnan(scores)
        if has.any():
            on_process = bool((dims[has] == "process").any())
            flags |= F_SCORE | (F_SCORE_ON_PROCESS if on_process else 0)
            keep = has & (dims == ("process" if on_process else "outcome"))
            q = np.full(order.n, NO_SCORE, dtype=">u2")
            q[where[keep]] = np.round(np.clip(scores[keep], 0, 1) * SCORE_STEPS).astype(">u2")
            blocks.append(q.tobytes())
        out += [struct.pack(">B", len(name)), name, struct.pack(">B", flags), *blocks]
    return b"".join(out)


def _decode_verdicts(data: bytes, order: Tasks) -> pd.DataFrame:
    n = order.n
    pos = 0

    def take(k: int) -> bytes:
        nonlocal pos
        if pos + k > len(data):
            raise LinkError("the link is damaged (its verdicts end early)")
        chunk = data[pos : pos + k]
        pos += k
        return chunk

    (count,) = struct.unpack(">H", take(2))
    if count > MAX_VERIFIERS:
        raise LinkError(
            f"the link holds {count:,} verifiers: a link holds at most {MAX_VERIFIERS} "
            "(what one session may hold)"
        )
    splits = np.array(order.splits, dtype=object)
    ids = np.array(order.ids, dtype=object)
    frames, seen = [], set()
    for _ in range(count):
        (length,) = take(1)
        try:
            raw_name = take(length).decode()
        except UnicodeDecodeError as exc:
            raise LinkError("the link is damaged (a verifier name is not text)") from exc
        name = clean_name(raw_name)
        if not name or name != raw_name or name in seen:
            raise LinkError("the link is damaged (a verifier name is empty, odd or repeated)")
        seen.add(name)
        (flags,) = take(1)
        if flags & ~(F_OUTCOME | F_PROCESS | F_SCORE | F_SCORE_ON_PROCESS):
            raise LinkError("the link is damaged (unknown verdict flags)")
        codes = {d: _unpack2(take(_packed_len(n)), n) for d, f in DIMENSIONS if flags & f}
        scores = None
        if flags & F_SCORE:
            q = np.frombuffer(take(2 * n), dtype=">u2").astype(np.int64)
            if (q[q != NO_SCORE] > SCORE_STEPS).any():
                raise LinkError("the link is damaged (a score outside [0, 1])")
            scores = np.where(q == NO_SCORE, np.nan, q / SCORE_STEPS)
        score_dim = "process" if flags & F_SCORE_ON_PROCESS else "outcome"
        if scores is not None and score_dim not in codes:
            raise LinkError("the link is damaged (scores without their verdicts)")
        for dimension, c in codes.items():
            present = c != NO_ROW
            label = pd.array(
                np.where(c[present] == NA_ROW, pd.NA, (c[present] == LABEL_1).astype(int)),
                dtype="Int8",
            )
            frames.append(
                pd.DataFrame(
                    {
                        "split": splits[present],
                        "task_id": ids[present],
                        "rater": UPLOAD_PREFIX + name,
                        "kind": "verifier",
                        "dimension": dimension,
                        "label": label,
                        "score": scores[present]
                        if scores is not None and dimension == score_dim
                        else np.nan,
                    }
                )
            )
    if pos != len(data):
        raise LinkError("the link is damaged (bytes after its verdicts)")
    if not frames:
        return typed_verdicts(pd.DataFrame(columns=COLUMNS))
    return typed_verdicts(pd.concat(frames, ignore_index=True))


register(Section(VERDICTS, "verdicts", _verdicts_max, _decode_verdicts))


# --- the optional sections: a visitor's labels and uploaded verifiers' histories --------
# Both optional (high bit clear): an app that does not know them still opens the verdicts.
# A damaged one refuses the whole link (one line), like a damaged verdicts section.

LABELS = labels_section.LABELS_TYPE
"""Your labels (the Audit page's re-labels or a labels file: `lib.uploads.labels_section`)."""
HISTORY = 0x03
"""Uploaded verifiers' versions and runs (`lib.uploads.history_section`, issue 40)."""


def _history_max(n_tasks: int) -> int:
    return history_section.MAX_BYTES


def _decode_history(data: bytes, order: Tasks) -> pd.DataFrame:
    try:
        history = history_section.decode(data)
    except history_section.HistorySectionError as exc:
        raise LinkError(f"the link's version history is damaged ({exc})") from exc
    pairs = zip(history["split"], history["task_id"].astype(str), strict=True)
    return history[[pair in order.index for pair in pairs]].reset_index(drop=True)


def _decode_labels(data: bytes, order: Tasks) -> pd.DataFrame:
    try:
        return labels_section.decode(data, dict(zip(order.ids, order.splits, strict=True))).labels
    except labels_section.SectionError as exc:
        raise LinkError(f"the link's labels are damaged ({exc})") from exc


register(Section(LABELS, "labels", labels_section.max_bytes, _decode_labels))
register(Section(HISTORY, "history", _history_max, _decode_history))


# --- the optional failure-steps section (issue 41) ---------------------------------------
# Per uploaded verifier uploaded as score files, its `first_failure_step` per task and
# whether its file flags the task ambiguous or invalid:
#   count (1 byte), then per verifier its name (1-byte length, UTF-8, as the verdicts
#   section writes it) and one varint per task of the canonical order: 2 * s + f, where
#   s = 0 (no step) or step + 1 (steps counted from 0, at most `MAX_FAILURE_STEP`) and
#   f = 1 when flagged. Decoded: {"steps": rater -> task -> step, "flagged": rater ->
#   task ids}. The rubric detail is not in a link; only these.

FAILURE_STEPS = 0x04
"""Uploaded verifiers' first failure steps (the Trajectory page's marks)."""
MAX_FAILURE_STEP = 100_000
"""A step past this is not carried (no trajectory has that many)."""


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def encode_failure_steps(
    steps: dict[str, dict[str, int]], order: Tasks, flagged: dict[str, Any] | None = None
) -> bytes:
    """The section's bytes for rater id -> task id -> step and rater id -> flagged task ids
    (raters with neither, tasks the loaded data lacks and steps past `MAX_FAILURE_STEP`
    are left out)."""
    by_id = {task: i for (_, task), i in order.index.items()}
    flagged = flagged or {}
    raters = [r for r in dict.fromkeys([*steps, *flagged]) if steps.get(r) or flagged.get(r)]
    kept = {r: steps.get(r) or {} for r in raters}
    if len(kept) > MAX_VERIFIERS:
        raise LinkError(f"{len(kept)} verifiers: a link holds at most {MAX_VERIFIERS}")
    out = bytearray([len(kept)])
    for rater, per_task in kept.items():
        name = rater.removeprefix(UPLOAD_PREFIX).encode()
        codes = np.zeros(order.n, dtype=np.int64)
        for task, step in per_task.items():
            at = by_id.get(str(task))
            if at is not None and 0 <= int(step) <= MAX_FAILURE_STEP:
                codes[at] = 2 * (int(step) + 1)
        for task in flagged.get(rater) or ():
            at = by_id.get(str(task))
            if at is not None:
                codes[at] |= 1
        out += bytes([len(name)]) + name
        out += b"".join(_varint(int(c)) for c in codes)
    return bytes(out)


def _failure_steps_max(n: int) -> int:
    return 1 + MAX_VERIFIERS * (1 + 4 * MAX_NAME + 3 * n)


def _decode_failure_steps(data: bytes, order: Tasks) -> dict[str, dict[str, Any]]:
    pos = 0

    def byte() -> int:
        nonlocal pos
        if pos >= len(data):
            raise LinkError("the link's failure steps are damaged (they end early)")
        pos += 1
        return data[pos - 1]

    count = byte()
    if count > MAX_VERIFIERS:
        raise LinkError("the link's failure steps are damaged (too many verifiers)")
    out: dict[str, dict[str, int]] = {}
    flags: dict[str, set[str]] = {}
    for _ in range(count):
        length = byte()
        raw = data[pos : pos + length]
        pos += length
        try:
            name = raw.decode()
        except UnicodeDecodeError as exc:
            raise LinkError("the link's failure steps are damaged (a name is not text)") from exc
        if len(raw) != length or not name or clean_name(name) != name:
            raise LinkError("the link's failure steps are damaged (a verifier name)")
        rater = UPLOAD_PREFIX + name
        if rater in out:
            raise LinkError("the link's failure steps are damaged (a verifier twice)")
        steps: dict[str, int] = {}
        mine: set[str] = set()
        for i in range(order.n):
            value, shift = 0, 0
            while True:
                b = byte()
                value |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
                if shift > 21:
                    raise LinkError("the link's failure steps are damaged (a step too long)")
            if value > 2 * (MAX_FAILURE_STEP + 1) + 1:
                raise LinkError("the link's failure steps are damaged (a step past the bound)")
            if value >> 1:
                steps[order.ids[i]] = (value >> 1) - 1
            if value & 1:
                mine.add(order.ids[i])
        out[rater] = steps
        flags[rater] = mine
    if pos != len(data):
        raise LinkError("the link's failure steps are damaged (bytes after them)")
    return {
        "steps": {r: v for r, v in out.items() if v},
        "flagged": {r: v for r, v in flags.items() if v},
    }


register(Section(FAILURE_STEPS, "failure_steps", _failure_steps_max, _decode_failure_steps))


# --- the payload ------------------------------------------------------------------------


@dataclass(frozen=True)
class Decoded:
    """A decoded link: the uploaded verdict rows and any other known section's value."""

    rows: pd.DataFrame
    sections: dict[str, Any] = field(default_factory=dict)
    skipped: int = 0
    """Optional sections of a type this version does not know (ignored)."""


def encode(uploads: pd.DataFrame, order: Tasks, extra: Sequence[tuple[int, bytes]] = ()) -> str:
    """The payload for ``uploads`` (uploaded-verifier rows of `lib.table.verdicts`) on the
    tasks ``order``; ``extra``: other sections (type byte, bytes). May be longer than
    `MAX_CHARS`: the caller decides (`fits`)."""
    body = [(VERDICTS, _encode_verdicts(uploads, order)), *extra]
    raw = b"".join(SECTION_HEAD.pack(t, len(b)) + b for t, b in body)
    head = HEADER.pack(VERSION, order.fingerprint, order.n)
    data = head + zlib.compress(raw, 9)
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def fits(payload: str) -> bool:
    """Whether a payload is within the bound a link may carry."""
    return len(payload) <= MAX_CHARS


def decode(payload: str, order: Tasks) -> Decoded:
    """The verdicts a payload carries on the tasks ``order``; raises LinkError (one line).

    Bounded: the characters, then the header (version, task count, fingerprint) before
    decompression, then the decompressed size, verifiers and each section's bound."""
    if not isinstance(payload, str) or not payload:
        raise LinkError("the link's `v=` is empty")
    if len(payload) > MAX_CHARS:
        raise LinkError(
            f"the link's `v=` has {len(payload):,} characters: at most {MAX_CHARS:,} are read"
        )
    if not _CHARS.fullmatch(payload):
        raise LinkError("the link is damaged (characters a link never holds)")
    try:
        data = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    except (ValueError, TypeError) as exc:
        raise LinkError("the link is damaged (not base64url)") from exc
    if len(data) < HEADER.size:
        raise LinkError("the link is damaged (too short)")
    version, fingerprint, n_tasks = HEADER.unpack_from(data)
    if version != VERSION:
        raise LinkError(
            f"the link's format version is {version}; this app reads version {VERSION} "
            "(made by another version of the app)"
        )
    if n_tasks > MAX_TASKS or n_tasks != order.n:
        raise LinkError(
            f"the link was made for {n_tasks:,} tasks; the data loaded here has "
            f"{order.n:,} (another dataset or revision)"
        )
    if fingerprint != order.fingerprint:
        raise LinkError(
            "the link was made on another revision of the data (its task list differs "
            "from the one loaded here)"
        )
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(data[HEADER.size :], MAX_BODY_BYTES)
    except zlib.error as exc:
        raise LinkError("the link is damaged (its compressed data does not decode)") from exc
    if inflater.unconsumed_tail or not inflater.eof or inflater.unused_data:
        if inflater.unconsumed_tail:
            raise LinkError(
                f"the link decompresses to more than {MAX_BODY_BYTES // 2**20} MB: not read"
            )
        raise LinkError("the link is damaged (truncated or with trailing bytes)")
    return _sections(raw, order)


def _sections(raw: bytes, order: Tasks) -> Decoded:
    pos, rows, values, skipped, seen = 0, None, {}, 0, set()
    while pos < len(raw):
        if pos + SECTION_HEAD.size > len(raw):
            raise LinkError("the link is damaged (a section header ends early)")
        kind, length = SECTION_HEAD.unpack_from(raw, pos)
        pos += SECTION_HEAD.size
        if pos + length > len(raw):
            raise LinkError("the link is damaged (a section ends early)")
        if kind in seen:
            raise LinkError(f"the link is damaged (section {kind:#04x} twice)")
        seen.add(kind)
        section = SECTIONS.get(kind)
        if section is None:
            if kind & MUST_UNDERSTAND:
                raise LinkError(
                    f"the link holds a section this version of the app cannot read "
                    f"(type {kind:#04x}): made by a newer version"
                )
            skipped += 1
        elif length > section.max_bytes(order.n):
            raise LinkError(f"the link's {section.name} section is over its bound")
        else:
            value = section.decode(raw[pos : pos + length], order)
            if kind == VERDICTS:
                rows = value
            else:
                values[section.name] = value
        pos += length
    if rows is None:
        raise LinkError("the link is damaged (no verdicts in it)")
    return Decoded(rows, values, skipped)


def upload_csv_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """Uploaded verdict rows in the upload format (one row per verifier and task:
    `verifier`, `split`, `task_id`, `outcome`, `process`, `score`), to send as a file
    when the link would be too long. Reading it back gives the same verdicts."""
    keys = ["rater", "split", "task_id"]
    wide = rows.pivot_table(
        index=keys, columns="dimension", values="label", aggfunc="first", dropna=False
    )
    score = rows.dropna(subset=["score"]).groupby(keys, sort=False)["score"].first()
    out = rows[keys].drop_duplicates().set_index(keys)
    for dimension in ("outcome", "process"):
        if dimension in set(rows["dimension"]):
            out[dimension] = wide.get(dimension, pd.NA)
    out["score"] = score
    out = out.reset_index()
    out.insert(0, "verifier", out.pop("rater").astype(str).str.removeprefix(UPLOAD_PREFIX))
    if out["score"].isna().all():
        out = out.drop(columns="score")
    return out

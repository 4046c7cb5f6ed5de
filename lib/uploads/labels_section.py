"""A visitor's labels as bytes, for a self-contained link (`?v=`): one typed section.

Pure and bounded both ways, so the link codec (`lib.uploads.link_codec`, issue 36) can
carry it as its labels section: `encode(labels) -> bytes` and `decode(bytes, tasks) ->
labels`. `lib.uploads.link_codec` registers it (`link_codec.LABELS`); `ui.state` writes
and reads it (`full_payload`, `sync_link`). The type byte
has the high bit clear (optional): an app that does not know it skips the labels and
still opens the verdicts.

Layout (version 1), all integers unsigned LEB128 varints:

    version (=1) | n entries | n x (len(task_id) | task_id UTF-8 | code | len(note) | note UTF-8)

``code`` = 3 * dimension index (outcome 0, process 1) + label index (success 0, failure 1,
unsure 2), so 0..5.

Bounds are those of the labels file (`lib.uploads.labels`): at most `MAX_ROWS` entries,
task ids of `MAX_ID_CHARS`, notes of `MAX_NOTE_CHARS` (characters; bytes at most 4x),
and `MAX_SECTION_BYTES` in all. A decode checks every length against the bytes left before
it reads, so a forged count or length costs nothing; entries for unknown tasks are dropped
and counted (the same file may be opened on other data), as are duplicates (last wins).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from lib.uploads.labels import LABELS, MAX_ID_CHARS, MAX_NOTE_CHARS, MAX_ROWS, merge
from lib.vocab import DIMENSIONS

VERSION = 1
LABELS_TYPE = 0x02
"""The section's type byte in a `?v=` payload (optional: high bit clear)."""
MAX_SECTION_BYTES = 4 * 1024 * 1024
"""Largest encoded section accepted or produced."""


class SectionError(ValueError):
    """The section cannot be read (or written): the message says why."""


@dataclass(frozen=True)
class Decoded:
    labels: pd.DataFrame
    unknown_tasks: int


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    for i in range(5):  # at most 35 bits: every bound here is far below
        if pos + i >= len(data):
            raise SectionError("the labels section ends inside a number")
        byte = data[pos + i]
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos + i + 1
    raise SectionError("a number in the labels section is too long")


def encode(labels: pd.DataFrame) -> bytes:
    """The labels (task_id, dimension, label, note) as a section; raises SectionError over
    the bounds (more than `MAX_ROWS` entries or `MAX_SECTION_BYTES`)."""
    if len(labels) > MAX_ROWS:
        raise SectionError(f"{len(labels):,} labels; a link carries {MAX_ROWS:,} at most")
    out = bytearray(_varint(VERSION) + _varint(len(labels)))
    for task, dim, label, note in labels[["task_id", "dimension", "label", "note"]].itertuples(
        index=False
    ):
        tid = str(task)[:MAX_ID_CHARS].encode("utf-8")
        text = ("" if pd.isna(note) else str(note))[:MAX_NOTE_CHARS].encode("utf-8")
        code = 3 * DIMENSIONS.index(str(dim)) + LABELS.index(str(label))
        out += _varint(len(tid)) + tid + _varint(code) + _varint(len(text)) + text
        if len(out) > MAX_SECTION_BYTES:
            raise SectionError(f"the labels need more than {MAX_SECTION_BYTES:,} bytes")
    return bytes(out)


def _take(data: bytes, pos: int, n: int, limit: int, what: str) -> tuple[str, int]:
    if n > limit:
        raise SectionError(f"a {what} of {n:,} bytes (at most {limit:,})")
    if pos + n > len(data):
        raise SectionError(f"the labels section ends inside a {what}")
    try:
        return data[pos : pos + n].decode("utf-8"), pos + n
    except UnicodeDecodeError as exc:
        raise SectionError(f"a {what} is not UTF-8") from exc


def decode(data: bytes, tasks: dict[str, str]) -> Decoded:
    """The labels of a section (``tasks``: task id -> split, the tasks one may label)."""
    if len(data) > MAX_SECTION_BYTES:
        raise SectionError(f"a labels section of {len(data):,} bytes (at most "
                           f"{MAX_SECTION_BYTES:,})")  # fmt: skip
    version, pos = _read_varint(data, 0)
    if version != VERSION:
        raise SectionError(f"labels section version {version} (this app reads {VERSION})")
    count, pos = _read_varint(data, pos)
    if count > MAX_ROWS:
        raise SectionError(f"{count:,} labels (at most {MAX_ROWS:,})")
    rows: list[dict] = []
    unknown = 0
    for _ in range(count):
        n, pos = _read_varint(data, pos)
        task, pos = _take(data, pos, n, 4 * MAX_ID_CHARS, "task id")
        code, pos = _read_varint(data, pos)
        if code >= 3 * len(DIMENSIONS):
            raise SectionError(f"an unknown label code {code}")
        n, pos = _read_varint(data, pos)
        note, pos = _take(data, pos, n, 4 * MAX_NOTE_CHARS, "note")
        if task not in tasks:
            unknown += 1
            continue
        dim, label = DIMENSIONS[code // 3], LABELS[code % 3]
        rows.append({"split": tasks[task], "task_id": task, "dimension": dim, "label": label,
                     "note": note[:MAX_NOTE_CHARS]})  # fmt: skip
    if pos != len(data):
        raise SectionError(f"{len(data) - pos:,} bytes after the last label")
    frame = pd.DataFrame(rows, columns=["split", "task_id", "dimension", "label", "note"])
    return Decoded(merge(None, frame), unknown)


def max_bytes(n_tasks: int) -> int:
    """The section's bound for `link_codec.Section` (whatever the number of tasks: the
    payload's own bounds, 32,768 characters and 4 MB decompressed, come first)."""
    return MAX_SECTION_BYTES

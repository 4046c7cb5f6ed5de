"""A SHA-256 digest of the canonical bytes of a frame: the key of a cache shared by sessions.

Why: the Agreement and Slices result caches are shared by every visitor, and a session's
uploads are part of their key. The old key, `int(hash_pandas_object(frame.astype(str))
.sum())`, was a sum of 64-bit row hashes: it ignores row order and collides cheaply (swap a
value between two rows, or a birthday search over a few million candidate rows: issue 26),
so one visitor could choose the numbers another was shown. A cryptographic digest of bytes
that determine the frame exactly cannot be steered that way.

Canonical bytes: the shape, then per column its name, dtype and values, every part
length-prefixed, so no two different frames (different values, dtypes, column names, row
order, or a value moved across a column boundary) give the same byte string. Values:
fixed-width numbers as their machine bytes (masked extension dtypes: mask, then the values
with missing ones zeroed); strings as UTF-8 with their byte lengths; mixed object columns
as each value's type name and `repr` (`1`, `1.0`, `"1"`, None and NaN all differ). The
index is not part of it (the cached results never read it). Equal frames built in
different ways may still give different digests only where pandas keeps a different dtype:
that is a cache miss, never a collision.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any

import numpy as np
import pandas as pd


def _feed(h: hashlib._Hash, part: bytes | memoryview) -> None:
    """One length-prefixed part (the prefix keeps the boundaries between parts)."""
    h.update(struct.pack("<Q", len(part)))
    h.update(part)


def _strings(h: hashlib._Hash, texts: Any) -> None:
    """Strings (or missing): the missing mask, each string's UTF-8 byte length, the bytes.

    Through pyarrow, with no Python object per cell: ``texts`` is a list, an object array
    or a pandas string column."""
    import pyarrow as pa

    array = pa.array(texts, type=pa.large_string(), from_pandas=True)
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    _feed(h, array.is_null().to_numpy(zero_copy_only=False).tobytes())
    buffers = array.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int64)[array.offset :][: len(array) + 1]
    if not len(offsets):
        offsets = np.zeros(1, dtype=np.int64)
    _feed(h, np.diff(offsets).astype("<i8").tobytes())
    data = buffers[2]
    start, end = int(offsets[0]), int(offsets[-1])
    _feed(h, memoryview(data)[start:end] if data is not None else b"")


def _column(h: hashlib._Hash, column: pd.Series) -> None:
    dtype = column.dtype
    _feed(h, str(dtype).encode())
    if isinstance(dtype, pd.CategoricalDtype):
        column = column.astype(object)
        dtype = column.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "biufcmM":
        _feed(h, np.ascontiguousarray(column.to_numpy()).tobytes())
        return
    if isinstance(dtype, pd.StringDtype):  # one kind of missing per dtype (named above)
        _strings(h, column)
        return
    numpy_dtype = getattr(dtype, "numpy_dtype", None)
    if numpy_dtype is not None and numpy_dtype.kind in "biufc":  # Int8, Float64, boolean
        _feed(h, column.isna().to_numpy().tobytes())
        _feed(h, column.to_numpy(dtype=numpy_dtype, na_value=0).tobytes())
        return
    values = column.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(values, skipna=True) in ("string", "empty"):
        missing = np.asarray(pd.isna(values), dtype=bool)
        _strings(h, [type(v).__name__ for v in values[missing]])  # which missing, exactly
        _strings(h, np.where(missing, None, values))
        return
    _feed(h, b"tagged")
    _strings(h, [f"{type(v).__name__}:{v!r}" for v in values])


def frame_digest(frame: pd.DataFrame) -> str:
    """The hex SHA-256 of `frame`'s canonical bytes (module docstring).

    >>> a = pd.DataFrame({"x": ["1", "2"], "y": [1, 2]})
    >>> frame_digest(a) == frame_digest(a.copy())
    True
    >>> frame_digest(a) == frame_digest(a.iloc[::-1])  # row order counts
    False
    >>> frame_digest(a) == frame_digest(a.assign(y=[1.0, 2.0]))  # so does the dtype
    False
    """
    h = hashlib.sha256()
    _feed(h, struct.pack("<QQ", len(frame), len(frame.columns)))
    for name in frame.columns:
        _feed(h, f"{type(name).__name__}:{name!r}".encode())
        _column(h, frame[name])
    return h.hexdigest()

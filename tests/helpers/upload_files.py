"""Uploaded files made from a frame, for the upload tests (never stored)."""

from __future__ import annotations

import io

import pandas as pd

FORMATS: tuple[str, ...] = ("csv", "jsonl", "json", "parquet")
"""The file formats `encode` writes (an upload's format is its file name's extension)."""


def encode(frame: pd.DataFrame, fmt: str) -> bytes:
    """``frame`` as the bytes of a ``fmt`` file, written as a visitor's tool would: so one
    test feeds every reader the same rows."""
    if fmt == "csv":
        return frame.to_csv(index=False).encode()
    if fmt == "jsonl":
        return frame.to_json(orient="records", lines=True).encode()
    if fmt == "json":
        return frame.to_json(orient="records").encode()
    if fmt == "parquet":
        buffer = io.BytesIO()
        frame.to_parquet(buffer)
        return buffer.getvalue()
    raise ValueError(f"fmt must be one of {FORMATS}, got {fmt!r}")

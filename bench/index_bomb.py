"""The offset-index bomb (issue 31): CPU and memory of opening a trajectory whose row
group's screenshot offset index is 16 MiB of empty structs, then of the next open.

`python -m bench.index_bomb` writes the small demo mirror to a temporary folder (the
`current` layout, 12 rows per group), rewrites the first om2w shard so row group 0 points
at the bomb, and in this process, with psutil sampling RSS every 5 ms:
- parses the bomb bytes directly (`lib.data.parquet.thrift_compact.read_struct`, default
  budget) and a bomb of `MAX_INDEX_BYTES` (under the byte cap: only the value budget stops it);
- opens row 0 through `ShotStore.wait` (the first open: rejected, then the fallback reads
  the row group), then row 1 of the same group with the disk entries deleted (the next
  open: must go straight to the fallback, no index fetched or parsed).
Prints one line per step: CPU seconds (process time, all threads) and RSS above the
step's start (peak sampled). Before the fix the first open cost 29-35 s and 2.9 GB.
"""

from __future__ import annotations

import os
import struct
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from lib.data.parquet import page_index as pix
from lib.data.parquet import thrift_compact as tc

BOMB_BYTES = 16 << 20
SHARD = "trajectories/fara7b_om2w_browserbase-00000-of-00002.parquet"


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def empty_struct_index(total: int = BOMB_BYTES) -> bytes:
    """An OffsetIndex whose page-location list is ``total`` bytes of empty structs (one
    byte each: a STOP), which passes every check on bytes."""
    n = total - 8
    return bytes([0x19, 0xFC]) + _varint(n) + b"\x00" * n + b"\x00"


def with_index_bomb(path: Path, group: int = 0, bomb: bytes | None = None) -> None:
    """Rewrite the parquet file ``path`` so that row group ``group``'s screenshot column
    points at ``bomb`` (default: 16 MiB of empty structs) as its offset index."""
    bomb = empty_struct_index() if bomb is None else bomb
    data = path.read_bytes()
    meta_len = struct.unpack("<I", data[-8:-4])[0]
    body = data[: len(data) - 8 - meta_len]
    meta = pix.footer_meta(data)
    column = pix.leaf_column(meta)
    chunk = meta.get(4).values[group].get(1).values[column]  # type: ignore[union-attr]
    chunk.set(4, tc.I64, len(body))
    chunk.set(5, tc.I32, len(bomb))
    footer = tc.write_struct(meta)
    path.write_bytes(body + bomb + footer + struct.pack("<I", len(footer)) + b"PAR1")


def measure(what: str, step: Callable[[], object]) -> None:
    """Run ``step``; print its CPU seconds and its RSS peak above the start (psutil)."""
    import psutil

    me = psutil.Process()
    start_rss = peak = me.memory_info().rss
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, me.memory_info().rss)
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        result = step()
    except Exception as exc:  # the expected rejections: print them
        result = f"{type(exc).__name__}: {exc}"
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    done.set()
    sampler.join()
    print(
        f"{what}: {cpu:.3f} s CPU, {wall:.3f} s wall, +{(peak - start_rss) / 2**20:.1f} MB "
        f"RSS peak -> {str(result)[:110]}"
    )


def main() -> None:
    from lib.mirror.hub import write_mirror
    from tools.relayout import relayout_as

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["CUAVB_CACHE_DIR"] = str(root / "cache")
        folder = relayout_as(write_mirror(root / "demo"), root / "m", "current", 12)
        with_index_bomb(folder / SHARD)
        bomb, small = empty_struct_index(), empty_struct_index(pix.MAX_INDEX_BYTES)
        outer = (pix.MAX_INDEX_BYTES - 8) // 17  # structs of 14-element lists: each list fits
        nested = bytes([0x19, 0xFC]) + _varint(outer) + (b"\x19\xec" + b"\x00" * 15) * outer
        measure("read_struct(16 MiB of empty structs)", lambda: tc.read_struct(bomb))
        measure("read_offset_index(16 MiB bomb)", lambda: pix.read_offset_index(bomb))
        measure(
            f"read_offset_index({len(small):,} bytes of empty structs)",
            lambda: pix.read_offset_index(small),
        )
        measure(
            f"read_offset_index({len(nested):,} bytes of nested 14-element lists)",
            lambda: pix.read_offset_index(nested),
        )
        measure(
            "read_struct(16 MiB of boolean fields, default budget)",
            lambda: tc.read_struct(b"\x11" * BOMB_BYTES),
        )
        from tests.helpers.shot_store import OM2W, om2w_store

        store = om2w_store(folder)
        measure("first open (row 0 of the bombed group)", lambda: store.wait(OM2W, 0).path)
        for entry in store.dir.glob("*.shots"):
            entry.unlink()
        store._memory.clear()
        parses: list[int] = []
        parse = pix.read_offset_index
        pix.read_offset_index = lambda d: parses.append(len(d)) or parse(d)  # type: ignore[assignment]
        measure("next open (row 1, same group, entries deleted)", lambda: store.wait(OM2W, 1).path)
        print(f"offset-index parses in the next open: {len(parses)}")


if __name__ == "__main__":
    main()

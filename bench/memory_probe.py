"""Where an instrumented server's memory is: a diagnosis probe for `bench.sessions --hostile`.

Set ``BENCH_PROBE=PATH`` in the environment of `bench.server.serve` and touch ``PATH.req``
(its text is the label): a daemon thread in the server then appends one JSON line to PATH
with the server's RSS, glibc's heap figures (`mallinfo2`: in use, free inside the heap,
mmapped), pyarrow's pool, Streamlit's sessions (connected, kept for reconnect), its media
and uploaded files, the sizes its stats manager reports (st.cache_data, session_state),
and every `ui.state.bounded_cache`. ``BENCH_TRACEMALLOC=1`` adds the Python allocations
grown most since the previous probe, by line. Read-only: it changes nothing it measures (it
is a bench instrument, not part of the app, so it may read Streamlit's internals).
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import sys
import threading
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                     "uordblks", "fordblks", "keepcost")
    ]  # fmt: skip


def _mb(n: float) -> float:
    return round(n / 1e6, 1)


def malloc_figures() -> dict[str, float]:
    """glibc's heap in MB: `in_use` (malloc'd), `free` (held by the arenas, not in use),
    `mmapped` (large blocks, given back on free)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
        m = libc.mallinfo2()
    except (OSError, AttributeError):
        return {}
    return {"in_use": _mb(m.uordblks), "free": _mb(m.fordblks), "mmapped": _mb(m.hblkhd),
            "arena": _mb(m.arena)}  # fmt: skip


def arenas() -> dict[str, float]:
    """Every glibc arena (`malloc_info`; `mallinfo2` counts the main one only), in MB:
    how many, the bytes they hold from the system, and what of it is free inside them."""
    import re
    import tempfile

    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.fopen.restype = ctypes.c_void_p
        libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        libc.fclose.argtypes = [ctypes.c_void_p]
        libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
        with tempfile.NamedTemporaryFile(suffix=".xml") as tmp:
            fp = libc.fopen(tmp.name.encode(), b"w")
            libc.malloc_info(0, fp)
            libc.fclose(fp)
            xml = Path(tmp.name).read_text()
    except (OSError, AttributeError):
        return {}
    heaps = re.findall(r'<heap nr="\d+">(.*?)</heap>', xml, re.S)
    current = [int(re.search(r'<system type="current" size="(\d+)"', h).group(1)) for h in heaps]
    free = [sum(int(x) for x in re.findall(r'<total type="\w+" count="\d+" size="(\d+)"', h))
            for h in heaps]  # fmt: skip
    return {"n": len(heaps), "system": _mb(sum(current)), "free": _mb(sum(free)),
            "main_system": _mb(current[0]) if current else 0.0}  # fmt: skip


def pymalloc() -> dict[str, float]:
    """Python's small-object allocator (objects up to 512 bytes live in its own 1 MiB
    arenas, mmapped, not in glibc's): arenas held, bytes in live objects and free inside
    them (an arena goes back to the system only once all its objects are freed)."""
    import re
    import tempfile

    with tempfile.TemporaryFile(mode="w+") as tmp:
        saved = os.dup(2)
        try:
            sys.stderr.flush()
            os.dup2(tmp.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read()

    def number(label: str) -> int:
        found = re.search(re.escape(label) + r"\s*=\s*([\d,]+)", text)
        return int(found.group(1).replace(",", "")) if found else 0

    return {"arenas": number("# arenas allocated current"),
            "live_mb": _mb(number("# bytes in allocated blocks")),
            "free_mb": _mb(number("# bytes in available blocks")
                           + number("# bytes in completely free pools"))}  # fmt: skip


def mappings() -> dict[str, float]:
    """RSS by kind (MB, /proc/self/smaps): anonymous memory (the heaps) vs file pages (the
    loaded libraries, memory-mapped files)."""
    anon = file = 0
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("Anonymous",):
            anon = int(rest.split()[0])
        elif key == "Rss":
            file = int(rest.split()[0])
    return {"anon": round(anon / 1024, 1), "file": round((file - anon) / 1024, 1)}


def _rss() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def streamlit_figures() -> dict[str, Any]:
    """Sessions, media files, uploads and the stats manager's sizes (MB)."""
    from streamlit import runtime

    if not runtime.exists():
        return {}
    rt = runtime.get_instance()
    mgr = rt._session_mgr
    stored = getattr(getattr(mgr, "_session_storage", None), "_cache", None)
    media = rt.media_file_mgr
    with media._lock:
        files = dict(getattr(media._storage, "_files_by_id", {}))
        by_session = {s: len(c) for s, c in media._files_by_session_and_coord.items()}
    out: dict[str, Any] = {
        "sessions_connected": len(mgr._active_session_info_by_id),
        "sessions_stored": len(getattr(stored, "_data", {})),
        "media_files": len(files),
        "media_mb": _mb(sum(len(f.content) for f in files.values())),
        "media_sessions": len(by_session),
    }
    sizes: Counter[str] = Counter()
    try:
        for family, stats in rt.stats_mgr.get_stats().items():
            for stat in stats:
                length = getattr(stat, "byte_length", None)
                if length is not None:
                    sizes[f"{family}:{getattr(stat, 'category_name', '')}"] += length
    except Exception as exc:  # a stats provider that fails must not stop the probe
        sizes[f"error {type(exc).__name__}"] = 0
    out["stats_mb"] = {k: _mb(v) for k, v in sizes.items()}
    return out


def app_figures() -> dict[str, Any]:
    """Every `ui.state.bounded_cache`: entries and MB held."""
    state = sys.modules.get("ui.state")
    caches = getattr(state, "BOUNDED_CACHES", {}) if state else {}
    return {name: [len(c), _mb(c.nbytes)] for name, c in caches.items()}


def arrow_figures() -> dict[str, Any]:
    pa = sys.modules.get("pyarrow")
    if pa is None:
        return {}
    pool = pa.default_memory_pool()
    return {"pool": pool.backend_name, "allocated_mb": _mb(pool.bytes_allocated()),
            "total_mb": _mb(pa.total_allocated_bytes())}  # fmt: skip


_FIRST: list[tracemalloc.Snapshot] = []


def traced(top: int = 25) -> list[str]:
    if not tracemalloc.is_tracing():
        return []
    snap = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, tracemalloc.__file__)]
    )
    previous = _FIRST[-1] if _FIRST else snap
    _FIRST[:] = [snap]  # the next probe compares with this one
    stats = snap.compare_to(previous, "lineno")[:top]
    return [f"{s.size_diff / 1e6:+.1f} MB ({s.count_diff:+d}) {s.traceback[0]}" for s in stats]


def figures(label: str) -> dict[str, Any]:
    out: dict[str, Any] = {"label": label, "time": time.time(), "rss_mb": round(_rss(), 1)}
    gc.collect()
    for name, part in (("malloc", malloc_figures), ("arenas", arenas), ("rss", mappings),
                       ("pymalloc", pymalloc), ("streamlit", streamlit_figures),
                       ("bounded_caches", app_figures), ("arrow", arrow_figures),
                       ("tracemalloc", traced)):  # fmt: skip
        try:
            out[name] = part()
        except Exception as exc:
            out[name] = f"{type(exc).__name__}: {exc}"
    out["rss_after_gc_mb"] = round(_rss(), 1)
    return out


def start(path: str) -> None:
    """The probe thread: waits for PATH.req, answers with one line in PATH."""
    if os.environ.get("BENCH_TRACEMALLOC"):
        tracemalloc.start(1)
    request = Path(path + ".req")

    def loop() -> None:
        while True:
            time.sleep(0.2)
            if not request.exists():
                continue
            label = request.read_text().strip()
            line = json.dumps(figures(label), default=str)
            with open(path, "a") as fh:
                fh.write(line + "\n")
            request.unlink(missing_ok=True)

    threading.Thread(target=loop, name="bench-memory-probe", daemon=True).start()


def ask(path: Path, label: str, timeout: float = 120.0) -> dict[str, Any] | None:
    """From the bench: ask the server's probe for its figures and wait for the answer."""
    before = path.read_text().count("\n") if path.exists() else 0
    Path(str(path) + ".req").write_text(label)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            lines = path.read_text().splitlines()
            if len(lines) > before:
                return json.loads(lines[-1])
        time.sleep(0.2)
    return None

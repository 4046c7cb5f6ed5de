"""Imports the other pages need, made in one background thread after the first page.

A visitor's first page pays for its own imports; the modules the next pages need
(altair and its JSON schema, the chart builders, scipy.special, Pillow, the analysis
modules) are then imported by a daemon thread while the visitor reads, so the first
Agreement render does not pay for them (issue 39: 2.1 s of server CPU before, of which
about half was first-use imports). The thread only imports library modules (`lib.*` and
third-party packages): it never calls Streamlit, and a module that fails to import is
skipped (the page that needs it raises as before). Started once per process.
"""

from __future__ import annotations

import importlib
import logging
import threading

log = logging.getLogger(__name__)

MODULES: tuple[str, ...] = (
    "altair",
    "jsonschema",
    "scipy.special",
    "PIL.Image",
    "lib.charts.agreement",
    "lib.charts.judges",
    "lib.charts.shifts",
    "lib.charts.quadrant",
    "lib.analysis.agreement",
    "lib.analysis.parity",
    "lib.analysis.judges",
    "lib.analysis.shifts",
    "lib.analysis.scores",
    "lib.analysis.quadrant",
    # the Agreement page's other first-use imports (issue 39, measured by
    # bench/agreement_first.py: 46 modules, about 0.1 s of CPU, before this)
    "lib.analysis.corrected_success",
    "lib.analysis.audit",
    "lib.analysis.ceiling",
    "lib.digest",
    "lib.viewer.links",
    "narwhals._pandas_like.dataframe",
    "narwhals._pandas_like.namespace",
    "narwhals._interchange.dataframe",
    "pandas.io.formats.csvs",
    "pandas.io.formats.string",
)
"""What the pages after the first import (each skipped when already imported)."""

_lock = threading.Lock()
_thread: threading.Thread | None = None


def start() -> threading.Thread:
    """Start the warm-up thread unless it was started before; return it."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_warm, name="cuavb-warmup", daemon=True)
            _thread.start()
        return _thread


def _warm() -> None:
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # the page that needs it will say why
            log.debug("warm-up import of %s failed", name, exc_info=True)

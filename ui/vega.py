"""`altair_chart`: `st.altair_chart` without the JSON-schema validation of our own specs.

Streamlit turns an altair chart into Vega-Lite with ``chart.to_dict()``, whose default
``validate=True`` checks the whole spec against Vega-Lite's JSON schema on every draw:
about 0.2-0.4 s of server CPU on the first Agreement render (issue 39). The charts of
`lib.charts` are ours and fixed in code; their unit tests (tests/unit/test_charts*.py)
call ``to_dict()`` with validation, so a spec that breaks the schema still fails a test.
The spec drawn is the same dict either way (validation only checks, it changes nothing).
Every page draws its charts through here, and the test suite sets `CHECK_ENV`: there each
draw is validated first, so a page's AppTest fails on any chart that breaks the schema.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import streamlit as st

CHECK_ENV = "CUAVB_CHECK_CHARTS"
"""Set to "1" (the test suite does, in conftest.py): every chart is validated before it is drawn."""


def altair_chart(chart: Any, **kwargs: Any) -> Any:
    """`st.altair_chart` of ``chart`` (a `lib.charts` chart), its spec not re-validated."""
    if os.environ.get(CHECK_ENV) == "1":
        chart.to_dict(validate=True)  # raises on a spec that breaks Vega-Lite's schema
    drawn = chart.copy(deep=False)  # a shallow copy of our own: ``chart`` is left as it is
    unvalidated = functools.partial(type(drawn).to_dict, drawn, validate=False)
    object.__setattr__(drawn, "to_dict", unvalidated)  # this copy only, for this draw
    return st.altair_chart(drawn, **kwargs)

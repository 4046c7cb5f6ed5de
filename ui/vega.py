"""`altair_chart`: `st.altair_chart` without the JSON-schema validation of our own specs.

Streamlit turns an altair chart into Vega-Lite with ``chart.to_dict()``, whose default
``validate=True`` checks the whole spec against Vega-Lite's JSON schema on every draw:
about 0.2-0.4 s of server CPU on the first Agreement render (issue 39). The charts of
`lib.charts` are ours and fixed in code; their unit tests (tests/unit/test_charts*.py)
call ``to_dict()`` with validation, so a spec that breaks the schema still fails a test.
The spec drawn is the same dict either way (validation only checks, it changes nothing).
"""

from __future__ import annotations

import functools
from typing import Any

import streamlit as st


def altair_chart(chart: Any, **kwargs: Any) -> Any:
    """`st.altair_chart` of ``chart`` (a `lib.charts` chart), its spec not re-validated."""
    drawn = chart.copy(deep=False)  # a shallow copy of our own: ``chart`` is left as it is
    unvalidated = functools.partial(type(drawn).to_dict, drawn, validate=False)
    object.__setattr__(drawn, "to_dict", unvalidated)  # this copy only, for this draw
    return st.altair_chart(drawn, **kwargs)

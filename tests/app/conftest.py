"""AppTest modules: the result caches are emptied once per module.

`st.cache_data` lives in the test process, like a server's caches. Each module starts with
them empty, so no module sees results another module computed (or a monkeypatched
function's); the tests of one module share them, as the sessions of one server do, so a
page's bootstraps are computed once per module instead of once per test (the 25 modules
this changed: 240 -> 219 s of CPU, serial, one file at a time). A module that needs empty
caches per test (a metric registered for one test, the demo's state) clears them in its
own fixture.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import streamlit as st


@pytest.fixture(scope="module", autouse=True)
def _fresh_caches() -> Iterator[None]:
    st.cache_data.clear()
    yield

"""Every hostile payload through every way the app shows text
(tests/browser/test_browser_hostile_text.py).

`?mode=safe` (default): through `ui.safe_text`. `?mode=raw`: the payloads as they are, so the
test can show that its checks do fail on unsafe rendering. `HOSTILE_PORT`: the 127.0.0.1
port the corpus plants URLs on (the test listens there).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pandas as pd
import streamlit as st

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.helpers.hostile_payloads import payloads  # noqa: E402
from ui import safe_text  # noqa: E402

PORT = int(os.environ.get("HOSTILE_PORT", "9"))
mode = st.query_params.get("mode", "safe")
only = st.query_params.get("only", "")
raw = mode == "raw"
corpus = payloads(PORT)
if only:
    corpus = {k: v for k, v in corpus.items() if k == only}

md = (lambda p: p) if raw else (lambda p: safe_text.inert(p, 2000))
pl = (lambda p: p) if raw else (lambda p: safe_text.plain(p, 2000))

st.title("Hostile text")
for name, payload in corpus.items():
    with st.container(key=f"p_{name}"):
        st.markdown(md(payload))
        st.caption(md(payload))
        st.warning(md(payload))
        st.error(md(payload))
        st.info(md(payload))
        st.selectbox(md(payload), [payload], format_func=pl, key=f"sel_{name}")
        st.radio("radio", [payload], format_func=md, key=f"rad_{name}")
        with st.expander(md(payload)):
            st.text(pl(payload))
        st.dataframe(pd.DataFrame({"value": [pl(payload)]}), hide_index=True)
        st.table(pd.DataFrame({"value": [md(payload)]}), hide_index=True)  # cells are Markdown
        st.multiselect("multi", [payload], default=[payload], format_func=pl, key=f"ms_{name}")
        st.button(md(payload), key=f"btn_{name}")
        if not raw:
            safe_text.warning("Unknown split **{}**: showing all.", payload)
            safe_text.show_long_text("Instruction", payload, preview_chars=40)

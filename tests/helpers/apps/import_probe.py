"""Run the app's first script run (AppTest) in this fresh interpreter; print JSON.

`python tests/helpers/apps/import_probe.py [PAGE_FILE]` -> {"modules": {...}, "exceptions": [...],
"titles": [...]}: which heavy packages that one run imported. tests/unit/test_startup_imports.py
starts it as a subprocess so nothing the test process imported counts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[3]
WATCHED = ("datasets", "sklearn", "scipy", "altair", "statsmodels")


def main() -> None:
    sys.path.insert(0, str(ROOT))
    before = {m for m in WATCHED if m in sys.modules}
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    if len(sys.argv) > 1:
        at.switch_page(sys.argv[1])
    at.run()
    out = {
        "before": sorted(before),
        "modules": {m: m in sys.modules for m in WATCHED},
        "exceptions": [str(e.value)[:500] for e in at.exception],
        "titles": [t.value for t in at.title],
        "sidebar": [str(m.value) for m in at.sidebar.markdown]
        + [c.value for c in at.sidebar.caption],
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()

"""Start-up cost: the app's first script run imports neither `datasets` nor scikit-learn
unless it uses them (Community Cloud's CPU floor is small: scikit-learn is ~0.8 s of
CPU, `datasets` 0.25 s and 19 MB).

Each run is a fresh interpreter (tests/helpers/apps/import_probe.py) on the default source, the
Hub, served by tools/local_hub.py. The first process fills the light-data cache (its
cold load parses the shards' declared features, which may use `datasets`); every later
start, as on Cloud after the first visitor, must not import it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools.local_hub import Hub, serving

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests/helpers/apps/import_probe.py"


def _first_run(env: dict[str, str], page: str | None = None) -> dict:
    args = [sys.executable, str(PROBE), *([page] if page else [])]
    full_env = {**os.environ, **env}
    full_env.pop("CUAVB_RAISE_ERRORS", None)
    done = subprocess.run(args, env=full_env, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def hub_env(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("startup")
    hub = Hub(mirror_dir)
    with serving(hub) as hub_url:
        env = {
            "HF_ENDPOINT": hub_url,
            "HF_HUB_OFFLINE": "0",
            "HF_HOME": str(tmp / "hf"),
            "CUAVB_CACHE_DIR": str(tmp / "cuavb"),
            "CUAVB_DEMO_DIR": str(tmp / "no-demo"),
            "HF_HUB_DISABLE_XET": "1",
            "CUAVB_DATA": "",
        }
        cold = _first_run(env)  # fills the light cache, as the first visitor would
        assert cold["exceptions"] == [] and cold["titles"], cold
        yield env, hub


def test_a_started_app_imports_neither_datasets_nor_sklearn_for_home(hub_env) -> None:
    env, hub = hub_env
    run = _first_run(env)
    assert run["before"] == [], run  # the probe itself imported none of them
    assert run["exceptions"] == [], run
    assert run["titles"], run  # the Home page was drawn...
    assert any(hub.sha[:8] in s for s in run["sidebar"]), run  # ...on the Hub data, not the demo
    assert run["modules"]["datasets"] is False, run
    assert run["modules"]["sklearn"] is False, run
    assert run["modules"]["scipy"] is False, run


@pytest.mark.parametrize("page", ["pages/2_Judges.py", "pages/3_Shifts.py"])
def test_pages_without_a_roc_curve_do_not_import_sklearn(hub_env, page: str) -> None:
    env, _ = hub_env
    run = _first_run(env, page)
    assert run["exceptions"] == [] and run["titles"], run
    assert run["modules"]["sklearn"] is False, run
    assert run["modules"]["datasets"] is False, run

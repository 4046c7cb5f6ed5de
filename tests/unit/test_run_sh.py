"""`./run.sh` on a first run (issue 39): pip's lines appear as pip writes them, and a
progress line comes while pip is silent (unpacking the wheels said nothing for 82 s), so
a newcomer never watches a still terminal; a failed install says where its log is. pip and
streamlit are stand-ins here (no network, no install)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from tests.helpers.slack import scaled

ROOT = Path(__file__).resolve().parents[2]

FAKE_PIP = """#!/usr/bin/env bash
echo "Collecting alpha==1.0 (from -r requirements.txt (line 1))"
echo "  Downloading alpha-1.0-py3-none-any.whl (10 kB)"
sleep 2
echo "Installing collected packages: alpha"
sleep 4
echo "Successfully installed alpha-1.0"
exit "${FAKE_PIP_EXIT:-0}"
"""


def _checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".venv" / "bin").mkdir(parents=True)
    shutil.copy(ROOT / "run.sh", repo / "run.sh")
    (repo / "requirements.txt").write_text("alpha==1.0\n")
    scripts = {
        "python": "#!/usr/bin/env bash\nexit 0\n",
        "pip": FAKE_PIP,
        "streamlit": '#!/usr/bin/env bash\necho "STREAMLIT $*"\n',
    }
    for name, text in scripts.items():
        path = repo / ".venv" / "bin" / name
        path.write_text(text)
        path.chmod(0o755)
    return repo


def _run(repo: Path, **env: str) -> tuple[list[tuple[float, str]], int]:
    """run.sh's stdout lines with the seconds at which each arrived, and its exit code."""
    environment = {**os.environ, "CUAVB_DATA": "a-folder", "CUAVB_RUN_TICK": "1", **env}
    started = time.monotonic()
    proc = subprocess.Popen(
        ["bash", str(repo / "run.sh")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, env=environment, cwd=repo,
    )  # fmt: skip
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append((time.monotonic() - started, line.rstrip("\n")))
    return lines, proc.wait(scaled(60))


def test_first_run_shows_the_install_as_it_goes(tmp_path: Path) -> None:
    repo = _checkout(tmp_path)
    lines, code = _run(repo)
    text = [line for _, line in lines]
    assert code == 0, text
    at = {line.strip().split(" ")[0]: t for t, line in lines if not line.startswith("[")}
    assert at["Collecting"] < at["Successfully"] - 3  # shown when pip said it, not at the end
    ticks = [t for t, line in lines if "still installing" in line]
    assert ticks and at["Installing"] < ticks[0] < at["Successfully"], text
    assert "[run.sh] Packages installed." in text
    assert text[-1] == "STREAMLIT run app.py --browser.serverAddress localhost"
    assert not any("Warning" in line or "warning" in line for line in text), text
    assert (repo / ".venv" / "pip-install.log").read_text().count("Collecting") == 1
    again, code = _run(repo)  # installed: no pip at all
    assert code == 0 and not any("Install" in line for _, line in again)


def test_a_failed_install_names_its_log(tmp_path: Path) -> None:
    repo = _checkout(tmp_path)
    lines, code = _run(repo, FAKE_PIP_EXIT="3")
    text = [line for _, line in lines]
    assert code == 3 and "pip failed (exit 3)" in text[-1] and "pip-install.log" in text[-1]
    assert not (repo / ".venv" / ".installed-app").exists()

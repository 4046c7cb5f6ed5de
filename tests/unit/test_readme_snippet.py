"""The README's notebook snippet, as written, offline (issue 39): it used to name the Hub
id, which raises SourceError offline after a long traceback. It runs on the default
source, which falls back to the built-in demo in one warning line, as the CLI does; it
prints no warning of Python's and leaves no process behind."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import psutil

from lib.data.demo import builder as demo_build
from tests.helpers.slack import scaled

ROOT = Path(__file__).resolve().parents[2]


def notebook_snippet() -> str:
    """The first python block after the README's "In a notebook" heading, verbatim."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### In a notebook") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "no python block under 'In a notebook'"
    return match[1]


def test_the_readme_notebook_snippet_runs_offline(tmp_path: Path) -> None:
    snippet = notebook_snippet()
    assert "report.tables(" in snippet
    check = (
        "\nframe = t['agreement']\n"
        "assert len(frame) > 0 and frame.attrs['synthetic_demo'] is True, frame.attrs\n"
        "print('ROWS', len(frame), frame.attrs['source'])\n"
    )
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        demo_build.DEMO_DIR_ENV: str(tmp_path / "demos"),  # not built: the generated tables
        "CUAVB_CACHE_DIR": str(tmp_path / "cache"),
    }
    env.pop("CUAVB_DATA", None)
    run = subprocess.run(
        [sys.executable, "-c", snippet + check], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=scaled(600),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert "ROWS" in run.stdout
    lines = [x for x in run.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "Serving the built-in demo" in lines[0], run.stderr
    leftover = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if demo_build.is_builder(cmdline) and any(str(tmp_path) in a for a in cmdline):
            leftover.append(proc.pid)
    assert leftover == []

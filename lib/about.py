"""What the About menu says: the dataset, the paper, how to cite it, the licence, and
which revision of this app is running (so a screenshot or a bug report names it).

No Streamlit here: `ui.frame` puts `about_markdown()` into the page menu and the About
dialog. The BibTeX entry is the arXiv listing of the paper (authors in its order,
submitted 2026-04-05, primary class cs.CR).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATASET_ID = "microsoft/CUAVerifierBench"
DATASET_CARD = f"https://huggingface.co/datasets/{DATASET_ID}"
PAPER_TITLE = "The Art of Building Verifiers for Computer Use Agents"
ARXIV_ID = "2604.06240"
PAPER_URL = f"https://arxiv.org/abs/{ARXIV_ID}"
LICENCE = "MIT"
REVISION_ENV = "CUAVB_APP_REVISION"
"""Set it where the code has no git history (a Docker image): the commit it was built from."""

PAPER_AUTHORS = (
    "Corby Rosset",
    "Pratyusha Sharma",
    "Andrew Zhao",
    "Miguel Gonzalez-Fernandez",
    "Ahmed Awadallah",
)

BIBTEX = f"""@misc{{rosset2026verifiers,
  title         = {{{PAPER_TITLE}}},
  author        = {{{" and ".join(PAPER_AUTHORS)}}},
  year          = {{2026}},
  eprint        = {{{ARXIV_ID}}},
  archivePrefix = {{arXiv}},
  primaryClass  = {{cs.CR}},
  url           = {{{PAPER_URL}}},
  note          = {{Dataset: {DATASET_CARD}}}
}}"""

_SHA = re.compile(r"[0-9a-f]{7,40}")


@functools.cache
def app_revision() -> str:
    """The running code's commit (short sha): `CUAVB_APP_REVISION`, else git, else
    "unknown". Read once per process."""
    env = os.environ.get(REVISION_ENV, "").strip().lower()
    if _SHA.fullmatch(env):
        return env[:12]
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=3,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and _SHA.fullmatch(sha) else "unknown"


def about_markdown() -> str:
    """The About text (Markdown; every part is ours, nothing from the data)."""
    return (
        f"**CUAVerifierBench explorer**, a dashboard over the dataset "
        f"[{DATASET_ID}]({DATASET_CARD}) (dataset card).\n\n"
        f"Paper: [{PAPER_TITLE}]({PAPER_URL}) (arXiv {ARXIV_ID}).\n\n"
        f"Licence of the dataset: {LICENCE}.\n\n"
        f"This app's revision: `{app_revision()}`.\n\n"
        f"Cite the benchmark as:\n\n```bibtex\n{BIBTEX}\n```"
    )

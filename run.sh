#!/usr/bin/env bash
# Set up (first time, or when requirements change) and run the dashboard on http://localhost:8501.
# Extra arguments go to `streamlit run`, e.g. ./run.sh --server.port 8600
set -euo pipefail
cd "$(dirname "$0")"
[ -x .venv/bin/python ] || python3 -m venv .venv
if ! cmp -s requirements.txt .venv/.installed-app 2>/dev/null; then
  .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
  cp requirements.txt .venv/.installed-app
fi
exec .venv/bin/streamlit run app.py "$@"

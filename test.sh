#!/usr/bin/env bash
# Set up everything the tests need (venv, pinned packages, Debian's chromium) and run
# the whole suite: ruff lint + format check, then pytest (unit, AppTest, real browser), in
# parallel on every core (pytest-xdist; see pyproject.toml and conftest.py).
# Extra arguments go to pytest, e.g. ./test.sh -k agreement, or ./test.sh -n 0 (serial).
# The last line says the suite's wall time (and the load it ran under).
set -euo pipefail
cd "$(dirname "$0")"
[ -x .venv/bin/python ] || python3 -m venv .venv
if ! cmp -s <(cat requirements.txt requirements-dev.txt) .venv/.installed-dev 2>/dev/null; then
  .venv/bin/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
  cat requirements.txt requirements-dev.txt > .venv/.installed-dev
fi
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "Browser tests need Debian's chromium: sudo apt-get install -y chromium" >&2
    exit 1
  fi
fi
export HF_HUB_OFFLINE=1
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# the suite's wall time, also when it fails (the figure the README's test section quotes)
started=$(date +%s.%N)
status=0
.venv/bin/python -m pytest "$@" || status=$?
echo "test.sh: pytest wall time $(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }') s" \
  "on $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')" \
  "(exit $status)"
exit "$status"

#!/usr/bin/env bash
# Set up (first time, or when requirements change) and run the dashboard on http://localhost:8501.
# Extra arguments go to `streamlit run`, e.g. ./run.sh --server.port 8600
set -euo pipefail
cd "$(dirname "$0")"
say() { printf '[run.sh] %s\n' "$*"; }
if [ ! -x .venv/bin/python ]; then
  say "Creating the virtual environment in .venv ($(python3 --version 2>&1))..."
  python3 -m venv .venv
fi
if ! cmp -s requirements.txt .venv/.installed-app 2>/dev/null; then
  say "Installing the pinned packages of requirements.txt into .venv (first time: about 2 minutes)..."
  # pip writes to its log; the lines worth reading are shown as they come, and one line
  # every CUAVB_RUN_TICK (10) s while it says nothing (unpacking the wheels is a silent
  # minute), so a first run never looks stuck. Ctrl+C stops pip too.
  log=.venv/pip-install.log
  : >"$log"
  .venv/bin/pip install --progress-bar off --disable-pip-version-check -r requirements.txt \
    >"$log" 2>&1 &
  pip_pid=$!
  trap 'kill "$pip_pid" 2>/dev/null; exit 130' INT TERM
  tick=${CUAVB_RUN_TICK:-10}
  shown=0
  started=$SECONDS
  quiet_since=$SECONDS
  show_new() {
    local lines new
    lines=$(($(wc -l <"$log")))
    [ "$lines" -gt "$shown" ] || return 0
    new=$(sed -n "$((shown + 1)),${lines}p" "$log" \
      | grep -E '^(Collecting|Installing collected|Successfully installed)' || true)
    shown=$lines
    if [ -n "$new" ]; then
      printf '%s\n' "$new" | sed 's/^/  /'
      quiet_since=$SECONDS
    fi
  }
  while kill -0 "$pip_pid" 2>/dev/null; do
    sleep 1
    show_new
    if [ $((SECONDS - quiet_since)) -ge "$tick" ]; then
      collected=$(grep -c '^Collecting' "$log" || true)
      say "  ... still installing: $((SECONDS - started)) s, $collected packages collected"
      quiet_since=$SECONDS
    fi
  done
  status=0
  wait "$pip_pid" || status=$?
  trap - INT TERM
  show_new
  if [ "$status" != 0 ]; then
    tail -n 20 "$log" >&2
    say "pip failed (exit $status); the whole log is in .venv/pip-install.log" >&2
    exit "$status"
  fi
  cp requirements.txt .venv/.installed-app
  say "Packages installed."
fi
case "${CUAVB_DATA:-}" in
  "" | demo)
    # The built-in demo (the stand-in when the Hub cannot be reached) is generated once per
    # machine, about 15 s of CPU, mostly screenshots: start it now, in the background and
    # niced. No page waits for it: until it is written the app generates the demo's tables
    # itself (about 0.5 s) and draws a trajectory's screenshots when one is opened.
    # (`python -c`, not `-m`: runpy warned on every launch; `--parent`: it stops with the
    # server, and the next builder removes what it left.)
    .venv/bin/python -c "from lib.data.demo.builder import main; raise SystemExit(main())" --parent $$ &
    ;;
esac
say "Starting the dashboard (the URL to open follows; Ctrl+C stops it)..."
# browser.serverAddress: print the one local URL and skip the external-IP lookup, whose
# "Did not auto detect external IP" warning read like an error on a machine without one.
exec .venv/bin/streamlit run app.py --browser.serverAddress localhost "$@"

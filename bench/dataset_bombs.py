"""`python -m bench.dataset_bombs [--mirror DIR] [--entries N]`: what a hostile dataset costs
(issue 26, dataset side). Prints CPU s and memory per case, and the target.

- front matter: an alias bomb (9 levels of 10 aliases) and a 2,000 x 20,000 card, read by
  `lib.data.load.data_files` (target: refused in <= 1 s of CPU each);
- screenshots: a mirror whose first internal trajectory stores `--entries` (default 3 M)
  null screenshots (`tests.helpers.screenshot_bomb`), the Trajectory page opened on it as a deep
  link (AppTest, the real page script) in a fresh process after a warm Home run; CPU of
  that run (all threads) and peak RSS over the warm baseline (target: <= 2 s, <= +100 MB,
  with the page's note saying how many are stored and shown).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.common import ROOT

TARGET_FRONT_MATTER_S = 1.0
TARGET_PAGE_S = 2.0
TARGET_PAGE_MB = 100.0


def front_matter_cases() -> list[tuple[str, float, str]]:
    """(case, CPU s, outcome) for each hostile card."""
    from lib.data.load import data_files
    from tests.unit.test_front_matter import NAMES, _alias_bomb, _wide

    out = []
    for name, readme in (("alias bomb", _alias_bomb()), ("2,000 x 20,000", _wide())):
        start = time.process_time()
        try:
            data_files(readme, NAMES)
            outcome = "read (not refused)"
        except Exception as exc:  # the refusal is the expected outcome
            outcome = f"refused: {str(exc)[:70]}"
        out.append((name, time.process_time() - start, outcome))
    return out


def page_child(folder: str, task_id: str) -> dict:
    """In a fresh process: warm Home run, then the Trajectory deep link; its figures."""
    import psutil

    os.environ.update({"CUAVB_DATA": folder, "HF_HUB_OFFLINE": "1"})
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT / "tests")
    from tests.helpers.apptest import open_page, texts

    proc, peak = psutil.Process(), [0]

    def sample() -> None:
        while True:
            peak[0] = max(peak[0], proc.memory_info().rss)
            time.sleep(0.01)

    threading.Thread(target=sample, daemon=True).start()
    open_page(None, timeout=600)
    time.sleep(0.2)
    base = proc.memory_info().rss
    peak[0] = base
    start = time.process_time()
    at = open_page("pages/4_Trajectory.py", timeout=600, split="internal", task=task_id)
    cpu = time.process_time() - start
    time.sleep(0.2)
    notes = [line for line in texts(at).splitlines() if "screenshots" in line and "stores" in line]
    payload = sum(len(c.proto.json) for c in at.get("bidi_component"))
    return {
        "cpu_s": cpu,
        "base_mb": base / 2**20,
        "peak_mb": peak[0] / 2**20,
        "errors": [str(e.value)[:200] for e in at.exception],
        "note": notes[0] if notes else "",
        "payload_mb": payload / 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, help="the mirror to plant the list in")
    parser.add_argument("--entries", type=int, default=3_000_000)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(page_child(*args.child)))
        return 0
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    print("| case | CPU s | outcome |\n|---|---|---|")
    for name, cpu, outcome in front_matter_cases():
        ok = "ok" if cpu <= TARGET_FRONT_MATTER_S and outcome.startswith("refused") else "OVER"
        print(f"| front matter: {name} | {cpu:.4f} ({ok}) | {outcome} |")
    with tempfile.TemporaryDirectory(prefix="bomb-") as tmp:
        src = args.mirror
        if src is None:
            src = Path(tmp) / "x1"
            subprocess.run([sys.executable, "-m", "lib.mirror", str(src)], cwd=ROOT, check=True)
        from tests.helpers.screenshot_bomb import build_bomb_mirror

        folder = Path(tmp) / "bomb"
        task_id = build_bomb_mirror(src, folder, args.entries)
        env = {**os.environ, "CUAVB_CACHE_DIR": str(Path(tmp) / "cache")}
        done = subprocess.run(
            [sys.executable, "-m", "bench.dataset_bombs", "--child", str(folder), task_id],
            cwd=ROOT, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        lines = [x for x in done.stdout.splitlines() if x.startswith("{")]
        if not lines:
            print(f"| Trajectory page | error | {done.stderr.strip().splitlines()[-1:]} |")
            return 1
        r = json.loads(lines[-1])
        grew = r["peak_mb"] - r["base_mb"]
        ok = r["cpu_s"] <= TARGET_PAGE_S and grew <= TARGET_PAGE_MB and not r["errors"]
        print(
            f"| Trajectory page, {args.entries:,} null screenshots | {r['cpu_s']:.2f} | "
            f"peak {r['peak_mb']:.0f} MB = warm {r['base_mb']:.0f} + {grew:.0f} MB; payload "
            f"{r['payload_mb']:.2f} MB; note: {r['note'] or '(none)'}; errors: {r['errors']} "
            f"({'ok' if ok else 'OVER'}) |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

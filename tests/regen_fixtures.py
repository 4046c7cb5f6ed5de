"""Regenerate the frozen report fixtures (`tests/fixtures/*.json.xz`) and say what changed.

    .venv/bin/python -m tests.regen_fixtures           # rewrite the fixtures that changed
    .venv/bin/python -m tests.regen_fixtures --check   # exit 1 if any would change

Each fixture is `python -m lib.report` on the test mirror (`tests.helpers.mirror_cache`,
the suite's demo mirror) with the arguments in `FIXTURES`, its `source` line (a temporary
path) replaced by `<mirror>`, compressed with xz. `tests/unit/test_report_frozen.py`
compares the report with them byte for byte. A fixture whose text is unchanged is not
rewritten (its bytes stay as committed). For each changed fixture the paths of the JSON
keys that differ are printed (at most `MAX_LISTED` each), so the commit that carries the
new fixtures can name them (its message starts with `FIXTURES:`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import lzma
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

FIXTURE_DIR = Path(__file__).resolve().parent / "fixtures"
MAX_LISTED = 40

FIXTURES: dict[str, Callable[[Path], list[str]]] = {
    "report_demo_task.json.xz": lambda m: ["--data", str(m), "--format", "json"],
    "report_demo_site_predictions.json.xz": lambda m: [
        "--data",
        str(m),
        "--cluster",
        "site",
        "--predictions",
        str(m / "sample_predictions.csv"),
    ],
}
"""Fixture file -> the report's arguments for a mirror folder."""


def normalised(text: str) -> str:
    """The report with its `source` line (the mirror's temporary path) as `<mirror>`."""
    return re.sub(r'^  "source": ".*",$', '  "source": "<mirror>",', text, count=1, flags=re.M)


def frozen(path: Path) -> str | None:
    """A fixture's JSON text, or None when it is missing or unreadable."""
    try:
        return lzma.decompress(path.read_bytes()).decode()
    except (OSError, lzma.LZMAError, UnicodeDecodeError):
        return None


def report_text(argv: Sequence[str]) -> str:
    """`python -m lib.report ARGV` as printed, normalised."""
    from lib import report

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = report.main(list(argv))
    if code != 0:
        raise RuntimeError(f"python -m lib.report {' '.join(argv)} exited with {code}")
    return normalised(out.getvalue())


def changed_keys(old: Any, new: Any, path: str = "$") -> list[str]:
    """The JSON paths where two documents differ: a key added or removed, a value that
    changed (lists compared item by item; a length change is one path)."""
    if type(old) is not type(new):
        return [path]
    if isinstance(old, dict):
        out = [f"{path}.{k} (removed)" for k in old if k not in new]
        out += [f"{path}.{k} (added)" for k in new if k not in old]
        for k in old:
            if k in new:
                out += changed_keys(old[k], new[k], f"{path}.{k}")
        if not out and list(old) != list(new):
            out.append(f"{path} (key order)")
        return out
    if isinstance(old, list):
        if len(old) != len(new):
            return [f"{path} (length {len(old)} -> {len(new)})"]
        return [p for i, (a, b) in enumerate(zip(old, new, strict=True))
                for p in changed_keys(a, b, f"{path}[{i}]")]  # fmt: skip
    return [] if old == new else [path]


def top_keys(paths: Sequence[str]) -> list[str]:
    """The report's top-level keys among `paths` (`$.agreement[3].kappa` -> `agreement`)."""
    tops = (re.match(r"^\$\.([^.\[ ]+)", p) for p in paths)
    return list(dict.fromkeys(m.group(1) for m in tops if m))


def diff(old_text: str | None, new_text: str) -> list[str]:
    """What changed from the frozen text to the new one (empty when identical)."""
    if old_text == new_text:
        return []
    if old_text is None:
        return ["$ (new fixture)"]
    try:
        paths = changed_keys(json.loads(old_text), json.loads(new_text))
    except ValueError:
        return ["$ (the old fixture is not JSON)"]
    return paths or ["$ (whitespace or formatting only)"]


def regenerate(mirror: Path, fixture_dir: Path, check: bool, out: Any = None) -> int:
    """Compare (and unless `check`, rewrite) every fixture; the number that changed."""
    out = out or sys.stdout
    n_changed = 0
    for name, argv in FIXTURES.items():
        path = fixture_dir / name
        new = report_text(argv(mirror))
        paths = diff(frozen(path), new)
        if not paths:
            print(f"{name}: unchanged", file=out)
            continue
        n_changed += 1
        verb = "would change" if check else "rewritten"
        print(f"{name}: {verb}; top-level keys: {', '.join(top_keys(paths)) or '$'}", file=out)
        for p in paths[:MAX_LISTED]:
            print(f"  {p}", file=out)
        if len(paths) > MAX_LISTED:
            print(f"  ... and {len(paths) - MAX_LISTED} more", file=out)
        if not check:
            path.write_bytes(lzma.compress(new.encode()))
    return n_changed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.regen_fixtures", description=__doc__)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    parser.add_argument(
        "--data", type=Path, help="the mirror (default: the test mirror, built if needed)"
    )
    parser.add_argument("--fixtures", type=Path, default=FIXTURE_DIR, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.data is None:
        from lib.data import source
        from tests.helpers import mirror_cache

        mirror = mirror_cache.demo_mirror()
        os.environ[source.DEMO_DIR_ENV] = str(mirror.parent)
    else:
        mirror = args.data
    changed = regenerate(mirror, args.fixtures, args.check)
    if args.check and changed:
        print(f"{changed} fixture(s) out of date: python -m tests.regen_fixtures", file=sys.stderr)
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())

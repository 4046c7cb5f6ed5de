"""`python -m bench.fetch_walk [--data DIR] [--row N] [--hub]`: the modules one screenshot
fetch passes through, in order, and whether it goes back up to one it is still inside.

Why: issue 38 measured the fetch (`ShotStore._run`) at 33 stays in 8 modules, coming back
25 times to a module it had left, `page_index` visited 8 times; the redesign targets a
handful of modules, none visited twice. The figures are in docs/architecture.md ("Reading
the data: what a cold start costs").

How: one cold fetch (an empty screenshot cache) of row N of the first om2w shard of DIR
(default: the demo mirror, built if needed), run in this thread under `sys.setprofile`;
only calls into modules under lib/ count (the standard library and pyarrow are not ours).
Two figures:
- the walk: the modules in the order first entered, and the *returns up*: calls into a
  module that is still on the call stack below another one (a callback: the parquet
  reader calling the store back, say). A call down and its return are not a return up.
- the reading order, as issue 38 counted it: each function at its first call, in order;
  consecutive ones in one module are one *stay*; a stay in a module that had one before
  is a *return* (here a call down to a helper module and back counts).
`--hub` reads through `tools.local_hub` (HTTP ranges, `lib.data.remote.HubSource`).
Prints the walk, both figures, then one JSON line.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = str(ROOT / "lib") + os.sep


def _module(filename: str) -> str | None:
    if not filename.startswith(LIB):
        return None
    parts = Path(filename).relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def trace(run) -> list[tuple[str, str, str]]:
    """(event, module, function) of every call into lib/ and its return, while `run()`."""
    events: list[tuple[str, str, str]] = []

    def profile(frame, event, _arg):
        if event in ("call", "return"):
            module = _module(frame.f_code.co_filename)
            if module:
                events.append((event, module, frame.f_code.co_qualname))

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return events


def figures(events: list[tuple[str, str, str]]) -> dict:
    order: list[str] = []
    stack: list[str] = []
    up: list[str] = []
    for event, module, function in events:
        if event == "return":
            stack.pop()
            continue
        if stack and stack[-1] != module and module in stack:
            up.append(f"{stack[-1]} -> {module}.{function}")
        if module not in order:
            order.append(module)
        stack.append(module)
    seen_functions: set[tuple[str, str]] = set()
    stays: list[str] = []
    for event, module, function in events:
        if event == "call" and (module, function) not in seen_functions:
            seen_functions.add((module, function))
            if not stays or stays[-1] != module:
                stays.append(module)
    returns = sum(module in stays[:i] for i, module in enumerate(stays))
    return {
        "modules": len(order),
        "order": order,
        "packages": sorted({m.rsplit(".", 1)[0] if m.count(".") > 1 else m for m in order}),
        "returns_up": len(up),
        "returns_up_calls": dict(Counter(up).most_common()),
        "stays": len(stays),
        "stay_returns": returns,
        "stays_per_module": dict(Counter(stays).most_common()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fetch_walk", description=__doc__)
    parser.add_argument("--data", type=Path, default=None, help="a mirror (default: the demo)")
    parser.add_argument("--row", type=int, default=1, help="row of the first om2w shard")
    parser.add_argument("--hub", action="store_true", help="through tools.local_hub")
    args = parser.parse_args(argv)
    os.environ["CUAVB_CACHE_DIR"] = tempfile.mkdtemp(prefix="fetch-walk-")  # a cold cache

    from lib.data import source
    from lib.data.parquet import LocalRanges, read_light
    from lib.data.remote import HubFiles, HubSource, LocalFolder, resolve_revision
    from lib.data.shots import FetchJob, Location, ShotStore

    folder = args.data or source.ensure_demo()
    with contextlib.ExitStack() as stack:
        if args.hub:  # before anything imports huggingface_hub, which reads HF_ENDPOINT then
            from tools.local_hub import Hub, serving

            hub = Hub(folder)
            os.environ["HF_ENDPOINT"] = stack.enter_context(serving(hub))
            os.environ["HF_HUB_OFFLINE"] = "0"
        split = "fara7b_om2w_browserbase"
        name = f"trajectories/{split}-00000-of-00002.parquet"
        light = read_light(LocalRanges(folder / name), name)
        rows = [
            Location(light.shard, g, i)
            for g, group in enumerate(light.shard.groups)
            for i in range(group.rows)
        ]
        if args.hub:
            revision = resolve_revision(hub.repo_id)
            files, key = HubSource(HubFiles(hub.repo_id, revision)), revision.sha
        else:
            files, key = LocalFolder(folder), "local-" + "0" * 16
        store = ShotStore({split: rows}, files, key)
        job = FetchJob("walk", "walk")
        events = trace(lambda: store._run(job, split, args.row, rows[args.row]))
        assert not job.error, job.error
    out = figures(events)
    out["fetch_path"] = store.fetch_path(split, args.row)
    out["source"] = "hub" if args.hub else "folder"
    print(f"one cold fetch ({out['source']}, {out['fetch_path']}), modules first entered:")
    for i, module in enumerate(out["order"], 1):
        print(f"  {i}. {module}")
    print(
        f"walk: {out['modules']} modules in {len(out['packages'])} packages "
        f"({', '.join(out['packages'])}), {out['returns_up']} returns up "
        f"{out['returns_up_calls'] or ''}"
    )
    print(
        f"reading order (issue 38's count): {out['stays']} stays, {out['stay_returns']} "
        f"returns to a module left before; per module: {out['stays_per_module']}"
    )
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A client process for tests/unit/test_hub.py: loads the default source and reports as JSON.

Runs in its own interpreter because huggingface_hub reads HF_ENDPOINT and HF_HUB_OFFLINE
at import. argv[1]: JSON list of steps: ["load"] then ["shot", split, row, index] or
["fetch", split, row] (start the fetch, report the job's error and path) or ["mark", url]
(a sync point), ["all", split] (sha256 of every screenshot of every row, and each row's
fetch path), ["together", split, row] (two threads open the same row at once),
["prefetch", split, row, [rows]] (open a row, prefetch others, wait until done),
["scenario", name, faults, env, repo] (set the server's faults over HTTP, the env, a
fresh cache; clear the server log; load `repo`; keep the result and the server log).
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
import urllib.request


def _scenario(faults: dict, env: dict, repo: str | None) -> dict:
    import os
    import tempfile

    from lib.data.load import load_bench
    from lib.data.source import SourceError, resolve

    endpoint = os.environ["HF_ENDPOINT"]
    request = urllib.request.Request(
        f"{endpoint}/_faults", data=json.dumps(faults).encode(), method="POST"
    )
    urllib.request.urlopen(request).read()
    urllib.request.urlopen(urllib.request.Request(f"{endpoint}/_log", method="DELETE")).read()
    os.environ.update(env)
    os.environ["CUAVB_CACHE_DIR"] = tempfile.mkdtemp(dir=os.environ["SCENARIO_ROOT"])
    result: dict = {"cache": os.environ["CUAVB_CACHE_DIR"]}
    started = time.monotonic()
    try:
        bench = load_bench(resolve(repo))
        result.update(kind=bench.source.kind, note=bench.source.note)
    except SourceError as exc:
        result["error"] = str(exc)
    result["seconds"] = time.monotonic() - started
    for key in env:
        os.environ.pop(key, None)
    result["log"] = json.loads(urllib.request.urlopen(f"{endpoint}/_log").read())
    return result


def main() -> None:
    from lib.data.load import load_bench
    from lib.data.source import SourceError, resolve

    steps = json.loads(sys.argv[1])
    out: dict = {"shots": [], "fetch_errors": [], "paths": []}
    bench = None
    for step in steps:
        if step[0] == "scenario":
            out.setdefault("scenarios", {})[step[1]] = _scenario(*step[2:])
        elif step[0] == "load":
            try:
                bench = load_bench(resolve(step[1] if len(step) > 1 else None))
            except SourceError as exc:
                out["error"] = str(exc)
                break
            out["kind"] = bench.source.kind
            out["note"] = bench.source.note
            out["detail"] = bench.source.detail
            out["revision"] = bench.revision.sha if bench.revision else None
            out["n_tasks"] = len(bench.tasks)
        elif step[0] == "mark":
            urllib.request.urlopen(f"{step[1]}/_log").read()  # just a sync point
        elif step[0] == "fetch":
            job = bench.shots.wait(step[1], step[2])
            out["fetch_errors"].append(job.error if job else "")
            out["paths"].append(job.path if job else bench.fetch_path(step[1], step[2]))
        elif step[0] == "all":
            rows = []
            for row in range(len(bench.shots.locations[step[1]])):
                pngs = bench.shots.pngs(step[1], row) or []
                rows.append([hashlib.sha256(p).hexdigest() if p else None for p in pngs])
                out["paths"].append(bench.fetch_path(step[1], row))
            out["all"] = rows
        elif step[0] == "together":
            results: list = []

            def open_row(split=step[1], row=step[2], sink=results, b=bench) -> None:
                sink.append(b.screenshot_png(split, row, 0))

            threads = [threading.Thread(target=open_row) for _ in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            out["together"] = [hashlib.sha256(p).hexdigest() if p else None for p in results]
        elif step[0] == "prefetch":
            bench.screenshot_png(step[1], step[2], 0)
            bench.shots.prefetch(step[1], step[3])
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not all(
                bench.shots.ready(step[1], r) for r in step[3]
            ):
                time.sleep(0.02)
            bench.shots.prefetcher.join(10)
            out["prefetched"] = [bench.shots.ready(step[1], r) for r in step[3]]
        elif step[0] == "shot":
            png = bench.screenshot_png(step[1], step[2], step[3])
            out["shots"].append(None if png is None else hashlib.sha256(png).hexdigest())
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main()

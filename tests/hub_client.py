"""A client process for tests/test_hub.py: loads the default source and reports as JSON.

Runs in its own interpreter because huggingface_hub reads HF_ENDPOINT and HF_HUB_OFFLINE
at import. argv[1]: JSON list of steps: ["load"] then ["shot", split, row, index] or
["fetch", split, row] (start the fetch, report the job's error) or ["mark", label]
(print a marker so the test can split the request log).
"""

from __future__ import annotations

import hashlib
import json
import sys
import urllib.request


def main() -> None:
    from lib.data import load_bench
    from lib.source import SourceError, resolve

    steps = json.loads(sys.argv[1])
    out: dict = {"shots": [], "fetch_errors": []}
    bench = None
    for step in steps:
        if step[0] == "load":
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
        elif step[0] == "shot":
            png = bench.screenshot_png(step[1], step[2], step[3])
            out["shots"].append(None if png is None else hashlib.sha256(png).hexdigest())
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main()

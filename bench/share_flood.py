"""The shared-link flood (issue 31): 50 victim links, then 1,000 one-row shares by one
visitor, then 1,000 by a new visitor every 20 shares (a fresh tab each time, its cookie
cleared), with the default limits and a simulated clock (2 s per share, as the chromium
attack managed). Prints how many shares were stored or refused, what the attacker was
told, how many victim links still load, and the CPU seconds of each flood.

`python -m bench.share_flood`
"""

from __future__ import annotations

import collections
import tempfile
import time
from pathlib import Path

import pandas as pd

from lib.table.verdicts import COLUMNS
from lib.uploads import predictions
from lib.uploads import shared as SU


def one_row(name: str) -> pd.DataFrame:
    row = dict.fromkeys(COLUMNS)
    row |= {"split": "internal", "task_id": "t0", "rater": f"mine:{name}", "kind": "verifier"}
    row |= {"dimension": "outcome", "label": 1, "score": 0.5, "raw": "1"}
    return predictions.typed_verdicts(pd.DataFrame([row], columns=COLUMNS))


def flood(folder: Path, visitor_of, t0: float) -> None:
    base = one_row("spam")
    told: collections.Counter[str] = collections.Counter()
    stored = 0
    cpu = time.process_time()
    for i in range(1_000):
        try:
            shared = SU.share(
                base.assign(rater=f"mine:spam{i}"), visitor_of(i), folder, now=t0 + 2 * i
            )
            stored += 1
            if shared.notice:
                told[shared.notice.split(":")[0]] += 1
        except SU.ShareError as exc:
            told[str(exc).split(";")[0]] += 1
    cpu = time.process_time() - cpu
    print(f"  {stored} stored, {1_000 - stored} refused, {cpu:.2f} s CPU; told:")
    for what, n in told.most_common():
        print(f"    {n:4d} x {what}")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.time()
        victims = [
            SU.save(one_row(f"victim{i}"), folder, visitor=f"victim-{i}", now=t0 + i)
            for i in range(50)
        ]
        print("one visitor, 1,000 one-row shares:")
        flood(folder, lambda i: "attacker", t0 + 100)
        alive = sum(SU.load(d, folder) is not None for d in victims)
        print(f"  victim links that still load: {alive} of 50")
        print("a new visitor every 20 shares (fresh tab, cookie cleared), 1,000 shares:")
        flood(folder, lambda i: f"tab-{i // 20}", t0 + 3_000)
        alive = sum(SU.load(d, folder) is not None for d in victims)
        print(f"  victim links that still load: {alive} of 50")
        print(f"  files in the store: {len(list(folder.glob('*.parquet')))}")


if __name__ == "__main__":
    main()

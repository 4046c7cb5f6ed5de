"""Bytes and requests of the candidate ways to read the light data from the Hub.

Serves a mirror with tools.local_hub and, each in a fresh subprocess (HF_ENDPOINT is read
at import), reads every trajectories shard's non-screenshot columns + screenshot counts:
- ours: lib.data.parquet.lazy_parquet.read_light over lib.data.remote.hub range requests;
- hffs-readahead: HfFileSystem default file cache + pyarrow;
- hffs-none: HfFileSystem cache_type="none" + pyarrow;
- streaming: datasets.load_dataset(streaming=True, columns=...) (first shard pass).
Prints one line per strategy. Run: `python -m bench.hub_strategies MIRROR`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.local_hub import Hub, serving

CODE = {
    "ours": """
from lib.data.remote import hub as h
from lib.data.parquet import read_light
f = h.HubFiles(REPO, h.resolve_revision(REPO))
for name in [n for n in f.list_files() if n.startswith("trajectories/")]:
    r = f.ranges(name); read_light(r, name, r.read_many)
""",
    "hffs-readahead": """
import pyarrow.parquet as pq
from huggingface_hub import HfFileSystem
fs = HfFileSystem(skip_instance_cache=True)
for name in fs.glob(f"datasets/{REPO}/trajectories/*.parquet"):
    with fs.open(name) as fh:
        pf = pq.ParquetFile(fh)
        cols = [c for c in pf.schema_arrow.names if c != "screenshots"]
        pf.read(columns=cols + ["screenshots.list.element.path"])
""",
    "hffs-none": """
import pyarrow.parquet as pq
from huggingface_hub import HfFileSystem
fs = HfFileSystem(skip_instance_cache=True)
for name in fs.glob(f"datasets/{REPO}/trajectories/*.parquet"):
    with fs.open(name, cache_type="none") as fh:
        pf = pq.ParquetFile(fh)
        cols = [c for c in pf.schema_arrow.names if c != "screenshots"]
        pf.read(columns=cols + ["screenshots.list.element.path"])
""",
    "streaming": """
import datasets
from lib.data.schema import TRAJECTORY_COLUMNS
from lib.vocab import SPLITS
cols = [c for c in TRAJECTORY_COLUMNS if c != "screenshots"]
for split in SPLITS:
    ds = datasets.load_dataset(REPO, "trajectories", split=split, streaming=True, columns=cols)
    for _ in ds: pass
""",
}


def main() -> None:
    folder = Path(sys.argv[1])
    hub = Hub(folder)
    with serving(hub) as url:
        for name, code in CODE.items():
            hub.clear_log()
            with tempfile.TemporaryDirectory() as home:
                env = {
                    **os.environ,
                    "HF_ENDPOINT": url,
                    "HF_HUB_OFFLINE": "0",
                    "HF_HOME": home,
                    "CUAVB_CACHE_DIR": home,
                    "HF_HUB_DISABLE_XET": "1",
                }
                run = subprocess.run(
                    [sys.executable, "-c", f"REPO={hub.repo_id!r}\n{code}"],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
            data = [e for e in hub.log if "/resolve/" in e.path]
            ok = "ok" if run.returncode == 0 else "FAILED: " + run.stderr.strip()[-200:]
            print(
                f"{name:16s} requests={len(hub.log):4d} (file reads {len(data):4d}) "
                f"bytes={sum(e.bytes_sent for e in hub.log):>12,d}  {ok}",
                flush=True,
            )


if __name__ == "__main__":
    main()

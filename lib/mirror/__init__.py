"""`python -m lib.mirror OUT_DIR [--full] [--seed N] [--layout L]`: a synthetic CUAVerifierBench.

`--layout current|dict|v4.0`: how the trajectories shards are written (`lib.mirror.hub.LAYOUTS`).

Our machines cannot reach the Hugging Face Hub, so tests and demos run on this local
mirror. It has the Hub layout of the real dataset (README with `configs:`, the same
parquet shard names, columns and types), and every measured count holds exactly: split
sizes, reviewer counts, 21 ties stored as 0, 13 adjudicated tasks, the non-tie
majorities, 4 aborted runs, nulls and empty strings where the real data has them, both
`web_surfer_log` formats.

Beyond the counts it tells the benchmark's story: each task is a run on one website
(the id names it; 63 sites in om2w, 70 task families in internal), and humans and
verifiers label it from one latent truth per task, so the Universal Verifier agrees with
the humans about as well as they agree with each other (outcome and process, binary and
continuous), the legacy verifiers clearly worse, its errors cluster modestly by site, and
reviewers move toward its verdict when shown it. Its internal score files carry both
scoring passes and the intermediate steps (relevance of each screenshot to each
criterion, evidence, penalties). Comments and judge texts cite the run's steps.

Modules, one concern each: `facts` (the numbers), `sites` (websites and task topics),
`labels` (latent truth, human and verifier labels), `text` (instructions, answers,
comments, judge texts, logs), `score_file` (the Universal Verifier's score file),
`agent` (the simulated browsing), `pictures` (page layouts and PNG screenshots), `build`
(one split's columns), `columns` (every column's Arrow type), `hub` (the Hub layout on
disk, CLI).

The default mirror is small (3-5 screenshots per trajectory, a few seconds to build);
`--full` is about as large as the real 1.5 GB release (20-40 detailed screenshots).
The output is deterministic for a seed: the same seed gives byte-identical files.
"""

from __future__ import annotations

from lib.mirror.facts import INTERNAL, OM2W, SPLITS
from lib.mirror.hub import main, shard_name, write_mirror

__all__ = ["INTERNAL", "OM2W", "SPLITS", "main", "shard_name", "write_mirror"]

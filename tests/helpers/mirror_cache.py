"""The test mirror, built once per machine and reused by every later run.

Generating the small demo mirror costs 9-13 s of CPU; every pytest run (and every xdist
worker's session) used to pay it. It is now kept in

    $CUAVB_TEST_CACHE (default ~/.cache/cuavb-dashboard-tests) / <generator key> / ...

where the key is the demo generator's version (`lib.data.source.DEMO_VERSION`) plus a
digest of the generator's source (`lib/mirror/*.py`), so a change to what `lib.mirror`
writes rebuilds it even when nobody bumped the version. Old keys are left alone (one
folder of a few MB each; delete the cache folder to reclaim them).

Safe in parallel (pytest-xdist workers, two checkouts' runs): the first caller builds
under an exclusive file lock in a temporary folder beside the target and renames it into
place (atomic); the others wait for the lock and reuse it. A cache entry is trusted only
with its manifest (every file's relative path and size, written last): a missing or
damaged manifest, or a listed file missing or of another size, and the entry is rebuilt
(files added later, such as a builder's lock beside the demo, do not count).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from lib.file_lock import exclusive

CACHE_ENV = "CUAVB_TEST_CACHE"
MANIFEST = "manifest.json"
ROOT = Path(__file__).resolve().parents[2]
GENERATOR_SOURCES = ("lib/mirror",)
"""Folders whose `.py` files make the mirror (their digest is part of the key)."""


def cache_root() -> Path:
    """Where the cached mirrors live (`CUAVB_TEST_CACHE` overrides the default)."""
    base = os.environ.get(CACHE_ENV)
    return Path(base).expanduser() if base else Path.home() / ".cache" / "cuavb-dashboard-tests"


def generator_key() -> str:
    """`v<DEMO_VERSION>-<digest of the generator's source>`: the cache entry's folder name."""
    from lib.data.source import DEMO_VERSION

    digest = hashlib.sha256()
    for folder in GENERATOR_SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return f"v{DEMO_VERSION}-{digest.hexdigest()[:12]}"


def _listing(folder: Path) -> dict[str, int]:
    return {
        p.relative_to(folder).as_posix(): p.stat().st_size
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }


def intact(folder: Path) -> bool:
    """True when `folder` holds its manifest and every file it lists, of the listed size."""
    try:
        want = json.loads((folder / MANIFEST).read_text())
        if not isinstance(want, dict) or not want:
            return False
        return all((folder / name).stat().st_size == size for name, size in want.items())
    except (OSError, ValueError, TypeError):
        return False


def cached(name: str, build: Callable[[Path], object], key: str | None = None) -> Path:
    """`cache_root()/<key>/<name>`, made by `build(path)` unless an intact copy is there.

    `build` writes a complete folder at `path` (it gets a temporary path, renamed into
    place afterwards). The result is shared read-only by every test run on the machine:
    a test that changes files copies them first (`tmp_path`)."""
    entry = cache_root() / (key or generator_key())
    target = entry / name
    if intact(target):  # the warm path: no lock needed, the entry is complete and never moves
        return target
    with exclusive(entry / f"{name}.lock"):
        if intact(target):  # another process built it while we waited
            return target
        tmp = entry / f"{name}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            build(tmp)
            (tmp / MANIFEST).write_text(json.dumps(_listing(tmp), indent=0))
            old = entry / f"{name}.old-{os.getpid()}"
            if target.exists():  # damaged: moved aside first, so the rename below is atomic
                os.rename(target, old)
            os.rename(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def demo_mirror() -> Path:
    """The default (small) demo mirror, as `lib.data.source.demo_dir()` names it under the
    cache entry: point `CUAVB_DEMO_DIR` at `demo_mirror().parent` to make it the demo."""
    from lib import mirror
    from lib.data import source

    leaf = source.demo_dir().name  # e.g. demo-v7-seed0: the demo's folder under any root

    def build(root: Path) -> None:
        mirror.write_mirror(root / leaf, full=False, seed=source.DEMO_SEED)

    return cached("demo", build) / leaf


def seeded_mirror(seed: int) -> Path:
    """A small mirror with another seed than the demo's (other tasks, labels and slices),
    cached like the demo's: `lib.mirror.write_mirror(folder, seed=seed)`."""
    from lib import mirror

    def build(root: Path) -> None:
        mirror.write_mirror(root / "mirror", full=False, seed=seed)

    return cached(f"seed{seed}", build) / "mirror"

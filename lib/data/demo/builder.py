"""Building the demo mirror out of the server process, with progress that moves.

`lib.data.demo.builder` (run as `python -c RUN`) writes the demo mirror
(`lib.data.source.demo_dir()`, the same bytes as `lib.mirror.write_mirror(folder, seed=0)`)
in a fresh process, so its screenshot rendering uses a pool of worker processes (the
Streamlit server is threaded and starts none: there the screenshots would be drawn on one
core). One build at a time: a lock file
beside the folder; a second builder waits for it and finds the mirror done.

The builder writes how far it is to `<folder>.progress` (JSON: done, total, what) and
prints a line to the terminal every ~10 %; `build()` (`lib.data.source.ensure_demo`: the CLI
and benchmarks that need the whole mirror) starts one and turns that file into progress.

The app does not wait for it (issue 30): `run.sh` starts a builder before the server, the
server starts one when none runs (`start_background`), both niced (`NICE`), and until the
mirror is written the app serves the demo from tables it generates itself
(`lib.data.demo.light`); an opened trajectory shows this builder's progress until the
mirror is written (`lib.data.shots.PendingShots`).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
RUN = "from lib.data.demo.builder import main; raise SystemExit(main())"
"""What the builder process runs (`python -c`: `python -m lib.data.demo.builder` would import
the module twice, once through the package's face, and warn)."""
DEMO_DIR_ENV = "CUAVB_DEMO_DIR"
DEMO_SEED = 0
DEMO_VERSION = 10  # bump when lib.mirror changes what it writes
BUILD_TIMEOUT = 900.0
"""Seconds the server waits for a builder (about 10 s of CPU on a quiet 2-core machine)."""
POLL = 0.25
Progress = Callable[[float, str], None]
START, SPAN = 0.05, 0.9
"""The progress bar: 5 % for the tables, 90 % over the trajectories drawn, then written."""


def progress_file(folder: Path) -> Path:
    return folder.with_name(folder.name + ".progress")


def lock_file(folder: Path) -> Path:
    return folder.with_name(folder.name + ".lock")


def fraction(done: int, total: int) -> float:
    """The bar's position for `done` of `total` trajectories drawn."""
    return START + SPAN * (done / total if total > 0 else 0.0)


def describe(done: int, total: int, what: str) -> str:
    return (
        "Generating the synthetic demo data (once per machine): "
        f"{what}, {done:,} of {total:,} trajectories…"
    )


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Hold the build lock (blocking); without fcntl (Windows) there is no lock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on Linux/macOS
        yield
        return
    path = lock_file(folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _write_progress(path: Path, done: int, total: int, what: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"done": done, "total": total, "what": what}))
    os.replace(tmp, path)


def read_progress(folder: Path) -> tuple[int, int, str] | None:
    """(done, total, what) from a running builder, or None (none yet, or unreadable)."""
    try:
        data = json.loads(progress_file(folder).read_text())
        return int(data["done"]), int(data["total"]), str(data["what"])[:80]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def demo_dir() -> Path:
    """The folder of the generated demo mirror (versioned, so code changes regenerate it)."""
    base = os.environ.get(DEMO_DIR_ENV)
    root = Path(base) if base else Path.home() / ".cache" / "cuavb-dashboard"
    return root / f"demo-v{DEMO_VERSION}-seed{DEMO_SEED}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def remove_leftovers(folder: Path) -> list[Path]:
    """Remove what a killed builder left beside `folder` (its `<folder>.tmp-<pid>` mirror
    half written, its progress files), when that pid runs no more. Called under the build
    lock, where no other builder can be writing. Returns what was removed."""
    gone: list[Path] = []
    for tmp in folder.parent.glob(f"{folder.name}.tmp-*"):
        pid = tmp.name.rsplit("-", 1)[-1]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(tmp, ignore_errors=True)
            gone.append(tmp)
    progress = progress_file(folder)
    for stale in [progress, *progress.parent.glob(f".{progress.name}.*.tmp")]:
        with suppress(OSError):
            stale.unlink()
            gone.append(stale)
    return gone


def build_here(folder: Path, quiet: bool = False) -> Path:
    """Write the demo mirror into `folder` in this process (under the lock), reporting to
    the progress file and, unless `quiet`, to stderr every ~10 %."""
    from lib import mirror

    if (folder / "README.md").exists():
        return folder
    marks = {"last": -1}
    started = time.monotonic()

    def steps(done: int, total: int, what: str) -> None:
        _raise_if_stopped()
        with suppress(OSError):  # a progress file we cannot write only loses the bar
            _write_progress(progress_file(folder), done, total, what)
        tenth = done * 10 // max(total, 1)
        if not quiet and tenth != marks["last"]:
            marks["last"] = tenth
            print(
                f"[demo] generating the synthetic demo: {what}, {done}/{total} trajectories "
                f"({time.monotonic() - started:.1f} s)",
                file=sys.stderr,
                flush=True,
            )

    with _locked(folder):
        left = remove_leftovers(folder)  # a builder killed before us: its half-written mirror
        if left and not quiet:
            print(f"[demo] removed what a stopped builder left: {left[0].name}", file=sys.stderr)
        if (folder / "README.md").exists():  # another builder finished while we waited
            return folder
        try:
            mirror.write_mirror(folder, full=False, seed=DEMO_SEED, steps=steps)
        finally:
            with suppress(OSError):
                progress_file(folder).unlink()
    if not quiet:
        print(f"[demo] ready in {folder} ({time.monotonic() - started:.1f} s)", file=sys.stderr)
    return folder


NICE = 10
"""How much the builder steps back (`os.nice`): the first page no longer waits for it
(`lib.data.demo.light` serves it without the screenshots), so its drawing must not slow
the page a visitor is waiting for."""
_STARTED: list[subprocess.Popen] = []  # kept so a finished builder is reaped, not a zombie


def building(folder: Path) -> bool:
    """True when a builder holds the lock of `folder` now (without fcntl: never)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on Linux/macOS
        return False
    try:
        with lock_file(folder).open("a") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(fh, fcntl.LOCK_UN)
    except OSError:
        return False
    return False


def is_builder(cmdline: list[str]) -> bool:
    """Whether a process's command line is a builder's."""
    pairs = itertools.pairwise(cmdline)
    return RUN in cmdline or any(a == "-m" and b == __name__ for a, b in pairs)


def command(folder: Path, *options: str) -> list[str]:
    """The builder's command line: it stops when this process (its parent) is gone."""
    parent = ["--parent", str(os.getpid())]
    return [sys.executable, "-c", RUN, "--folder", str(folder), *parent, *options]


def start_background(folder: Path) -> bool:
    """Start a niced builder for `folder` unless it is built or being built (run.sh starts
    one before the server); never waits. True when one was started. It stops (and removes
    its half-written mirror) when this process ends: a CLI leaves no builder behind."""
    if (folder / "README.md").exists() or building(folder):
        return False
    command_line = command(folder)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(command_line, cwd=ROOT, stdin=subprocess.DEVNULL)
    except OSError as exc:  # the light page still works; Retry starts one
        print(f"[demo] the background build could not start: {exc}", file=sys.stderr)
        return False
    _STARTED[:] = [p for p in _STARTED if p.poll() is None] + [proc]
    return True


def build(folder: Path, progress: Progress | None = None) -> Path:
    """The demo mirror in `folder`, built by a builder process (`command`: its pool draws
    on every core) while this thread reports its progress file. Falls back to building
    here when no process can be started. Raises RuntimeError when it fails."""
    if (folder / "README.md").exists():
        return folder
    if progress:
        progress(0.0, "Generating the synthetic demo data (once per machine): starting…")
    try:
        proc = subprocess.Popen(command(folder, "--nice", "0"), cwd=ROOT, stdin=subprocess.DEVNULL)
    except OSError:
        return build_here(folder)
    deadline = time.monotonic() + BUILD_TIMEOUT
    while proc.poll() is None:
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise RuntimeError(f"the demo build took over {BUILD_TIMEOUT:.0f} s and was stopped")
        seen = read_progress(folder)
        if progress and seen is not None:
            done, total, what = seen
            progress(fraction(done, total), describe(done, total, what))
        time.sleep(POLL)
    if not (folder / "README.md").exists():
        raise RuntimeError(f"the demo build failed (exit code {proc.returncode}; see the terminal)")
    if progress:
        progress(1.0, "The synthetic demo is ready; reading it…")
    return folder


_STOPPING = threading.Event()
"""Set by `_stop` and never cleared: a stop is remembered, not only raised."""


def _stop(signum: int, frame: object) -> None:
    """SIGTERM (or the parent gone) ends the build like Ctrl+C: `write_mirror`'s cleanup
    removes the half-written mirror (a SIGKILL cannot: the next builder does).

    The stop is also remembered (`_STOPPING`), and `build_here`'s progress callback raises
    again at every report, the last one just before the mirror is complete: the
    `SystemExit` raised here lands wherever the main thread happens to be, and where it
    lands may swallow it (a `__del__` or weakref callback, whose exceptions Python prints
    and ignores; a bare `except:` in some library): that must not turn a stop into a
    finished build (a CI run on 3.12 saw a SIGTERMed builder finish its mirror; 55 local
    SIGTERMs at 0-4.4 s into the build, under load, never reproduced it)."""
    _STOPPING.set()
    raise SystemExit(128 + signum)


def _raise_if_stopped() -> None:
    if _STOPPING.is_set():
        raise SystemExit(128 + signal.SIGTERM)


def _watch_parent(parent: int, interval: float = 0.5) -> None:
    """Stop this builder when `parent` is no longer its parent (it ended: the builder was
    handed to init), so no CLI or server leaves a builder running after it exits."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        print("[demo] the process that started this build ended; stopping", file=sys.stderr)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)
        os._exit(1)  # the main thread did not stop (blocked): stop without cleanup

    threading.Thread(target=watch, name="demo-parent-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    """CLI: build the demo (default folder: `lib.data.source.demo_dir()`), once."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m lib.data.demo.builder", description=__doc__)
    parser.add_argument("--folder", type=Path, default=None, help="default: the demo folder")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument(
        "--nice", type=int, default=NICE, help=f"os.nice increment (default {NICE})"
    )
    parser.add_argument(
        "--parent", type=int, default=0, help="stop when this process (the starter) ends"
    )
    args = parser.parse_args(argv)
    folder = args.folder or demo_dir()
    if (folder / "README.md").exists():
        return 0
    signal.signal(signal.SIGTERM, _stop)
    if args.parent > 0:
        if os.getppid() != args.parent:  # it ended before we started
            return 1
        _watch_parent(args.parent)
    if args.nice > 0:
        with suppress(OSError):
            os.nice(args.nice)
    folder.parent.mkdir(parents=True, exist_ok=True)
    build_here(folder, quiet=args.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main())

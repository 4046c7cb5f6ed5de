"""Nothing left behind (issue 39): a demo builder killed halfway leaves its temporary
mirror, which the next builder removes; a stopped builder (SIGTERM, or the process that
started it gone) removes its own; `python -m lib.report` leaves no builder running; and no
builder launch prints a RuntimeWarning (it was started with `python -m`, which runpy warns
about because `lib.data` imports the module first)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from contextlib import suppress
from pathlib import Path

import psutil
import pytest

from lib.data.demo import builder as demo_build
from tests.helpers.slack import scaled

ROOT = Path(__file__).resolve().parents[2]


def _builders(folder: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if demo_build.is_builder(cmdline) and str(folder) in cmdline:
            found.append(proc)
    return found


def _until(check, seconds: float, what: str):
    deadline = time.monotonic() + scaled(seconds)
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _temps(folder: Path) -> list[Path]:
    return sorted(folder.parent.glob(f"{folder.name}.tmp-*"))


def _start(folder: Path, stderr) -> subprocess.Popen:
    return subprocess.Popen(
        demo_build.command(folder, "--nice", "0"), cwd=ROOT, stdin=subprocess.DEVNULL,
        stderr=stderr,
    )  # fmt: skip


def test_a_killed_builders_temp_folder_is_removed_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "demo" / "demo-v0"
    log = tmp_path / "builder.err"
    with log.open("w") as err:
        proc = _start(folder, err)
        try:
            _until(lambda: _temps(folder), 120, "the builder's temporary folder")
        finally:
            proc.kill()  # SIGKILL: no cleanup of its own can run
            proc.wait()
    assert [t.name for t in _temps(folder)] == [f"{folder.name}.tmp-{proc.pid}"]
    assert "RuntimeWarning" not in log.read_text(), log.read_text()  # the launch: no warning
    seen: list[list[Path]] = []

    def write_mirror(out: Path, **_kwargs) -> Path:  # the next builder, without the drawing
        seen.append(_temps(folder))
        out.mkdir(parents=True)
        (out / "README.md").write_text("built")
        return out

    monkeypatch.setattr("lib.mirror.write_mirror", write_mirror)
    assert demo_build.build_here(folder, quiet=True) == folder
    assert seen == [[]] and _temps(folder) == []
    assert not demo_build.progress_file(folder).exists()


def test_a_killed_builders_drawing_workers_end_too(tmp_path: Path) -> None:
    """A SIGKILL leaves the builder no time to shut its pool down: its drawing workers see
    their parent gone and end on their own (they used to wait on their queue forever)."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: the screenshots are drawn without workers")
    folder = tmp_path / "demo" / "demo-v0"
    proc = _start(folder, subprocess.DEVNULL)
    try:
        builder = psutil.Process(proc.pid)

        def drawing_workers() -> list[psutil.Process]:
            kids = [k for k in builder.children() if "spawn_main" in " ".join(k.cmdline())]
            return kids if len(kids) >= 2 else []

        workers = _until(drawing_workers, 120, "the builder's drawing workers")
    finally:
        proc.kill()
        proc.wait()
    _, alive = psutil.wait_procs(workers, timeout=scaled(20))
    assert alive == [], [w.cmdline() for w in alive]


def test_a_stopped_builder_removes_its_own_temp_folder(tmp_path: Path) -> None:
    """SIGTERM (a supervisor, `kill`) ends the build with its cleanup run."""
    folder = tmp_path / "demo" / "demo-v0"
    proc = _start(folder, subprocess.DEVNULL)
    try:
        _until(lambda: _temps(folder), 120, "the builder's temporary folder")
        proc.send_signal(signal.SIGTERM)
        proc.wait(scaled(60))
    finally:
        proc.kill()
        proc.wait()
    assert _temps(folder) == [] and not (folder / "README.md").exists()


def test_a_stop_swallowed_where_it_landed_still_stops_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SIGTERM handler's `SystemExit` lands wherever the main thread is; code there
    that swallows it (a bare `except:`) must not let the build finish: the real
    `write_mirror` reports once more just before its mirror is complete, and the stopped
    builder raises there, so its half-written mirror is removed (a CI run saw a SIGTERMed
    builder finish)."""
    from lib.mirror import hub

    folder = tmp_path / "demo" / "demo-v0"
    monkeypatch.setattr(demo_build, "_STOPPING", threading.Event())
    reports: list[str] = []
    real_build = hub._build

    def build_then_stop(out: Path, **kwargs) -> None:
        steps = kwargs.pop("steps")

        def swallowing(done: int, total: int, what: str) -> None:
            reports.append(what)
            if what == "writing the files":  # the stop arrives late, and is swallowed
                with suppress(SystemExit):
                    demo_build._stop(signal.SIGTERM, None)
            steps(done, total, what)

        real_build(out, steps=swallowing, **kwargs)

    monkeypatch.setattr(hub, "_build", build_then_stop)
    monkeypatch.setattr(hub, "_mapper", lambda: (map, lambda: None))  # here, serially
    monkeypatch.setattr(hub, "_render_run", lambda job: [b"png"] * len(job[0]))  # not drawn
    with pytest.raises(SystemExit):
        demo_build.build_here(folder, quiet=True)
    assert reports[-1] == "writing the files"
    assert not folder.exists() and _temps(folder) == []


def test_a_builder_stops_when_the_process_that_started_it_ends(tmp_path: Path) -> None:
    """`start_background` (the server, the loader of any CLI) starts a builder; the
    starter exits; the builder stops within a second or so, and removes its folder."""
    folder = tmp_path / "demo" / "demo-v0"
    code = (
        "import sys, time; from pathlib import Path; "
        "from lib.data.demo import builder as demo_build; "
        f"assert demo_build.start_background(Path({str(folder)!r})); "
        f"p = Path({str(folder)!r}); "
        "[time.sleep(0.1) for _ in range(3000) "
        "if not list(p.parent.glob(p.name + '.tmp-*'))]"  # until it has begun writing
    )
    starter = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, timeout=scaled(300), capture_output=True
    )
    assert starter.returncode == 0, starter.stderr.decode()[-2000:]
    _until(lambda: not _builders(folder), 60, "the builder to stop")
    _until(lambda: not _temps(folder), 60, "the temporary folder to go")


def test_run_sh_starts_the_builder_without_a_warning(tmp_path: Path) -> None:
    """run.sh's builder line, as it is written there (on a demo already built, so it ends
    at once): nothing on stderr. `python -m lib.data.demo_build` printed a RuntimeWarning."""
    text = (ROOT / "run.sh").read_text()
    lines = [x.strip() for x in text.splitlines()]
    line = next(x for x in lines if "import main" in x and not x.startswith("#"))
    assert line.startswith(".venv/bin/python ") and line.endswith("&")
    built = tmp_path / "demos"
    env = {**os.environ, demo_build.DEMO_DIR_ENV: str(built)}
    done = built / f"demo-v{demo_build.DEMO_VERSION}-seed{demo_build.DEMO_SEED}"
    done.mkdir(parents=True)
    (done / "README.md").write_text("built")
    command = line.replace(".venv/bin/python", shlex.quote(sys.executable), 1) + " wait"
    run = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=scaled(120),
    )  # fmt: skip
    assert run.returncode == 0 and run.stderr == "", run.stderr


def test_the_report_leaves_no_process_behind(tmp_path: Path) -> None:
    """`python -m lib.report` offline, the demo not built yet: it reports on the demo's
    generated tables and exits; no builder runs after it (it used to start one)."""
    demos = tmp_path / "demos"
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        demo_build.DEMO_DIR_ENV: str(demos),
        "CUAVB_CACHE_DIR": str(tmp_path / "cache"),
    }
    env.pop("CUAVB_DATA", None)
    run = subprocess.run(
        [sys.executable, "-m", "lib.report", "--format", "markdown"], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=scaled(600),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Serving the built-in demo" in run.stderr and "RuntimeWarning" not in run.stderr
    assert "in the background" not in run.stderr  # none started (one would stop, too late)
    folder = demos / f"demo-v{demo_build.DEMO_VERSION}-seed{demo_build.DEMO_SEED}"
    assert _builders(folder) == [] and _temps(folder) == []
    children = [p for p in psutil.Process().children(recursive=True) if p.is_running()]
    assert [p for p in children if demo_build.is_builder(p.cmdline())] == []

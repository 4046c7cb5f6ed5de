"""Fetch a trajectory's screenshots before the viewer shows a step, with progress and retry.

Why here and not in `lib`: the fetch runs in a worker thread (`lib.data.shots.store`), and
only the script thread may call Streamlit. So this function polls the shared
`FetchJob` (bytes done / total) and draws the progress bar itself. Two sessions asking
for the same row group share one job. A failure names the screenshots that could not
be fetched and why, with a Retry button; the caller keeps rendering the rest of the page.
"""

from __future__ import annotations

import threading
import time

import streamlit as st

from lib.data.load import Bench
from lib.data.remote import hub as hubs
from ui.safe_text import inert, plain, without_server_paths

POLL = 0.15  # seconds between progress updates
MOVED: dict[str, tuple[str, str]] = {}
"""Hub repo id -> (the commit that vanished, the commit `main` names now): process-wide,
so every session's viewer says why its data changed under it."""
_MOVED_LOCK = threading.Lock()
MOVED_SEEN = "_fetch_moved_seen"


def follow_moved_revision(bench: Bench) -> str:
    """The Hub no longer serves `bench`'s commit: resolve the branch again.

    When it names another commit, every session's next `ui.state.get_bench` loads that
    one (`ui.state.retry_hub`, once per vanished commit however many sessions find it);
    returns "" then (the caller reruns). Otherwise (the Hub does not answer, or a pinned
    `CUAVB_REVISION` names the vanished commit itself) the loaded data stays, with the
    screenshots already cached, and the returned sentence says so.
    """
    from ui.state import retry_hub, source_spec

    repo, old = bench.source.location, bench.revision.sha if bench.revision else ""
    with _MOVED_LOCK:
        if MOVED.get(repo, ("", ""))[0] == old:
            return ""  # another session already moved every session on
        try:
            new = hubs.resolve_revision(repo).sha
        except hubs.HubError as exc:
            return (
                f"The Hub no longer serves commit {old[:8]} and the branch could not be "
                f"resolved again ({exc.plain}): the screenshots already cached are shown, "
                "the others cannot be fetched until the Hub answers."
            )
        if new == old:
            return (
                f"The Hub no longer serves commit {old[:8]} (the revision this app is pinned "
                "to): the screenshots already cached are shown, the others cannot be fetched."
            )
        MOVED[repo] = (old, new)
        retry_hub(source_spec())
    return ""


def moved_notice(bench: Bench) -> None:
    """Say, once per session, that the data moved to a new revision under it."""
    old, new = MOVED.get(bench.source.location, ("", ""))
    if not new or bench.revision is None or bench.revision.sha != new:
        return
    if st.session_state.get(MOVED_SEEN) == new:
        return
    st.session_state[MOVED_SEEN] = new
    st.info(
        f"The dataset moved to a new revision on the Hub: commit {old[:8]}, which this app "
        f"had loaded, is no longer served, so the data was reloaded at commit {new[:8]} "
        f"(dated {inert(bench.revision.date or 'unknown', 40)}).",
        icon=":material/update:",
    )


def _retry(bench: Bench, split: str, row: int) -> None:
    if bench.shots is not None:
        bench.shots.start(split, row)


def prefetch(bench: Bench, split: str, rows: list[int]) -> None:
    """Fetch these trajectories' screenshots in the background (call it after a trajectory
    is shown, with the rows of the next and the previous one in the current list, e.g.
    `prefetch(bench, split, [row_next, row_prev])`). At most two, one at a time, by the
    page path only; a new call drops what the previous one queued. Never blocks, never
    shows anything (a failed prefetch is retried, visibly, when the row is opened)."""
    if bench.shots is not None:
        bench.shots.prefetch(split, [int(r) for r in rows if r is not None and r >= 0])


def fetch_path(bench: Bench, split: str, row: int) -> str:
    """One line on how the screenshots were obtained (page index, row group, shard, cache),
    for the viewer's technical detail."""
    return bench.fetch_path(split, row)


def _progress_text(job) -> str:
    """The bar's words: MB fetched, or the demo's trajectories drawn (before its mirror is
    written, a trajectory waits for the builder: `lib.data.shots.PendingShots`)."""
    if job.counts_items:
        return (
            "The synthetic demo's screenshots are being generated (once per machine): "
            f"{job.done_bytes} of {job.total_bytes} trajectories drawn; this one's appear "
            "when they are written"
        )
    mb, total = job.done_bytes / 1e6, job.total_bytes / 1e6
    return (  # progress text is Markdown
        f"Fetching this trajectory's screenshots: {mb:.1f} of {total:.1f} MB "
        f"({inert(job.what, 300)})"
    )


def ensure_screenshots(bench: Bench, split: str, row: int, count: int) -> bool:
    """True when the trajectory's `count` screenshots can be shown without waiting.

    Fetches them first if needed (progress shown while it runs); on failure shows the
    reason and a Retry button and returns False.
    """
    shots = bench.shots
    if shots is None or count == 0 or shots.ready(split, row):
        return True
    job = shots.job(split, row)
    if job is None or not (job.finished and job.error):
        job = shots.start(split, row)
    if job is None:
        return True
    if not job.finished:
        bar = st.progress(0.0, text="Fetching this trajectory's screenshots…")
        while not job.finished:
            bar.progress(min(job.fraction, 1.0), text=_progress_text(job))
            time.sleep(POLL)
        bar.empty()
    if job.error and job.gone:
        kept = follow_moved_revision(bench)
        if not kept:
            st.rerun()  # the next run reads the new revision (ui.state.get_bench)
        st.warning(inert(kept, 600), icon=":material/history:")
    if job.error:
        st.error(
            f"Screenshots 0–{count - 1} of this trajectory could not be "
            f"{'drawn' if job.counts_items else 'fetched from the Hub'} "
            f"({inert(job.what, 300)}). The steps' actions and details are still shown.",
            icon=":material/cloud_off:",
        )
        with st.expander("Technical detail"):  # the terminal log has the paths whole
            st.text(plain(without_server_paths(job.error)))
            if job.path:
                st.text(plain(f"Fetch path: {without_server_paths(job.path)}"))
        st.button("Retry", key="fetch_retry", on_click=_retry, args=(bench, split, row))
        return False
    return True

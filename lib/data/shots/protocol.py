"""`Shots`: what the app asks of a screenshot store (the viewer, `ui.fetch`, `Bench`).

Every store satisfies it (`ShotStore`, `PendingShots`; tests/unit/test_shots_protocol.py
checks each method's signature), so `Bench.shots` is typed by it, not by one class."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from lib.data.shots.store import FetchJob


@runtime_checkable
class Shots(Protocol):
    """A trajectory's screenshots on demand, by (split, row): jobs the script thread polls."""

    gone: str
    """Why the Hub no longer serves the commit read at ("" while it does, or no Hub)."""

    def ready(self, split: str, row: int) -> bool:
        """True when the screenshots can be read without waiting."""
        ...

    def job(self, split: str, row: int) -> FetchJob | None:
        """The row's running or last job, if any."""
        ...

    def start(self, split: str, row: int) -> FetchJob | None:
        """Start (or join) the row's fetch in the background; a failed job is restarted (the
        Retry). None when there is nothing to fetch."""
        ...

    def wait(self, split: str, row: int, timeout: float = 600.0) -> FetchJob | None:
        """`start`, then wait for the job (the report, tests)."""
        ...

    def prefetch(self, split: str, rows: list[int]) -> None:
        """Ready these rows in the background; a new call replaces the queue."""
        ...

    def pngs(self, split: str, row: int, fetch: bool = True) -> list[bytes | None] | None:
        """The row's PNGs (None: could not be had); fetched first if `fetch`."""
        ...

    def thumbs(self, split: str, row: int) -> list[bytes | None] | None:
        """The row's filmstrip thumbnails; None when not fetched yet."""
        ...

    def fetch_path(self, split: str, row: int) -> str:
        """How the row's screenshots were obtained, for the technical detail."""
        ...

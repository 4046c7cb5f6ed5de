"""One way to reach a source's bytes: list, size, read a range, download to a file.

Why: `lib.data.load` and the screenshot store used to ask "is `files` None? then it is a local
folder" in several places. Now every source is a `ByteSource`; a new kind of source (an
S3 bucket, a zip) is one more class of this protocol, opened where `lib.data.load` opens
the others (`_open_local`, `_open_hub`). (Modelled on inspect_ai's log `Recorder` base class.)

- `LocalFolder`: files of a mirror folder, read by seek + read; `local_file` gives the
  path, so the screenshot store reads a big row group in place instead of copying it.
- `HubSource`: a Hub revision (`lib.data.remote.hub.HubFiles`): ranged GETs with retries, a deadline
  and a strict 206 check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from lib.data.parquet import LocalRanges, Ranges
from lib.data.remote import hub as hubs


class ByteSource(Protocol):
    """What the loader and the screenshot store need from where the files are."""

    kind: str

    def where(self) -> str: ...  # for messages, e.g. "`/data/mirror`"

    def names(self) -> list[str]: ...  # every file, relative, sorted

    def whole(self, name: str) -> bytes: ...

    def ranges(
        self, name: str
    ) -> Ranges: ...  # footer + light reads (`lib.data.parquet.lazy_parquet`)

    def read(self, name: str, start: int, end: int) -> bytes: ...  # exactly [start, end)

    def download(
        self, name: str, dest: Path, start: int, end: int | None, progress=None, size=None
    ) -> None: ...

    def local_file(self, name: str) -> Path | None: ...  # readable in place, or None


class LocalFolder:
    """A mirror folder on this machine."""

    kind = "local"

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def where(self) -> str:
        return f"`{self.folder}`"

    def names(self) -> list[str]:
        return sorted(
            p.relative_to(self.folder).as_posix() for p in self.folder.rglob("*") if p.is_file()
        )

    def whole(self, name: str) -> bytes:
        return (self.folder / name).read_bytes()

    def ranges(self, name: str) -> Ranges:
        return LocalRanges(self.folder / name)

    def read(self, name: str, start: int, end: int) -> bytes:
        with open(self.folder / name, "rb") as f:
            f.seek(start)
            data = f.read(end - start)
        if len(data) != end - start:
            raise OSError(f"{name}: {len(data)} of {end - start} bytes at {start} (truncated?)")
        return data

    def download(self, name, dest, start, end, progress=None, size=None) -> None:
        raise NotImplementedError("a local file is read in place (see local_file)")

    def local_file(self, name: str) -> Path | None:
        return self.folder / name


class HubSource:
    """A Hub dataset at one commit sha."""

    kind = "hub"

    def __init__(self, files: hubs.HubFiles) -> None:
        self.files = files

    def where(self) -> str:
        return f"`{self.files.repo_id}`"

    def names(self) -> list[str]:
        return sorted(self.files.list_files())

    def whole(self, name: str) -> bytes:
        return self.files.whole(name)

    def ranges(self, name: str) -> Ranges:
        return self.files.ranges(name)

    def read(self, name: str, start: int, end: int) -> bytes:
        return self.files.fetch(name, (start, end))[0]

    def download(self, name, dest, start, end, progress=None, size=None) -> None:
        self.files.download(name, dest, start, end, progress, size)

    def local_file(self, name: str) -> Path | None:
        return None

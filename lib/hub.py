"""Files of one Hub dataset at one commit, read by HTTP range requests.

Why not `snapshot_download` + `datasets`: that fetches all 1.5 GB and rebuilds an Arrow
cache before the first page (and it called Streamlit from huggingface_hub's worker
threads, which made the default path fall back to the demo). Here the revision is
resolved once to a commit sha (`CUAVB_REVISION` pins another) and every file is read at
that sha, so a session never mixes two versions; only the byte ranges asked for travel.

`HF_ENDPOINT` and `HF_HUB_OFFLINE` are read by huggingface_hub at import; offline, the
revision comes from our own cache (`refs/<name>`), and no request is made at all.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REVISION_ENV = "CUAVB_REVISION"
CACHE_ENV = "CUAVB_CACHE_DIR"
TIMEOUT = 30.0  # per data request
INFO_TIMEOUT = 10.0  # the first request: an unreachable Hub falls back to the demo quickly
_SHA_RE = re.compile(r"^[0-9a-f]{40}$")


class HubError(Exception):
    """The Hub could not be used. `plain` is one line for users; str() is the detail."""

    def __init__(self, plain: str, detail: str) -> None:
        super().__init__(detail)
        self.plain = plain


def cache_root() -> Path:
    """Our own cache (light data, screenshots): `CUAVB_CACHE_DIR` or ~/.cache/cuavb-dashboard."""
    base = os.environ.get(CACHE_ENV)
    return Path(base) if base else Path.home() / ".cache" / "cuavb-dashboard"


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Revision:
    """A resolved revision: the commit sha and its date (ISO, may be "")."""

    sha: str
    date: str = ""
    files: tuple[str, ...] = field(default=(), compare=False, repr=False)  # when just resolved

    @property
    def short(self) -> str:
        return self.sha[:8]


def repo_cache(repo_id: str) -> Path:
    return cache_root() / "hub" / repo_id.replace("/", "--")


def _ref_file(repo_id: str, name: str) -> Path:
    return repo_cache(repo_id) / "refs" / re.sub(r"[^\w.-]", "_", name)


def write_atomic(path: Path, data: bytes) -> None:
    """Write a file so that a reader sees either nothing or all of it (tmp + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _explain(exc: Exception, repo_id: str, revision: str) -> HubError:
    """Turn a huggingface_hub / httpx error into a plain line + the technical detail."""
    from huggingface_hub import errors

    detail = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, errors.RevisionNotFoundError):
        return HubError(f"revision `{revision}` does not exist in `{repo_id}`.", detail)
    if isinstance(exc, errors.RepositoryNotFoundError):
        return HubError(f"the dataset `{repo_id}` was not found (or is private).", detail)
    if isinstance(exc, errors.EntryNotFoundError):
        return HubError(f"a file of `{repo_id}` is missing at this revision.", detail)
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if status:
        return HubError(f"the Hub answered with an error (HTTP {status}).", detail)
    if type(exc).__name__ in {"RemoteProtocolError", "ReadError", "ReadTimeout", "OSError"}:
        return HubError("the connection to the Hub broke off.", detail)
    return HubError("the connection failed (network error or timeout).", detail)


def resolve_revision(repo_id: str, revision: str | None = None) -> Revision:
    """The commit sha of `revision` (default `CUAVB_REVISION` or `main`): one request.

    Offline, the sha recorded by the last online resolve of that name is used; a
    40-hex revision with cached data needs no request either.
    """
    revision = revision or os.environ.get(REVISION_ENV, "").strip() or "main"
    ref = _ref_file(repo_id, revision)
    if offline() or (_SHA_RE.match(revision) and ref.exists()):
        if ref.exists():
            saved = json.loads(ref.read_text())
            return Revision(saved["sha"], saved.get("date", ""))
        raise HubError(
            "HF_HUB_OFFLINE is set and this revision was never downloaded.",
            f"no cached revision `{revision}` of `{repo_id}` in {repo_cache(repo_id)}",
        )
    from huggingface_hub import HfApi

    try:
        info = HfApi().dataset_info(repo_id, revision=revision, timeout=INFO_TIMEOUT)
    except Exception as exc:  # every failure means "cannot use the Hub"; _explain says which
        raise _explain(exc, repo_id, revision) from exc
    date = info.last_modified.strftime("%Y-%m-%d") if info.last_modified else ""
    result = Revision(str(info.sha), date, tuple(s.rfilename for s in info.siblings or []))
    data = json.dumps({"sha": result.sha, "date": result.date}).encode()
    write_atomic(ref, data)
    write_atomic(_ref_file(repo_id, result.sha), data)
    return result


class HubFiles:
    """Read files of `repo_id` at a fixed sha: whole, or by byte range."""

    def __init__(self, repo_id: str, revision: Revision, names: list[str] | None = None) -> None:
        self.repo_id = repo_id
        self.revision = revision
        self.names = names or (list(revision.files) if revision.files else None)

    def url(self, path: str) -> str:
        from huggingface_hub import hf_hub_url

        return hf_hub_url(self.repo_id, path, repo_type="dataset", revision=self.revision.sha)

    def _get(self, path: str, headers: dict[str, str] | None = None):
        from huggingface_hub import get_session
        from huggingface_hub.utils import build_hf_headers, hf_raise_for_status

        try:
            response = get_session().get(
                self.url(path),
                headers={**build_hf_headers(), **(headers or {})},
                follow_redirects=True,
                timeout=TIMEOUT,
            )
            hf_raise_for_status(response)
        except Exception as exc:
            raise _explain(exc, self.repo_id, self.revision.sha) from exc
        return response

    def list_files(self) -> list[str]:
        """Every file at this sha, from the repo info's siblings (no request when the
        revision was just resolved: the same answer listed them)."""
        if self.names is None:
            from huggingface_hub import HfApi

            try:
                info = HfApi().dataset_info(
                    self.repo_id, revision=self.revision.sha, timeout=TIMEOUT
                )
            except Exception as exc:
                raise _explain(exc, self.repo_id, self.revision.sha) from exc
            self.names = [s.rfilename for s in info.siblings or []]
        return self.names

    def whole(self, path: str) -> bytes:
        return self._get(path).content

    def ranges(self, path: str) -> HubRanges:
        return HubRanges(self, path)

    def download(
        self, path: str, dest: Path, start: int = 0, end: int | None = None, progress=None
    ) -> None:
        """Stream `path` (or bytes [start, end)) to `dest` atomically, reporting progress.

        The bytes go to a temporary file renamed into place only when complete, so a
        dropped connection never leaves a partial file where a reader would trust it.
        """
        from huggingface_hub import get_session
        from huggingface_hub.utils import build_hf_headers, hf_raise_for_status

        if offline():
            raise HubError(
                "HF_HUB_OFFLINE is set and these screenshots were never downloaded.",
                f"not in the cache: {path} bytes {start}-{end}",
            )
        headers = build_hf_headers()
        if end is not None:
            headers["Range"] = f"bytes={start}-{end - 1}"
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        expected = None if end is None else end - start
        got = 0
        try:
            with get_session().stream(
                "GET", self.url(path), headers=headers, follow_redirects=True, timeout=TIMEOUT
            ) as response:
                hf_raise_for_status(response)
                total = expected or int(response.headers.get("Content-Length") or 0)
                with open(tmp, "wb") as out:
                    for block in response.iter_bytes(1 << 20):
                        out.write(block)
                        got += len(block)
                        if progress:
                            progress(got, total)
            if expected is not None and got != expected:
                raise OSError(f"got {got} of {expected} bytes")
            os.replace(tmp, dest)
        except Exception as exc:
            tmp.unlink(missing_ok=True)
            if isinstance(exc, HubError):
                raise
            raise _explain(exc, self.repo_id, self.revision.sha) from exc


class HubRanges:
    """`lazy_parquet.Ranges` over HTTP. The first call fetches the last 64 KiB (suffix
    range), which gives the size from Content-Range and the footer in one request."""

    def __init__(self, files: HubFiles, path: str) -> None:
        self.files = files
        self.path = path
        self.name = path.rsplit("/", 1)[-1]
        self._size: int | None = None
        self._tail = b""

    def size(self) -> int:
        if self._size is None:
            from lib.lazy_parquet import FOOTER_GUESS

            response = self.files._get(self.path, {"Range": f"bytes=-{FOOTER_GUESS}"})
            content_range = response.headers.get("Content-Range", "")
            self._tail = response.content
            self._size = (
                int(content_range.rsplit("/", 1)[-1]) if "/" in content_range else len(self._tail)
            )
        return self._size

    def read(self, start: int, length: int) -> bytes:
        size = self.size()
        tail_start = size - len(self._tail)
        if start >= tail_start:
            return self._tail[start - tail_start : start - tail_start + length]
        response = self.files._get(self.path, {"Range": f"bytes={start}-{start + length - 1}"})
        return response.content

    def read_many(self, jobs: list[tuple[int, int]]) -> list[bytes]:
        """Several ranges concurrently (4 at a time): latency, not bandwidth, dominates."""
        with ThreadPoolExecutor(4) as pool:
            return list(pool.map(lambda job: self.read(*job), jobs))


ProgressFn = Callable[[int, int], None]

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

import hashlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")
ProgressFn = Callable[[int, int], None]

REVISION_ENV = "CUAVB_REVISION"
CACHE_ENV = "CUAVB_CACHE_DIR"
TIMEOUT = 30.0  # per data request
INFO_TIMEOUT = 10.0  # the first request: an unreachable Hub falls back to the demo quickly
INFO_TIMEOUT_ENV = "CUAVB_HUB_INFO_TIMEOUT"  # tests shorten it (a slow Hub in seconds, not 20)
_SHA_RE = re.compile(r"^[0-9a-f]{40}$")


def valid_sha(sha: object) -> bool:
    """A commit sha is exactly 40 lowercase hex digits; anything else never becomes a path."""
    return isinstance(sha, str) and bool(_SHA_RE.fullmatch(sha))


class HubError(Exception):
    """The Hub could not be used. `plain` is one line for users; str() is the detail.

    `retryable`: worth another attempt (429, 5xx, a dropped or slow connection);
    `retry_after`: the seconds the Hub asked us to wait (`Retry-After`), if it did.
    """

    def __init__(
        self, plain: str, detail: str, retryable: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(detail)
        self.plain = plain
        self.retryable = retryable
        self.retry_after = retry_after


class RevisionGone(HubError):
    """The Hub no longer serves the commit we read at (404 `RevisionNotFound` for a sha
    that resolved before: a force push or a squashed history while the server runs). Not
    worth retrying at that sha; the branch must be resolved again (`resolve_revision`)."""


class LocalDiskError(OSError):
    """Our own cache disk failed (full, read-only): not the Hub's fault, and said so."""


ATTEMPTS_ENV = "CUAVB_HUB_ATTEMPTS"  # tests lower these two
BACKOFF_ENV = "CUAVB_HUB_BACKOFF"
MIN_RATE_ENV = "CUAVB_HUB_MIN_RATE"
RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
MAX_RETRY_WAIT = 10.0  # a longer Retry-After is cut to this (a visitor is waiting)
READ_TIMEOUT = 15.0  # seconds without a byte
MIN_DEADLINE = 20.0  # every fetch may take this long, however small
MAX_WHOLE = 64 << 20  # a whole-file read (README, annotations) above this is refused


def attempts() -> int:
    return max(1, int(os.environ.get(ATTEMPTS_ENV, "4")))


def info_timeout() -> float:
    """Seconds the repo-info request may take before it counts as a failed attempt."""
    return float(os.environ.get(INFO_TIMEOUT_ENV, str(INFO_TIMEOUT)))


def backoff() -> float:
    return float(os.environ.get(BACKOFF_ENV, "0.5"))


def deadline_for(nbytes: int, start: float | None = None) -> float:
    """The monotonic time by which `nbytes` must have arrived (counted from `start`, default
    now): at least MIN_DEADLINE, and a minimum throughput (`CUAVB_HUB_MIN_RATE` bytes/s,
    default 250 kB/s) beyond that. A Hub that sends a byte every few seconds then fails
    with Retry, not forever. `nbytes` is what the read asks for (a range's length, a
    suffix's, a whole file's Content-Length), never a cap it may not reach: a 64 KiB
    footer read trickled by the Hub gives up after MIN_DEADLINE, not 64 MB / rate (272 s).
    """
    rate = float(os.environ.get(MIN_RATE_ENV, "250000"))
    minimum = float(os.environ.get("CUAVB_HUB_MIN_DEADLINE", str(MIN_DEADLINE)))
    begun = time.monotonic() if start is None else start
    return begun + max(minimum, nbytes / max(rate, 1.0))


RETRY_BUDGET = 30.0  # seconds: no new attempt starts after this (a visitor is waiting)


def with_retries(call: Callable[[], T], what: str = "") -> T:
    """Run `call`, retrying a retryable HubError with exponential backoff, honouring
    `Retry-After` (capped at MAX_RETRY_WAIT), for at most `attempts()` tries and
    RETRY_BUDGET seconds. The last error is raised as is."""
    tries = attempts()
    started = time.monotonic()
    for attempt in range(tries):
        try:
            return call()
        except HubError as exc:
            wait = exc.retry_after if exc.retry_after is not None else backoff() * 2**attempt
            wait = min(max(wait, 0.0), MAX_RETRY_WAIT)
            late = time.monotonic() - started + wait > RETRY_BUDGET
            if not exc.retryable or attempt == tries - 1 or late:
                raise
            log.warning("%s: %s; retry %d of %d in %.1f s", what, exc, attempt + 1, tries - 1, wait)
            time.sleep(wait)
    raise AssertionError("unreachable")


def _retry_after(headers) -> float | None:
    value = (headers or {}).get("Retry-After")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
        except (TypeError, ValueError):
            return None


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
        kind = RevisionGone if valid_sha(revision) else HubError
        return kind(f"revision `{revision}` does not exist in `{repo_id}`.", detail)
    if isinstance(exc, errors.RepositoryNotFoundError):
        return HubError(f"the dataset `{repo_id}` was not found (or is private).", detail)
    if isinstance(exc, errors.EntryNotFoundError):
        return HubError(f"a file of `{repo_id}` is missing at this revision.", detail)
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if status:
        retry = status in RETRY_STATUSES
        after = _retry_after(getattr(response, "headers", None)) if retry else None
        return HubError(f"the Hub answered with an error (HTTP {status}).", detail, retry, after)
    if "Timeout" in type(exc).__name__:  # httpx ReadTimeout / ConnectTimeout / PoolTimeout
        return HubError("the Hub did not answer in time (timeout).", detail, True)
    if type(exc).__name__ in {"RemoteProtocolError", "ReadError", "OSError"}:
        return HubError("the connection to the Hub broke off.", detail, True)
    if isinstance(exc, ValueError):  # malformed JSON in the repo info
        return HubError("the Hub sent a malformed answer.", detail, True)
    if _unfixable(exc):
        return HubError(_unfixable(exc), detail, retryable=False)
    return HubError("the connection failed (network error or timeout).", detail, True)


_NO_NAME = ("name or service not known", "name resolution", "nodename nor servname",
            "getaddrinfo failed", "no address associated")  # fmt: skip
_NO_ROUTE = ("network is unreachable", "no route to host")


def _unfixable(exc: BaseException) -> str:
    """The plain line for a connection error no retry can fix (the Hub's name does not
    resolve, no network), or "": waiting 0.5 + 1 + 2 s of back-off would only delay the
    fallback. Reads the whole cause chain (httpx wraps the socket error)."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            break
        text = str(seen).lower()
        if type(seen).__name__ == "OfflineModeIsEnabled":
            return "huggingface_hub is in offline mode (HF_HUB_OFFLINE)."
        if any(m in text for m in _NO_NAME):
            return "the Hub's name could not be resolved (name resolution: no network or DNS)."
        if any(m in text for m in _NO_ROUTE):
            return "there is no network route to the Hub (offline)."
        seen = seen.__cause__ or seen.__context__
    return ""


def _read_ref(ref: Path) -> Revision | None:
    """A cached ref, or None when it is missing, unreadable or holds no valid sha."""
    try:
        saved = json.loads(ref.read_text())
        sha = saved["sha"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        if ref.exists():
            log.warning("ignoring a damaged cached ref %s: %s", ref, exc)
        return None
    return Revision(sha, str(saved.get("date", ""))) if valid_sha(sha) else None


def resolve_revision(repo_id: str, revision: str | None = None) -> Revision:
    """The commit sha of `revision` (default `CUAVB_REVISION` or `main`): one request,
    retried on 429/5xx/dropped connections.

    Offline, the sha recorded by the last online resolve of that name is used; a
    40-hex revision with cached data needs no request either. The sha the Hub returns is
    checked (40 hex digits) before it names any file.
    """
    revision = revision or os.environ.get(REVISION_ENV, "").strip() or "main"
    ref = _ref_file(repo_id, revision)
    if offline() or valid_sha(revision):
        cached = _read_ref(ref)
        if cached is not None:
            return cached
        if offline():
            raise HubError(
                "HF_HUB_OFFLINE is set and this revision was never downloaded.",
                f"no cached revision `{revision}` of `{repo_id}` in {repo_cache(repo_id)}",
            )
    from huggingface_hub import HfApi

    def info_once():
        try:
            return HfApi().dataset_info(repo_id, revision=revision, timeout=info_timeout())
        except Exception as exc:  # every failure means "cannot use the Hub"; _explain says which
            raise _explain(exc, repo_id, revision) from exc

    info = with_retries(info_once, f"repo info of {repo_id}")
    if not valid_sha(info.sha):
        raise HubError(
            "the Hub returned an invalid revision id.",
            f"repo info sha {str(info.sha)[:80]!r} is not 40 hex digits",
        )
    date = info.last_modified.strftime("%Y-%m-%d") if info.last_modified else ""
    names = tuple(str(s.rfilename) for s in info.siblings or [])
    result = Revision(str(info.sha), date, names)
    data = json.dumps({"sha": result.sha, "date": result.date}).encode()
    for path in (ref, _ref_file(repo_id, result.sha)):
        try:
            write_atomic(path, data)
        except OSError as exc:  # a read-only or full cache disk: the revision is still known
            log.warning("could not cache the revision in %s: %s", path, exc)
    return result


_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
RESUME_OVERLAP = 4096  # bytes asked again on a resume, compared with what we already have


@dataclass(frozen=True)
class Stated:
    """What the Hub said about a file in one answer, besides the body: its size (from
    `Content-Range`, or `X-Linked-Size`, or a whole answer's `Content-Length`; -1 when it
    said none) and its sha256 (`X-Linked-Etag` when it is 64 hex digits, else "").

    Only what is certain is checked. The Hub's resolve answer for an LFS file carries
    `X-Linked-Size` and `X-Linked-Etag` (the LFS oid: the content's sha256; huggingface_hub
    compares a 64-hex etag with the file's sha256 the same way). A plain `ETag` is not
    checked: for a file stored in git it is the git blob id (sha1 of `blob <n>\\0` + the
    bytes, not of the bytes), and after the redirect to the CDN it is the CDN's own tag (an
    S3 md5, or a xet hash that is 64 hex digits but not a sha256)."""

    size: int = -1
    sha256: str = ""


def _stated(response, rng_size: int = -1) -> Stated:
    """The size and sha256 the Hub stated, read from the answer and the redirects before
    it (`X-Linked-*` are on the Hub's own 302 when the bytes come from the CDN)."""
    linked_size, linked_etag = -1, ""
    for answer in [*getattr(response, "history", []), response]:
        value = (answer.headers.get("X-Linked-Size") or "").strip()
        if value.isdigit():
            linked_size = int(value)
        etag = (answer.headers.get("X-Linked-Etag") or "").strip()
        etag = etag.removeprefix("W/").strip('"').lower()
        if _SHA256_RE.fullmatch(etag):
            linked_etag = etag
    if rng_size >= 0 and linked_size >= 0 and rng_size != linked_size:
        raise _lie(f"Content-Range says {rng_size} bytes, X-Linked-Size says {linked_size}")
    return Stated(rng_size if rng_size >= 0 else linked_size, linked_etag)


class DamagedAnswer(HubError):
    """An answer that is not what was asked or stated (a short or long body, a range or
    size that differs, a spliced resume, a wrong sha256): worth another try from the start
    (a proxy's hiccup), and none of its bytes is kept, written to the cache or returned."""


def _lie(detail: str) -> DamagedAnswer:
    return DamagedAnswer("the Hub sent a damaged or incomplete file.", detail, retryable=True)


_ERRORS = {
    "RevisionNotFound": "revision `{rev}` does not exist in `{repo}`.",
    "RepoNotFound": "the dataset `{repo}` was not found (or is private).",
    "EntryNotFound": "a file of `{repo}` is missing at this revision.",
}


class HubFiles:
    """Read files of `repo_id` at a fixed sha: whole, or by byte range.

    Every request retries 429, 5xx and dropped connections (`with_retries`), has a
    deadline (`deadline_for`), and a ranged read must come back as 206 with a matching
    `Content-Range`: a server that ignores `Range` and sends the whole file fails at
    the first header, before any body byte is stored.
    """

    def __init__(self, repo_id: str, revision: Revision, names: list[str] | None = None) -> None:
        if not valid_sha(revision.sha):
            raise HubError("the Hub returned an invalid revision id.", f"bad sha {revision.sha!r}")
        self.repo_id = repo_id
        self.revision = revision
        self.names = names or (list(revision.files) if revision.files else None)
        self._sizes: dict[str, int] = {}  # path -> the size the Hub stated for it

    def url(self, path: str) -> str:
        from huggingface_hub import hf_hub_url

        return hf_hub_url(self.repo_id, path, repo_type="dataset", revision=self.revision.sha)

    def _fail(self, response, path: str) -> HubError:
        status = response.status_code
        code = response.headers.get("X-Error-Code", "")
        detail = f"HTTP {status} {code} for {path}".strip()
        if code in _ERRORS:
            plain = _ERRORS[code].format(rev=self.revision.sha, repo=self.repo_id)
            return (RevisionGone if code == "RevisionNotFound" else HubError)(plain, detail)
        retry = status in RETRY_STATUSES
        after = _retry_after(response.headers) if retry else None
        return HubError(f"the Hub answered with an error (HTTP {status}).", detail, retry, after)

    def known_size(self, path: str) -> int:
        """The size the Hub stated for `path` in an earlier answer, or -1."""
        return self._sizes.get(path, -1)

    def _agree(self, path: str, size: int, given: int | None = None) -> None:
        """`size` (just stated) must be the size stated before for `path` (and `given`, the
        size the caller knows from the footer): a Hub or proxy that says a 1 MB file is 100
        bytes long in one answer is caught by the next, or by the caller's."""
        if size < 0:
            return
        for before, where in ((self._sizes.get(path, -1), "before"), (given, "in the footer")):
            if before is not None and before >= 0 and before != size:
                raise _lie(f"{path}: the Hub states {size} bytes, {before} {where}")
        self._sizes[path] = size

    def _head_size(self, path: str) -> int:
        """The file's size from a HEAD (`X-Linked-Size`, else `Content-Length`), for a whole
        answer that stated none (a chunked body): what huggingface_hub's metadata HEAD reads."""
        from huggingface_hub import get_session
        from huggingface_hub.utils import build_hf_headers

        headers = {**build_hf_headers(), "Accept-Encoding": "identity"}
        try:
            response = get_session().head(
                self.url(path), headers=headers, follow_redirects=True, timeout=READ_TIMEOUT
            )
        except Exception as exc:
            raise _explain(exc, self.repo_id, self.revision.sha) from exc
        if response.status_code >= 400:
            raise self._fail(response, path)
        stated = _stated(response)
        length = (response.headers.get("Content-Length") or "").strip()
        if stated.size < 0 and length.isdigit():
            return int(length)
        if stated.size < 0:
            raise _lie(f"no size stated for {path}, not even by a HEAD")
        return stated.size

    def _stream_once(
        self,
        path: str,
        sink: Callable[[bytes], None],
        rng: tuple[int, int] | None,
        cap: int,
        progress: ProgressFn | None,
        deadline: float,
        given: int | None = None,
    ) -> tuple[int, Stated]:
        """One GET of `path` (bytes [a, b) when `rng`, a suffix when a < 0) into `sink`.

        Every answer is checked before its end is accepted: a range must be exactly the
        bytes asked (206, `Content-Range` naming them, a body of that length); a whole file
        must be exactly the size the Hub states (`Content-Length`, `X-Linked-Size`, a size
        stated for this path before, `given`; a HEAD when the answer states none); every
        size stated must agree with the others. Returns (bytes received, what was stated).
        A body that breaks any of this raises a retryable HubError (`_lie`)."""
        from huggingface_hub import get_session
        from huggingface_hub.utils import build_hf_headers

        if offline():
            raise HubError(
                "HF_HUB_OFFLINE is set and these bytes were never downloaded.",
                f"not in the cache: {path} {rng}",
            )
        begun = time.monotonic()
        # identity: the bytes counted are the file's bytes, never a compressed body's
        headers = {**build_hf_headers(), "Accept-Encoding": "identity"}
        if rng is not None:
            a, b = rng
            headers["Range"] = f"bytes={a}" if a < 0 else f"bytes={a}-{b - 1}"
        got = 0
        try:
            with get_session().stream(
                "GET", self.url(path), headers=headers, follow_redirects=True, timeout=READ_TIMEOUT
            ) as response:
                if response.status_code >= 400:
                    raise self._fail(response, path)
                length = (response.headers.get("Content-Length") or "").strip()
                if rng is not None:
                    size, expected = self._check_range(response, path, rng)
                    stated = _stated(response, size)
                elif response.status_code != 200:
                    raise HubError(
                        "the Hub sent an unexpected answer.",
                        f"HTTP {response.status_code} for a whole read of {path}",
                    )
                else:
                    stated = _stated(response)
                    sizes = {stated.size} if stated.size >= 0 else set()
                    if length.isdigit():
                        sizes.add(int(length))
                    if len(sizes) > 1:
                        raise _lie(f"{path}: Content-Length {length}, X-Linked-Size {stated.size}")
                    if not sizes:  # a chunked answer: the size comes from elsewhere
                        before = self._sizes.get(path, -1)
                        known = given if given is not None and given >= 0 else before
                        sizes = {known if known >= 0 else self._head_size(path)}
                    stated = Stated(sizes.pop(), stated.sha256)
                    if stated.size > cap:
                        raise HubError(
                            "the file is larger than this dashboard reads at once.",
                            f"{path} is {stated.size} bytes, more than {cap}",
                        )
                    expected = stated.size
                self._agree(path, stated.size, given)
                if length.isdigit() and int(length) != expected:
                    raise _lie(f"Content-Length {length} != {expected} bytes asked for {path}")
                # the deadline follows the bytes coming: the range's, or the declared length
                deadline = min(deadline, deadline_for(expected, begun))
                for block in response.iter_bytes():  # as it arrives: the deadline is checked
                    got += len(block)
                    if got > expected:
                        raise _lie(f"more than {expected} bytes for {path}")
                    sink(block)
                    if progress:
                        progress(got, expected)
                    if time.monotonic() > deadline:
                        raise HubError(
                            "the Hub is answering too slowly.",
                            f"{got} of {expected} bytes of {path} after the deadline",
                            retryable=False,
                        )
                if got != expected:
                    raise HubError(
                        "the connection to the Hub broke off.",
                        f"got {got} of {expected} expected bytes of {path}",
                        retryable=True,
                    )
        except (HubError, LocalDiskError):
            raise
        except Exception as exc:
            raise _explain(exc, self.repo_id, self.revision.sha) from exc
        return got, stated

    @staticmethod
    def _check_range(response, path: str, rng: tuple[int, int]) -> tuple[int, int]:
        """(file size, expected length) from a 206 answer; HubError for anything else.

        A range [a, b) must come back whole: `Content-Range: bytes a-(b-1)/size`. A
        Content-Range that ends early (a file "smaller" than the bytes asked) is a lie or a
        wrong request, never a shorter answer to accept. A suffix gets min(n, size) bytes."""
        content_range = response.headers.get("Content-Range", "")
        match = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+)", content_range.strip())
        if response.status_code != 206 or not match:
            raise HubError(
                "the Hub ignored the byte range (it would send the whole file).",
                f"HTTP {response.status_code}, Content-Range {content_range[:80]!r} for "
                f"a range of {path}",
            )
        first, last, size = int(match[1]), int(match[2]), int(match[3])
        a, b = rng
        ok = (
            (first == max(size + a, 0) and last == size - 1)
            if a < 0
            else (first == a and last == b - 1 and b <= size)
        )
        if not ok or last < first:
            raise _lie(f"asked {rng}, got Content-Range {content_range[:80]!r} for {path}")
        return size, last - first + 1

    def fetch(
        self,
        path: str,
        rng: tuple[int, int] | None = None,
        cap: int = MAX_WHOLE,
        deadline_bytes: int | None = None,
    ) -> tuple[bytes, int]:
        """Bytes of `path` (a range, or whole up to `cap`), retried; (data, file size).

        What it returns is exactly what was asked (`_stream_once`'s checks); a whole file
        whose sha256 the Hub stated is compared with it. Anything else is retried, then
        raised: never returned."""

        def once() -> tuple[bytes, int]:
            parts: list[bytes] = []
            # what is asked: a range's length, a suffix's (not the cap), a whole file up to cap
            limit = cap if rng is None else (min(-rng[0], cap) if rng[0] < 0 else rng[1] - rng[0])
            deadline = deadline_for(deadline_bytes or limit)
            _, stated = self._stream_once(path, parts.append, rng, limit, None, deadline)
            data = b"".join(parts)
            whole = rng is None or (rng[0] <= -len(data) and len(data) == stated.size)
            if whole and stated.sha256 and hashlib.sha256(data).hexdigest() != stated.sha256:
                raise _lie(f"{path}: sha256 differs from the X-Linked-Etag the Hub stated")
            return data, stated.size

        return with_retries(once, f"{self.repo_id}/{path}")

    def list_files(self) -> list[str]:
        """Every file at this sha, from the repo info's siblings (no request when the
        revision was just resolved: the same answer listed them)."""
        if self.names is None:
            from huggingface_hub import HfApi

            def once():
                try:
                    return HfApi().dataset_info(
                        self.repo_id, revision=self.revision.sha, timeout=TIMEOUT
                    )
                except Exception as exc:
                    raise _explain(exc, self.repo_id, self.revision.sha) from exc

            info = with_retries(once, f"file list of {self.repo_id}")
            self.names = [str(s.rfilename) for s in info.siblings or []]
        return self.names

    def whole(self, path: str) -> bytes:
        return self.fetch(path)[0]

    def ranges(self, path: str) -> HubRanges:
        return HubRanges(self, path)

    def download(
        self,
        path: str,
        dest: Path,
        start: int = 0,
        end: int | None = None,
        progress: ProgressFn | None = None,
        size: int | None = None,
    ) -> None:
        """Stream `path` (or bytes [start, end)) to `dest` atomically, reporting progress.

        The bytes go to a temporary file (`.<name>.<pid>.<thread>.tmp`, counted by the
        screenshot cache) renamed into place only when complete and checked, so a dropped
        connection or a lying answer never leaves a file where a reader would trust it. A
        retry after a broken connection resumes from the bytes already received (a range
        from there on, as `huggingface_hub`'s `http_get` does) when the end is known
        (`end`, or `size` for a whole file); a 160 MB row group cut at 150 MB costs 10 MB
        more, not 160. The resume asks for the last RESUME_OVERLAP bytes again and
        compares them with what it has: an answer spliced at another offset starts the
        download over instead of being glued on. Every answer is checked as `fetch`'s
        are, and a whole file is compared with the sha256 the Hub stated, if it did. A
        failed write is a `LocalDiskError` (our disk), never blamed on the Hub. `size`
        (the whole file's, known from the footer read) caps a whole download and must be
        the size the Hub states.
        """
        stop = end if end is not None else size
        cap = (stop - start) if stop is not None else 1 << 40
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        kept = [0]  # bytes of tmp written by an earlier try of this call
        sha256 = [""]  # the whole file's, when an answer stated it

        def once() -> None:
            have = kept[0] if stop is not None else 0
            tail = b""
            try:
                dest.parent.mkdir(parents=True, exist_ok=True)
                if have:
                    with open(tmp, "rb") as old:
                        old.seek(max(have - RESUME_OVERLAP, 0))
                        tail = old.read()
                    if len(tail) != min(have, RESUME_OVERLAP):  # not what we wrote: start over
                        have, tail = 0, b""
                out = open(tmp, "ab" if have else "wb")  # noqa: SIM115 (closed below)
                if have and out.tell() != have:
                    out.close()
                    have, tail = 0, b""
                    out = open(tmp, "wb")  # noqa: SIM115
            except OSError as exc:
                raise LocalDiskError(f"cannot write the screenshot cache ({exc})") from exc
            seen = [0]  # bytes of this answer so far (the overlap first)

            def sink(block: bytes) -> None:
                if seen[0] < len(tail):  # the overlap: compared, not written
                    n = min(len(tail) - seen[0], len(block))
                    if block[:n] != tail[seen[0] : seen[0] + n]:
                        kept[0] = 0  # the next try starts over
                        raise _lie(f"{path}: the resumed bytes do not match (a spliced answer)")
                    seen[0] += n
                    block = block[n:]
                seen[0] += len(block)
                try:
                    out.write(block)
                except OSError as exc:
                    raise LocalDiskError(f"cannot write the screenshot cache ({exc})") from exc
                kept[0] += len(block)

            def moved(done: int, total: int) -> None:
                if progress:
                    progress(have + max(done - len(tail), 0), cap)

            # a whole file is one plain GET; a resumed one (or a part) a range to its end
            whole = start == 0 and end is None and not have
            rng = None if whole or stop is None else (start + have - len(tail), stop)
            kept[0] = have
            try:
                with out:
                    if rng is not None and have >= cap:
                        pass  # every byte arrived before the connection broke
                    else:
                        _, stated = self._stream_once(
                            path,
                            sink,
                            rng,
                            cap - have + len(tail),
                            moved,
                            deadline_for(cap - have),
                            size,
                        )
                        sha256[0] = stated.sha256 or sha256[0]
                full = start == 0 and (end is None or end == self._sizes.get(path, -1))
                if full and sha256[0] and _file_sha256(tmp) != sha256[0]:
                    kept[0] = 0
                    raise _lie(f"{path}: sha256 differs from the X-Linked-Etag the Hub stated")
                os.replace(tmp, dest)
            except OSError as exc:
                _discard(tmp)
                kept[0] = 0
                if isinstance(exc, LocalDiskError):
                    raise
                raise LocalDiskError(f"cannot write the screenshot cache ({exc})") from exc
            except HubError as exc:
                if not exc.retryable or isinstance(exc, DamagedAnswer) or not kept[0]:
                    _discard(tmp)
                    kept[0] = 0
                raise
            except BaseException:
                _discard(tmp)
                raise

        try:
            with_retries(once, f"{self.repo_id}/{path}")
        finally:  # after the last try, kept or not, no partial file stays behind
            _discard(tmp)


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as src:
        while block := src.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _discard(tmp: Path) -> None:
    """Remove a partial download if it is there. A cache folder that is not a folder (or
    has gone) raises here too; that must not replace the error that says what failed."""
    try:
        tmp.unlink(missing_ok=True)
    except OSError as exc:
        log.debug("could not remove %s: %s", tmp, exc)


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
            from lib.data.parquet import FOOTER_GUESS

            self._tail, self._size = self.files.fetch(self.path, (-FOOTER_GUESS, 0))
        return self._size

    def read(self, start: int, length: int) -> bytes:
        size = self.size()
        tail_start = size - len(self._tail)
        if start >= tail_start:
            return self._tail[start - tail_start : start - tail_start + length]
        if length <= 0:
            return b""
        return self.files.fetch(self.path, (start, min(start + length, size)))[0]

    def read_many(self, jobs: list[tuple[int, int]]) -> list[bytes]:
        """Several ranges concurrently (4 at a time): latency, not bandwidth, dominates."""
        with ThreadPoolExecutor(4) as pool:
            return list(pool.map(lambda job: self.read(*job), jobs))

"""A local stand-in for the Hugging Face Hub: serves one mirror folder as a dataset repo.

Why: the default data path (no `CUAVB_DATA`) talks to the Hub, and nothing can reach the
Hub from CI. With `HF_ENDPOINT=http://127.0.0.1:PORT`, `huggingface_hub`, `HfFileSystem`,
`datasets` and our own range reader see this server as the Hub, so the whole path runs
end to end offline. It answers only what those clients call (read from huggingface_hub
2.4 and checked in this server's log):

- `GET /api/datasets/<repo>[/revision/<rev>]`: repo info, `sha` (40 hex), `lastModified`,
  `siblings`;
- `GET /api/datasets/<repo>/tree/<rev>[/<path>][?recursive=true]`: the listing;
- `POST /api/datasets/<repo>/paths-info/<rev>`: info on given paths;
- `GET|HEAD /datasets/<repo>/resolve/<rev>/<path>`: the file, with `ETag`,
  `X-Repo-Commit`, `Content-Length`, `Accept-Ranges`, and `Range: bytes=a-b | a- | -n`
  answered `206` + `Content-Range`. No `X-Xet-*` header is ever sent, so clients never
  switch to hf-xet.
- With `linked=True` (`--linked`), `X-Linked-Size` and `X-Linked-Etag` (the sha256), as
  the Hub sends for an LFS file.
- Missing file: 404 + `X-Error-Code: EntryNotFound`; unknown revision: 404 +
  `RevisionNotFound`; another repo id: 404 + `RepoNotFound`.

Test hooks: every request is logged (`Hub.log`, `GET /_log`, optional JSON-lines file)
BEFORE it is answered (a client that has its answer finds its request in the log), a
bandwidth throttle, and faults (`Faults`: a status on the Nth request or on a path
pattern, with `Retry-After`; a connection dropped mid-body; a slow first byte; `Range`
ignored; a body dripped a byte at a time; a forged or malformed repo info, or a slow one;
a lying Content-Length; and lies about the body, as a broken proxy tells them: a
Content-Range that claims a smaller file, a chunked body cut short but ended cleanly, a
resumed range spliced from another offset, extra bytes), settable in process
(`Hub.faults`) or over HTTP (`POST /_faults` with JSON), so a client in another
process can be tested; and `main` moved to a new commit with the old one deleted
(`Hub.move_main()`, `POST /_move_main`).

Run: `python -m tools.local_hub FOLDER --port P [--throttle-mbps N] [--log FILE]`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

DEFAULT_REPO = "microsoft/CUAVerifierBench"
CHUNK = 64 * 1024


@dataclass
class Faults:
    """Faults to inject. Counters are 1-based over all logged requests (not `/_…`)."""

    status: int = 503
    fail_requests: list[int] = field(default_factory=list)  # fail the Nth request(s)
    fail_pattern: str = ""  # fail requests whose path matches (regex)
    fail_count: int = 0  # how many pattern failures are left (0 = none)
    drop_pattern: str = ""  # drop the connection mid-body on matching GETs
    drop_count: int = 0
    drop_after: int = 1024  # bytes sent before the drop
    first_byte_delay: float = 0.0  # seconds before any response
    retry_after: str = ""  # a Retry-After header on injected failures
    ignore_range: bool = False  # answer 200 with the whole file to a ranged GET
    drip_pattern: str = ""  # send matching bodies one byte every `drip_interval` s
    drip_interval: float = 5.0
    forged_sha: str = ""  # the repo info says this sha (e.g. "../../x")
    info_body: str = ""  # the repo info answers this text (e.g. malformed JSON)
    info_delay: float = 0.0  # seconds before the repo info answers
    lie_length: int = 0  # Content-Length this much larger than the body sent
    # lies about the body (a broken proxy or CDN), on files whose path matches
    # `lie_pattern` ("" = every file), `lie_count` times (-1 = always):
    lie_pattern: str = ""
    lie_count: int = -1
    short_size: int = 0  # say the file is this long: Content-Range a-b/short, body cut to it
    chunked_cut: float = 0.0  # send chunked (no Content-Length), ended cleanly after this share
    splice_shift: int = 0  # a range from a > 0 sends the bytes from a + shift, labelled a
    extra_bytes: int = 0  # this many bytes more than the range or file, Content-Length too


@dataclass
class Entry:
    """One logged request."""

    n: int
    method: str
    path: str
    range: str | None
    status: int
    bytes_sent: int
    t: float


class Hub:
    """The served repo: a folder, a repo id, a fixed commit sha, the log and the faults."""

    def __init__(
        self,
        folder: Path,
        repo_id: str = DEFAULT_REPO,
        throttle_bps: float = 0.0,
        log_file: Path | None = None,
        linked: bool = False,
    ) -> None:
        self.folder = Path(folder).resolve()
        # answer as the Hub does for LFS files: `X-Linked-Size` and `X-Linked-Etag` (sha256)
        self.linked = linked
        self._sha256: dict[str, str] = {}
        self.repo_id = repo_id
        self.throttle_bps = throttle_bps
        self.log_file = log_file
        self.faults = Faults()
        self.log: list[Entry] = []
        self._lock = threading.Lock()
        self._free_at = 0.0
        self.files = sorted(
            p.relative_to(self.folder).as_posix()
            for p in self.folder.rglob("*")
            if p.is_file() and not p.name.startswith(".")
        )
        digest = hashlib.sha1(repo_id.encode())
        newest = 0.0
        for name in self.files:
            stat = (self.folder / name).stat()
            newest = max(newest, stat.st_mtime)
            digest.update(f"{name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
        self.sha = digest.hexdigest()
        self.last_modified = datetime.fromtimestamp(newest, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    # -- helpers used by the handler and by tests --------------------------------------
    def record(
        self,
        method: str,
        path: str,
        rng: str | None,
        status: int,
        sent: int,
        pending: bool = False,
    ) -> int:
        """Log a request before it is answered; a body's bytes are counted as they go
        (`update`), and the JSON-lines file gets the entry when it is complete."""
        with self._lock:
            entry = Entry(len(self.log) + 1, method, path, rng, status, sent, time.time())
            self.log.append(entry)
            if self.log_file and not pending:
                self._write_log(entry)
            return entry.n

    def update(self, number: int, status: int | None, sent: int) -> None:
        with self._lock:
            entry = next((e for e in reversed(self.log) if e.n == number), None)
            if entry is not None:
                entry.bytes_sent = sent
                if status is not None:
                    entry.status = status

    def finish(self, number: int) -> None:
        """A logged answer is complete: append it to the JSON-lines file."""
        if self.log_file:
            with self._lock:
                entry = next((e for e in reversed(self.log) if e.n == number), None)
                if entry is not None:
                    self._write_log(entry)

    def _write_log(self, entry: Entry) -> None:
        with open(self.log_file, "a") as out:  # type: ignore[arg-type]
            out.write(json.dumps(asdict(entry)) + "\n")

    def throttle(self, nbytes: int) -> None:
        """Hold the sender so that ALL connections together stay under `throttle_bps`
        (a shared link, like one container's bandwidth; not per connection, else eight
        parallel downloads would get eight times the bandwidth)."""
        if not self.throttle_bps:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._free_at)
            self._free_at = start + nbytes / self.throttle_bps
            wait = self._free_at - now
        if wait > 0:
            time.sleep(wait)

    def next_number(self) -> int:
        with self._lock:
            return len(self.log) + 1

    def clear_log(self) -> None:
        with self._lock:
            self.log.clear()

    def file_info(self, name: str) -> dict[str, Any]:
        stat = (self.folder / name).stat()
        oid = hashlib.sha1(f"{name}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()
        return {"type": "file", "oid": oid, "size": stat.st_size, "path": name}

    def sha256(self, name: str) -> str:
        """The file's sha256 (an LFS oid), computed once."""
        with self._lock:
            if name not in self._sha256:
                self._sha256[name] = hashlib.sha256((self.folder / name).read_bytes()).hexdigest()
            return self._sha256[name]

    def lie(self, path: str) -> bool:
        """Whether this answer lies (its body), counting `lie_count` down."""
        f = self.faults
        lying = f.short_size or f.chunked_cut or f.splice_shift or f.extra_bytes
        if not lying or f.lie_count == 0:
            return False
        if f.lie_pattern and not re.search(f.lie_pattern, path):
            return False
        with self._lock:
            if f.lie_count > 0:
                f.lie_count -= 1
        return True

    def known_revision(self, rev: str) -> bool:
        return rev in ("main", self.sha)

    def move_main(self) -> str:
        """`main` moves to a new commit and the old one is gone (a force push or a
        squashed history while clients run): the same files, a new sha; a request at the
        old sha gets 404 `RevisionNotFound`. Returns the new sha."""
        with self._lock:
            self.sha = hashlib.sha1(f"{self.sha}:moved".encode()).hexdigest()
            return self.sha


def _parse_range(header: str | None, size: int) -> tuple[int, int] | None:
    """`bytes=a-b`, `bytes=a-` or `bytes=-n` -> inclusive (start, end); None = whole file."""
    if not header:
        return None
    match = re.fullmatch(r"bytes=(\d*)-(\d*)", header.strip())
    if not match or (not match[1] and not match[2]):
        return None
    if not match[1]:
        n = int(match[2])
        return max(size - n, 0), size - 1
    start = int(match[1])
    end = int(match[2]) if match[2] else size - 1
    return start, min(end, size - 1)


def make_handler(hub: Hub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

        # -- plumbing ----------------------------------------------------------------
        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            sent = 0 if self.command == "HEAD" else len(body)
            hub.record(self.command, self.path, self.headers.get("Range"), status, sent)
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _json(self, obj: Any, status: int = 200) -> None:
            self._send(status, json.dumps(obj).encode(), {"Content-Type": "application/json"})

        def _error(self, status: int, code: str, message: str) -> None:
            self._send(
                status,
                json.dumps({"error": message}).encode(),
                {
                    "Content-Type": "application/json",
                    "X-Error-Code": code,
                    "X-Error-Message": message,
                },
            )

        def _fault(self) -> bool:
            """Apply the configured faults; True when the request was answered by one."""
            f = hub.faults
            if f.first_byte_delay:
                time.sleep(f.first_byte_delay)
            n = hub.next_number()
            hit = n in f.fail_requests
            if (
                not hit
                and f.fail_pattern
                and f.fail_count > 0
                and re.search(f.fail_pattern, self.path)
            ):
                f.fail_count -= 1
                hit = True
            if hit:
                body = json.dumps({"error": f"injected fault on request {n}"}).encode()
                headers = {"Content-Type": "application/json", "X-Error-Code": "InjectedFault"}
                if f.retry_after:
                    headers["Retry-After"] = f.retry_after
                self._send(f.status, body, headers)
            return hit

        # -- control endpoints (not logged) -------------------------------------------
        def _control(self) -> bool:
            if self.path.startswith("/_log"):
                if self.command == "DELETE":
                    hub.clear_log()
                    body = b"[]"
                else:
                    body = json.dumps([asdict(e) for e in hub.log]).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return True
            if self.path.startswith("/_move_main") and self.command == "POST":
                body = json.dumps({"sha": hub.move_main()}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return True
            if self.path.startswith("/_faults"):
                length = int(self.headers.get("Content-Length") or 0)
                settings = json.loads(self.rfile.read(length) or b"{}")
                hub.faults = Faults(**settings)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return True
            return False

        # -- verbs ------------------------------------------------------------------------
        def do_GET(self) -> None:
            if self._control() or self._fault():
                return
            self._route()

        def do_HEAD(self) -> None:
            if self._fault():
                return
            self._route()

        def do_POST(self) -> None:
            if self._control() or self._fault():
                return
            self._route()

        def do_DELETE(self) -> None:
            if not self._control():
                self._error(405, "MethodNotAllowed", "not allowed")

        # -- routing ------------------------------------------------------------------------
        def _route(self) -> None:
            url = urlparse(self.path)
            path = unquote(url.path)
            query = parse_qs(url.query)
            repo = re.escape(hub.repo_id)
            if m := re.fullmatch(r"/api/datasets/([^/]+/[^/]+)(?:/revision/(.+))?", path):
                return self._info(m[1], m[2] or "main")
            if m := re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/tree/([^/]+)(?:/(.*))?", path):
                recursive = query.get("recursive", ["false"])[0].lower() == "true"
                return self._tree(m[1], m[2], (m[3] or "").strip("/"), recursive)
            if m := re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/paths-info/([^/]+)", path):
                return self._paths_info(m[1], m[2])
            if m := re.fullmatch(r"/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path):
                return self._resolve(m[1], m[2], m[3])
            del repo
            self._error(404, "NotFound", f"no route for {path}")

        def _check(self, repo_id: str, rev: str) -> bool:
            if repo_id != hub.repo_id:
                self._error(404, "RepoNotFound", f"Repository not found: {repo_id}")
                return False
            if not hub.known_revision(rev):
                self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
                return False
            return True

        def _info(self, repo_id: str, rev: str) -> None:
            if not self._check(repo_id, rev):
                return
            f = hub.faults
            if f.info_delay:
                time.sleep(f.info_delay)
            if f.info_body:
                return self._send(200, f.info_body.encode(), {"Content-Type": "application/json"})
            self._json(
                {
                    "_id": hashlib.md5(hub.repo_id.encode()).hexdigest()[:24],
                    "id": hub.repo_id,
                    "author": hub.repo_id.split("/")[0],
                    "sha": f.forged_sha or hub.sha,
                    "lastModified": hub.last_modified,
                    "private": False,
                    "gated": False,
                    "disabled": False,
                    "downloads": 0,
                    "likes": 0,
                    "tags": [],
                    "siblings": [{"rfilename": f} for f in hub.files],
                }
            )

        def _entries(self, names: list[str]) -> list[dict[str, Any]]:
            out: list[dict[str, Any]] = []
            dirs = {str(Path(f).parent.as_posix()) for f in hub.files} - {"."}
            for name in names:
                if name in hub.files:
                    out.append(hub.file_info(name))
                elif name in dirs:
                    out.append({"type": "directory", "oid": "0" * 40, "size": 0, "path": name})
            return out

        def _tree(self, repo_id: str, rev: str, base: str, recursive: bool) -> None:
            if not self._check(repo_id, rev):
                return
            prefix = f"{base}/" if base else ""
            names: set[str] = set()
            for f in hub.files:
                if not f.startswith(prefix):
                    continue
                parts = f[len(prefix) :].split("/")
                if recursive:
                    names.update(prefix + "/".join(parts[: i + 1]) for i in range(len(parts)))
                else:
                    names.add(prefix + parts[0])
            if base and not names:
                return self._error(404, "EntryNotFound", f"{base} does not exist")
            self._json(self._entries(sorted(names)))

        def _paths_info(self, repo_id: str, rev: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode()
            if "json" in (self.headers.get("Content-Type") or ""):
                paths = json.loads(raw or "{}").get("paths", [])
            else:
                paths = parse_qs(raw).get("paths", [])
            if not self._check(repo_id, rev):
                return
            self._json(self._entries([p.strip("/") for p in paths]))

        def _resolve(self, repo_id: str, rev: str, name: str) -> None:
            if not self._check(repo_id, rev):
                return
            if name not in hub.files:
                return self._error(404, "EntryNotFound", f"{name} does not exist at {rev}")
            file = hub.folder / name
            size = file.stat().st_size
            info = hub.file_info(name)
            rng = _parse_range(self.headers.get("Range"), size)
            if rng and rng[0] >= size:
                hub.record(self.command, self.path, self.headers.get("Range"), 416, 0)
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            f = hub.faults
            if f.ignore_range:
                rng = None
            lie = hub.lie(self.path) if self.command == "GET" else False
            stated = size
            if lie and f.short_size:  # "the file is only short_size bytes", told consistently
                stated = f.short_size
                rng = _parse_range(self.headers.get("Range"), stated) if rng else None
            start, end = rng or (0, stated - 1)
            length = max(end - start + 1, 0)
            source = start + f.splice_shift if lie and start > 0 else start
            extra = f.extra_bytes if lie else 0
            chunked = bool(lie and f.chunked_cut)
            status = 206 if rng else 200
            number = hub.record(
                self.command, self.path, self.headers.get("Range"), status, 0, pending=True
            )
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream")
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(length + extra + f.lie_length))
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("ETag", f'"{info["oid"]}"')
            self.send_header("X-Repo-Commit", hub.sha)
            if hub.linked:
                self.send_header("X-Linked-Size", str(size))
                self.send_header("X-Linked-Etag", f'"{hub.sha256(name)}"')
            if rng:
                self.send_header("Content-Range", f"bytes {start}-{end}/{stated}")
            self.end_headers()
            if self.command == "GET" and chunked:
                self._chunked(file, source, int(length * f.chunked_cut), number)
            elif self.command == "GET":
                sent = self._body(file, source, length, number, extra)
                if f.lie_length and sent >= 0:
                    self.close_connection = True
                    self.connection.shutdown(2)
            hub.finish(number)

        def _chunked(self, file: Path, start: int, length: int, number: int) -> None:
            """`length` bytes from `start` in chunked encoding, then a clean last chunk: a
            body cut short that looks complete (no Content-Length to tell)."""
            with open(file, "rb") as src:
                src.seek(start)
                data = src.read(length)
            sent = 0
            for i in range(0, len(data), CHUNK):
                block = data[i : i + CHUNK]
                self.wfile.write(f"{len(block):x}\r\n".encode() + block + b"\r\n")
                sent += len(block)
                hub.update(number, None, sent)
            self.wfile.write(b"0\r\n\r\n")

        def _body(self, file: Path, start: int, length: int, number: int, extra: int = 0) -> int:
            f = hub.faults
            drip = bool(f.drip_pattern and re.search(f.drip_pattern, self.path))
            drop = bool(
                f.drop_pattern and f.drop_count > 0 and re.search(f.drop_pattern, self.path)
            )
            if drop:
                f.drop_count -= 1
            sent = 0
            with open(file, "rb") as src:
                src.seek(start)
                while sent < length:
                    block = src.read(min(CHUNK, length - sent))
                    if not block:
                        break
                    if drop and sent + len(block) >= f.drop_after:
                        block = block[: max(f.drop_after - sent, 0)]
                        try:
                            self.wfile.write(block)
                            self.wfile.flush()
                        except OSError:
                            pass
                        self.close_connection = True
                        hub.update(number, -1, sent + len(block))  # -1 = dropped
                        self.connection.shutdown(2)
                        return -1
                    if drip:
                        block = block[:1]
                        src.seek(start + sent + 1)
                        time.sleep(f.drip_interval)
                    try:
                        self.wfile.write(block)
                        if drip:
                            self.wfile.flush()
                    except OSError:
                        return sent
                    sent += len(block)
                    hub.update(number, None, sent)
                    hub.throttle(len(block))
            if extra:  # bytes beyond what was asked or stated
                try:
                    self.wfile.write(b"\0" * extra)
                except OSError:
                    return sent
                sent += extra
                hub.update(number, None, sent)
            return sent

    return Handler


class QuietHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that says nothing when a client hangs up.

    A client that resets or closes its connection (a download cancelled on a deadline, a
    browser's spare pre-connection) is normal for a stand-in server; `socketserver`'s
    default `handle_error` printed its traceback on stderr, which read like a failure in
    the test log. Any other error is still printed."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


@contextmanager
def serving(hub: Hub, port: int = 0):
    """Serve `hub` on 127.0.0.1 in a background thread; yields the endpoint URL."""
    server = QuietHTTPServer(("127.0.0.1", port), make_handler(hub))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--repo", default=DEFAULT_REPO)
    parser.add_argument(
        "--throttle-mbps", type=float, default=0.0, help="MB/s, all connections together"
    )
    parser.add_argument("--log", type=Path, default=None, help="JSON-lines request log")
    parser.add_argument(
        "--linked", action="store_true", help="send X-Linked-Size/-Etag as the Hub does for LFS"
    )
    args = parser.parse_args(argv)
    hub = Hub(args.folder, args.repo, args.throttle_mbps * 1e6, args.log, args.linked)
    server = QuietHTTPServer(("127.0.0.1", args.port), make_handler(hub))
    print(f"http://127.0.0.1:{server.server_address[1]} sha={hub.sha}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()

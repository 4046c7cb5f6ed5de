"""`tools.local_hub.QuietHTTPServer`: a client that resets its connection leaves no
traceback on stderr (the stand-in servers' test logs read clean); any other error in a
handler is still printed."""

from __future__ import annotations

import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler

from tools.local_hub import QuietHTTPServer


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        raise ValueError("a handler bug")

    def log_message(self, *args: object) -> None:
        pass


def _serve() -> tuple[QuietHTTPServer, int]:
    server = QuietHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def _settle(capfd, wanted: str | None, seconds: float = 10.0) -> str:
    """stderr so far, once it holds `wanted` (or after a short wait when None)."""
    deadline = time.monotonic() + seconds
    seen = ""
    while time.monotonic() < deadline:
        time.sleep(0.1)
        seen += capfd.readouterr().err
        if wanted is not None and wanted in seen:
            break
    return seen


def test_a_reset_connection_is_quiet_and_a_handler_bug_is_not(capfd) -> None:
    server, port = _serve()
    try:
        client = socket.create_connection(("127.0.0.1", port))
        client.sendall(b"GET / HTTP/1.1\r\nHost: x")  # half a request, then a reset (RST)
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()
        assert "Traceback" not in _settle(capfd, None, 1.5)

        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            client.recv(1024)  # the server closes after its handler raised
        err = _settle(capfd, "ValueError: a handler bug")
        assert "ValueError: a handler bug" in err
    finally:
        server.shutdown()
        server.server_close()

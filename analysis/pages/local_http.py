"""The HTTP plumbing both local servers share (`dashboard --serve`, `play`): a careless or hostile
client gets a 4xx answer and never a traceback. A body is read whole within a deadline (408 when it
is slow or shorter than its Content-Length), its length must be plain ASCII digits (400) and small
(413), a JSON body too deep to parse is a 400, a method the server does not serve is a 405, a
client that goes away is let go quietly, and a burst of connections waits in a deep listen queue
instead of being reset. Anything else that fails is one line on stderr, not a traceback."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LOCAL_HOSTS = ("127.0.0.1", "localhost")  # the Host names the servers answer (no DNS rebinding)
READ_SECONDS = 5.0  # the whole request body must arrive within this (a slow body: 408)
IDLE_SECONDS = 10.0  # a connection that sends no request line or headers for this long is closed
LISTEN_QUEUE = 128  # connections waiting to be accepted (a burst of 32 tabs or scripts is queued)
DRAIN_SECONDS, DRAIN_BYTES = 1.0, 1 << 20  # what is read and dropped of a refused request's body
DIGITS = re.compile(r"[0-9]{1,12}")  # ASCII only: '²'.isdigit() is true, int('²') fails


class BadRequest(Exception):
    """A request this server answers with `status` and one line of text."""

    def __init__(self, status: int, text: str):
        super().__init__(text)
        self.status = status
        self.text = text


def ascii_number(text: str) -> int | None:
    """`text` as a whole number if it is only ASCII digits (a path's game number), else None."""
    return int(text) if DIGITS.fullmatch(text) else None


class LocalServer(ThreadingHTTPServer):
    """A threading server on 127.0.0.1 whose failures are one line each (or nothing, for a client
    that hung up), with a listen queue deep enough for bursts."""

    request_queue_size = LISTEN_QUEUE
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):  # the client went away or stalled
            return
        print(f"protolab: request from {client_address[0]} failed: {type(error).__name__}: {error}", file=sys.stderr)


class LocalHandler(BaseHTTPRequestHandler):
    """A request handler with the checks every local page needs: the Host is this server's, bodies
    are read within READ_SECONDS and parsed as a bounded JSON object, and answers are one line of
    text when something is refused."""

    timeout = IDLE_SECONDS  # on the socket: the request line and headers (http.server closes quietly)
    served: tuple[str, ...] = ("GET",)  # the methods a subclass answers; any other gets 405
    _drain = False  # a refused request's unread body is read and dropped before the close

    def __getattr__(self, name: str) -> Any:
        """`do_X` for a method this server does not serve: 405 instead of http.server's 501."""
        if name.startswith("do_"):
            return self._not_allowed
        raise AttributeError(name)

    def _not_allowed(self) -> None:
        self.close_connection = True
        self._drain = True
        self.line(405, f"expected {' or '.join(self.served)}", {"Allow": ", ".join(self.served)})

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals; an HTTP version it cannot speak is the client's error (400)."""
        super().send_error(400 if code == 505 else code, message, explain)

    def host_is_local(self) -> bool:
        """The request names this server as 127.0.0.1 or localhost (with its port): a page of another
        site whose name was rebound to 127.0.0.1 sends its own name, and is refused."""
        address = self.server.server_address
        assert isinstance(address, tuple)  # an IP server's (host, port)
        port = address[1]
        host = (self.headers.get("Host") or "").strip().lower()
        return host in {f"{name}:{port}" for name in LOCAL_HOSTS} | set(LOCAL_HOSTS)

    def send(self, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def line(self, status: int, text: str, headers: dict[str, str] | None = None) -> None:
        self.send(status, (text + "\n").encode(), "text/plain", headers)

    def read_body(self, limit: int) -> bytes:
        """The request's body, whole, within READ_SECONDS. BadRequest: a length that is not ASCII
        digits (400), too long (413), chunked (411), or a body that is slow or short (408)."""
        if self.headers.get("Transfer-Encoding"):
            raise BadRequest(411, "expected a Content-Length, not Transfer-Encoding")
        given = self.headers.get_all("Content-Length") or []
        if len(given) > 1:
            raise BadRequest(400, "expected one Content-Length header")
        text = given[0].strip() if given else "0"
        if not DIGITS.fullmatch(text):
            raise BadRequest(400, f"expected Content-Length as ASCII digits, got {text[:20]!r}")
        n = int(text)
        if n > limit:
            raise BadRequest(413, f"expected a body of at most {limit} bytes")
        return self._read_within(n, time.monotonic() + READ_SECONDS)

    def _read_within(self, n: int, deadline: float) -> bytes:
        got = bytearray()
        try:
            while len(got) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                self.connection.settimeout(left)
                chunk = self.rfile.read1(n - len(got))
                if not chunk:
                    raise BadRequest(400, f"the body ended after {len(got)} of its {n} bytes")
                got += chunk
        except TimeoutError:
            raise BadRequest(408, f"expected the {n}-byte body within {READ_SECONDS:g} s") from None
        finally:
            self.connection.settimeout(self.timeout)
        return bytes(got)

    def read_json_object(self, limit: int, example: str) -> dict[str, Any]:
        """The body as a JSON object (empty: {}). BadRequest 400 when it is not UTF-8 JSON, nested
        too deep to parse, or not an object."""
        body = self.read_body(limit)
        try:
            data = json.loads(body or b"{}")
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            raise BadRequest(400, f"expected a JSON object, e.g. {example}") from None
        if not isinstance(data, dict):
            raise BadRequest(400, f"expected a JSON object, e.g. {example}")
        return data

    def refuse(self, error: BadRequest) -> None:
        """Answer a refused request and end the connection; the body it left unread is drained
        first (finish), so closing does not reset the connection before the client reads the answer."""
        self.close_connection = True
        self._drain = True
        self.line(error.status, error.text)

    def finish(self) -> None:
        super().finish()
        if self._drain:
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_WR)
                deadline = time.monotonic() + DRAIN_SECONDS
                left = DRAIN_BYTES
                while left > 0 and time.monotonic() < deadline:
                    self.connection.settimeout(max(0.01, deadline - time.monotonic()))
                    chunk = self.connection.recv(min(left, 65536))
                    if not chunk:
                        break
                    left -= len(chunk)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: a refused request is answered, not logged
        pass

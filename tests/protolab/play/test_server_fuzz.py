"""Both local servers (`protolab play`, `protolab dashboard --serve`) under a careless or hostile
client, on 127.0.0.1 only, seeded and bounded: random methods, paths, headers, lengths and bodies,
bodies slower or shorter than their Content-Length, clients that hang up mid-answer, and bursts of
32 concurrent decisions. Every answer must be a 4xx or less (or a quiet close), no connection may be
reset, and the servers' log (stderr) must hold no traceback and no failed-request line."""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from analysis.pages.local_http import READ_SECONDS
from analysis.pages.shell import make_server as dashboard_server
from protolab.commands.game_links import game_page
from protolab.play.playtest import create, spec_of
from protolab.play.server import Table
from protolab.play.server import make_server as play_server

TRIOS = [["Fire", "Water", "Death"], ["Hate", "Light", "Life"]]
RANDOM_REQUESTS = 1800  # plus 10 bursts of 32 decisions and the slow and hung-up clients
PATHS = ["/", "/index.html", "/api/state", "/api/decide", "/api/next", "/replay/0", "/replay/²", "/game/²",
         "/game/0", "/game/99999999999999999999", "/replay/-1", "/replay/0x1", "/%00", "/..%2f..", "/a?b=c",
         "/game/", "/replay/", "/\u00e9", "*", "/favicon.ico", "/" + "x" * 3000]  # fmt: skip
METHODS = ["GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "FOO", "get"]
LENGTHS = ["0", "2", "abc", "²", "-1", "1e3", " 5", "99999999999999999999", "4097", "", "0x10", "٣"]


def serve(server) -> int:
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def exchange(port: int, raw: bytes, hang_up: bool = False) -> int | None:
    """Send `raw`, read the whole answer: its status, or None for a quiet close. A reset raises."""
    with socket.create_connection(("127.0.0.1", port), timeout=READ_SECONDS + 10) as s:
        s.sendall(raw)
        if hang_up:
            return None
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    if not data.startswith(b"HTTP/1."):  # a quiet close, or an HTTP/0.9 answer (no status line)
        return None
    return int(data.split(b" ", 2)[1])


def random_body(rng: random.Random) -> bytes:
    kind = rng.randrange(7)
    if kind == 0:
        return rng.randbytes(rng.randrange(0, 200))
    if kind == 1:
        depth = rng.choice([50, 2000, 4000])
        return b"[" * depth + b"]" * depth
    if kind == 2:
        return b'{"option": ' + rng.choice([b"0", b"-1", b"1e999", b"true", b'"0"', b"null", b"9" * 4000]) + b"}"
    if kind == 3:
        return json.dumps({"option": rng.randrange(3), "decision": rng.choice([0, 1, "x", None])}).encode()
    if kind == 4:
        return '{"option": "é²\ud800"}'.encode("utf-8", "surrogatepass")
    if kind == 5:
        return b"\xff\xfe{}"
    return b"{}"


def random_request(rng: random.Random, port: int) -> bytes:
    method = rng.choice(METHODS)
    path = rng.choice(PATHS).encode("utf-8")
    body = random_body(rng) if rng.random() < 0.7 else b""
    host = rng.choice([f"127.0.0.1:{port}", "localhost", "evil.example", "", "127.0.0.1:1"])
    headers = [f"Host: {host}".encode()] if host else []
    headers.append(rng.choice([b"Content-Type: application/json", b"Content-Type: text/plain", b"Content-Type: \xff"]))
    length = rng.random()
    if length < 0.6:
        headers.append(b"Content-Length: %d" % len(body))
    elif length < 0.85:
        headers.append(b"Content-Length: " + rng.choice(LENGTHS).encode())
    elif length < 0.92:
        headers.append(b"Transfer-Encoding: chunked")
    else:
        headers += [b"Content-Length: 1", b"Content-Length: 2"]
    if rng.random() < 0.1:
        headers.append(b"X-Junk: " + rng.randbytes(20).replace(b"\r", b"").replace(b"\n", b""))
    version = rng.choice([b"HTTP/1.1", b"HTTP/1.0", b"HTTP/1.1", b"HTTP/9.9", b""])
    head = b"%s %s %s\r\n" % (method.encode(), path, version)
    if rng.random() < 0.03:
        head = rng.randbytes(30).replace(b"\n", b"") + b"\r\n"
    return head + b"\r\n".join(headers) + b"\r\nConnection: close\r\n\r\n" + body


def aimed_requests(ports: list[int]) -> list[tuple[int, bytes]]:
    """Every bad length on every route that reads a body, with a valid Host: the random requests reach
    the body reader rarely, so each malformed length is sent there once by name."""
    out = []
    for port in ports:
        for path in ("/api/decide", "/api/next", "/api/state", "/"):
            for length in LENGTHS:
                if length.strip().isascii() and length.strip().isdigit() and int(length) <= 4096:
                    continue  # a valid length: answered by what the body holds
                head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                out.append((port, (head + f"Content-Length: {length}\r\nConnection: close\r\n\r\n{{}}").encode()))
    return out


def slow_body(port: int, short: bool) -> int | None:
    """A body that never completes (`short`: fewer bytes than its length, then silence) or trickles."""
    with socket.create_connection(("127.0.0.1", port), timeout=READ_SECONDS + 10) as s:
        s.sendall(b"POST /api/decide HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 40\r\n\r\n{\"opt")  # fmt: skip
        end = time.monotonic() + READ_SECONDS + 2
        while not short and time.monotonic() < end:
            time.sleep(0.5)
            try:
                s.sendall(b" ")
            except BrokenPipeError:  # answered and closed: the answer waits to be read
                break
        data = s.recv(65536)
    return int(data.split(b" ", 2)[1]) if data else None


def decide(port: int, decision: int) -> int | None:
    body = json.dumps({"option": 0, "decision": decision}).encode()
    raw = (b"POST /api/decide HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\nConnection: close\r\n\r\n%s") % (len(body), body)  # fmt: skip
    return exchange(port, raw)


def state(port: int) -> dict:
    raw = b"GET /api/state HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(raw)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return json.loads(data.split(b"\r\n\r\n", 1)[1])


def bursts(port: int, pool: ThreadPoolExecutor, count: int) -> list[int | None]:
    """`count` bursts of 32 concurrent decisions on one pending decision: one is taken, the rest stale."""
    statuses: list[int | None] = []
    for _ in range(count):
        s = state(port)
        if s["over"]:
            assert decide(port, s["decision"]) == 409
            continue
        got = list(pool.map(decide, [port] * 32, [s["decision"]] * 32))
        assert got.count(200) == 1 and got.count(409) == 31, got
        statuses += got
    return statuses


def test_both_servers_answer_every_malformed_request_without_a_traceback_or_reset(tmp_path, capfd):
    out = tmp_path / "pt"
    table = Table(create(str(out), spec_of("greedy", 5, 3, TRIOS, [], None)), {})
    play = play_server(table, 0)
    dash = dashboard_server("<html>" + "x" * 3_000_000 + "</html>", 0, game_page(str(out)))
    ports = [serve(play), serve(dash)]
    rng = random.Random(52)
    statuses: list[int | None] = []
    started = time.monotonic()
    try:
        with ThreadPoolExecutor(40) as pool:
            slow = [pool.submit(slow_body, ports[0], short) for short in (True, False, True, False)]
            statuses += bursts(ports[0], pool, 10)
            requests = [(rng.choice(ports), rng.random()) for _ in range(RANDOM_REQUESTS)]
            raws = [(p, random_request(rng, p), r < 0.02) for p, r in requests]
            statuses += pool.map(lambda a: exchange(*a), raws)
            aimed = list(pool.map(lambda a: exchange(*a), aimed_requests(ports)))
            assert all(s is not None and 400 <= s < 500 for s in aimed), aimed  # each answered, none dropped
            statuses += aimed
            hung_up = [f"GET / HTTP/1.1\r\nHost: localhost:{ports[1]}\r\n\r\n".encode()] * 20
            statuses += pool.map(lambda raw: exchange(ports[1], raw, hang_up=True), hung_up)
            assert [f.result() for f in slow] == [408] * 4
        time.sleep(0.5)  # the hung-up answers finish writing (and fail) in the server's threads
    finally:
        for server in (play, dash):
            server.shutdown()
            server.server_close()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "failed" not in err, err[-3000:]
    assert len(statuses) >= 2000
    assert all(s is None or s < 500 for s in statuses), sorted({s for s in statuses if s and s >= 500})
    assert statuses.count(200) >= 10 and sum(1 for s in statuses if s and 400 <= s < 500) > 1000
    assert time.monotonic() - started < 60

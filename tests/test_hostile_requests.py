"""Hostile requests to a real ``podium serve --contests --web-processes 2``: never a 5xx, a traceback or a server path.

Sent byte for byte on a socket (a client library would mend them): oversized
headers and addresses, thousands of headers and query parameters, bytes that
are no UTF-8 in paths, forms, JSON, cookies and the host, odd ranges, a body cut
off by a client that leaves, an unknown contest, and path traversal in every
route that serves a file (static files, the data page's files, content pages,
a submission's files). Each answer is uvicorn's own 400 for what HTTP cannot
parse, or podium's page or JSON below 500; the server's log holds no traceback.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from served import Serve, open_contest
from test_page_matrix import _example

FILE = b"/c/glas-demo/data/files/public/sample_1_truth.png"


def _get(path: bytes, extra: bytes = b"") -> bytes:
    return b"GET " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + extra + b"\r\n"


def _post(path: bytes, kind: bytes, body: bytes, length: int | None = None) -> bytes:
    head = b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n"
    return head % (path, kind, len(body) if length is None else length) + body


FORM, JSON = b"application/x-www-form-urlencoded", b"application/json"
CASES = {
    "a 200 kB header": _get(b"/", b"X-Big: " + b"a" * 200_000 + b"\r\n"),
    "5,000 headers": _get(b"/", b"".join(b"X-%d: 1\r\n" % i for i in range(5000))),
    "a 100 kB address": _get(b"/c/glas-demo/leaderboard?" + b"a" * 100_000),
    "5,000 tracks asked": _get(b"/c/glas-demo/leaderboard?" + b"&".join(b"track=%d" % i for i in range(5000))),
    "10,000 query parameters": _get(
        b"/api/contests/glas-demo/leaderboard?" + b"&".join(b"p%d=1" % i for i in range(10000))
    ),
    "no UTF-8 in a contest's id": _get(b"/c/%FF%FE/leaderboard"),
    "no UTF-8 in an API contest's id": _get(b"/api/contests/%FF/leaderboard"),
    "raw bytes in the path": _get(b"/c/\xff\xfe/leaderboard"),
    "an unknown contest": _get(b"/c/no-such-contest/leaderboard"),
    "static, encoded dots": _get(b"/static/%C0%AE%C0%AE%2Fetc%2Fpasswd"),
    "static, ../ encoded": _get(b"/static/..%2F..%2Fetc%2Fpasswd"),
    "static, ../": _get(b"/static/../../etc/passwd"),
    "a data file, ../ encoded": _get(b"/c/glas-demo/data/files/..%2F..%2Fcontest.toml"),
    "a data file, ../": _get(b"/c/glas-demo/data/files/../../contest.toml"),
    "a data file, %2e%2e": _get(b"/c/glas-demo/data/files/%2e%2e/%2e%2e/contest.toml"),
    "a data file, absolute": _get(b"/c/glas-demo/data/files//etc/passwd"),
    "a data file, NUL": _get(b"/c/glas-demo/data/files/public%00.png"),
    "a data file, no UTF-8": _get(b"/c/glas-demo/data/files/public/%FF.png"),
    "a range past the end": _get(FILE, b"Range: bytes=999999999-\r\n"),
    "2,000 ranges": _get(FILE, b"Range: bytes=" + b",".join(b"%d-%d" % (i, i) for i in range(2000)) + b"\r\n"),
    "a range of bytes": _get(FILE, b"Range: bytes=-0,\xff-\r\n"),
    "a backward range": _get(FILE, b"Range: bytes=5-1\r\n"),
    "a content page, ../": _get(b"/c/glas-demo/pages/..%2F..%2Fcontest.toml"),
    "a content page, no UTF-8": _get(b"/c/glas-demo/pages/%FF"),
    "a submission's file, ../": _get(b"/c/glas-demo/submissions/1/..%2F..%2Fpodium.sqlite3"),
    "a submission past 2**64": _get(b"/c/glas-demo/submissions/99999999999999999999999999"),
    "a team's name with NUL": _get(b"/c/glas-demo/organizer/teams/%FF%00"),
    "a reset token of bytes": _get(b"/reset/%FF%FE%00"),
    "a cookie of bytes": _get(b"/account", b"Cookie: podium_session=\xff\xfe; x=\x01\r\n"),
    "a token of bytes": _get(b"/api/contests/glas-demo/submissions", b"Authorization: Bearer \xff\xfe\r\n"),
    "a host of bytes": b"GET / HTTP/1.1\r\nHost: \xff\xfe\r\nConnection: close\r\n\r\n",
    "an odd method": b"BREW / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    "a sort of bytes": _get(b"/c/glas-demo/leaderboard?sort=%FF%00&track=%00"),
    "a next of bytes": _get(b"/login?next=%FF%00//evil.example"),
    "a log-in form of bytes": _post(b"/login", FORM, b"user=%FF%FE&password=\xff\xfe\xfd&csrf="),
    "a log-in form of 6,000 fields": _post(b"/login", FORM, b"&".join(b"a%d=1" % i for i in range(6000))),
    "JSON with lone surrogates": _post(
        b"/api/contests/glas-demo/register",
        JSON,
        b'{"user": "\\ud800", "password": "\\udfff\\u0000x", "team": "\\ud800"}',
    ),
    "JSON of bytes": _post(b"/api/contests/glas-demo/register", JSON, b'{"user": "\xff\xfe", "password": "x"}'),
    "JSON nested 50,000 deep": _post(b"/api/tokens", JSON, b"[" * 50000 + b"]" * 50000),
}


def _answer(port: int, data: bytes, wait_s: float = 10.0) -> bytes:
    """What the server answers to ``data`` before it closes the connection (or ``wait_s`` ends)."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait_s) as sock:
        sock.sendall(data)
        answer, deadline = b"", time.monotonic() + wait_s
        while time.monotonic() < deadline:  # bounded
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            answer += chunk
        return answer


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Serve, Path]]:
    """The demo contest (public files, content pages) in a folder of contests, served by two web processes."""
    folder = tmp_path_factory.mktemp("hostile")
    contest = open_contest(_example("demo", folder, folder / "demo-data"))
    with Serve(
        contest.parent.parent, folder / "data", None, "--web-processes", "2", workers=0, option="--contests"
    ) as serve:
        yield serve, folder


def _log(serve: Serve) -> str:
    return serve.out.read_text(errors="replace") + serve.err.read_text(errors="replace")


@pytest.mark.parametrize("case", CASES)
def test_a_hostile_request_gets_no_5xx_and_nothing_of_the_server(served: tuple[Serve, Path], case: str) -> None:
    serve, folder = served
    answer = _answer(serve.port, CASES[case])
    status = answer.split(b"\r\n", 1)[0]
    assert status.startswith(b"HTTP/1.1 ") and int(status.split()[1]) < 500, (case, answer[:300])
    assert str(folder).encode() not in answer and b"Traceback" not in answer, (case, answer[:300])
    if case == "an unknown contest":  # the site's error page, with its navigation
        assert status.split()[1] == b"404" and b'<nav aria-label="main">' in answer, answer[:2000]


def test_a_client_that_leaves_mid_form_leaves_no_traceback(served: tuple[Serve, Path]) -> None:
    serve, _ = served
    assert _answer(serve.port, _post(b"/login", FORM, b"user=a&pass", length=1000), wait_s=1) == b""
    time.sleep(1)  # the server reads on, finds the client gone, and logs what it logs
    assert "Traceback" not in _log(serve) and "Exception in ASGI application" not in _log(serve), _log(serve)[-3000:]


def test_the_sweep_left_no_traceback_in_the_log(served: tuple[Serve, Path]) -> None:
    """Last in the module: nothing of the requests above was a failure of podium's."""
    serve, _ = served
    assert "Traceback" not in _log(serve), _log(serve)[-3000:]

"""Keep-alive connections to a real ``podium serve``: none closed under a client that still holds it.

uvicorn closed a connection idle for 5 s (its default): a reverse proxy that
keeps upstream connections longer (nginx: 60 s), or a browser between the
board's polls, sent its next request on a connection the server had just
closed, and that request failed. Clients here pause between requests as those
do, then read the board and the API on the same connection; every close is counted.
"""

from __future__ import annotations

import http.client
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from podium.service.server import KEEP_ALIVE_S
from served import Serve, open_contest
from service_helpers import write_contest

CLOSED = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, http.client.BadStatusLine)
PAUSES = (0.0, 0.05, 6.0, 0.0, 0.5)  # seconds before each request: one pause past uvicorn's default of 5 s


def test_no_keep_alive_connection_is_closed_under_its_client(tmp_path: Path) -> None:
    assert KEEP_ALIVE_S > 60  # longer than nginx keeps an idle upstream connection
    contest = open_contest(write_contest(tmp_path / "contest"))
    with Serve(contest, tmp_path / "data", None, workers=0) as served:

        def client(index: int) -> tuple[int, int]:
            connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
            answered = closed = 0
            for pause in PAUSES:  # bounded: five requests
                time.sleep(pause)
                for path in ("/leaderboard", "/api/leaderboard"):
                    try:
                        connection.request("GET", path)
                        response = connection.getresponse()
                        response.read()
                        answered += response.status == 200
                    except CLOSED:
                        closed += 1
                        connection.close()
            connection.close()
            return answered, closed

        with ThreadPoolExecutor(8) as pool:
            counts = list(pool.map(client, range(8)))
    assert sum(closed for _, closed in counts) == 0, counts
    assert sum(answered for answered, _ in counts) == 8 * len(PAUSES) * 2

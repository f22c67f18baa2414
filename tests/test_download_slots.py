"""Downloads sent at once are bounded per caller and in all, through a real server: 429 with Retry-After beyond.

Clients that ask for a large file and read none of it hold their downloads
open (the server waits on the full socket), as a hostile team would.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

from podium.service import accounts
from podium.service.database import writing
from podium.service.download_slots import DownloadSlots
from podium.service.downloads import uploaded_file
from service_helpers import Clock, LiveServer, at, demo_archive, set_up, write_contest

PASSWORD = "organizer password 1"


def _hold(url: str, path: str, token: str) -> tuple[socket.socket, str]:
    """A GET whose answer's head is read and whose body is left unread: the connection, and the head."""
    where = urlsplit(url)
    client = socket.create_connection((where.hostname, where.port), timeout=30)
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.sendall(f"GET {path} HTTP/1.1\r\nHost: podium\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head and len(head) < 65536:
        piece = client.recv(1024)
        if not piece:
            break
        head += piece
    return client, head.split(b"\r\n\r\n", 1)[0].decode("latin-1")


def test_downloads_at_once_are_bounded_per_caller_and_in_all(tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, tokens = set_up(
        f"sqlite:///{tmp_path / 'db.sqlite3'}", contest, tmp_path / "data", ("alpha", "beta"), clock
    )
    service.downloads = DownloadSlots(per_caller=2, total=3)
    with writing(service.engine) as connection:
        accounts.add_user(connection, "olga", PASSWORD, None, True, clock())
    held: list[socket.socket] = []
    with LiveServer(service) as live:
        olga = live.call("POST", "/api/tokens", json_body={"user": "olga", "password": PASSWORD}).body["token"]
        sent = {}
        for team in ("alpha", "beta"):
            answer = live.call(
                "POST",
                "/api/submissions",
                tokens[team],
                body=demo_archive(contest, tmp_path / team),
                query={"filename": "s.tar.gz"},
            )
            assert answer.status == 201, answer.body
            sent[team] = f"/api/submissions/{answer.body['id']}/file"
            kept = uploaded_file(service.data, answer.body["id"])
            assert kept is not None
            with open(kept, "r+b") as grown:  # 256 MiB (sparse): far more than the sockets' buffers
                grown.truncate(256 << 20)
        try:
            for _ in range(2):
                client, head = _hold(live.url, sent["alpha"], tokens["alpha"])
                held.append(client)
                assert head.startswith("HTTP/1.1 200"), head
            client, head = _hold(live.url, sent["alpha"], tokens["alpha"])  # a third at once: refused at once
            client.close()
            assert head.startswith("HTTP/1.1 429") and "retry-after: 10" in head.lower(), head
            refused = live.call("GET", sent["alpha"], tokens["alpha"])
            assert refused.status == 429 and "already downloading 2 files" in refused.message
            assert live.call("GET", sent["alpha"], tokens["beta"]).status == 404  # another team's: no slot taken
            client, head = _hold(live.url, sent["beta"], tokens["beta"])
            held.append(client)
            assert head.startswith("HTTP/1.1 200"), head
            full = live.call("GET", "/api/archive", olga)  # the organizer's archive waits for the server's bound too
            assert full.status == 429 and "sending 3 downloads already" in full.message
            held.pop(0).close()  # a client that goes away gives its slot back
            for _ in range(100):  # bounded: 10 s
                client, head = _hold(live.url, "/api/archive", olga)
                client.close()
                if head.startswith("HTTP/1.1 200"):
                    break
                time.sleep(0.1)
            assert head.startswith("HTTP/1.1 200"), head
        finally:
            for client in held:
                client.close()
        for _ in range(100):  # bounded: 10 s; every slot is given back
            if not service.downloads.busy:
                break
            time.sleep(0.1)
        assert not service.downloads.busy, service.downloads.busy

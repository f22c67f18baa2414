"""``podium serve --web-processes 2``: a real process tree on one port, kept alive, dying with serve; what is per process stays right.

One ``podium serve`` for the module (SQLite, no worker): both web processes
answer (each counts its requests in ``/metrics``, which sums them), one
killed is started again while requests keep succeeding, the cap on uploads
at once holds across them, and killing ``podium serve`` leaves no process
behind. The slots' locks are also taken by two real processes directly.
"""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from podium.service import accounts
from podium.service.database import connect, writing
from podium.service.statuses import utc_now
from served import Serve, open_contest
from service_helpers import write_contest


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Serve, str, str]]:
    """The server, an organizer's token (``/metrics``) and team alpha's token."""
    folder = tmp_path_factory.mktemp("web")
    contest = open_contest(write_contest(folder / "contest"))
    with Serve(contest, folder / "data", None, "--web-processes", "2", "--team", "alpha", workers=0) as serve:
        token = re.search(r"--token (\S+)", serve.out.read_text()).group(1)  # type: ignore[union-attr]
        with writing(connect(f"sqlite:///{folder / 'data' / 'podium.sqlite3'}")) as connection:
            organizer = accounts.new_token(connection, None, True, "organizer", utc_now())
        yield serve, organizer, token


def _web(serve: Serve) -> list[psutil.Process]:
    """The live web processes of ``serve`` (a killed one not yet reaped is left out)."""
    assert serve.process is not None
    found = []
    for process in psutil.Process(serve.process.pid).children():
        try:
            if process.status() != psutil.STATUS_ZOMBIE and "podium.service.web_processes" in " ".join(
                process.cmdline()
            ):
                found.append(process)
        except psutil.Error:  # it ended meanwhile
            pass
    return found


def _counters(serve: Serve, organizer: str, name: str) -> dict[str, float]:
    """The samples of counter ``name`` in ``/metrics``, by their labels' text."""
    text = serve.call("GET", "/metrics", organizer).body
    assert isinstance(text, str)
    return {m[0]: float(m[1]) for m in re.findall(rf"^{name}_total\{{(.*?)\}} (\S+)$", text, re.MULTILINE)}


def _fresh_get(serve: Serve, path: str) -> int:
    """A GET on a new connection (so the kernel may hand it to either process): the status."""
    connection = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_both_processes_answer_and_metrics_sum_them(served: tuple[Serve, str, str]) -> None:
    serve, organizer, _ = served
    assert len(_web(serve)) == 2
    before = _counters(serve, organizer, "podium_web_requests")
    refused = _counters(serve, organizer, "podium_uploads_refused").get('reason="no_token"', 0.0)
    for _ in range(7):
        assert serve.call("POST", "/api/submissions", None, body=b"x", query={"filename": "s.tar.gz"}).status == 401
    gets, scrapes = 0, 1  # the scrape of the refused uploads' counter
    for _ in range(20):  # bounded: until each process has answered (the kernel hands a connection to either; a
        for _ in range(30):  # board answered from memory is quick enough for one process to take 60 in a row)
            assert _fresh_get(serve, "/api/leaderboard") == 200
        gets += 30
        after = _counters(serve, organizer, "podium_web_requests")
        scrapes += 1
        if set(after) == {'process="0"', 'process="1"'} and all(after[k] > before.get(k, 0) for k in after):
            break
    assert set(after) == {'process="0"', 'process="1"'} and all(after[k] > before.get(k, 0) for k in after)
    # the GETs, 7 uploads and the scrapes since the first, each counted before its own answer
    assert sum(after.values()) - sum(before.values()) == gets + 7 + scrapes
    assert _counters(serve, organizer, "podium_uploads_refused")['reason="no_token"'] == refused + 7


def _owner(serve: Serve, connection: http.client.HTTPConnection) -> int | None:
    """The web process holding ``connection``'s other end (``None``: not accepted yet)."""
    port = connection.sock.getsockname()[1]
    for process in _web(serve):
        if any(c.raddr and c.raddr.port == port for c in process.net_connections()):
            return process.pid
    return None


def test_the_upload_cap_holds_across_processes(served: tuple[Serve, str, str]) -> None:
    """A team may send 2 uploads at once: one held open in each process, a third is refused whichever process takes it."""
    serve, _, token = served
    held: dict[int, http.client.HTTPConnection] = {}
    for _ in range(40):  # bounded: until an upload is held in each process
        connection = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=30)
        connection.putrequest("POST", "/api/submissions?filename=s.tar.gz")
        for name, value in (("Authorization", f"Bearer {token}"), ("Content-Length", "1000")):
            connection.putheader(name, value)
        connection.endheaders(b"x" * 10)  # the body's first bytes: the upload holds its slot
        owner = None
        for _ in range(100):  # bounded: 5 s
            owner = _owner(serve, connection)
            if owner is not None:
                break
            time.sleep(0.05)
        if owner is None or owner in held:
            connection.close()
            time.sleep(0.2)  # its slot freed
            continue
        held[owner] = connection
        if len(held) == 2:
            break
    assert len(held) == 2
    # each process holds its slot from its caller's admission until the body ends; the spool is made inside it
    assert _spools(serve, lambda count: count == 2), "the two held uploads were not admitted in 30 s"
    third = serve.call("POST", "/api/submissions", token, body=b"x" * 10, query={"filename": "s.tar.gz"})
    assert third.status == 429 and "already sending 2 uploads" in str(third.body), third
    for connection in held.values():
        connection.close()
    assert _spools(serve, lambda count: count == 0), "the closed uploads' spools were not removed in 30 s"
    deadline = time.monotonic() + 30  # bounded: a process frees its slot just after it removes the spool
    while (
        status := serve.call("POST", "/api/submissions", token, body=b"x", query={"filename": "s.tar.gz"}).status
    ) == 429 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert status != 429


def _spools(serve: Serve, wanted: Callable[[int], bool]) -> bool:
    """Whether the count of uploads being spooled in ``serve``'s data folder becomes ``wanted`` within 30 s."""
    deadline = time.monotonic() + 30
    while not wanted(len(list((serve.data / "incoming").glob("upload-*")))):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_killed_web_process_is_started_again(served: tuple[Serve, str, str]) -> None:
    serve, _, _ = served
    first, other = _web(serve)
    first.kill()
    deadline, answered = time.monotonic() + 30, 0
    while time.monotonic() < deadline:  # bounded: 30 s
        assert _fresh_get(serve, "/api/leaderboard") == 200  # the other process answers meanwhile
        answered += 1
        now = {p.pid for p in _web(serve)}
        if len(now) == 2 and first.pid not in now and other.pid in now:
            break
        time.sleep(0.05)
    else:
        raise AssertionError(f"no web process started again within 30 s: {serve.output()}")
    assert answered > 0 and "a web process ended" in serve.output()


def test_killing_serve_leaves_no_process(served: tuple[Serve, str, str]) -> None:
    """Last in the module: SIGKILL to podium serve alone (not its group); its web processes die with it."""
    serve, _, _ = served
    assert serve.process is not None
    children = _web(serve)
    os.kill(serve.process.pid, signal.SIGKILL)
    serve.process.wait(timeout=30)
    gone, alive = psutil.wait_procs(children, timeout=30)
    assert not alive and len(gone) == 2


SLOT_HOLDER = """
import sys, time
from pathlib import Path
from podium.service.bodies import SharedUploadSlots
slots = SharedUploadSlots(Path(sys.argv[1]))
with slots.held(7, "198.51.100.1"):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_upload_slots_are_shared_by_processes(tmp_path: Path) -> None:
    """Two real processes take team 7's two slots; a third caller is refused; a holder killed frees its slot."""
    from fastapi import HTTPException

    from podium.service.bodies import SharedUploadSlots

    holders = [
        subprocess.Popen(
            [sys.executable, "-c", SLOT_HOLDER, str(tmp_path / "slots")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        assert all(h.stdout is not None and h.stdout.readline() == "held\n" for h in holders)
        slots = SharedUploadSlots(tmp_path / "slots")
        with pytest.raises(HTTPException) as refused, slots.held(7, "203.0.113.9"):
            pass
        assert refused.value.status_code == 429
        with slots.held(8, "203.0.113.9"):  # another team, another address: free
            pass
        holders[0].kill()
        holders[0].wait(timeout=30)
        with slots.held(7, "203.0.113.9"):  # the killed holder's slot was freed by the kernel
            pass
        assert (tmp_path / "slots").stat().st_size == 0
    finally:
        for holder in holders:
            holder.kill()
            holder.wait(timeout=30)

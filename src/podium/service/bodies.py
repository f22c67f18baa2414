"""Request bodies: capped in size, and cut off when they arrive too slowly.

FastAPI reads a JSON body whole and caps none, and uvicorn times out no
request body, so :class:`Bodies` wraps the app: a body other than an upload's
carries at most ``SMALL_BODY`` bytes (413 beyond); every body must send its next
piece within ``read_timeout_s`` seconds and arrive whole within
``body_timeout_s`` (408 otherwise, and the connection is closed). A client
sending one byte a minute therefore holds a connection for at most
``body_timeout_s``; uploads are further capped per team and per address
(:class:`UploadSlots`).

A request refused before its body was read (a query that does not validate,
an unknown token, a closed phase) is answered only once the rest of its body
has arrived, when that rest is at most ``LINGER_BYTES``: uvicorn closes a
connection whose body was not read, and a client still sending gets a broken
pipe or a reset instead of the answer saying why (the "lingering close" of
web servers). A larger body is not waited for.
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import hashlib
import os
import struct
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from fastapi import HTTPException
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from podium.service.urls import unprefixed_path

SMALL_BODY = 64 << 10
LINGER_BYTES = 1 << 20  # the most of a refused request's body read and dropped so that its client gets the answer
UPLOADS = (
    "/api/submissions",
    "/submissions/upload",
)  # the paths that take large bodies, capped by the contest's upload_mb


@dataclass(frozen=True)
class BodyTimes:
    """How long a request body may take: between two pieces, and in all (seconds)."""

    read_timeout_s: float = 30.0
    body_timeout_s: float = 600.0


class Bodies:
    """ASGI middleware: size caps on small bodies, time limits on every body."""

    def __init__(self, app: ASGIApp, times: BodyTimes = BodyTimes()) -> None:
        self.app = app
        self.times = times

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        small = unprefixed_path(scope) not in UPLOADS
        if small:
            declared = dict(scope["headers"]).get(b"content-length", b"0")
            if not declared.isdigit() or int(declared) > SMALL_BODY:
                await JSONResponse(
                    {"detail": f"this request's body may be at most {SMALL_BODY:,} bytes"}, status_code=413
                )(scope, receive, send)
                return
        received, finished, deadline, times = 0, False, time.monotonic() + self.times.body_timeout_s, self.times

        async def timed() -> Message:
            nonlocal received, finished
            if finished:  # the body is in: a streamed answer waits here for the client to go, for as long as it is sent
                return await receive()
            left = deadline - time.monotonic()
            try:
                message = await asyncio.wait_for(receive(), timeout=max(0.0, min(times.read_timeout_s, left)))
            except TimeoutError:
                raise HTTPException(
                    408,
                    f"the request's body came too slowly (every piece within {times.read_timeout_s:g} s, "
                    f"all of it within {times.body_timeout_s:g} s)",
                    {"Connection": "close"},
                ) from None
            received += len(message.get("body", b""))
            finished = finished or message["type"] == "http.disconnect" or not message.get("more_body", False)
            if small and received > SMALL_BODY:
                raise HTTPException(413, f"this request's body may be at most {SMALL_BODY:,} bytes")
            return message

        async def answer(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] >= 400 and not finished:
                closing = (b"connection", b"close") in [(k.lower(), v.lower()) for k, v in message.get("headers", [])]
                declared = dict(scope["headers"]).get(b"content-length", b"")
                if not closing and declared.isdigit() and int(declared) - received <= LINGER_BYTES:
                    try:
                        while not finished:
                            await timed()
                    except HTTPException:
                        pass  # too slow or too large: answered at once, as uvicorn then closes the connection
            await send(message)

        await self.app(scope, timed, answer)


class UploadSlots:
    """Uploads being received at once, at most ``per_team`` for a team and ``per_address`` from a client address (in this process)."""

    def __init__(self, per_team: int = 2, per_address: int = 4) -> None:
        self.per_team, self.per_address = per_team, per_address
        self.busy: Counter[tuple[str, object]] = Counter()

    @contextmanager
    def held(self, team: int, address: str) -> Iterator[None]:
        """One slot of ``team``'s and of ``address``'s, for the time of the ``with`` (429 when none is free)."""
        if self.busy["team", team] >= self.per_team:
            raise HTTPException(429, self.team_full())
        if self.busy["address", address] >= self.per_address:
            raise HTTPException(429, self.address_full())
        keys = (("team", team), ("address", address))
        self.busy.update(keys)
        try:
            yield
        finally:
            self.busy.subtract(keys)
            for key in keys:
                if self.busy[key] <= 0:
                    del self.busy[key]

    def team_full(self) -> str:
        return f"your team is already sending {self.per_team} uploads; wait for one to finish"

    def address_full(self) -> str:
        return f"{self.per_address} uploads are already coming from your address; wait for one to finish"


class SharedUploadSlots(UploadSlots):
    """The same caps counted across the web processes of one ``podium serve`` (``--web-processes``): locks on one file.

    Slot ``k`` of a team or an address is a one-byte lock (an open file
    description lock, Linux's ``F_OFD_SETLK``) at an offset drawn from a hash of
    the key; the file stays empty, whatever the keys. The kernel frees a
    slot when its holder closes it or dies, so a killed process leaves none
    taken. About 0.1 ms an upload (two slots; measured on a loaded machine).
    """

    LOCK = struct.Struct("hhqqi4x")  # struct flock on Linux: type, whence, start, length, pid (0 for OFD locks)

    def __init__(self, path: Path, per_team: int = 2, per_address: int = 4) -> None:
        super().__init__(per_team, per_address)
        self.path = path
        path.touch()

    @contextmanager
    def held(self, team: int, address: str) -> Iterator[None]:
        with ExitStack() as slots:
            if not self._take(slots, f"team {team}", self.per_team):
                raise HTTPException(429, self.team_full())
            if not self._take(slots, f"address {address}", self.per_address):
                raise HTTPException(429, self.address_full())
            yield

    def _take(self, slots: ExitStack, key: str, count: int) -> bool:
        """A free slot of ``key``'s ``count``, held until ``slots`` closes; ``False`` when all are taken."""
        base = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=6).digest()) << 8  # 2^56 keys x 256 slots
        for k in range(min(count, 256)):
            fd = os.open(self.path, os.O_RDWR | os.O_CLOEXEC)
            try:
                fcntl.fcntl(fd, fcntl.F_OFD_SETLK, self.LOCK.pack(fcntl.F_WRLCK, os.SEEK_SET, base + k, 1, 0))
            except OSError as error:
                os.close(fd)
                if error.errno in (errno.EAGAIN, errno.EACCES):
                    continue
                raise
            slots.callback(os.close, fd)
            return True
        return False

"""Running the service in tests: the app on uvicorn on 127.0.0.1 in a thread, with a clock the test sets."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import uvicorn
from PIL import Image

from podium.challenges import get
from podium.contest import load
from podium.service import accounts
from podium.service.app import Service, create_app
from podium.service.client import Answer, packed, request
from podium.service.database import connect, migrate, writing
from podium.service.server import register_contest


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class LiveServer:
    """The app served over real HTTP on a free loopback port."""

    def __init__(self, service: Service, root_path: str = "") -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        config = uvicorn.Config(
            create_app(service),
            log_level="warning",
            limit_concurrency=500,
            backlog=512,
            proxy_headers=False,
            root_path=root_path,
        )  # as podium serve runs it (root_path: --public-url's prefix)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        for _ in range(200):  # bounded: 10 s
            if self.server.started:
                return self
            time.sleep(0.05)
        raise RuntimeError("the test server did not start")

    def __exit__(self, *_: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()

    def call(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> Answer:
        return request(self.url, method, path, token, **kwargs)


CONTEST = """
id = "{id}"
title = "Test contest"
challenge = "{challenge}"
truth = "{truth}"
timezone = "{timezone}"
{extra}
[[phase]]
name = "first"
start = 2026-03-01T00:00:00Z
end = 2026-06-01T00:00:00Z
submissions = "{kind}"

[quota]
{quota}

[ranking]
{ranking}

[service]
upload_mb = {upload_mb}
self_registration = true
"""


def write_contest(
    folder: Path,
    challenge: str = "glas",
    *,
    kind: str = "files",
    timezone: str = "America/New_York",
    quota: str = "per_day = 3",
    ranking: str = 'final = "best"',
    extra: str = "[split]\npublic = 0.5\nseed = 7\n",
    upload_mb: float = 5,
) -> Path:
    """A contest on the challenge's demo set in ``folder``: its path (the demo is in ``folder/demo``)."""
    demo = get(challenge).write_demo(folder / "demo")
    text = CONTEST.format(
        id=f"test-{challenge}",
        challenge=challenge,
        truth=demo.truth,
        timezone=timezone,
        extra=extra,
        kind=kind,
        quota=quota,
        ranking=ranking,
        upload_mb=upload_mb,
    )
    path = folder / "contest.toml"
    path.write_text(text)
    return path


def set_up(
    url: str, contest_path: Path, data: Path, teams: tuple[str, ...], clock: Clock
) -> tuple[Service, dict[str, str]]:
    """A migrated database tied to the contest, with the teams; the service and each team's token."""
    engine = connect(url)
    migrate(engine)
    register_contest(engine, load(contest_path))
    tokens = {}
    with writing(engine) as connection:
        for name in teams:
            tokens[name] = accounts.new_token(
                connection, accounts.add_team(connection, name, clock()), False, "test", clock()
            )
    return Service(engine, data, clock), tokens


def demo_archive(contest: Path, folder: Path) -> Path:
    """The demo submission next to ``contest``, packed as ``podium submit`` packs a folder: ``folder/submission.tar.gz``."""
    folder.mkdir(parents=True, exist_ok=True)
    return packed(contest.parent / "demo" / "submission", folder)


def worse_copy(submission: Path, target: Path) -> Path:
    """A GlaS submission folder copied to ``target`` with every mask shifted 7 pixels out of place: lower scores on every image."""
    shutil.copytree(submission, target)
    for path in sorted(target.iterdir()):
        with Image.open(path) as image:
            pixels = np.roll(np.asarray(image), 7, axis=1)
        Image.fromarray(pixels).save(path)
    return target


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)

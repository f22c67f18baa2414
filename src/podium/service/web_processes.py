"""``podium serve --web-processes N``: N web processes accepting on the one socket ``podium serve`` listens on.

``podium serve`` binds and listens; each web process inherits the socket and
runs the app on uvicorn, so the kernel hands each new connection to one of
them. They are kept as the workers are (:class:`~podium.service.server.Workers`):
started again if one dies, killed with ``podium serve`` even when it is killed
with SIGKILL. The database URL reaches them in their environment, the other
settings as JSON in :data:`SETTINGS`.

What was one per process stays right across N:

- the log-in limiter, the quotas and the board's version stamp are in the database;
- the cap on uploads at once (per team, per address) is counted across the
  processes, by locks on a file (:class:`~podium.service.bodies.SharedUploadSlots`);
- ``/metrics`` sums every process's counters (prometheus-client's multiprocess
  mode, in :data:`METRICS_FOLDER` of the data folder, emptied at each start);
- each process keeps its own boards in memory (each reading the stamps: at most
  :data:`~podium.service.board_cache.FRESH_S` late), but a changed board is
  computed and its page drawn by one of them, the others reading the files it
  writes in :data:`~podium.service.board_share.FOLDER` of the data folder
  (emptied at each start; :mod:`podium.service.board_share`);
- each process keeps its own check processes;
- the mailer runs once, in ``podium serve``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

SETTINGS = "PODIUM_WEB"  # the web processes' settings (JSON)
METRICS_FOLDER = "web-metrics"  # in the data folder: the processes' counters (prometheus-client multiprocess mode)
SLOTS_FILE = "upload-slots"  # in the data folder: the locks of the uploads being received
BACKLOG = 2048


@dataclass(frozen=True)
class WebSettings:
    """What a web process needs beyond the database URL: what ``podium serve`` was given."""

    data: str
    fd: int
    challenge: str
    allow_images: bool
    proxies: list[str]
    public_url: str | None
    check_processes: int
    log_format: str
    keep_alive_s: int
    board_fresh_s: float


def listening(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening, inherited by the processes ``podium serve`` starts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(BACKLOG)
    sock.set_inheritable(True)
    return sock


def metrics_folder(data: Path) -> Path:
    """The data folder's :data:`METRICS_FOLDER`, emptied: counters restart at zero with ``podium serve``, as Prometheus expects."""
    folder = data / METRICS_FOLDER
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def web_argv() -> list[str]:
    return [sys.executable, "-c", "from podium.service.web_processes import run; run()"]


def environment(settings: WebSettings, metrics: Path) -> dict[str, str]:
    """The variables a web process starts with (beside ``PODIUM_DATABASE`` and its index)."""
    return {SETTINGS: json.dumps(asdict(settings)), "PROMETHEUS_MULTIPROC_DIR": str(metrics)}


def run() -> None:
    """A web process: the app on uvicorn, accepting on the inherited socket, until ``podium serve`` stops it."""
    import uvicorn

    from podium.service import logs
    from podium.service.app import Service, create_app
    from podium.service.bodies import SharedUploadSlots
    from podium.service.check_pool import CheckPool
    from podium.service.database import connect
    from podium.service.intake import inline
    from podium.service.proxies import parse_proxies
    from podium.service.server import die_with_serve, event_loop
    from podium.service.urls import parse_public_url

    if not die_with_serve():
        return
    settings = WebSettings(**json.loads(os.environ[SETTINGS]))
    logs.configure(settings.log_format)
    data = Path(settings.data)
    public = None if settings.public_url is None else parse_public_url(settings.public_url)
    service = Service(
        connect(os.environ["PODIUM_DATABASE"]),
        data,
        allow_images=settings.allow_images,
        proxies=parse_proxies(settings.proxies) if settings.proxies else (),
        public_url=public,
        slots=SharedUploadSlots(data / SLOTS_FILE),
        checks=CheckPool(settings.challenge, settings.check_processes) if settings.check_processes else inline,
        board_fresh_s=settings.board_fresh_s,
        board_pages_behind=True,
        board_warm=True,
        board_share=True,
    )
    config = uvicorn.Config(
        create_app(service),
        proxy_headers=False,
        timeout_keep_alive=settings.keep_alive_s,
        root_path=public.prefix if public else "",
        **event_loop(),
        **logs.uvicorn_config(settings.log_format),
    )
    sock = socket.socket(fileno=settings.fd)
    uvicorn.Server(config).run(sockets=[sock])

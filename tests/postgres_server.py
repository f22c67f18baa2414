"""A real PostgreSQL server for the tests: initdb in a temporary folder, pg_ctl on a loopback port, stopped at the end.

As root, the server runs as the ``postgres`` user (PostgreSQL refuses root).
``problem()`` says why no server can be started here, or ``None``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


def binaries() -> Path | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return None if initdb is None else Path(initdb).resolve().parent


def problem() -> str | None:
    folder = binaries()
    if folder is None or not (folder / "pg_ctl").exists():
        return "no PostgreSQL server binaries (initdb, pg_ctl); as root with apt-get, make test installs postgresql"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root, and there is no postgres user to run the server as"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    def __init__(self) -> None:
        self.bin = binaries()
        assert self.bin is not None
        self.folder = Path(tempfile.mkdtemp(prefix="podium-pg-"))
        self.port = _free_port()
        self.user = "postgres" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name
        self.count = 0

    def _as_owner(self, *command: str) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else list(command)

    def start(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres")
        data = self.folder / "data"
        subprocess.run(
            self._as_owner(
                str(self.bin / "initdb"), "-D", str(data), "--auth=trust", "-U", self.user, "-E", "UTF8", "--no-sync"
            ),
            check=True,
            capture_output=True,
            timeout=120,
        )
        self.resume()

    def resume(self) -> None:
        """Start the server on its data again (after :meth:`halt`), as :meth:`start` first did."""
        data = self.folder / "data"
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        subprocess.run(
            self._as_owner(
                str(self.bin / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(self.folder / "log"),
                "-o",
                options,
                "-w",
                "-t",
                "60",
                "start",
            ),
            check=True,
            capture_output=True,
            timeout=90,
        )

    def halt(self) -> None:
        """Stop the server at once (its connections cut), its data kept for :meth:`resume`."""
        subprocess.run(
            self._as_owner(str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "immediate", "-w", "stop"),
            capture_output=True,
            timeout=60,
        )

    def stop(self) -> None:
        self.halt()
        shutil.rmtree(self.folder, ignore_errors=True)

    def new_database(self) -> str:
        """A new empty database; its SQLAlchemy URL."""
        import psycopg

        self.count += 1
        name = f"podium_{self.count}"
        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user={self.user} dbname=postgres", autocommit=True
        ) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{name}"

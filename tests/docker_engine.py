"""A private Docker engine for the tests: dockerd on a unix socket in a temporary folder, stopped at the end.

No systemd, no iptables, no bridge (containers run with ``--network none``
anyway): ``dockerd --data-root D/docker --exec-root D/exec --host unix://D/docker.sock
--storage-driver overlay2 --iptables=false --ip-masq=false --bridge=none``,
falling back to the ``vfs`` driver where overlay2 cannot mount. It needs
root. Images are built locally, never pulled: :func:`busybox_image` imports a
root file system of busybox-static (about 1 MB, well under a second).

``problem()`` says why no engine can be started here, or ``None``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

BUSYBOX = "/bin/busybox"
APPLETS = (
    "sh",
    "cat",
    "echo",
    "sleep",
    "dd",
    "head",
    "yes",
    "id",
    "ls",
    "mkdir",
    "touch",
    "rm",
    "env",
    "true",
    "kill",
    "tr",
    "wc",
    "sync",
)


def problem() -> str | None:
    if shutil.which("dockerd") is None:
        return "no Docker engine (dockerd); as root with apt-get, make test installs docker.io"
    if shutil.which("docker") is None:
        return "no Docker client (docker)"
    if os.geteuid() != 0:
        return "a private Docker engine needs root"
    if _busybox() is None:
        return "no static busybox to build test images from; as root with apt-get, make test installs busybox-static"
    return None


def _busybox() -> str | None:
    """A statically linked busybox (busybox-static), which runs in an image with nothing else."""
    for path in (BUSYBOX, "/usr/bin/busybox"):
        if os.path.exists(path) and subprocess.run(["ldd", path], capture_output=True).returncode != 0:
            return path
    return None


PRIVATE_TMP = [
    "unshare",
    "--mount",
    "--propagation",
    "private",
    "sh",
    "-c",
    'mount -t tmpfs tmpfs /tmp && exec "$@"',
    "-",
]


class Engine:
    """A dockerd of the tests' own; ``environ`` points the docker client at it.

    ``private_tmp``: the engine runs in a mount namespace of its own with a ``/tmp`` of its own (as a service with
    ``PrivateTmp=yes`` does), its files in ``/var/tmp``: it sees no folder podium makes in ``/tmp``.
    """

    def __init__(self, private_tmp: bool = False) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="podium-docker-", dir="/var/tmp" if private_tmp else None))
        self.wrapper = PRIVATE_TMP if private_tmp else []
        self.socket = self.folder / "docker.sock"
        self.environ = {"DOCKER_HOST": f"unix://{self.socket}", "DOCKER_BUILDKIT": "0"}
        self.process: subprocess.Popen[bytes] | None = None
        self.driver = ""

    def start(self) -> None:
        for driver in ("overlay2", "vfs"):
            with open(self.folder / f"dockerd-{driver}.log", "wb") as log:
                self.process = subprocess.Popen(
                    [
                        *self.wrapper,
                        "dockerd",
                        "--data-root",
                        str(self.folder / "docker"),
                        "--exec-root",
                        str(self.folder / "exec"),
                        "--pidfile",
                        str(self.folder / "docker.pid"),
                        "--host",
                        f"unix://{self.socket}",
                        "--storage-driver",
                        driver,
                        "--iptables=false",
                        "--ip-masq=false",
                        "--bridge=none",
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                    start_new_session=True,
                )
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and self.process.poll() is None:
                if self.docker("info", check=False).returncode == 0:
                    self.driver = driver
                    return
                time.sleep(0.1)
            self.stop()
        log = (self.folder / "dockerd-vfs.log").read_text(errors="replace").strip().splitlines()
        raise RuntimeError(f"dockerd did not start: {log[-1] if log else 'no log'}")

    def docker(self, *args: str, check: bool = True, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["docker", *args], input=stdin, capture_output=True, env={**os.environ, **self.environ}, timeout=120
        )
        result = subprocess.CompletedProcess(
            done.args, done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
        )
        if check and result.returncode != 0:
            raise RuntimeError(f"docker {' '.join(args)}: {result.stderr.strip()}")
        return result

    def import_image(
        self,
        name: str,
        files: dict[str, bytes | str] | None = None,
        user: str | None = None,
        cmd: list[str] | None = None,
    ) -> str:
        """A busybox image named ``name`` with ``files`` added (path inside: content), run as ``user``; its ID."""
        root = Path(tempfile.mkdtemp(prefix="podium-rootfs-", dir=self.folder))
        (root / "bin").mkdir()
        shutil.copy(_busybox() or BUSYBOX, root / "bin" / "busybox")
        for applet in APPLETS:
            (root / "bin" / applet).symlink_to("busybox")
        for folder in ("tmp", "etc", "work", "dev", "proc", "sys"):
            (root / folder).mkdir(exist_ok=True)
        (root / "etc" / "passwd").write_text("root:x:0:0::/root:/bin/sh\nplayer:x:1000:1000::/tmp:/bin/sh\n")
        for path, content in (files or {}).items():
            target = root / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode() if isinstance(content, str) else content)
            target.chmod(0o755)
        archive = self.folder / f"{root.name}.tar"
        with tarfile.open(archive, "w") as tar:
            tar.add(root, arcname=".")
        changes = [f"CMD {json.dumps(cmd or ['/bin/sh', '/program.sh'])}"] + ([f"USER {user}"] if user else [])
        args = ["import", *(arg for change in changes for arg in ("--change", change)), str(archive), name]
        self.docker(*args)
        archive.unlink()
        shutil.rmtree(root)
        return self.docker("image", "inspect", "--format", "{{.Id}}", name).stdout.strip()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            for container in self.docker("ps", "-aq", check=False).stdout.split():
                self.docker("rm", "-f", container, check=False)
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def remove(self) -> None:
        self.stop()
        subprocess.run(["umount", "-R", str(self.folder / "exec")], capture_output=True)
        shutil.rmtree(self.folder, ignore_errors=True)

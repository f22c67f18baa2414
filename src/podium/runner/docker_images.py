"""Images on the Docker engine: references checked, archives loaded untagged, files read; and the docker client.

An image is run by its ID, found on the engine before the time limit starts:
a reference already on the engine (never pulled: ``--pull never``), or an
archive of ``docker save`` (how a team hands its image in), loaded with its
tags dropped, so that a team's archive can rename no image on the engine.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from podium.core.errors import UsageError

ENGINE_TIMEOUT_S = 60  # an engine that takes longer to create, start or remove a container is broken
LOAD_TIMEOUT_S = 600
MANIFEST_MAX_BYTES = 1 << 20


def docker(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the docker client; a client that cannot start or an engine that does not answer is a usage error."""
    try:
        return subprocess.run(
            ["docker", *args], capture_output=True, text=True, timeout=ENGINE_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"--image needs Docker, which did not answer here ({exc})") from None


def last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


def check_engine() -> None:
    info = docker("info", "--format", "{{.ServerVersion}}")
    if info.returncode != 0:
        raise UsageError(f"--image needs a running Docker engine: {last_line(info.stderr) or 'docker info failed'}")


# A reference as the engine takes it: [registry[:port]/]name[/name...][:tag][@sha256:digest], or an image ID.
REFERENCE = re.compile(
    r"(?:sha256:[0-9a-f]{64}"
    r"|(?:(?:(?:[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)+|localhost)(?::[0-9]+)?|[a-zA-Z0-9-]+:[0-9]+)/)?"  # a registry: a dot, a port or localhost
    r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?)"
)


@dataclass(frozen=True)
class Image:
    """An image on the engine: its ID, whether it sets ``PATH``, and the host folders that hold its files."""

    id: str
    sets_path: bool
    layers: tuple[Path, ...]


def check_reference(reference: str) -> None:
    """Refuse what is not an image reference (``--privileged``, spaces, shell text) before any engine sees it."""
    if not REFERENCE.fullmatch(reference):
        raise UsageError(
            f"{reference!r} is not a Docker image reference (NAME[:TAG][@sha256:DIGEST], or an image ID sha256:...); "
            "an image saved as an archive is given by its path (docker save -o team.tar IMAGE)"
        )


def find_image(image: str) -> Image:
    """The image on the engine: a reference already there (never pulled), or an archive of ``docker save``, loaded."""
    if os.path.isfile(image):
        reference = load_image(Path(image))
    else:
        check_reference(image)
        reference = image
    found = docker(
        "image", "inspect", "--format", "{{.Id}}\t{{json .Config.Env}}\t{{json .GraphDriver.Data}}", reference
    )
    if found.returncode != 0:
        raise UsageError(
            f"the image {image} is not on this Docker engine; podium never pulls one during a run: "
            f"docker pull it (or docker load its archive) first ({last_line(found.stderr)})"
        )
    image_id, env, layers = found.stdout.strip().split("\t")
    return Image(image_id, '"PATH=' in env, _layer_folders(layers))


def _layer_folders(data: str) -> tuple[Path, ...]:
    """The host folders of an image's layers (overlay2: ``LowerDir`` and ``UpperDir``), where podium can read them."""
    fields = json.loads(data) or {}
    folders = [Path(part) for key in ("LowerDir", "UpperDir") for part in (fields.get(key) or "").split(":") if part]
    return tuple(folder for folder in folders if os.access(folder, os.R_OK | os.X_OK))


def load_image(archive: Path) -> str:
    """Load a ``docker save`` archive; its image ID. Its tags are not applied: a team's archive renames no image."""
    with open(archive, "rb") as source:
        try:
            process = subprocess.Popen(
                ["docker", "load", "--quiet"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as exc:
            raise UsageError(f"--image needs Docker, which is not available here ({exc})") from None
        assert process.stdin is not None
        try:
            untagged(source, process.stdin)
        except (tarfile.TarError, ValueError, BrokenPipeError) as exc:
            process.kill()
            process.communicate()
            raise UsageError(f"{archive.name} is not an image archive of docker save: {exc}") from None
        try:
            out, err = process.communicate(timeout=LOAD_TIMEOUT_S)  # closes its input: the archive is all there
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise UsageError(f"the Docker engine did not load {archive.name} within {LOAD_TIMEOUT_S} s") from None
    loaded = re.search(rb"Loaded image ID: (sha256:[0-9a-f]{64})", out)
    if process.returncode != 0 or loaded is None:
        raise UsageError(
            f"{archive.name} could not be loaded as an image: {last_line(err.decode(errors='replace')) or out.decode(errors='replace')}"
        )
    return loaded.group(1).decode()


def read_image_files(image: Image) -> None:
    """Read every file of the image's layers, so their page cache is charged to no run (as the test images are)."""
    for layer in image.layers:
        for folder, _dirs, files in os.walk(layer):
            for name in files:
                try:
                    fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                except OSError:
                    continue  # a link, a device, a socket
                try:
                    while os.read(fd, 1 << 20):
                        pass
                except OSError:
                    pass
                finally:
                    os.close(fd)


def untagged(source: IO[bytes], sink: IO[bytes]) -> None:
    """Copy a ``docker save`` archive from ``source`` to ``sink`` as a stream, without its image names.

    ``repositories`` is left out, ``manifest.json``'s ``RepoTags`` emptied and
    ``index.json``'s annotations (where newer engines keep names) dropped.
    """
    with (
        tarfile.open(fileobj=source, mode="r|") as archive,
        tarfile.open(fileobj=sink, mode="w|", format=tarfile.PAX_FORMAT) as copy,
    ):
        for member in archive:
            name = member.name.removeprefix("./")
            if name == "repositories":
                continue
            if name in ("manifest.json", "index.json") and member.isfile():
                data = _unnamed(name, archive.extractfile(member), member.size)  # type: ignore[arg-type]
                member.size = len(data)
                copy.addfile(member, io.BytesIO(data))
            elif member.isfile():
                copy.addfile(member, _Uncompressed(name, archive.extractfile(member)))  # type: ignore[arg-type]
            else:
                copy.addfile(member)


COMPRESSED = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd"}


class _Uncompressed:
    """A member's bytes as a stream, refused if they start as a compressed file does.

    The engine would unpack a compressed layer: a small upload could then fill
    its disk. ``docker save`` writes layers uncompressed, so what the engine
    unpacks is never more than the archive the team uploaded.
    """

    def __init__(self, name: str, stream: IO[bytes]) -> None:
        self._stream, self._head = stream, stream.read(6)
        for magic, kind in COMPRESSED.items():
            if self._head.startswith(magic):
                raise ValueError(
                    f"its {name} is {kind}-compressed; save the image with docker save, whose layers are not"
                )

    def read(self, size: int = -1) -> bytes:
        if not self._head:
            return self._stream.read(size)
        if 0 <= size < len(self._head):
            out, self._head = self._head[:size], self._head[size:]
            return out
        out, self._head = self._head, b""
        return out + self._stream.read(-1 if size < 0 else size - len(out))


def _unnamed(name: str, stream: IO[bytes], size: int) -> bytes:
    if size > MANIFEST_MAX_BYTES:
        raise ValueError(f"its {name} is larger than {MANIFEST_MAX_BYTES >> 20} MB")
    try:
        document = json.loads(stream.read())
    except ValueError as exc:
        raise ValueError(f"its {name} is not JSON ({exc})") from None
    entries = document if name == "manifest.json" else document.get("manifests") if isinstance(document, dict) else None
    if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
        raise ValueError(f"its {name} does not list images")
    for entry in entries:
        entry.pop("RepoTags" if name == "manifest.json" else "annotations", None)
    return json.dumps(document).encode()

"""A small HTTP client of the service's API (standard library only): what ``podium submit``, ``status``, ``download``, ``select``, ``cancel`` and ``leaderboard`` use."""

from __future__ import annotations

import json
import re
import shutil
import ssl
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any  # parsed JSON, or the text when the server sent none

    @property
    def message(self) -> str:
        if isinstance(self.body, dict) and "detail" in self.body:
            detail = self.body["detail"]
            return detail if isinstance(detail, str) else json.dumps(detail)
        return str(self.body)[:500]


class ServerUnreachable(Exception):
    pass


_CONTEST_PAGE = re.compile(r"^(?P<site>.*)/c/(?P<id>[A-Za-z0-9._~-]+)/?$")


def api_url(server: str, path: str) -> str:
    """The URL of the API's ``path`` (``/api/...``) on ``server``: a site, or a contest's page on a site serving several
    (``https://example.org/c/ID``), whose API is under ``/api/contests/ID/``.

    >>> api_url("http://h:8000/", "/api/submissions"), api_url("http://h:8000/c/lsvrc", "/api/submissions")
    ('http://h:8000/api/submissions', 'http://h:8000/api/contests/lsvrc/submissions')
    """
    found = _CONTEST_PAGE.match(server)
    if found is None or not path.startswith("/api/") or path == "/api/tokens":
        return server.rstrip("/") + path
    return f"{found['site']}/api/contests/{found['id']}/{path[len('/api/') :]}"


def request(
    server: str,
    method: str,
    path: str,
    token: str | None = None,
    body: bytes | Path | None = None,
    query: dict[str, str] | None = None,
    json_body: Any = None,
    into: BinaryIO | None = None,
) -> Answer:
    """One call of the API; ``into``: a successful answer's body is copied there as it arrives (a download), not parsed."""
    url = api_url(server, path) + ("?" + urllib.parse.urlencode(query) if query else "")
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data: Any = None
    if json_body is not None:
        data, headers["Content-Type"] = json.dumps(json_body).encode(), "application/json"
    elif isinstance(body, Path):
        data, headers["Content-Type"], headers["Content-Length"] = (
            open(body, "rb"),  # noqa: SIM115 (closed in finally)
            "application/octet-stream",
            str(body.stat().st_size),
        )
    elif body is not None:
        data, headers["Content-Type"] = body, "application/octet-stream"
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, data=data, headers=headers, method=method), timeout=TIMEOUT_S
        ) as response:
            if into is not None:
                shutil.copyfileobj(response, into)
                return Answer(response.status, None)
            return Answer(response.status, _parse(response.read()))
    except urllib.error.HTTPError as error:
        return Answer(error.code, _parse(error.read()))
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        untrusted = isinstance(reason, ssl.SSLCertVerificationError)
        hint = (
            "; to trust the server's own certificate, name it in SSL_CERT_FILE (SSL_CERT_FILE=cert.pem podium ...)"
            if untrusted
            else ""
        )
        raise ServerUnreachable(f"cannot reach {server}: {reason}{hint}") from None
    finally:
        if hasattr(data, "close"):
            data.close()


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def packed(path: Path, folder: Path) -> Path:
    """``path`` itself if it is a file; a folder packed as ``NAME.tar.gz`` in ``folder``."""
    if path.is_file():
        return path
    archive = folder / f"{path.name or 'submission'}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for item in sorted(path.rglob("*")):
            if item.is_symlink() or not (item.is_file() or item.is_dir()):
                continue
            tar.add(item, arcname=str(item.relative_to(path)), recursive=False)
    return archive


def submit(
    server: str,
    token: str,
    path: Path,
    entry: str | None = None,
    track: str | None = None,
    method: dict[str, str] | None = None,
) -> Answer:
    """Send ``path`` (a folder packed as tar.gz) to ``track``: the server's answer, or a 413 of our own when it is over the
    contest's ``upload_mb``, a 422 of our own when the contest has no such track (or several, and none is named).

    The size and the track are checked before sending: a server that refuses
    a body it has not read closes the connection, and the sender would see
    only "connection reset" or "broken pipe", not the server's message.
    """
    contest = request(server, "GET", "/api/contest")
    described = contest.body if contest.status == 200 and isinstance(contest.body, dict) else {}
    upload_mb = described.get("service", {}).get("upload_mb")
    refused = _track_refused(described, track)
    if refused is not None:
        return Answer(422, {"detail": refused})
    with tempfile.TemporaryDirectory(prefix="podium-submit-") as folder:
        upload = packed(path, Path(folder))
        size = upload.stat().st_size
        if upload_mb is not None and size > upload_mb * 2**20:
            return Answer(
                413, {"detail": f"{upload.name} is {size:,} bytes; this contest takes at most {upload_mb:g} MB"}
            )
        query = {"filename": upload.name} | ({"entry": entry} if entry else {}) | ({"track": track} if track else {})
        query |= method or {}  # method, description, paper_url, code_url, shown (podium.service.methods)
        return request(server, "POST", "/api/submissions", token, body=upload, query=query)


def _track_refused(contest: dict[str, Any], track: str | None) -> str | None:
    """Why the server would refuse ``track`` (as :meth:`podium.contest.Contest.on` says it), checked before the upload is sent."""
    if "id" not in contest:
        return None  # an older server, or none: it says so itself
    ids = [t["id"] for t in contest.get("tracks") or []] or [contest["id"]]
    if track is None and len(ids) > 1:
        return f"contest {contest['id']} has {len(ids)} tracks: name one ({', '.join(ids)})"
    if track is not None and track not in ids:
        return f"contest {contest['id']} has no track {track[:80]!r} (tracks: {', '.join(ids)})"
    return None

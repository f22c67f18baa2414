"""Who a request comes from, and whether it came over https, trusting a proxy's headers only from the proxies configured.

``podium serve --trusted-proxy ADDRESS`` (or ``PODIUM_TRUSTED_PROXIES``, comma
separated; an address or a network such as ``10.0.0.0/8``) names the reverse
proxies in front of podium. A request from one of them is taken to come from
the last address of its ``X-Forwarded-For`` that is not itself a trusted
proxy, and over https when its ``X-Forwarded-Proto`` says so. From any other
peer these headers are ignored, so a client cannot choose its own address.

>>> trusted = parse_proxies("10.0.0.0/8, ::1")
>>> forwarded_client("10.1.2.3", "1.2.3.4, 5.6.7.8, 10.9.9.9", trusted)
'5.6.7.8'
>>> forwarded_client("8.8.8.8", "1.2.3.4", trusted)
'8.8.8.8'
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from starlette.requests import Request

from podium.core.errors import UsageError

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Proxies = tuple[Network, ...]


def parse_proxies(text: str | Iterable[str]) -> Proxies:
    """Addresses or networks, comma separated (or given one by one); a clear error for one that is neither."""
    items = text.split(",") if isinstance(text, str) else [part for item in text for part in item.split(",")]
    networks = []
    for item in (i.strip() for i in items):
        if not item:
            continue
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise UsageError(
                f"--trusted-proxy {item[:80]!r}: give an IP address or a network such as 10.0.0.0/8"
            ) from None
    return tuple(networks)


def _trusted(address: str, proxies: Proxies) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    return any(ip in network for network in proxies)


def forwarded_client(peer: str, forwarded_for: str | None, proxies: Proxies) -> str:
    """The client's address: ``peer``, or, when ``peer`` is a trusted proxy, the nearest untrusted hop of ``forwarded_for``."""
    if not forwarded_for or not _trusted(peer, proxies):
        return peer
    hops = [hop.strip() for hop in forwarded_for.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _trusted(hop, proxies):
            return hop[:64]
    return hops[0][:64] if hops else peer


def client_address(request: Request, proxies: Proxies) -> str:
    peer = request.client.host if request.client else "unknown"
    return forwarded_client(peer, request.headers.get("x-forwarded-for"), proxies)


def is_https(request: Request, proxies: Proxies) -> bool:
    """Whether the browser's connection is https: the request's own scheme, or a trusted proxy's ``X-Forwarded-Proto``."""
    if request.url.scheme == "https":
        return True
    peer = request.client.host if request.client else ""
    forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return forwarded == "https" and _trusted(peer, proxies)

"""Where outbound events may go: public addresses only, unless ``OUTBOUND_ALLOW_PRIVATE`` is set.

A subscription URL whose host is, or resolves to, a loopback, link-local, private, reserved,
multicast or unspecified address (``127.0.0.1``, ``169.254.169.254``, ``10.…``, ``::1``…), or to an
IPv6 address that carries such an IPv4 address (IPv4-mapped, 6to4, Teredo), is refused: the
console must not be made to POST into its own network (SSRF). The check runs when an admin saves
the URL and again before every attempt (a name may resolve elsewhere later).
``REVIEWCONSOLE_OUTBOUND_ALLOW_PRIVATE=1`` allows them (a receiver on the same host or network).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings

__all__ = ["PrivateAddressError", "check_destination"]


class PrivateAddressError(ValueError):
    """The URL's host is (or resolves to) an address outbound events may not go to."""


def _embedded(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries and may be routed to: IPv4-mapped
    (``::ffff:127.0.0.1``), 6to4 (``2002:7f00:1::``, RFC 3056) and Teredo's server and client
    (RFC 4380)."""
    found = [ip.ipv4_mapped, ip.sixtofour, *(ip.teredo or ())]
    return [v4 for v4 in found if v4 is not None]


def _blocked(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if any(_blocked(str(v4)) for v4 in _embedded(ip)):
            return True
        if ip.ipv4_mapped is not None:  # the IPv4 address itself, public as checked just now
            return False
    return (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_reserved
        or ip.is_multicast
        or ip.is_unspecified
        or not ip.is_global
    )


def check_destination(url: str) -> None:
    """Refuse ``url`` unless every address its host resolves to is public (or the setting allows any).

    Raises:
        PrivateAddressError: the host is missing, does not resolve, or resolves to a blocked address.
    """
    if settings.REVIEWCONSOLE.get("OUTBOUND_ALLOW_PRIVATE"):
        return
    host = urlsplit(url).hostname
    if not host:
        raise PrivateAddressError("The URL names no host.")
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise PrivateAddressError(f"The host {host[:100]} does not resolve.") from None
    if any(_blocked(str(info[4][0])) for info in infos):
        raise PrivateAddressError(
            f"The host {host[:100]} is a loopback, link-local or private address; outbound events go to "
            "public addresses only (REVIEWCONSOLE_OUTBOUND_ALLOW_PRIVATE=1 allows others)."
        )

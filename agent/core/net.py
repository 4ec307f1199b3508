"""Addresses: what counts as loopback, and which interfaces 'localhost' means.

Every server the agent runs (a game's endpoint, the console) listens on loopback unless told
otherwise, so all of them share one definition of it.
"""

from __future__ import annotations

import ipaddress

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "ip6-localhost"})


def listen_hosts(host: str) -> list[str]:
    """'localhost' means both loopback families: a client's resolver may pick either."""
    return ["127.0.0.1", "::1"] if host == "localhost" else [host]


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

"""Addresses: what counts as loopback, and which interfaces 'localhost' means.

Every server the agent runs (a game's endpoint, the console) listens on loopback unless told
otherwise, so all of them share one definition of it.
"""

from __future__ import annotations

import argparse
import ipaddress
from typing import TypeVar

from pydantic import Field

from agent.core.config import ConfigError, StrictModel

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


class ListenConfig(StrictModel):
    """Where a game's server listens; games subclass it to set their port and add limits."""

    host: str = Field("localhost", description="'localhost' listens on 127.0.0.1 and ::1.")
    port: int = Field(0, ge=0, le=65535)
    allow_remote: bool = Field(False, description="Must be true to listen on a non-loopback address.")
    token: str | None = Field(None, description="If set, clients must present this shared secret.")


L = TypeVar("L", bound=ListenConfig)


def add_listen_arguments(group: argparse._ArgumentGroup, port_help: str, token_help: str) -> None:
    """The flags every game server takes: --host, --port, --allow-remote, --token."""
    group.add_argument("--host", help="interface to listen on (default: localhost = 127.0.0.1 and ::1)")
    group.add_argument("--port", type=int, help=port_help)
    group.add_argument("--allow-remote", action="store_true", help="permit a non-loopback --host")
    group.add_argument("--token", help=token_help)


def apply_listen_arguments(listen: L, args: argparse.Namespace) -> L:
    """``listen`` with the flags of :func:`add_listen_arguments` applied (flags win over the file)."""
    listen = listen.model_copy()
    if getattr(args, "host", None) is not None:
        listen.host = args.host
    port = getattr(args, "port", None)
    if port is not None:
        if not 0 <= port <= 65535:
            raise ConfigError(f"--port {port} is not a port number")
        listen.port = port
    if getattr(args, "allow_remote", False):
        listen.allow_remote = True
    if getattr(args, "token", None):
        listen.token = args.token
    return listen

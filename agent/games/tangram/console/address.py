"""``--console [HOST:PORT]``: the address forms the flag takes. Pure and light (``--help`` imports it)."""

from __future__ import annotations

import ipaddress
import secrets

from agent.core.config import ConfigError


def parse_address(text: str, default_host: str, default_port: int) -> tuple[str, int]:
    """``HOST:PORT``, ``HOST``, ``:PORT``, ``PORT`` or ``[IPv6]:PORT``; missing parts keep the defaults."""
    text = text.strip()
    if not text:
        return default_host, default_port
    host, port_text = default_host, ""
    if text.startswith("["):
        inside, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ConfigError(f"--console {text!r}: write an IPv6 address as [ADDRESS]:PORT")
        host, port_text = inside, rest[1:]
    elif text.isdigit():
        port_text = text
    elif text.count(":") == 1:
        host_part, port_text = text.split(":")
        host = host_part or default_host
    elif text.count(":") > 1:
        try:
            ipaddress.IPv6Address(text)
        except ValueError as exc:
            raise ConfigError(f"--console {text!r} is not HOST:PORT") from exc
        host = text
    else:
        host = text
    port = default_port
    if port_text:
        if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
            raise ConfigError(f"--console {text!r}: {port_text!r} is not a port number")
        port = int(port_text)
    if not host or any(c.isspace() or c in "/?#@" for c in host):
        raise ConfigError(f"--console {text!r}: {host!r} is not a host name or address")
    return host, port


def new_token() -> str:
    return secrets.token_urlsafe(24)

"""Who is asking, and how often they may: the client's address and the rate limits of the public side.

The address is the socket's peer, unless that peer is the configured reverse proxy: then the
last address of ``X-Forwarded-For`` (the one the proxy itself appended) and the scheme of
``X-Forwarded-Proto``. From anyone else those headers are ignored, so a client cannot pick the
address its limits are counted on.

Limits are token buckets (a burst, then a steady rate), one per address and kind of request, and
one for everybody per kind: page loads, API calls, game sockets, chat lines. A bucket table never
holds more than ``MAX_TRACKED`` addresses (the least recently used go first).
"""

from __future__ import annotations

import ipaddress
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Literal

from aiohttp import web

Kind = Literal["page", "api", "socket", "chat"]
MAX_TRACKED = 50_000


@dataclass(frozen=True)
class Rate:
    burst: float
    per_minute: float


@dataclass(frozen=True)
class Limits:
    """Per address, then for everybody together. A study of 200 participants behind one university
    NAT must fit in the per-address numbers; the global ones stop a flood from many addresses."""

    per_address: dict[str, Rate] = field(default_factory=lambda: {
        "page": Rate(120, 240), "api": Rate(300, 1200), "socket": Rate(120, 480), "chat": Rate(20, 30)})
    overall: dict[str, Rate] = field(default_factory=lambda: {
        "page": Rate(2000, 6000), "api": Rate(4000, 20_000), "socket": Rate(2000, 6000), "chat": Rate(2000, 6000)})
    max_sockets_per_address: int = 400
    max_sockets: int = 1000


@dataclass
class _Bucket:
    tokens: float
    at: float

    def take(self, rate: Rate, now: float) -> bool:
        self.tokens = min(rate.burst, self.tokens + (now - self.at) * rate.per_minute / 60.0)
        self.at = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


class RateLimiter:
    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self._buckets: OrderedDict[tuple[str, str], _Bucket] = OrderedDict()
        self._overall: dict[str, _Bucket] = {}
        self.refused: dict[str, int] = {}

    def allow(self, kind: Kind, address: str, now: float | None = None) -> bool:
        """One request of ``kind`` from ``address``: True if it may go ahead (a token is spent)."""
        now = time.monotonic() if now is None else now
        rate = self.limits.per_address[kind]
        key = (kind, address)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(rate.burst, now)
            while len(self._buckets) > MAX_TRACKED:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
        overall = self._overall.setdefault(kind, _Bucket(self.limits.overall[kind].burst, now))
        ok = bucket.take(rate, now) and overall.take(self.limits.overall[kind], now)
        if not ok:
            self.refused[kind] = self.refused.get(kind, 0) + 1
        return ok


@dataclass(frozen=True)
class Client:
    address: str
    scheme: str


def _address(text: str) -> str | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:
        text = text[1:text.index("]")]
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None


def client_of(request: web.Request, trusted_proxy: str | None) -> Client:
    """The client's address and scheme, believing forwarded headers only from ``trusted_proxy``."""
    peer = request.remote or "?"
    scheme = request.scheme
    if trusted_proxy is not None and _address(peer) == trusted_proxy:
        forwarded = request.headers.get("X-Forwarded-For", "")
        last = _address(forwarded.split(",")[-1]) if forwarded else None
        if last is not None:
            peer = last
        proto = request.headers.get("X-Forwarded-Proto", "").strip().lower()
        if proto in ("http", "https"):
            scheme = proto
    return Client(peer, scheme)


def proxy_address(text: str | None) -> str | None:
    """The --trusted-proxy address, normalised; ValueError for anything but one IP address."""
    if text is None:
        return None
    found = _address(text)
    if found is None:
        raise ValueError(f"--trusted-proxy {text!r} is not an IP address (e.g. 127.0.0.1)")
    return found

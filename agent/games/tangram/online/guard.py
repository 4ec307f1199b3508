"""Who is asking, and how often they may: the client's address and the rate limits of the public side.

The address is the socket's peer, unless that peer is the configured reverse proxy: then the
last address of ``X-Forwarded-For`` (the one the proxy itself appended) and the scheme of
``X-Forwarded-Proto``. From anyone else those headers are ignored, so a client cannot pick the
address its limits are counted on.

Limits are token buckets (a burst, then a steady rate), one per address and kind of request, and
one for everybody per kind: page loads, API calls, our page's files and the engine ("asset"), game
sockets, chat lines. A bucket table never holds more than ``MAX_TRACKED`` addresses (the least
recently used go first). Engine downloads (``/g/...``, 9 MB gzipped, 38 MB not) are also counted
while they run: at most so many at once per address and overall (:meth:`RateLimiter.begin_download`).

The numbers (:class:`Limits`) are sized for a class of 30 behind one university NAT, all opening
their link within the same minute: each page load is two page requests (``/p/<code>``, ``/play``)
and at most 9 files (4 of ours under ``/s``, up to 5 engine files under ``/g``), of which a browser
fetches up to 4 engine files at once (the engine script, then wasm, pack and audio worklets
together). So:

- ``asset`` requests: a burst of 600 and 1,200 a minute per address, the page limit's 60 page
  loads at once and 120 a minute times 10 files: the class's 30 first loads (about 270 requests)
  and a reload each fit in the burst;
- engine downloads at once: 120 per address (30 participants x 4), 480 overall (four such
  classes; each holds a socket and a share of the uplink while it runs). One address can take a
  quarter of the server's downloads, no more;
- beyond either: HTTP 429 with ``Retry-After`` (the page says the server is busy and to reload).

Slow clients (deadlines.py): a connection must send its request's headers within ``header_s`` (10 s)
of opening, or of the request's first byte on a kept-alive connection, or it is closed; a call's
body (at most 16 KB) must arrive within ``body_s`` (10 s) of its headers, or HTTP 408 and the
connection is closed; an idle kept-alive connection is closed after ``keepalive_s`` (150 s: longer
than Caddy's 2 minutes, so the proxy closes its idle connections first and never reuses one we
are closing).
"""

from __future__ import annotations

import ipaddress
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Literal

from aiohttp import web

Kind = Literal["page", "api", "asset", "socket", "chat"]
MAX_TRACKED = 50_000


@dataclass(frozen=True)
class Rate:
    burst: float
    per_minute: float


PER_ADDRESS = {"page": Rate(120, 240), "api": Rate(300, 1200), "asset": Rate(600, 1200),
               "socket": Rate(120, 480), "chat": Rate(20, 30)}
OVERALL = {"page": Rate(2000, 6000), "api": Rate(4000, 20_000), "asset": Rate(10_000, 30_000),
           "socket": Rate(2000, 6000), "chat": Rate(2000, 6000)}


@dataclass(frozen=True)
class Limits:
    """Per address, then for everybody together. A study of 200 participants behind one university
    NAT must fit in the per-address numbers, and a class of 30 of them starting at once (see the
    module's docstring); the global ones stop a flood from many addresses. A kind left out of
    ``per_address`` or ``overall`` keeps its default."""

    per_address: dict[str, Rate] = field(default_factory=lambda: dict(PER_ADDRESS))
    overall: dict[str, Rate] = field(default_factory=lambda: dict(OVERALL))
    max_sockets_per_address: int = 400
    max_sockets: int = 1000
    max_downloads_per_address: int = 120
    """Engine files (``/g/...``) being sent at once to one address: 30 participants x 4."""
    max_downloads: int = 480
    header_s: float = 10.0
    """A request's headers must have arrived this long after the connection opened (or after the
    request's first byte, on a kept-alive connection): else the connection is closed."""
    body_s: float = 10.0
    """A call's body must have arrived this long after its headers: else HTTP 408, connection closed."""
    keepalive_s: float = 150.0
    """An idle kept-alive connection is closed after this long (Caddy's own is 2 minutes)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "per_address", {**PER_ADDRESS, **self.per_address})
        object.__setattr__(self, "overall", {**OVERALL, **self.overall})


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
        self._downloads: dict[str, int] = {}  # at most max_downloads addresses: one per running download
        self._downloading = 0
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

    def begin_download(self, address: str) -> bool:
        """An engine download to ``address`` starts, if it may (under ``max_downloads_per_address``
        and ``max_downloads`` at once); each True must be followed by :meth:`end_download`."""
        if (self._downloading >= self.limits.max_downloads
                or self._downloads.get(address, 0) >= self.limits.max_downloads_per_address):
            self.refused["download"] = self.refused.get("download", 0) + 1
            return False
        self._downloads[address] = self._downloads.get(address, 0) + 1
        self._downloading += 1
        return True

    def end_download(self, address: str) -> None:
        left = self._downloads.get(address, 0) - 1
        if left > 0:
            self._downloads[address] = left
        else:
            self._downloads.pop(address, None)
        self._downloading = max(0, self._downloading - 1)

    def downloads(self, address: str | None = None) -> int:
        """Engine downloads running now, to ``address`` or to everybody."""
        return self._downloading if address is None else self._downloads.get(address, 0)


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

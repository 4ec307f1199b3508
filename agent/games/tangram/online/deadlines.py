"""The HTTP server of the participants' origin: aiohttp's, with a deadline for slow request headers.

aiohttp's only timer is its keep-alive (``keepalive_timeout``, an hour by default, 150 s here): a
client that sends its request's headers one byte at a time keeps its connection, socket and memory
until then, and a few hundred such clients from one machine exhaust the file descriptors. Here
each connection also has a header deadline (``Limits.header_s``): the headers of its first request
must have arrived within that time of the connection opening, those of a later request within that
time of its first byte; else the connection is closed (nothing is answered: the client is not
listening).
The deadline is a timer per connection on the event loop, armed and cancelled as bytes arrive;
nothing waits or polls. Idle time between requests is ``Limits.keepalive_s`` (aiohttp's
keep-alive); a call's body has its own deadline, ``Limits.body_s``, enforced where the body is read
(app.py answers 408 and :meth:`DeadlineHandler.abandon_body` closes the connection right after).

:func:`make_runner` is how the agent (public.py) and the tests start the server.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_server import Server

from agent.core.http_log import QuietHttpLog
from agent.core.limits import Throttle
from agent.games.tangram.online.guard import Limits

log = logging.getLogger(__name__)

SHUTDOWN_S = 2.0
"""How long stopping waits for requests in progress (running turns end before, in public.py)."""


class DeadlineHandler(RequestHandler):
    """aiohttp's connection handler, closing a connection whose request headers are too slow."""

    __slots__ = ("_header_s", "_header_timer", "_last_payload", "_told")

    def __init__(self, manager: Server, header_s: float, told: Throttle, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._header_s = header_s
        self._header_timer: asyncio.TimerHandle | None = None
        self._last_payload: Any = None  # the body of the last request whose headers arrived
        self._told = told

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._payload_parser is not None or self._upgraded or self._force_close or self._close:
            super().data_received(data)  # a WebSocket's frames, or a connection on its way out
            return
        if data and self._header_timer is None and (self._last_payload is None or self._last_payload.is_eof()):
            self._arm()  # the first byte of a new request on a kept-alive connection
        count = self._request_count
        super().data_received(data)
        if self._request_count != count:  # a request's headers are complete (or were malformed: 400)
            self._last_payload = self._messages[-1][1] if self._messages else None
            self._disarm()

    def connection_lost(self, exc: BaseException | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def abandon_body(self) -> None:
        """The request's body is not waited for any longer: once its response is sent the connection
        closes, without aiohttp's lingering read of the rest of the body."""
        self._lingering_time = 0.0

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self._loop.call_later(self._header_s, self._too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _too_slow(self) -> None:
        self._header_timer = None
        if self.transport is None or self._force_close:
            return
        now, held = self._told.ready()
        if now:
            more = f" ({held} more in the last {self._told.interval:.0f} s)" if held else ""
            log.info("closed a connection that sent no complete request headers within %g s%s", self._header_s, more)
        self.force_close()


class _DeadlineServer(Server):
    """aiohttp's server, making :class:`DeadlineHandler` connections."""

    header_s: float
    told: Throttle

    def __call__(self) -> RequestHandler:
        return DeadlineHandler(self, self.header_s, self.told, loop=self._loop, **self._kwargs)


class DeadlineRunner(web.AppRunner):
    __slots__ = ("_header_s",)

    def __init__(self, app: web.Application, header_s: float, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._header_s = header_s

    async def _make_server(self) -> Server:
        server = await super()._make_server()
        # aiohttp has no setting for the handler's class: the server it made (with the app's
        # handler and settings) makes ours instead.
        server.__class__ = _DeadlineServer
        assert isinstance(server, _DeadlineServer)
        server.header_s = self._header_s
        server.told = Throttle(10.0)
        return server


def make_runner(app: web.Application, limits: Limits) -> web.AppRunner:
    """The runner of the participants' origin (then ``await runner.setup()`` and a ``web.TCPSite``):
    no access log (addresses hold link codes), peers' mistakes logged one line each (QuietHttpLog),
    ``limits``' header deadline and keep-alive, no lingering beyond the body deadline."""
    return DeadlineRunner(app, limits.header_s, access_log=None, handle_signals=False, shutdown_timeout=SHUTDOWN_S,
                          logger=QuietHttpLog(logging.getLogger("aiohttp.server")),
                          keepalive_timeout=limits.keepalive_s, lingering_time=limits.body_s)

"""The console's web server (aiohttp, in the agent's own event loop): the page, the pictures, a WebSocket.

Security, in order of the checks:

- Loopback by default. Any other interface needs a token; the page is opened once as
  ``/?token=...``, which sets an HttpOnly, SameSite=Strict cookie and redirects to ``/``, so the
  token never stays in the address bar, the page, or a Referer. Tokens compare in constant time.
- On loopback, the Host header must name loopback too: a web page elsewhere cannot reach the
  console through DNS rebinding.
- A WebSocket whose Origin is not the console itself is refused (no cross-site use of an open tab).
- Everything served carries a strict Content-Security-Policy and ``nosniff``; pictures are served
  only when their bytes are PNG or JPEG. Known secrets are masked in every message (see the hub).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hmac
import logging
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web

from agent.core.http_log import QuietHttpLog
from agent.core.net import is_loopback, listen_hosts
from agent.games.tangram.console.hub import Console, PageClient
from agent.games.tangram.console.messages import MAX_MESSAGE_BYTES

log = logging.getLogger(__name__)

COOKIE = "tangram_console"
STATIC_FILES = {"console.js": "text/javascript", "console.css": "text/css"}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
HEARTBEAT_S = 20.0


class ConsoleSetupError(Exception):
    """The console cannot start; one line for the user."""


class ConsoleServer:
    def __init__(self, console: Console, host: str, port: int, token: str | None) -> None:
        if not is_loopback(host) and not token:
            raise ConsoleSetupError(f"refusing to serve the console on {host} without a token")
        self.console = console
        self.host = host
        self.token = token
        self._port = port
        self._runner: web.AppRunner | None = None
        self._sockets: set[web.WebSocketResponse] = set()
        self._files = {name: (resources.files(__package__) / "static" / name).read_bytes()
                       for name in ("index.html", *STATIC_FILES)}

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        """The page's address (without the token)."""
        host = "127.0.0.1" if self.host == "localhost" else self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self._port}/"

    async def start(self) -> None:
        app = web.Application(middlewares=[self._guard], client_max_size=MAX_MESSAGE_BYTES)
        app.router.add_get("/", self._index)
        app.router.add_get("/static/{name}", self._static)
        app.router.add_get("/img/{game}/{which}", self._image)
        app.router.add_get("/ws", self._websocket)
        # logger: malformed HTTP and hang-ups as one rate-limited line each, not a traceback each.
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0,
                               logger=QuietHttpLog(logging.getLogger("aiohttp.server")))
        await runner.setup()
        self._runner = runner
        port = self._port
        for host in listen_hosts(self.host):
            site = web.TCPSite(runner, host, port, reuse_address=True)
            try:
                await site.start()
            except OSError as exc:
                if host == "::1" and runner.addresses and exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
                    break
                await self.stop()
                if exc.errno == errno.EADDRINUSE:
                    raise ConsoleSetupError(f"console port {port} is already in use on {host}") from exc
                raise ConsoleSetupError(f"cannot serve the console on {host}:{port}: {exc.strerror or exc}") from exc
            port = self._port = int(runner.addresses[0][1])
        log.info("experimenter console on %s", self.url)

    async def stop(self) -> None:
        self.console.close()
        if self.console.study is not None:
            await self.console.study.stop()
        for ws in list(self._sockets):
            with contextlib.suppress(Exception):
                await ws.close(code=1001, message=b"agent shutting down")
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    # ------------------------------------------------------------------ access

    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if is_loopback(self.host) and not is_loopback(_hostname(request.host)):
            return _plain(421, "This console only answers to loopback addresses.\n")
        if self.token is not None:
            given = request.query.get("token")
            if given is not None:
                if not _same(given, self.token):
                    log.warning("console: wrong token from %s", request.remote)
                    return _plain(403, "Forbidden: wrong token.\n")
                if request.path == "/" and request.method == "GET":
                    response = web.Response(status=303, headers={**SECURITY_HEADERS, "Location": "/"})
                    response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict", path="/")
                    return response
            elif not _same(request.cookies.get(COOKIE, ""), self.token):
                return _plain(401, "Open the console once with /?token=<the console token>.\n")
        response = await handler(request)
        response.headers.update(SECURITY_HEADERS)
        return response

    # ------------------------------------------------------------------ routes

    async def _index(self, request: web.Request) -> web.Response:
        return web.Response(body=self._files["index.html"], content_type="text/html", charset="utf-8")

    async def _static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in STATIC_FILES:
            raise web.HTTPNotFound()
        return web.Response(body=self._files[name], content_type=STATIC_FILES[name], charset="utf-8")

    async def _image(self, request: web.Request) -> web.Response:
        found = await self.console.image(request.match_info["game"], request.match_info["which"])
        if found is None:
            raise web.HTTPNotFound()
        data, kind = found
        return web.Response(body=data, content_type=kind)

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc != request.host:
            log.warning("console: refused a WebSocket from origin %s", origin[:100])
            return _plain(403, "Forbidden: cross-origin.\n")
        if len(self._sockets) >= self.console.config.console.max_clients:
            return _plain(503, "Too many console pages open.\n")
        ws = web.WebSocketResponse(heartbeat=HEARTBEAT_S, max_msg_size=MAX_MESSAGE_BYTES, compress=False)
        await ws.prepare(request)
        self._sockets.add(ws)
        client = self.console.connect()
        writer = asyncio.create_task(self._write(ws, client), name=f"console-page-{client.id}")
        try:
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    await self.console.handle(client, msg.data)
                elif msg.type == WSMsgType.BINARY:
                    self.console.notice(client, "refused: text messages only")
                if client.dropped:
                    break
        finally:
            self.console.disconnect(client)
            self._sockets.discard(ws)
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await writer
            await ws.close()
        return ws

    @staticmethod
    async def _write(ws: web.WebSocketResponse, client: PageClient) -> None:
        while True:
            text = await client.queue.get()
            if text is None:  # dropped for falling behind: it reconnects and gets a snapshot
                await ws.close(code=1013, message=b"too far behind; reconnect")
                return
            await ws.send_str(text)


def _same(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8"))


def _hostname(host: str) -> str:
    """The name in a Host header, without the port (and without IPv6 brackets)."""
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _plain(status: int, text: str) -> web.Response:
    return web.Response(status=status, text=text, headers=SECURITY_HEADERS)

"""Serve a built game folder on loopback with the headers the Godot web engine needs.

Cross-origin isolation (``Cross-Origin-Opener-Policy: same-origin`` and
``Cross-Origin-Embedder-Policy: require-corp``) lets a threaded engine use SharedArrayBuffer; the
wasm goes out as ``application/wasm`` so browsers compile it while it streams. Only the files the
folder held at start are served, only to loopback host names (no DNS rebinding).
"""

from __future__ import annotations

import errno
import logging
from pathlib import Path

from aiohttp import web

from agent.core.http_log import QuietHttpLog
from agent.core.net import is_loopback

log = logging.getLogger(__name__)

DEFAULT_PORT = 8060
HOST = "127.0.0.1"
ISOLATION_HEADERS = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
}
OTHER_HEADERS = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache", "Referrer-Policy": "no-referrer"}
MIME_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".wasm": "application/wasm",
    ".pck": "application/octet-stream",
    ".json": "application/json",
    ".css": "text/css; charset=utf-8",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".ico": "image/x-icon",
    ".webmanifest": "application/manifest+json",
}
MAX_FILES = 200


class ServeError(Exception):
    """The game cannot be served; one line for the user."""


def content_type(name: str) -> str:
    for suffix, kind in MIME_TYPES.items():
        if name.lower().endswith(suffix):
            return kind
    return "application/octet-stream"


def _loopback_name(host: str) -> bool:
    name = host.rsplit(":", 1)[0] if host.count(":") == 1 or host.startswith("[") else host
    name = name.strip("[]")
    return name == "localhost" or is_loopback(name)


def make_app(folder: Path) -> web.Application:
    """The aiohttp application serving ``folder``'s files (one level, as listed now)."""
    files = {p.name: p for p in sorted(folder.iterdir()) if p.is_file() and not p.name.startswith(".")}
    if "index.html" not in files:
        raise ServeError(f"{folder} holds no index.html: not a built game")
    if len(files) > MAX_FILES:
        raise ServeError(f"{folder} holds more than {MAX_FILES} files: not a built game")

    @web.middleware
    async def headers(request: web.Request, handler: object) -> web.StreamResponse:
        if not _loopback_name(request.host):
            response: web.StreamResponse = web.Response(status=421, text="This game is served on loopback only.\n")
        else:
            response = await handler(request)  # type: ignore[operator]
        response.headers.update(ISOLATION_HEADERS)
        response.headers.update(OTHER_HEADERS)
        return response

    async def serve_file(request: web.Request) -> web.StreamResponse:
        name = request.match_info.get("name") or "index.html"
        path = files.get(name)
        if path is None:
            raise web.HTTPNotFound(text=f"{name}: no such file in this game\n")
        response = web.FileResponse(path)
        response.content_type = content_type(name).split(";")[0]
        if "charset" in content_type(name):
            response.charset = "utf-8"
        return response

    app = web.Application(middlewares=[headers])
    app.router.add_get("/", serve_file)
    app.router.add_get("/{name}", serve_file)
    return app


class GameServer:
    """The folder served on http://127.0.0.1:PORT/ until ``stop``."""

    def __init__(self, folder: Path, port: int = DEFAULT_PORT, host: str = HOST) -> None:
        if not is_loopback(host):
            raise ServeError(f"the game is served on loopback only, not on {host}")
        self.folder = folder
        self.host = host
        self.port = port
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://localhost:{self.port}/"

    async def start(self) -> None:
        app = make_app(self.folder)
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0,
                               logger=QuietHttpLog(logging.getLogger("aiohttp.server")))
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, reuse_address=True)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            if exc.errno == errno.EADDRINUSE:
                raise ServeError(f"port {self.port} is already in use on {self.host}: pick another with "
                                 "--browser-port PORT") from exc
            raise ServeError(f"cannot serve the game on {self.host}:{self.port}: {exc.strerror or exc}") from exc
        self._runner = runner
        self.port = int(runner.addresses[0][1])
        log.info("serving the game from %s on %s", self.folder, self.url)

    async def stop(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

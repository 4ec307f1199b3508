"""``python -m agent --browser-game DIR``: build or find the real game, serve it, point a browser at it.

The flags are checked before anything listens (``check_arguments``: one line for a folder that is
no GAIPS clone, a template of another engine version or with files missing); ``start`` builds in a
worker thread (the event loop keeps running), serves on loopback (one line for a port in use) and
``announce`` prints the address once the agent listens, opening a browser where there is one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
import webbrowser
from dataclasses import dataclass
from pathlib import Path

from agent.games.tangram.webgame.build import BuildError, BuiltGame, build_game, plan_build
from agent.games.tangram.webgame.serve import DEFAULT_PORT, GameServer, ServeError

log = logging.getLogger(__name__)

GAME_DIALS_PORT = 5000
"""The real game's socket address is fixed at ws://localhost:5000."""
CONSOLE_BROWSERS = {"lynx", "w3m", "links", "elinks", "www-browser", "browsh"}
"""Browsers that would take over the terminal the agent logs to: never opened."""


class BrowserGameError(Exception):
    """The browser game cannot start; one line for the user."""


@dataclass(frozen=True)
class BrowserGameRequest:
    gaips: Path
    template: Path | None
    port: int
    open_browser: bool


def add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--browser-game", type=Path, metavar="DIR",
                       help="also serve the real GAIPS game from DIR (a clone or its git mirror) for your browser; "
                            "see docs/browser-game.md")
    group.add_argument("--godot-web", type=Path, metavar="TEMPLATE",
                       help="Godot 4 web export template to build the game with when DIR has no complete web build "
                            "(a folder with index.js + index.wasm, the export templates .tpz, or the npm package)")
    group.add_argument("--browser-port", type=_port, metavar="PORT",
                       help=f"port of the game's page on 127.0.0.1 (default {DEFAULT_PORT})")
    group.add_argument("--no-browser", action="store_true", help="with --browser-game: print the address only")


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0-65535)")
    return port


def request_from(args: argparse.Namespace) -> BrowserGameRequest | None:
    """The browser game the flags ask for, or None; BrowserGameError for flags that need --browser-game."""
    gaips = getattr(args, "browser_game", None)
    if gaips is None:
        for flag, value in (("--godot-web", getattr(args, "godot_web", None)),
                            ("--browser-port", getattr(args, "browser_port", None))):
            if value is not None:
                raise BrowserGameError(f"{flag} needs --browser-game DIR")
        return None
    port = getattr(args, "browser_port", None)
    return BrowserGameRequest(gaips.expanduser(), _expand(getattr(args, "godot_web", None)),
                              DEFAULT_PORT if port is None else port, not getattr(args, "no_browser", False))


def _expand(path: Path | None) -> Path | None:
    return None if path is None else path.expanduser()


def check_arguments(args: argparse.Namespace) -> None:
    """The cheap checks of the flags (no build): BrowserGameError with one line."""
    request = request_from(args)
    if request is not None:
        try:
            plan_build(request.gaips, request.template)
        except BuildError as exc:
            raise BrowserGameError(str(exc)) from exc


class BrowserGame:
    """The built game and its server, from ``start`` to ``stop``."""

    def __init__(self, request: BrowserGameRequest, built: BuiltGame, server: GameServer) -> None:
        self.request = request
        self.built = built
        self.server = server

    @property
    def url(self) -> str:
        return self.server.url

    def announce(self, agent_port: int) -> None:
        """Say where the game is (and what stands in for missing parts); open a browser where one is."""
        for warning in self.built.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        dials = "it dials this agent"
        if agent_port != GAME_DIALS_PORT:
            print(f"warning: the game dials ws://localhost:{GAME_DIALS_PORT}, but this agent listens on port "
                  f"{agent_port}: the game will not find it", file=sys.stderr)
            dials = f"it dials ws://localhost:{GAME_DIALS_PORT}"
        print(f"Real game ({self.built.kind}, Godot {self.built.engine}): {self.url} - open it in a browser "
              f"with WebGL 2; {dials}.", file=sys.stderr, flush=True)
        if self.request.open_browser:
            asyncio.get_running_loop().run_in_executor(None, open_browser, self.url)

    async def stop(self) -> None:
        await self.server.stop()


def open_browser(url: str) -> bool:
    """Open ``url`` in a graphical browser if there is one; never raises, never a terminal browser."""
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return False
    with contextlib.suppress(Exception):
        controller = webbrowser.get()
        if getattr(controller, "name", "") in CONSOLE_BROWSERS:
            return False
        return bool(controller.open(url, new=2))
    return False


async def start(request: BrowserGameRequest) -> BrowserGame:
    """Build (in a worker thread) or reuse the game, then serve it; BrowserGameError with one line."""
    try:
        built = await asyncio.to_thread(build_game, request.gaips, request.template)
    except BuildError as exc:
        raise BrowserGameError(str(exc)) from exc
    except OSError as exc:
        raise BrowserGameError(f"cannot build the game: {exc}") from exc
    for note in built.notes:
        log.info("browser game: %s", note)
    server = GameServer(built.folder, request.port)
    try:
        await server.start()
    except ServeError as exc:
        raise BrowserGameError(str(exc)) from exc
    return BrowserGame(request, built, server)

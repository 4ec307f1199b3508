"""The WebSocket server the game dials: limits, access control, one session per connection.

The game is the client and reconnects whenever the socket closes, so the server must outlive
every session, and a new connection must get a fresh session with nothing carried over.

Security: loopback only unless ``server.allow_remote``; an optional shared token (``?token=``)
checked in constant time before the WebSocket handshake; known secrets (API key, token) masked
in everything the websockets library logs, since it logs request paths (``?token=`` included).

Limits: at most ``server.max_connections`` WebSocket connections (lowered at start to fit the
process's open-files limit, whose soft value is first raised to the hard one). A connection costs
only its socket until its first frame: the session and its transcript are made then. When the
server is full, a newcomer takes the place of the oldest connection that has not sent a frame yet
(idle sockets cannot lock the game out; one let in less than a second ago keeps its place); when
there is none, the newcomer gets HTTP 503 with ``Retry-After``, never a reset. Sockets still in their opening
handshake wait in a room sized from the spare open files (up to 1,024, so a burst of games is
served, not reset); when the room is full, a newcomer takes the place of the oldest of them (a
silent or half-sent handshake cannot keep the game out either). Resource errors are logged once
per interval, whoever logs them.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hmac
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from agent.core.images import ImagePool
from agent.core.limits import ResourceErrorFilter, Throttle, open_files_limit, raise_open_files_limit
from agent.core.net import is_loopback, listen_hosts
from agent.core.redact import MaskingLogger, Secrets
from agent.core.studies.metadata import study_metadata
from agent.core.transcript import Transcript
from agent.games.tangram.config import Config
from agent.games.tangram.link.factory import PlayerFactory, PlayerSource, make_player_factory
from agent.games.tangram.link.lifecycle import Binding, Fixed, Seat, SessionHost
from agent.games.tangram.link.session import Session
from agent.games.tangram.link.study import StudyLink
from agent.games.tangram.pictures.repaint import warm_panels
from agent.games.tangram.turn.lines import turn_lines
from agent.games.tangram.turn.thinking import thinking_lines

log = logging.getLogger(__name__)

TOO_BIG = 1009
"""WebSocket close code for a message over the size limit."""
KEPT_TRANSCRIPT_PATHS = 1000
"""Paths remembered for transcript_paths(); a study day of reconnects must not grow memory."""
REJECTION_LOG_EVERY_S = 60.0
"""A rejected client is logged once, then summed up at most this often: the Godot game re-dials
every frame while its socket is closed, so each would otherwise be dozens of lines a second."""
TOKEN_NOTE = ("server.token is set, but the Tangram game dials the fixed ws://localhost:5000 with no "
              "query string, so the Godot game cannot connect to this agent; the token is only for other "
              "clients (the simulator, a proxy). Remove it to play with the game.")


HANDSHAKE_SLOTS = 16
"""Open files always kept for sockets in their opening handshake, however low the limit."""
MAX_HANDSHAKES = 1024
"""Sockets in their opening handshake at once, at most, when open files allow: beyond the room,
a newcomer takes the oldest one's place (a flood of bare TCP connects must not use up the file
descriptors before websockets' 10 s handshake time-out)."""
IDLE_GRACE_S = 1.0
"""A connection that has not sent a frame yet gives way to a newcomer only after this long: in a
burst beyond the cap, games just let in keep their places and the newcomers get 503."""
RETRY_AFTER_S = 2
"""``Retry-After`` of the 503 a client gets when every place is a game that has spoken."""
FD_RESERVE = 64
"""Open files kept for the process itself: Python, logs, the LLM client's TLS store, image threads."""
FD_PER_GAME = 2
"""A game's socket and its transcript."""
FULL_CLOSE = 1013
"""WebSocket close code "try again later", sent to an idle connection a newcomer replaces."""
LIMIT_LOG_EVERY_S = 10.0
_LIMIT_LOGGERS = ("asyncio", "websockets.server", __name__, "agent.core.transcript")
"""Loggers whose resource-error lines are throttled while the server runs (asyncio logs each
failed accept() with a traceback)."""


class ServerSetupError(Exception):
    """The server cannot start; one line for the user."""


@dataclass
class AgentServer:
    config: Config
    player_factory: PlayerSource
    secrets: Secrets = field(default_factory=Secrets)
    _servers: list[Server] = field(default_factory=list)
    _transcripts: deque[Path] = field(default_factory=lambda: deque(maxlen=KEPT_TRANSCRIPT_PATHS))
    study: dict[str, Any] = field(default_factory=dict)
    """What every session_start records about this run (version, hashes, tags); filled by start()."""
    _rejected: int = 0
    """Clients refused for the token since the last log line about it."""
    _rejection_logged_at: float | None = None
    _warming: asyncio.Future[None] | None = None
    """The empty panels being drawn ahead for ``images.source: redrawn`` (start())."""
    max_connections: int = 0
    """The connection cap in force (server.max_connections, or less to fit the open-files limit)."""
    _admitted: set[ServerConnection] = field(default_factory=set)
    """Connections let in (from their handshake until their socket closes)."""
    _idle: dict[ServerConnection, float] = field(default_factory=dict)
    """Connections that have not sent a frame yet, oldest first: the first to give way."""
    _sockets: int = 0
    """Sockets open (handshaking or not)."""
    max_sockets: int = 0
    """Sockets allowed at once: the connections plus the handshake room; set by start()."""
    _handshaking: dict[ServerConnection, float] = field(default_factory=dict)
    """Sockets whose opening request has not arrived yet, oldest first: the first to give way."""
    _closers: set[asyncio.Task[None]] = field(default_factory=set)
    _full_log: Throttle = field(default_factory=lambda: Throttle(LIMIT_LOG_EVERY_S))
    _resource_filter: ResourceErrorFilter = field(default_factory=lambda: ResourceErrorFilter(LIMIT_LOG_EVERY_S))
    study_link: StudyLink | None = None
    """Serving a study: each connection's session is made from the condition its first frame is
    bound to (link/study.py), not from ``config`` and ``player_factory``."""
    host: SessionHost = field(init=False)
    """The sessions and the lifecycle each connection goes through (link/lifecycle.py)."""
    seat: Seat = field(init=False)
    """``config`` and ``player_factory`` as every session of a plain run plays them."""

    def __post_init__(self) -> None:
        factory = self.player_factory if isinstance(self.player_factory, PlayerFactory) else None
        # The turn's own lines (turn_lines.j2) and its "thinking" line are rendered once for every session.
        self.seat = Seat("", self.config, factory, self.player_factory, {}, thinking_lines(self.config),
                         turn_lines(self.config))
        self.host = SessionHost(self.secrets, on_transcript=self._transcripts.append)

    @property
    def sessions(self) -> set[Session]:
        return self.host.sessions

    @property
    def images(self) -> ImagePool | None:
        """The image decoding threads every session shares; made by start()."""
        return self.host.images

    @property
    def port(self) -> int:
        for server in self._servers:
            for sock in server.sockets:
                return int(sock.getsockname()[1])
        raise RuntimeError("server is not listening")

    @property
    def url(self) -> str:
        host = self.config.server.host
        host = "127.0.0.1" if host == "localhost" else host
        host = f"[{host}]" if ":" in host else host
        return f"ws://{host}:{self.port}"

    def transcript_paths(self) -> list[Path]:
        return list(self._transcripts)

    async def start(self) -> None:
        cfg = self.config.server
        if cfg.token:
            log.warning(TOKEN_NOTE)
        # Once per server: it reads every template file to hash it.
        self.study = await asyncio.to_thread(study_metadata, self.config, self.config.prompts_dir)
        if not is_loopback(cfg.host):
            if not cfg.allow_remote:
                raise ServerSetupError(
                    f"refusing to listen on {cfg.host}: only loopback is allowed unless server.allow_remote is true")
            log.warning("listening on %s: other machines can reach this agent%s", cfg.host,
                        "" if cfg.token else " (no token set: anyone on the network can connect)")
        raised = raise_open_files_limit()
        if raised is not None and raised[1] != raised[0]:
            log.info("open-files limit raised from %d to %d (the hard limit)", raised[0], raised[1])
        self.max_connections, self.max_sockets = self._fit_connections()
        self.host.images = images = ImagePool(self.config.images.decode_workers)
        if self.config.images.source == "redrawn":
            # The empty panels at the model's sizes, drawn in the pool before any game's picture.
            self._warming = asyncio.ensure_future(images.run(warm_panels, self.config.images))
            self._warming.add_done_callback(_warmed)
        for name in _LIMIT_LOGGERS:
            logging.getLogger(name).addFilter(self._resource_filter)
        port = cfg.port
        for host in listen_hosts(cfg.host):
            try:
                server = await serve(
                    self._handle, host, port, max_size=cfg.max_frame_bytes, max_queue=16,
                    process_request=self._check_request, ping_interval=cfg.ping_interval,
                    ping_timeout=cfg.ping_interval, compression=None, create_connection=self._counted(),
                    logger=MaskingLogger(logging.getLogger("websockets.server"), self.secrets))
            except OSError as exc:
                if host == "::1" and self._servers and exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
                    log.info("IPv6 loopback unavailable; listening on IPv4 only")
                    break
                await self.stop()
                if exc.errno == errno.EADDRINUSE:
                    raise ServerSetupError(
                        f"port {port} is already in use on {host} (is another agent running?)") from exc
                raise ServerSetupError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
            self._servers.append(server)
            port = self.port  # port 0: the second family takes the port the first one got
        log.info("listening on %s (max frame %d bytes, at most %d connections)", ", ".join(
            f"{h}:{self.port}" for h in listen_hosts(cfg.host)[: len(self._servers)]), cfg.max_frame_bytes,
            self.max_connections)

    def _fit_connections(self) -> tuple[int, int]:
        """server.max_connections, lowered if the process cannot open enough files for that many,
        and the sockets allowed at once (those connections and the handshake room)."""
        wanted = self.config.server.max_connections
        limit = open_files_limit()
        if limit is None:
            return wanted, wanted + MAX_HANDSHAKES
        spare = limit - FD_RESERVE - HANDSHAKE_SLOTS - self.config.llm.max_in_flight
        fits = max(1, spare // FD_PER_GAME)
        if fits < wanted:
            log.warning("server.max_connections lowered from %d to %d to fit the open-files limit of %d "
                        "(raise it with ulimit -n)", wanted, fits, limit)
            wanted = fits
        room = limit - FD_RESERVE - self.config.llm.max_in_flight - wanted * FD_PER_GAME
        return wanted, wanted + max(HANDSHAKE_SLOTS, min(MAX_HANDSHAKES, room))

    def _counted(self) -> type[ServerConnection]:
        """A ServerConnection that counts open sockets and resets those beyond the cap at once."""
        server = self

        class CountedConnection(ServerConnection):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                super().connection_made(transport)
                server._sockets += 1
                server._handshaking[self] = time.monotonic()
                if server._sockets > server.max_sockets:
                    server._displace_handshake(self)

            def connection_lost(self, exc: Exception | None) -> None:
                server._sockets -= 1
                server._handshaking.pop(self, None)
                server._admitted.discard(self)
                server._idle.pop(self, None)
                super().connection_lost(exc)

        return CountedConnection

    def _displace_handshake(self, newcomer: ServerConnection) -> None:
        """The socket room is full: the oldest socket whose opening request has not arrived gives
        way to ``newcomer`` (it is aborted, so its descriptor is free now, not after the handshake
        time-out). Only when there is none does the newcomer itself go."""
        oldest = next((c for c in self._handshaking if c is not newcomer), newcomer)
        since = self._handshaking.pop(oldest, time.monotonic())
        self._log_full("%d sockets open: %s, still in its opening handshake after %.1f s, replaced by %s",
                       self._sockets, _peer(oldest), time.monotonic() - since, _peer(newcomer))
        transport = oldest.transport
        if isinstance(transport, asyncio.Transport):
            transport.abort()
        else:
            transport.close()

    def _check_request(self, connection: ServerConnection, request: Request) -> Response | None:
        self._handshaking.pop(connection, None)  # its request is here: no longer a silent socket
        token = self.config.server.token
        if token is not None:
            given = parse_qs(urlsplit(request.path).query).get("token", [""])[0]
            if not hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8")):
                self._log_rejection(_peer(connection))
                return connection.respond(HTTPStatus.FORBIDDEN, "Forbidden: missing or wrong token\n")
        return self._admit(connection)

    def _admit(self, connection: ServerConnection) -> Response | None:
        """Make room for a newcomer, or refuse it with 503 when every place is taken by a game.

        Counted here, at the handshake, so that many handshakes at once cannot all slip in."""
        if len(self._admitted) >= self.max_connections and not self._make_room(connection):
            self._log_full("server full (%d games connected): refused %s with HTTP 503 (server.max_connections)",
                           len(self._admitted), _peer(connection))
            response = connection.respond(HTTPStatus.SERVICE_UNAVAILABLE,
                                          f"Service Unavailable: the agent serves {self.max_connections} games "
                                          f"already; try again in {RETRY_AFTER_S} s\n")
            response.headers["Retry-After"] = str(RETRY_AFTER_S)
            return response
        self._admitted.add(connection)
        self._idle[connection] = time.monotonic()
        return None

    def _make_room(self, connection: ServerConnection) -> bool:
        """Close the oldest connection that has not sent a frame for IDLE_GRACE_S since its
        handshake; False if there is none (a game of a burst has time for its first frame)."""
        oldest = next(iter(self._idle), None)
        if oldest is not None and time.monotonic() - self._idle[oldest] >= IDLE_GRACE_S:
            del self._idle[oldest]  # never chosen twice
            self._admitted.discard(oldest)  # its place is the newcomer's now
            self._log_full("server full (%d connections): %s, which never sent a frame, replaced by %s",
                           self.max_connections, _peer(oldest), _peer(connection))
            # The close frame goes out, but nobody waits for an idle peer's answer: its descriptor
            # is freed now, or a flood of newcomers would fill the handshake slots with closings.
            oldest.close_timeout = 0
            closer = asyncio.create_task(oldest.close(FULL_CLOSE, "server full; replaced by a newer connection"))
            self._closers.add(closer)
            closer.add_done_callback(self._closers.discard)
            return True
        return False

    def _log_full(self, message: str, *args: object) -> None:
        now, held = self._full_log.ready()
        if now:
            log.warning(message + (f" ({held} more such events not logged)" if held else ""), *args)

    def _log_rejection(self, peer: str) -> None:
        now = time.monotonic()
        if self._rejection_logged_at is None:
            log.warning("rejected a client without the right token from %s (the Godot game never sends one "
                        "and keeps re-dialling; further rejections are summed up every %.0f s)",
                        peer, REJECTION_LOG_EVERY_S)
            self._rejection_logged_at = now
            return
        self._rejected += 1
        if now - self._rejection_logged_at >= REJECTION_LOG_EVERY_S:
            log.warning("rejected %d more clients without the right token in the last %.0f s (latest from %s)",
                        self._rejected, now - self._rejection_logged_at, peer)
            self._rejected = 0
            self._rejection_logged_at = now

    async def _handle(self, connection: ServerConnection) -> None:
        """One connection: its first frame, then the lifecycle (link/lifecycle.py) with this server's
        binder: the one config, or the study's current participant (waiting while nobody is active)."""
        peer = _peer(connection)
        limit = self.config.server.max_frame_bytes
        try:
            if self.study_link is None:
                # The session exists from the connection on (the console shows the game); its
                # transcript file is made at the first frame: an idle socket holds one descriptor only.
                frames = _Frames(connection, limit, peer, "disconnected", on_first=self._spoke)
                await self.host.serve(Binding.of(self.seat, metadata=self.study), Fixed(), connection, frames, peer)
                return
            try:
                first = await connection.recv()
            finally:
                self._spoke(connection)
            binding, first = await self._bind(connection, self.study_link, first, peer)
            if binding is not None:  # None: the agent is stopping
                frames = _Frames(connection, limit, peer, "game closed the connection", first=first)
                await self.host.serve(binding, self.study_link, connection, frames, peer)
        except ConnectionClosed as exc:  # before its first frame, or while it waited for a participant
            log.debug("connection from %s closed before its game started (%s)", peer, _closed_reason(exc, limit, peer))
        finally:
            self._admitted.discard(connection)
            self._idle.pop(connection, None)

    def _spoke(self, connection: ServerConnection) -> None:
        """The connection sent its first frame (or closed): it no longer gives way to a newcomer."""
        self._idle.pop(connection, None)

    async def _bind(self, connection: ServerConnection, link: StudyLink, raw: str | bytes,
                    peer: str) -> tuple[Binding | None, str | bytes]:
        """The connection's game, and the frame it starts with. While nobody is active, each frame
        is answered (a chat line; ``finish`` for a ``playRequest``) and the next one asks again."""
        # The frames are answered by a session of their own (its turns end with finish as every turn
        # does), whose player passes with the waiting line and whose transcript is written nowhere.
        waiting = self.host.session(link.waiting(self.seat), connection, Transcript.unwritten(), peer)
        try:
            while not self.host.stopping:
                bound = await link.bind()
                if bound is not None:
                    await waiting.quiet()  # its turn ended and its chats answered before the game's session starts
                    return bound, raw
                if waiting.stats["turns"] + waiting.stats["chats"] == 0:
                    log.warning("game from %s is waiting: study %s has no active participant (start one from the "
                                "console or with python -m agent study next ID --study FILE)", peer,
                                link.run.study.name)
                await waiting.handle_raw(raw)
                raw = await connection.recv()
            return None, raw
        finally:
            await waiting.close("waiting ended")

    async def shutdown(self) -> None:
        """Polite stop: end running turns with finish, close sockets with 1001, flush transcripts."""
        self.host.stopping = True
        for server in self._servers:
            # Stop taking new games but keep the open sockets up to say goodbye. (Not
            # Server.close(close_connections=False): close() only acts once, so the 1001 close in
            # stop() would never happen and the server would wait for the game to hang up.)
            server.server.close()
        await self.host.shutdown()
        await self.stop()

    async def stop(self) -> None:
        servers, self._servers = self._servers, []
        for server in servers:
            server.close()
        # websockets closes open connections itself, but waits for a socket still in its handshake (one
        # that connected and sent no or half a request) until open_timeout: 10 s of a stopping agent.
        for connection in list(self._handshaking):
            connection.transport.abort()
        for server in servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        for name in _LIMIT_LOGGERS:
            logging.getLogger(name).removeFilter(self._resource_filter)
        if self.host.images is not None:
            self.host.images.close()
            self.host.images = None


def _warmed(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("the empty panels could not be drawn ahead (%s); the first pictures will draw them",
                    task.exception())


class _Frames:
    """A websockets connection's frames (the first one read already, or read by :meth:`ready`), and
    why they ended."""

    def __init__(self, connection: ServerConnection, max_frame: int, peer: str, reason: str, *,
                 first: str | bytes | None = None,
                 on_first: Callable[[ServerConnection], None] | None = None) -> None:
        self._first = first
        self._connection = connection
        self._max_frame = max_frame
        self._peer = peer
        self._on_first = on_first
        self.reason = reason
        """What a close the game made cleanly is called; a close with an error says its code."""

    async def ready(self) -> bool:
        if self._first is not None:
            return True
        try:
            self._first = await self._connection.recv()
        except ConnectionClosed as exc:
            self.reason = _closed_reason(exc, self._max_frame, self._peer)
            return False
        finally:
            if self._on_first is not None:
                self._on_first(self._connection)
        return True

    async def __aiter__(self) -> AsyncIterator[str | bytes]:
        assert self._first is not None, "ready() first"
        yield self._first
        try:
            async for raw in self._connection:
                yield raw
        except ConnectionClosed as exc:
            self.reason = _closed_reason(exc, self._max_frame, self._peer)


def _closed_reason(exc: ConnectionClosed, max_frame: int, peer: str) -> str:
    if exc.sent is not None and exc.sent.code == TOO_BIG:
        # websockets refused the frame from its header, before reading it into memory.
        log.warning("%s sent a frame over the %d-byte limit; connection closed with 1009 "
                    "(raise server.max_frame_bytes if this was the game)", peer, max_frame)
        return "frame too large"
    return f"connection closed ({exc.rcvd.code if exc.rcvd else 'no close frame'})"


def _peer(connection: ServerConnection) -> str:
    addr = connection.remote_address
    return f"{addr[0]}:{addr[1]}" if addr else "?"


@contextlib.asynccontextmanager
async def serve_agent(config: Config, host: str | None = None, port: int | None = None,
                      player_factory: PlayerSource | None = None) -> AsyncIterator[AgentServer]:
    """Run the agent server for the duration of the block (tests, the simulator, embedding)."""
    server_cfg = config.server.model_copy(update={k: v for k, v in (("host", host), ("port", port)) if v is not None})
    config = config.model_copy(update={"server": server_cfg})
    secrets = Secrets(config.secret_values())
    own_factory = None
    if player_factory is None:
        own_factory = player_factory = make_player_factory(config)
    server = AgentServer(config, player_factory, secrets)
    try:
        await server.start()
        if own_factory is not None:
            own_factory.prime_soon()
        yield server
    finally:
        await server.shutdown()
        if own_factory is not None:
            await own_factory.aclose()

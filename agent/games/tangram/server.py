"""The WebSocket server the game dials: limits, access control, one session per connection.

The game is the client and reconnects whenever the socket closes, so the server must outlive
every session, and a new connection must get a fresh session with nothing carried over.

Security: loopback only unless ``server.allow_remote``; an optional shared token (``?token=``)
checked in constant time before the WebSocket handshake; known secrets (API key, token) masked
in everything the websockets library logs, since it logs request paths (``?token=`` included).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hmac
import logging
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from agent.core.net import is_loopback, listen_hosts
from agent.core.redact import MaskingLogger, Secrets
from agent.core.study import study_metadata
from agent.core.transcript import Transcript
from agent.games.tangram.config import Config
from agent.games.tangram.factory import PlayerSource, make_player_factory
from agent.games.tangram.session import Session

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


class ServerSetupError(Exception):
    """The server cannot start; one line for the user."""


@dataclass
class AgentServer:
    config: Config
    player_factory: PlayerSource
    secrets: Secrets = field(default_factory=Secrets)
    sessions: set[Session] = field(default_factory=set)
    _servers: list[Server] = field(default_factory=list)
    _transcripts: deque[Path] = field(default_factory=lambda: deque(maxlen=KEPT_TRANSCRIPT_PATHS))
    study: dict[str, Any] = field(default_factory=dict)
    """What every session_start records about this run (version, hashes, tags); filled by start()."""
    _rejected: int = 0
    """Clients refused for the token since the last log line about it."""
    _rejection_logged_at: float | None = None

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
        port = cfg.port
        for host in listen_hosts(cfg.host):
            try:
                server = await serve(
                    self._handle, host, port, max_size=cfg.max_frame_bytes, max_queue=16,
                    process_request=self._check_request, ping_interval=cfg.ping_interval,
                    ping_timeout=cfg.ping_interval, compression=None,
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
        log.info("listening on %s (max frame %d bytes)", ", ".join(
            f"{h}:{self.port}" for h in listen_hosts(cfg.host)[: len(self._servers)]), cfg.max_frame_bytes)

    def _check_request(self, connection: ServerConnection, request: Request) -> Response | None:
        token = self.config.server.token
        if token is None:
            return None
        given = parse_qs(urlsplit(request.path).query).get("token", [""])[0]
        if not hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8")):
            self._log_rejection(_peer(connection))
            return connection.respond(HTTPStatus.FORBIDDEN, "Forbidden: missing or wrong token\n")
        return None

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
        peer = _peer(connection)
        transcript = Transcript(self.config.transcripts.dir if self.config.transcripts.enabled else None,
                                secrets=self.secrets, tags=self.config.tags)
        try:
            await transcript.open()
        except OSError as exc:  # an unwritable folder must not cost the study its game
            log.error("cannot write the transcript %s (%s); this session runs without one",
                      transcript.path, exc.strerror or exc)
            transcript = Transcript(None, transcript.session_id, secrets=self.secrets)
        if transcript.path is not None:
            self._transcripts.append(transcript.path)
        session = Session(self.config, connection, self.player_factory(transcript), transcript, peer=peer,
                          study=self.study)
        self.sessions.add(session)
        log.info("game connected from %s (session %s)", peer, transcript.session_id)
        reason = "disconnected"
        try:
            await session.run(connection)
        except ConnectionClosed as exc:
            if exc.sent is not None and exc.sent.code == TOO_BIG:
                # websockets refused the frame from its header, before reading it into memory.
                log.warning("%s sent a frame over the %d-byte limit; connection closed with 1009 "
                            "(raise server.max_frame_bytes if this was the game)", peer,
                            self.config.server.max_frame_bytes)
                reason = "frame too large"
            else:
                reason = f"connection closed ({exc.rcvd.code if exc.rcvd else 'no close frame'})"
        except Exception:  # never let one session take the server down
            log.exception("session %s failed", transcript.session_id)
            reason = "internal error"
        finally:
            await session.close(reason)
            self.sessions.discard(session)
            log.info("game from %s left (session %s: %s)", peer, transcript.session_id, reason)

    async def shutdown(self) -> None:
        """Polite stop: end running turns with finish, close sockets with 1001, flush transcripts."""
        for server in self._servers:
            # Stop taking new games but keep the open sockets up to say goodbye. (Not
            # Server.close(close_connections=False): close() only acts once, so the 1001 close in
            # stop() would never happen and the server would wait for the game to hang up.)
            server.server.close()
        await asyncio.gather(*(s.close("server shutdown", polite=True) for s in list(self.sessions)),
                             return_exceptions=True)
        await self.stop()

    async def stop(self) -> None:
        servers, self._servers = self._servers, []
        for server in servers:
            server.close()
        for server in servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()


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
        yield server
    finally:
        await server.shutdown()
        if own_factory is not None:
            await own_factory.aclose()

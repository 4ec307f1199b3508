"""The HTTP endpoint Forge posts decisions to (aiohttp): routing, limits, access, per-game sessions.

Routes: ``POST /`` and ``POST /decide`` take every request (``{"healthCheck": true}`` too);
``GET /`` and ``GET /health`` answer 200 for probes. Bad input never gets a 500 or a hang: a body
that is not JSON, an unknown ``requestType`` or a malformed ``actionState`` gets a 400 whose
``error`` says what is wrong; a body over ``server.max_body_bytes`` gets a 413; a missing or wrong
bearer token a 401; more than ``server.max_concurrent`` decisions at once a 503. Each ``gameId`` has
its own session (memory, transcript); games never wait for each other.

Hostile peers: a body has ``server.body_timeout_s`` to arrive whole, or the request gets 408 and
its connection is closed; a request holds a decision slot only once its body is read, so clients
that announce a body and never send it cannot keep real requests out. A client that hangs up, and
malformed HTTP (answered by aiohttp with 400), cost one log line each, at most one per 10 s
(:class:`~agent.core.http_log.QuietHttpLog`), never a traceback.
"""

from __future__ import annotations

import asyncio
import errno
import hmac
import json
import logging
import re
import time
from collections import OrderedDict
from typing import Any

from aiohttp import web
from aiohttp.client_exceptions import ClientPayloadError
from aiohttp.http_exceptions import HttpProcessingError

from agent.core.http_log import QuietHttpLog, short_reason
from agent.core.limits import Throttle
from agent.core.net import is_loopback, listen_hosts
from agent.core.redact import Secrets
from agent.core.studies.metadata import study_metadata
from agent.core.transcript import transcript_for
from agent.games.forge.config import ForgeConfig
from agent.games.forge.models import RequestError, parse_request
from agent.games.forge.player import Decider
from agent.games.forge.session import GameSession

log = logging.getLogger(__name__)
LINGER_S = 2.0
PEER_LOG_EVERY_S = 10.0
"""Slow or vanished clients are logged at most this often (a flood of them is one line)."""


class ServerSetupError(Exception):
    """The server cannot start; one line for the user."""


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


class ForgeServer:
    def __init__(self, config: ForgeConfig, decider: Decider, secrets: Secrets | None = None) -> None:
        self.config = config
        self.decider = decider
        self.secrets = secrets or Secrets(config.secret_values())
        self.sessions: OrderedDict[str, GameSession] = OrderedDict()
        self._runner: web.AppRunner | None = None
        self._port = config.server.port
        self._active = 0
        self._closing: set[asyncio.Task[None]] = set()
        self._peer_log = Throttle(PEER_LOG_EVERY_S)
        self.study: dict[str, Any] = {}
        """What every session_start records about this run (version, config and template hashes, tags)."""

    # ---- the application -------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(client_max_size=self.config.server.max_body_bytes, middlewares=[self._guard])
        app.router.add_post("/", self._post)
        app.router.add_post("/decide", self._post)
        app.router.add_get("/", self._health)
        app.router.add_get("/health", self._health)
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        token = self.config.server.token
        if token and request.method == "POST":
            given = request.headers.get("Authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
                return _error(401, "missing or wrong bearer token (send 'Authorization: Bearer <token>')")
        try:
            return await handler(request)
        except web.HTTPRequestEntityTooLarge:
            return _error(413, f"body larger than {self.config.server.max_body_bytes} bytes")
        except web.HTTPException as exc:  # 404/405 from routing: keep the JSON error form
            return _error(exc.status, exc.reason)

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok", "game": "forge", "player": self.config.player,
                                  "games": len(self.sessions)})

    async def _post(self, request: web.Request) -> web.Response:
        raw = await self._read_body(request)
        if isinstance(raw, web.Response):
            return raw
        # The slot is taken once the body is here: clients that never finish theirs hold none.
        if self._active >= self.config.server.max_concurrent:
            return _error(503, f"busy: {self._active} requests in progress")
        self._active += 1
        try:
            return await self._decide(raw)
        finally:
            self._active -= 1

    async def _read_body(self, request: web.Request) -> bytes | web.Response:
        """The whole body, or the response for a client too slow to send it (its connection is
        closed). A client that hung up gets HTTPException-free silence: nobody is there to read."""
        seconds = self.config.server.body_timeout_s
        try:
            async with asyncio.timeout(seconds):
                return await request.read()
        except TimeoutError:
            self._log_peer("dropped a request from %s: its body (%s bytes announced) did not arrive within %g s",
                           request.remote, request.content_length, seconds)
            response = _error(408, f"the request body did not arrive within {seconds:g} s")
            response.force_close()
            return response
        except (ConnectionError, ClientPayloadError, HttpProcessingError) as exc:
            self._log_peer("client %s hung up before its body arrived (%s)", request.remote,
                           short_reason(str(exc)) or type(exc).__name__)
            response = _error(400, "the request body was cut short")
            response.force_close()
            return response

    def _log_peer(self, message: str, *args: object) -> None:
        now, held = self._peer_log.ready()
        if now:
            note = f" ({held} more such events in the last {PEER_LOG_EVERY_S:.0f} s not logged)" if held else ""
            log.info(message + note, *args)

    async def _decide(self, raw: bytes) -> web.Response:
        try:
            body = json.loads(raw)
        except ValueError as exc:
            return _error(400, f"body is not JSON: {str(exc)[:120]}")
        except RecursionError:
            return _error(400, "body is nested too deeply")
        if isinstance(body, dict) and body.get("healthCheck") is True:
            return web.json_response({"status": "ok"})
        try:
            parsed = parse_request(body)
        except RequestError as exc:
            log.info("400: %s", exc)
            return _error(400, str(exc))
        if parsed.request_type == "reflect":
            await self._reflect(parsed.game_id, body)
            return web.json_response({"status": "ok"})
        session = await self._session(parsed.game_id)
        response = await session.answer(parsed, raw, self.decider)
        return web.json_response(response)

    # ---- sessions ----------------------------------------------------------------------------------

    async def _session(self, game_id: str) -> GameSession:
        session = self.sessions.get(game_id)
        if session is not None:
            self.sessions.move_to_end(game_id)
            return session
        self._expire()
        cfg = self.config
        slug = re.sub(r"[^A-Za-z0-9_.-]", "_", game_id)[:48] or "game"
        transcript = transcript_for(cfg, self.secrets, session_id=f"forge-{slug}")
        session = GameSession(game_id, transcript, cfg.decision.memory)
        self.sessions[game_id] = session  # before the await: a second request for it finds it
        await transcript.open()
        transcript.record("session_start", game_id=game_id, player=cfg.player, **self.study)
        log.info("game %s: new session", game_id)
        return session

    def _expire(self) -> None:
        now = time.monotonic()
        idle = [g for g, s in self.sessions.items() if now - s.last_seen > self.config.server.game_idle_s]
        for game_id in idle:
            self._close_later(game_id, "idle")
        while len(self.sessions) >= self.config.server.max_games:
            self._close_later(next(iter(self.sessions)), "evicted: too many games")

    def _close_later(self, game_id: str, why: str) -> None:
        session = self.sessions.pop(game_id, None)
        if session is None:
            return
        log.info("game %s: closed (%s)", game_id, why)
        task = asyncio.create_task(session.close(why))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _reflect(self, game_id: str, body: dict[str, Any]) -> None:
        session = self.sessions.pop(game_id, None)
        if session is None:
            return
        raw = body.get("context")
        context: dict[str, Any] = raw if isinstance(raw, dict) else {}
        session.transcript.record("reflect", game_id=game_id, context=context)
        await session.close("reflect", context.get("result"))
        log.info("game %s: ended after %d decisions", game_id, session.decisions)

    # ---- lifecycle -----------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._port

    async def start(self) -> None:
        cfg = self.config.server
        if not cfg.allow_remote and not is_loopback(cfg.host):
            raise ServerSetupError(f"--host {cfg.host} is not a loopback address; add --allow-remote to permit it")
        if not is_loopback(cfg.host):
            log.warning("listening on %s: anyone who can reach it can drive this agent%s", cfg.host,
                        "" if cfg.token else " (no token set)")
        # Once per server: it reads every template file to hash it.
        self.study = await asyncio.to_thread(study_metadata, self.config, self.config.prompts_dir)
        # handler_cancellation off: a client that hangs up must not cancel a decision (its retry reuses it).
        # shutdown_timeout: requests in progress at shutdown get their answers (the deadline bounds them).
        # logger: malformed HTTP and hang-ups as one line each, rate-limited, not a traceback each.
        self._runner = web.AppRunner(self.app(), access_log=None, handler_cancellation=False,
                                     shutdown_timeout=self.config.decision.deadline + 1.0,
                                     # After an early answer (408, 413) the rest of a body is read and
                                     # dropped this long, so the client sees the answer, then closed.
                                     lingering_time=LINGER_S,
                                     logger=QuietHttpLog(logging.getLogger("aiohttp.server"), PEER_LOG_EVERY_S))
        await self._runner.setup()
        hosts = listen_hosts(cfg.host)
        for n, host in enumerate(hosts):
            site = web.TCPSite(self._runner, host, self._port, reuse_address=True)
            try:
                await site.start()
            except OSError as exc:
                if n > 0 and exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
                    log.info("no IPv6 loopback here; listening on %s only", hosts[0])
                    continue
                await self._runner.cleanup()
                if exc.errno == errno.EADDRINUSE:
                    raise ServerSetupError(f"port {self._port} is already in use on {host} "
                                           "(is another agent running?)") from exc
                raise ServerSetupError(f"cannot listen on {host}:{self._port}: {exc.strerror or exc}") from exc
            server = getattr(site, "_server", None)
            sockets = getattr(server, "sockets", None) or []
            if sockets and self._port == 0:
                self._port = sockets[0].getsockname()[1]
        if self.decider.client is not None:
            from agent.games.forge.llm_sample import llm_sample

            sample = llm_sample(self.config)  # a model server primed before Forge's first decision
            self.decider.client.prime_soon(sample)

    async def shutdown(self) -> None:
        """Stop listening, let requests in progress get their answers, then close every game."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        for game_id in list(self.sessions):
            self._close_later(game_id, "server stopped")
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

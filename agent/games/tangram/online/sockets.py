"""The agent's WebSocket on the participants' origin: a game is let in by its ticket, and plays its
participant's condition.

``GET /ws?ticket=T`` is refused (HTTP 403, before the upgrade) unless ``T`` is the newest ticket of
a participant still in the study, for the game they are at (:meth:`OnlineRun.admit`). One
connection per participant: a newer one (the same page's engine re-dialling after a dropped
socket, or a server restart) takes the place of the older, which is closed with 4000; a newer
page of the same participant (a reload, a second browser on the link) has a new ticket, so the
old page's socket is closed with 4001 ("taken over") and its engine's re-dials are refused.

Each connection is one attempt of the participant's current game in the study's database,
recorded before its first frame is answered, with its ticket; every AI turn it ends with
``finish`` is counted in that row as it ends. A socket that closes leaves the game open (the engine
re-dials and continues the same game, on the same condition). The game is completed only when the
participant's page reports its end (the engine quit, or Continue after the game's Finish: app.py)
*and* the server counted enough AI turns under that ticket (:meth:`OnlineRun.finish`). Each game
plays its condition's config with the condition's own player factory (one LLM client per condition).

Spend caps (the study file's ``online.spend_cap_*``): a game whose participant or study is over a
cap when it starts is played by the offline planner; every other game's LLM calls are priced as
they are made (spend.py) into the study's running totals, and its LLM player asks those totals
before each call, so a game that crosses a cap goes on with the planner from its next call. With
the experimenter console (public.py), each game's player is supervised as in-lab and the study
panel hears of every game that starts or ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from agent.core.images import ImagePool
from agent.core.limits import Throttle
from agent.core.redact import Secrets
from agent.core.studies.online import OnlineRun, digest
from agent.core.studies.pricing import configured_price
from agent.core.studies.run import Assignment, StartedGame
from agent.core.studies.spend import GameSpend
from agent.core.studies.store import StoreError
from agent.core.transcript import Transcript
from agent.games.tangram.config import Config
from agent.games.tangram.link.factory import PlayerSource
from agent.games.tangram.link.lifecycle import Binding, Outcome, Seat, SessionHost
from agent.games.tangram.link.session import Session
from agent.games.tangram.online.guard import Client, RateLimiter

log = logging.getLogger(__name__)

REPLACED = 4000
"""Close code: the same game's newer connection took this one's place."""
TAKEN_OVER = 4001
"""Close code: the participant's newer page (reload, another browser) took the game over."""
LEFT_STUDY = 4003
"""Close code: the participant is no longer in the study (dropped, paused)."""
HEARTBEAT_S = 20.0
CHAT_MARK = '"chatRequest"'


@dataclass
class OnlineGame:
    """One connection's game, as the online binder keeps it (a binding's ``context``)."""

    assignment: Assignment
    ticket: str
    started: StartedGame | None = None


class SocketAdapter:
    """What a :class:`Session` needs of its connection (``send``), over an aiohttp WebSocket."""

    def __init__(self, ws: web.WebSocketResponse) -> None:
        self.ws = ws

    async def send(self, text: str) -> None:
        await self.ws.send_str(text)


@dataclass
class GameSockets:
    online: OnlineRun
    conditions: dict[str, Seat]
    config: Config
    """Server-wide settings (frame size, transcripts) of the study's first condition."""
    limiter: RateLimiter
    secrets: Secrets = field(default_factory=Secrets)
    images: ImagePool | None = None
    planner: Seat | None = None
    """Plays a game whose participant or study is over its spend cap (core/studies/spend.py)."""
    supervise: Callable[[PlayerSource, Config], PlayerSource] | None = None
    """The experimenter console's wrapping of a game's player source (its condition's config), if served."""
    on_change: Callable[[], None] | None = None
    """Called when a game starts or ends (the console's study panel refreshes)."""
    live: dict[str, tuple[web.WebSocketResponse, str]] = field(default_factory=dict)
    """Participant id: their connected socket and its ticket's hash."""
    host: SessionHost = field(init=False)
    """The sessions and the lifecycle each game goes through (link/lifecycle.py)."""
    _chat_log: Throttle = field(default_factory=lambda: Throttle(60.0))
    _counting: dict[str, set[asyncio.Task[None]]] = field(default_factory=dict)
    """Participant id: the AI-turn counts on their way into the database."""

    def __post_init__(self) -> None:
        self.host = SessionHost(self.secrets, self.images)

    @property
    def sessions(self) -> set[Session]:
        return self.host.sessions

    async def settle(self, participant: str) -> None:
        """Wait until every AI turn of the participant's games that has ended is counted in the
        database (what judging a claimed end reads)."""
        pending = list(self._counting.get(participant, ()))
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    def _count_turn(self, participant: str, game: OnlineGame, ended: int) -> None:
        if game.started is None:
            return
        game_id = game.started.game_id
        task = asyncio.create_task(self.online.run.store.count_ai_turns(game_id, ended), name=f"count-{game_id}")
        tasks = self._counting.setdefault(participant, set())
        tasks.add(task)

        def done(t: asyncio.Task[None]) -> None:
            tasks.discard(t)
            if not tasks:
                self._counting.pop(participant, None)
            if not t.cancelled() and t.exception() is not None:
                log.error("participant %s: an AI turn could not be counted (%s)", participant, t.exception())
        task.add_done_callback(done)

    def sockets_of(self, address: str) -> int:
        return sum(1 for s in self.sessions if s.peer == address)

    async def handle(self, request: web.Request, client: Client) -> web.StreamResponse:
        ticket = request.query.get("ticket")
        limits = self.limiter.limits
        if (len(self.sessions) >= limits.max_sockets
                or self.sockets_of(client.address) >= limits.max_sockets_per_address):
            return web.Response(status=503, text="Service Unavailable: too many games at once; try again soon\n",
                                headers={"Retry-After": "5"})
        assignment = await self.online.admit(ticket)
        if assignment is None or ticket is None:
            return web.Response(status=403, text="Forbidden: no valid game ticket\n")
        ws = web.WebSocketResponse(max_msg_size=self.config.server.max_frame_bytes, heartbeat=HEARTBEAT_S,
                                   compress=False)
        await ws.prepare(request)
        await self._take_place(assignment.participant, ws, digest(ticket))
        try:
            await self._play(ws, assignment, client, ticket)
        finally:
            if self.live.get(assignment.participant, (None, ""))[0] is ws:
                del self.live[assignment.participant]
        return ws

    async def _take_place(self, participant: str, ws: web.WebSocketResponse, ticket_digest: str) -> None:
        old = self.live.get(participant)
        self.live[participant] = (ws, ticket_digest)
        if old is not None and not old[0].closed:
            code = REPLACED if old[1] == ticket_digest else TAKEN_OVER
            log.info("participant %s: a newer %s took the game over", participant,
                     "connection of the same page" if code == REPLACED else "page")
            await old[0].close(code=code, message=b"taken over by a newer connection")

    async def _play(self, ws: web.WebSocketResponse, assignment: Assignment, client: Client, ticket: str) -> None:
        frames = _Frames(ws, self._frames(ws, client, assignment.participant))
        await self.host.serve(await self._bind(assignment, ticket), self, SocketAdapter(ws), frames, client.address)

    async def _bind(self, assignment: Assignment, ticket: str) -> Binding:
        """The ticket's game: its condition's seat, or the offline planner's when a spend cap is reached
        already (the one decision: the game's :class:`GameSpend`); tagged, metered, its turns counted."""
        seat = self.conditions[assignment.condition]
        config: Config = assignment.config  # type: ignore[assignment]  # the study's conditions are tangram's
        meter = self.online.spend
        spend = None
        notes: list[tuple[str, dict[str, Any]]] = []
        if meter.capped and config.uses_llm():
            await meter.follow(assignment.participant)
            spend = GameSpend(configured_price(config), meter.account(assignment.participant))
            capped = spend.refusal()
            if capped is not None and self.planner is not None:
                log.warning("%s: the offline planner plays game %d of participant %s (%s) instead of the LLM",
                            capped, assignment.position, assignment.participant, assignment.condition)
                config = config.model_copy(update={"player": "planner"})
                seat = dataclasses.replace(self.planner, metadata=seat.metadata, thinking=seat.thinking,
                                           lines=seat.lines)
                notes.append(("spend_cap", {"reason": capped, "player": config.player}))
                spend = None
        factory = seat.factory
        players: PlayerSource = seat.players if spend is None or factory is None else factory.capped(spend)
        if self.supervise is not None:
            players = self.supervise(players, config)
        game = OnlineGame(assignment, ticket)
        return Binding(seat, config, players, assignment.session_metadata(seat.metadata),
                       folder=self.online.run.transcripts_dir, spend=spend, notes=notes, context=game,
                       on_turn_ended=lambda ended: self._count_turn(assignment.participant, game, ended))

    async def started(self, binding: Binding, transcript: Transcript) -> bool:
        game: OnlineGame = binding.context
        a = game.assignment
        try:
            game.started = await self.online.run.game_started(a, transcript.session_id, transcript.path,
                                                              digest(game.ticket))
        except StoreError as exc:
            log.info("participant %s: game refused (%s)", a.participant, exc)
            ws = self.live.get(a.participant, (None, ""))[0]
            if ws is not None:
                await ws.close(code=LEFT_STUDY, message=b"not in the study")
            return False
        self._changed()
        return True

    async def connected(self, binding: Binding, session: Session) -> None:
        a = binding.context.assignment
        log.info("participant %s: game %d of %d (%s) connected, session %s", a.participant, a.position,
                 a.games_total, a.condition, session.transcript.session_id)

    def closing(self, binding: Binding, session: Session, outcome: Outcome) -> None:
        pass  # an online game ends when its page's claim is judged (OnlineRun.finish), not here

    async def ended(self, binding: Binding, session: Session, outcome: Outcome) -> None:
        game: OnlineGame = binding.context
        assert game.started is not None
        spend = binding.spend
        # An LLM game a cap switched to the planner mid-game is "llm+planner".
        config = binding.config
        player = "llm+planner" if config.player == "llm" and spend is not None and spend.spend_cap is not None \
            else config.player
        with contextlib.suppress(Exception):
            await self.online.run.store.set_game_spend(game.started.game_id, spend.usd if spend else 0.0, player)
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change()
            except Exception:  # the console must never cost a game its records
                log.exception("the console failed on a game's start or end")

    async def _frames(self, ws: web.WebSocketResponse, client: Client, participant: str) -> AsyncIterator[str | bytes]:
        async for message in ws:
            if message.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
                continue
            data = message.data
            if CHAT_MARK in (data if isinstance(data, str) else data.decode("utf-8", "replace")) and \
                    not self.limiter.allow("chat", client.address):
                now, held = self._chat_log.ready()
                if now:
                    log.warning("participant %s: chat lines over the limit are dropped (%d more not logged)",
                                participant, held)
                continue
            yield data

    async def close_all(self) -> None:
        """Polite stop: running turns end with finish, sockets close with 1001."""
        await self.host.shutdown()
        for ws, _ in list(self.live.values()):
            with contextlib.suppress(Exception):
                await ws.close(code=1001, message=b"server shutdown")


class _Frames:
    """An aiohttp WebSocket's frames (chat lines over the limit dropped), and why they ended."""

    def __init__(self, ws: web.WebSocketResponse, frames: AsyncIterator[str | bytes]) -> None:
        self._ws = ws
        self._frames = frames
        self.reason = "disconnected"

    async def ready(self) -> bool:
        return True  # the ticket bound the game: its session starts now

    async def __aiter__(self) -> AsyncIterator[str | bytes]:
        async for data in self._frames:
            yield data
        self.reason = f"connection closed ({self._ws.close_code})"

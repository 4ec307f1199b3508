"""The reference engine: a WebSocket server hosting matches of the known games, with built-in bots.

Thin transport over :class:`~agent.games.boardgame.engine.match.Match`: each frame is parsed
(:func:`parse_client_frame`), turned into a call, and answered on the same connection; what
happens in a match is pushed as ``push_event`` frames to every connection of every seated agent.

Conventions the protocol leaves open (docs/boardgame.md):

* ``create_match`` ``settings.data`` may hold ``bot`` ("random" | "strong" | "none": who takes the
  other seat, default the engine's ``--bot``), ``seat`` (1 or 2: the creator's seat, default 1 =
  moves first) and ``name`` (the creator's display name).
* an agent joins a waiting match by asking ``get_state`` of it; anyone may read any match's state.
* rule refusals come back as ``perform_action_response`` with status ``error`` and a message
  saying what is legal; malformed frames and impossible requests as ``error`` frames.
* an agent that does not act within ``turn_timeout`` loses the match; a match whose agents are all
  gone for ``reconnect_grace`` seconds is abandoned.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed

from agent.games.boardgame.engine.match import Event, Match, MatchError, Seat
from agent.games.boardgame.players.base import MovePlayer
from agent.games.boardgame.players.offline import make_offline
from agent.games.boardgame.protocol import (
    MAX_FRAME_BYTES,
    MAX_MATCHES_LISTED,
    ActionResponse,
    CreateMatch,
    CreateMatchResponse,
    ErrorBody,
    ErrorMessage,
    GetMatches,
    GetMatchesResponse,
    GetState,
    Payload,
    PerformAction,
    PerformActionResponse,
    ProtocolError,
    PushEvent,
    check_agent_id,
    dump,
    parse_client_frame,
)
from agent.games.boardgame.rules.base import RuleError
from agent.games.boardgame.rules.registry import GAMES, get_rules

log = logging.getLogger(__name__)

BOT_KINDS = ("random", "strong", "none")
_SETTINGS_KEYS = {"bot", "seat", "name"}


@dataclass(frozen=True)
class EngineSettings:
    games: tuple[str, ...] = ("tictactoe",)
    bot: str = "strong"
    """Who takes the free seat of a match an agent creates, unless its settings say otherwise."""
    turn_timeout: float | None = 300.0
    reconnect_grace: float = 60.0
    max_matches: int = 1_000
    max_connections: int = 256
    max_agents_per_connection: int = 8
    bot_delay: float = 0.0
    """Seconds a bot waits before moving (lets people watch)."""
    bot_search_seconds: float = 1.0
    seed: int | None = None

    def __post_init__(self) -> None:
        for game in self.games:
            get_rules(game)  # KeyError naming the known games
        if self.bot not in BOT_KINDS:
            raise ValueError(f"bot must be one of {', '.join(BOT_KINDS)}, not {self.bot!r}")


def now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


@dataclass
class _Runtime:
    """What the server keeps per match besides the pure Match: bots, timers."""

    match: Match
    bots: dict[str, MovePlayer] = field(default_factory=dict)
    bot_task: asyncio.Task[None] | None = None
    turn_timer: asyncio.TimerHandle | None = None
    abandon_timer: asyncio.TimerHandle | None = None


class Engine:
    """All matches of one server. One instance per server; connections are handled concurrently."""

    def __init__(self, settings: EngineSettings) -> None:
        self.settings = settings
        self._rng = random.Random(settings.seed)
        self._matches: dict[str, _Runtime] = {}
        self._connections: dict[str, set[ServerConnection]] = defaultdict(set)
        self._open: set[ServerConnection] = set()
        self._server: Server | None = None
        self.frames_sent = 0

    # ---- lifecycle ------------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 8765) -> int:
        """Listen; returns the port (useful with port 0)."""
        self._server = await serve(self._handle, host, port, max_size=MAX_FRAME_BYTES, max_queue=16)
        sockets = list(self._server.sockets)
        return int(sockets[0].getsockname()[1])

    async def close(self) -> None:
        for runtime in self._matches.values():
            self._stop_timers(runtime)
            if runtime.bot_task is not None:
                runtime.bot_task.cancel()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def match_ids(self) -> list[str]:
        """The matches held, oldest first."""
        return list(self._matches)

    def match(self, match_id: str) -> Match | None:
        runtime = self._matches.get(match_id)
        return runtime.match if runtime else None

    def drop_connections(self) -> None:
        """Close every client connection (tests use it to check reconnection)."""
        for connection in list(self._open):
            connection.transport.abort()

    # ---- one connection -------------------------------------------------------------------------

    async def _handle(self, connection: ServerConnection) -> None:
        if len(self._open) >= self.settings.max_connections:
            await connection.close(1013, "too many connections")
            return
        self._open.add(connection)
        agents: set[str] = set()
        try:
            async for frame in connection:
                changes: list[tuple[_Runtime, list[Event]]] = []
                try:
                    reply = self._dispatch(frame, connection, agents, changes)
                except Exception:  # our bug: say so and keep serving this connection
                    log.exception("handling a frame failed")
                    reply = _error("the engine failed to handle this request (see its log)")
                await self._send(connection, reply)
                # Pushes follow the response, so a creator learns the match id before its events.
                for runtime, events in changes:
                    self._after_change(runtime, events)
        except ConnectionClosed:
            pass
        finally:
            self._open.discard(connection)
            for agent_id in agents:
                self._connections[agent_id].discard(connection)
                if not self._connections[agent_id]:
                    del self._connections[agent_id]
                    self._agent_gone(agent_id)

    async def _send(self, connection: ServerConnection, message: Any) -> None:
        self.frames_sent += 1
        await connection.send(dump(message))

    def _dispatch(self, frame: str | bytes, connection: ServerConnection, agents: set[str],
                  changes: list[tuple[_Runtime, list[Event]]]) -> Any:
        try:
            request = parse_client_frame(frame)
        except ProtocolError as exc:
            return _error(str(exc))
        try:
            check_agent_id(request.agent_id)
        except ValueError as exc:
            return _error(str(exc))
        if request.agent_id not in agents:
            if len(agents) >= self.settings.max_agents_per_connection:
                return _error(f"a connection may speak for at most {self.settings.max_agents_per_connection} agents",
                              agent_id=request.agent_id)
            agents.add(request.agent_id)
        self._connections[request.agent_id].add(connection)
        self._agent_back(request.agent_id)
        try:
            if isinstance(request, CreateMatch):
                return self._create(request, changes)
            if isinstance(request, GetMatches):
                return self._list(request)
            if isinstance(request, GetState):
                return self._state(request, changes)
            return self._perform(request, changes)
        except MatchError as exc:
            game = getattr(request, "game", "")
            return _error(str(exc), game=game, match_id=getattr(request, "match_id", ""),
                          agent_id=request.agent_id, data=exc.data)

    # ---- requests -------------------------------------------------------------------------------

    def _create(self, request: CreateMatch, changes: list[tuple[_Runtime, list[Event]]]) -> Any:
        if request.game not in self.settings.games:
            return _error(f"this engine does not host {request.game!r}; it hosts: {', '.join(self.settings.games)}",
                          game=request.game, agent_id=request.agent_id,
                          data={"games": list(self.settings.games), "known_games": list(GAMES)})
        options = request.settings.data
        unknown = set(options) - _SETTINGS_KEYS
        if unknown:
            raise MatchError(f"unknown settings {sorted(unknown)}; allowed: bot (random|strong|none), "
                             "seat (1|2), name")
        bot = options.get("bot", self.settings.bot)
        if bot not in BOT_KINDS:
            raise MatchError(f"settings.data.bot must be one of {', '.join(BOT_KINDS)}, not {bot!r}")
        seat = options.get("seat", 1)
        if seat not in (1, 2) or isinstance(seat, bool):
            raise MatchError(f"settings.data.seat must be 1 (move first) or 2, not {seat!r}")
        name = options.get("name", request.agent_id)
        if not isinstance(name, str) or not 0 < len(name) <= 64:
            raise MatchError("settings.data.name must be a string of 1 to 64 characters")
        self._prune()
        if len(self._matches) >= self.settings.max_matches:
            raise MatchError(f"the engine holds {self.settings.max_matches} matches in play; try again later")

        match_id = f"m-{secrets.token_hex(4)}"
        match = Match(match_id, get_rules(request.game), created_at=now())
        runtime = _Runtime(match)
        self._matches[match_id] = runtime
        events = match.sit(seat - 1, Seat(request.agent_id, name), now())
        if bot != "none":
            bot_id = f"{bot}-bot-{match_id}"
            runtime.bots[bot_id] = make_offline(bot, match.rules, random.Random(self._rng.random()),
                                                seconds=self.settings.bot_search_seconds)
            events += match.sit(2 - seat, Seat(bot_id, f"{bot} bot", bot=bot), now())
        reply = CreateMatchResponse(game=match.game, match_id=match_id, agent_id=request.agent_id)
        changes.append((runtime, events))
        log.info("match %s (%s) created by %s, bot %s", match_id, match.game, request.agent_id, bot)
        return reply

    def _list(self, request: GetMatches) -> Any:
        listed = [rt.match for rt in self._matches.values()
                  if rt.match.seat_of(request.agent_id) is not None or rt.match.free_seat() is not None]
        listed = listed[-MAX_MATCHES_LISTED:]
        return GetMatchesResponse(agent_id=request.agent_id, matches=[m.summary() for m in listed])

    def _state(self, request: GetState, changes: list[tuple[_Runtime, list[Event]]]) -> Any:
        runtime = self._runtime(request.match_id)
        match = runtime.match
        if request.game != match.game:
            raise MatchError(f"match {match.match_id} is a {match.game} match, not {request.game!r}",
                             {"game": match.game})
        free = match.free_seat()
        if match.seat_of(request.agent_id) is None and free is not None:
            changes.append((runtime, match.sit(free, Seat(request.agent_id, request.agent_id), now())))
        return match.state_response()

    def _perform(self, request: PerformAction, changes: list[tuple[_Runtime, list[Event]]]) -> Any:
        runtime = self._runtime(request.match_id)
        match = runtime.match
        if request.game != match.game:
            raise MatchError(f"match {match.match_id} is a {match.game} match, not {request.game!r}",
                             {"game": match.game})
        try:
            description, events = match.act(request.agent_id, request.action.type, request.action.data, now())
        except RuleError as exc:
            legal = [match.rules.move_to_action(m).data for m in match.rules.legal_moves(match.position)]
            return _action_response(request, "error", str(exc), {"legal_actions": legal[:64],
                                                                "turn": match.turn})
        reply = _action_response(request, "success", f"played {description}",
                                 {"turn": match.turn, "status": match.status})
        changes.append((runtime, events))
        return reply

    def _runtime(self, match_id: str) -> _Runtime:
        runtime = self._matches.get(match_id)
        if runtime is None:
            raise MatchError(f"no match {match_id!r} on this engine")
        return runtime

    # ---- after every change: pushes, bots, clocks ------------------------------------------------

    def _after_change(self, runtime: _Runtime, events: Iterable[Event]) -> None:
        match = runtime.match
        for event in events:
            self._push(match, event)
        self._stop_timers(runtime, keep_abandon=True)
        if match.over:
            return
        active = match.active_agent_id
        if active in runtime.bots:
            if runtime.bot_task is None or runtime.bot_task.done():
                runtime.bot_task = asyncio.create_task(self._bot_turn(runtime, active, match.turn))
        elif active and self.settings.turn_timeout is not None:
            runtime.turn_timer = asyncio.get_running_loop().call_later(
                self.settings.turn_timeout, self._time_out, runtime, active, match.turn)

    def _push(self, match: Match, event: Event) -> None:
        for seat in match.agents():
            connections = self._connections.get(seat.agent_id)
            if seat.bot or not connections:
                continue
            frame = dump(PushEvent(game=match.game, match_id=match.match_id, agent_id=seat.agent_id,
                                   event=Payload(data=event.data)))
            self.frames_sent += len(connections)
            broadcast(connections, frame)  # never waits on a slow client; drops for a dead one

    async def _bot_turn(self, runtime: _Runtime, bot_id: str, turn: int) -> None:
        match = runtime.match
        player = runtime.bots[bot_id]
        try:
            if self.settings.bot_delay:
                await asyncio.sleep(self.settings.bot_delay)
            if player.inline:
                move = player.decide(match.rules, match.position)
            else:
                move = await asyncio.to_thread(player.decide, match.rules, match.position)
        except asyncio.CancelledError:
            raise
        except Exception:  # a bot bug must not stall the match: fall back to any legal move
            log.exception("bot %s failed in match %s; playing a random move", bot_id, match.match_id)
            move = self._rng.choice(list(match.rules.legal_moves(match.position)))
        if match.over or match.turn != turn or match.active_agent_id != bot_id:
            return
        action = match.rules.move_to_action(move)
        try:
            _, events = match.act(bot_id, action.type, dict(action.data), now())
        except (RuleError, MatchError) as exc:  # a bot bug: end the match rather than stall it
            log.error("bot %s made an illegal move in match %s: %s", bot_id, match.match_id, exc)
            events = match.forfeit(bot_id, f"the {bot_id} made an illegal move", now())
        self._after_change(runtime, events)

    def _time_out(self, runtime: _Runtime, agent_id: str, turn: int) -> None:
        match = runtime.match
        if match.over or match.turn != turn or match.active_agent_id != agent_id:
            return
        events = match.forfeit(agent_id, f"{agent_id} did not act within {self.settings.turn_timeout:g} s", now())
        self._after_change(runtime, events)

    def _agent_gone(self, agent_id: str) -> None:
        for runtime in self._matches.values():
            match = runtime.match
            if match.over or match.seat_of(agent_id) is None:
                continue
            others_here = any(seat.agent_id in self._connections for seat in match.agents() if not seat.bot)
            if not others_here and runtime.abandon_timer is None:
                runtime.abandon_timer = asyncio.get_running_loop().call_later(
                    self.settings.reconnect_grace, self._abandon, runtime)

    def _agent_back(self, agent_id: str) -> None:
        for runtime in self._matches.values():
            if runtime.abandon_timer is not None and runtime.match.seat_of(agent_id) is not None:
                runtime.abandon_timer.cancel()
                runtime.abandon_timer = None

    def _abandon(self, runtime: _Runtime) -> None:
        runtime.abandon_timer = None
        events = runtime.match.abandon(f"no agent came back within {self.settings.reconnect_grace:g} s", now())
        self._after_change(runtime, events)

    @staticmethod
    def _stop_timers(runtime: _Runtime, keep_abandon: bool = False) -> None:
        if runtime.turn_timer is not None:
            runtime.turn_timer.cancel()
            runtime.turn_timer = None
        if not keep_abandon and runtime.abandon_timer is not None:
            runtime.abandon_timer.cancel()
            runtime.abandon_timer = None

    def _prune(self) -> None:
        """Forget the oldest finished matches once the table is full."""
        if len(self._matches) < self.settings.max_matches:
            return
        finished = [mid for mid, rt in self._matches.items() if rt.match.over]
        for match_id in finished[: max(1, len(finished) // 2)]:
            del self._matches[match_id]


def _error(message: str, *, game: str = "", match_id: str = "", agent_id: str = "",
           data: dict[str, Any] | None = None) -> ErrorMessage:
    return ErrorMessage(game=game, match_id=match_id, agent_id=agent_id,
                        error=ErrorBody(message=message[:2000], data=data or {}))


def _action_response(request: PerformAction, status: str, message: str, data: dict[str, Any]) -> PerformActionResponse:
    return PerformActionResponse(game=request.game, match_id=request.match_id, agent_id=request.agent_id,
                                 action_response=ActionResponse(status=status,  # type: ignore[arg-type]
                                                                message=message[:2000], data=data))

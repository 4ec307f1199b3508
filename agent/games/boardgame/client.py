"""The agent as a WebSocket client: create or join a match, play it to the end, survive drops.

:class:`~agent.games.boardgame.link.Link` is the transport; :class:`MatchClient` is the loop:
``get_state``, act when ``active_agent_id`` is ours, wait for a push (or poll) otherwise. A turn
asks the player for an action, checks it against the rules before sending, and on a refusal (local
or the engine's) asks again with the reason in the player's feedback, at most ``max_attempts``
times; then the offline player acts. When the engine drops, the client reconnects with backoff and
resumes the match by ``get_state``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from websockets.exceptions import InvalidURI

from agent.core.transcript import record_scope
from agent.games.boardgame.link import Link, LinkLost
from agent.games.boardgame.match_data import ClientError, ClientSettings, Decision, MatchResult
from agent.games.boardgame.players.base import (
    InvalidChoice,
    MovePlayer,
    Player,
    PlayerUnavailable,
    TextPlayer,
    TextTurn,
    Turn,
)
from agent.games.boardgame.protocol import (
    Action,
    CreateMatch,
    CreateMatchResponse,
    ErrorMessage,
    GetState,
    GetStateResponse,
    Payload,
    PerformAction,
    PerformActionResponse,
    PushEvent,
    ServerMessage,
)
from agent.games.boardgame.rules.base import GameRules, RuleError, WireAction
from agent.games.boardgame.rules.registry import GAMES, get_rules

log = logging.getLogger(__name__)

__all__ = ["ClientError", "ClientSettings", "Decision", "MatchClient", "MatchResult"]


class MatchClient:
    """Plays one match for one agent. Make one per match."""

    def __init__(self, settings: ClientSettings, player: Callable[[GameRules[Any]], Player],
                 fallback: Callable[[GameRules[Any]], MovePlayer],
                 on_event: Callable[[str, dict[str, Any]], None] | None = None, *,
                 text_player: Callable[[str], TextPlayer] | None = None,
                 known_rules: Callable[[str], GameRules[Any] | None] | None = None,
                 on_frame: Callable[[str, str], None] | None = None) -> None:
        """``player`` and ``fallback`` make the players once the match's game is known.

        A game with no rules plugin (``known_rules`` returns None; default: the registry) is played
        by ``text_player(game)`` from the rules as text, if given; it raises ClientError when it
        cannot play that game. Without a text player such a game is a ClientError.
        """
        self.settings = settings
        self._on_frame = on_frame
        self._make_text_player = text_player
        self._text_player: TextPlayer | None = None
        self._known_rules = known_rules or _registry_rules
        self._rng = random.Random()
        self._make_player = player
        self._player: Player | None = None
        self._make_fallback = fallback
        self._fallback: MovePlayer | None = None
        self._on_event = on_event or (lambda kind, data: None)
        self._changed = asyncio.Event()
        self._link: Link | None = None
        self._game = settings.game
        self._match_id = settings.match_id
        self._rules: GameRules[Any] | None = None
        self.result: MatchResult | None = None
        self._protocol_errors = 0
        self._reconnects = 0
        self._turn_ids = 0
        """Our turns in this match, 1, 2, ...: the ``turn`` id every record made during one carries."""
        self._turn_scope: dict[str, Any] = {}
        """The turn in progress, for frames and pushes the link's reader task observes meanwhile."""
        self._misses = 0
        """Refused actions (and turns with no action to send) since the engine last accepted one."""
        self._faults = 0
        """Impossible states seen in a row."""

    # ---- the whole match ------------------------------------------------------------------------

    async def play(self) -> MatchResult:
        """Play to the end; ClientError if the match cannot be played at all."""
        try:
            await self._connect(first=True)
            if self._match_id is None:
                await self._create()
            result = await self._loop()
        finally:
            if self._link is not None:
                self._protocol_errors += self._link.protocol_errors
                await self._link.close()
        result.protocol_errors = self._protocol_errors
        result.reconnects = self._reconnects
        self.result = result
        return result

    async def _loop(self) -> MatchResult:
        decisions: list[Decision] = []
        moves = 0
        mark = "?"
        for _ in range(self.settings.max_turns * 4):
            self._changed.clear()
            state = await self._call(self._get_state)
            rules = self._rules_for(state)
            mark = _mark_of(state, self.settings.agent_id, rules)
            try:
                if rules is not None:
                    rules.from_data(state.state.data)
            except RuleError as exc:
                raise ClientError(f"the engine's state of match {state.match_id} is unreadable: {exc}") from None
            if state.status == "started" and all(a.id != self.settings.agent_id for a in state.agents):
                raise ClientError(f"match {state.match_id} has started without us: its seats are taken")
            if state.status in ("ended", "abandoned"):
                return MatchResult(state.game, state.match_id, self.settings.agent_id, state.status,
                                   list(state.winners or []), mark, moves, decisions)
            if state.status == "started" and state.active_agent_id == self.settings.agent_id:
                fault = _impossible(rules, state)
                if fault is not None:
                    await self._engine_fault(state, fault)
                    continue
                self._faults = 0
                decision = await self._turn(state, rules, mark)
                if decision is not None:
                    decisions.append(decision)
                    moves += 1
                continue
            try:
                await asyncio.wait_for(self._changed.wait(), self.settings.poll_seconds)
            except TimeoutError:
                pass
        raise ClientError(f"match {self._match_id} did not end within {self.settings.max_turns} turns")

    async def _engine_fault(self, state: GetStateResponse, fault: str) -> None:
        """Our turn on a board where no move can be made: the engine's fault. Say so, wait for it
        to end the match (a push or the next poll), and give up after a few such states."""
        self._faults += 1
        self._on_event("engine_fault", {"match_id": state.match_id, "engine_turn": state.turn, "reason": fault})
        if self._faults >= self.settings.max_engine_faults:
            raise ClientError(f"the engine's state of match {state.match_id} is impossible: it is our turn, "
                              f"but {fault} (the engine's fault; seen {self._faults} times, giving up)")
        log.warning("match %s: the engine says it is our turn, but %s (the engine's fault); waiting for it to "
                    "end the match", state.match_id, fault)
        try:
            await asyncio.wait_for(self._changed.wait(), self.settings.poll_seconds)
        except TimeoutError:
            pass

    # ---- one turn -------------------------------------------------------------------------------

    async def _turn(self, state: GetStateResponse, rules: GameRules[Any] | None, mark: str) -> Decision | None:
        """One turn inside its record scope: its events, the player's LLM calls and the frames
        sent and received meanwhile all carry the turn's id (the engine's turn number is kept as
        ``engine_turn``: it counts both sides' moves, and a turn can be visited again)."""
        self._turn_ids += 1
        turn_id = self._turn_ids
        started = time.monotonic()
        self._turn_scope = {"turn": turn_id}
        with record_scope(turn=turn_id):
            self._on_event("turn_start", {"turn": turn_id, "match_id": state.match_id, "engine_turn": state.turn})
            outcome = "error"
            decision: Decision | None = None
            try:
                if rules is None:
                    decision = await self._take_text_turn(state, mark)
                else:
                    decision = await self._take_turn(state, rules)
                outcome = "moved-on" if decision is None else "fallback" if decision.fallback else "played"
            except asyncio.CancelledError:
                outcome = "cancelled"
                raise
            finally:
                ended: dict[str, Any] = {"turn": turn_id, "outcome": outcome,
                                         "seconds": round(time.monotonic() - started, 3)}
                if decision is not None:
                    ended.update(attempts=decision.attempts, illegal=decision.illegal)
                self._on_event("turn_end", ended)
                self._turn_scope = {}
        return decision

    async def _take_turn(self, state: GetStateResponse, rules: GameRules[Any]) -> Decision | None:
        """Act once; None if the match moved on under us (the next get_state tells what happened)."""
        started = time.monotonic()
        position = rules.from_data(state.state.data)
        seat = rules.to_move(position)
        feedback: list[str] = []
        illegal = 0
        attempt = 0
        for attempt in range(1, self.settings.max_attempts + 1):
            try:
                turn = Turn(rules, position, seat, state.turn, tuple(feedback))
                action = await self._ask(self._player_for(rules), turn)
            except InvalidChoice as exc:
                illegal += 1
                feedback.append(f"your answer could not be used: {exc}")
                self._on_event("invalid_answer", {"reason": str(exc)})
                continue
            if action is None:
                break
            try:
                if self.settings.check_locally:
                    rules.check_action(position, seat, action.type, action.data)
            except RuleError as exc:
                illegal += 1
                feedback.append(f"{_show(action)} was refused before sending: {exc}")
                self._on_event("illegal_local", {"action": _show(action), "reason": str(exc)})
                continue
            answer, _ = await self._call(functools.partial(self._perform, action))
            if answer is None:
                return Decision(time.monotonic() - started, attempt, illegal, False)
            illegal += 1
            feedback.append(f"{_show(action)} was refused by the engine: {answer}")
            self._on_event("illegal_engine", {"action": _show(action), "reason": answer})
            if not await self._still_our_turn(state):
                return None
        # The player ran out of attempts or time: the offline player always has a legal move.
        fallback = self._fallback_for(rules)
        turn = Turn(rules, position, seat, state.turn)
        source = "fallback"
        try:
            action = await self._ask(fallback, turn)
        except InvalidChoice:
            action = None
        if action is None:
            legal = rules.legal_moves(position)
            if not legal:  # _impossible() lets no such board through; a plugin might still disagree
                raise ClientError(f"the engine's state of match {state.match_id} has no legal move for us")
            action, source = rules.move_to_action(legal[0]), "last-resort"
        action = await self._settle(turn, action, source)
        answer, _ = await self._call(functools.partial(self._perform, action))
        if answer is not None:
            log.warning("the engine refused the offline player's %s: %s", _show(action), answer)
        self._on_event("fallback", {"action": _show(action), "refused": answer})
        return Decision(time.monotonic() - started, attempt, illegal, True, answer is None)

    async def _take_text_turn(self, state: GetStateResponse, mark: str) -> Decision | None:
        """A turn of a game we have no rules for: the engine judges each action.

        The fallback is a random action from the legal ones the engine listed in a refusal; when
        it listed none, the turn is left for the next round of the loop (bounded by the engine's
        turn clock).
        """
        started = time.monotonic()
        player = self._text_player_for(state.game)
        feedback: list[str] = []
        legal: tuple[Mapping[str, Any], ...] = ()
        last_type = ""
        illegal = 0
        attempt = 0
        for attempt in range(1, self.settings.max_attempts + 1):
            turn = TextTurn(state.game, self.settings.agent_id, mark, state.turn, state.state.data,
                            tuple(feedback), legal)
            try:
                action = await self._ask_with(player.label, functools.partial(player.choose_text, turn))
            except InvalidChoice as exc:
                illegal += 1
                feedback.append(f"your answer could not be used: {exc}")
                continue
            if action is None:
                break
            answer, data = await self._call(functools.partial(self._perform, action))
            if answer is None:
                return Decision(time.monotonic() - started, attempt, illegal, False)
            last_type = action.type
            illegal += 1
            feedback.append(f"{_show(action)} was refused by the engine: {answer}")
            self._on_event("illegal_engine", {"action": _show(action), "reason": answer})
            listed = data.get("legal_actions")
            if isinstance(listed, list):
                legal = tuple(a for a in listed[:64] if isinstance(a, dict))
            if not await self._still_our_turn(state):
                return None
        if not legal or not last_type:
            log.warning("no usable action for %s turn %d and no legal actions listed by the engine; asking again",
                        state.game, state.turn)
            if not last_type:  # nothing was sent, so nothing was refused: count it and wait all the same
                self._missed(f"no usable action for turn {state.turn}")
                await asyncio.sleep(self._miss_delay())
            return Decision(time.monotonic() - started, attempt, illegal, True, False)
        # Our engine lists the legal actions' data, for the action type it refused.
        fallback = WireAction(last_type, self._rng.choice(legal))
        answer, _ = await self._call(functools.partial(self._perform, fallback))
        self._on_event("fallback", {"action": _show(fallback), "refused": answer})
        return Decision(time.monotonic() - started, attempt, illegal, True, answer is None)

    async def _ask(self, player: Player, turn: Turn) -> WireAction | None:
        return await self._ask_with(player.label, lambda: player.choose(turn))

    async def _ask_with(self, label: str, choose: Callable[[], Awaitable[WireAction]]) -> WireAction | None:
        """The player's action; None when it cannot give one this turn. InvalidChoice passes through."""
        try:
            return await asyncio.wait_for(choose(), self.settings.decision_seconds)
        except TimeoutError:
            log.warning("%s took longer than %g s", label, self.settings.decision_seconds)
        except PlayerUnavailable as exc:
            log.warning("%s cannot answer: %s", label, exc)
        except (asyncio.CancelledError, InvalidChoice):
            raise
        except Exception:  # a player bug must not lose the turn
            log.exception("%s failed to choose an action", label)
        return None

    async def _settle(self, turn: Turn, action: WireAction, source: str) -> WireAction:
        """The match's player has the last word on an action chosen for it by someone else (the
        guarded LLM player's guard, :meth:`Player.settle`), within one decision's time."""
        player = self._player
        if player is None:
            return action
        try:
            settled: WireAction = await asyncio.wait_for(player.settle(turn, action, source),
                                                         self.settings.decision_seconds)
            return settled
        except TimeoutError:
            log.warning("the guard took longer than %g s on the %s move; it stands", self.settings.decision_seconds,
                        source)
        except Exception:  # the fallback's legal move must not be lost to a bug
            log.exception("settling the %s move failed; it stands", source)
        return action

    async def _still_our_turn(self, before: GetStateResponse) -> bool:
        state = await self._call(self._get_state)
        return (state.status == "started" and state.active_agent_id == self.settings.agent_id
                and state.turn == before.turn)

    def _text_player_for(self, game: str) -> TextPlayer:
        if self._text_player is None:
            assert self._make_text_player is not None  # _rules_for let the game through only then
            self._text_player = self._make_text_player(game)
        return self._text_player

    def _player_for(self, rules: GameRules[Any]) -> Player:
        if self._player is None:
            self._player = self._make_player(rules)
        return self._player

    def _fallback_for(self, rules: GameRules[Any]) -> MovePlayer:
        if self._fallback is None:
            self._fallback = self._make_fallback(rules)
        return self._fallback

    # ---- requests -------------------------------------------------------------------------------

    async def _create(self) -> None:
        game = self._game or GAMES[0]
        for _ in range(2):
            message = CreateMatch(game=game, agent_id=self.settings.agent_id,
                                  settings=Payload(data=dict(self.settings.create_settings)))
            reply = await self._call(functools.partial(self._link_request, message))
            if isinstance(reply, CreateMatchResponse):
                self._game, self._match_id = reply.game or game, reply.match_id
                self._on_event("match_created", {"match_id": reply.match_id, "game": self._game})
                return
            hosted = reply.error.data.get("games") if isinstance(reply, ErrorMessage) else None
            if (self._game is None and isinstance(hosted, list) and hosted and isinstance(hosted[0], str)
                    and hosted[0] != game):
                game = hosted[0]  # no game asked for: take the engine's own
                continue
            raise ClientError(f"the engine refused to create a {game} match: {_reason(reply)}")
        raise ClientError(f"the engine refused to create a {game} match")

    async def _get_state(self) -> GetStateResponse:
        assert self._match_id is not None
        for _ in range(2):
            game = self._game or GAMES[0]
            message = GetState(game=game, match_id=self._match_id, agent_id=self.settings.agent_id)
            reply = await self._link_request(message)
            if isinstance(reply, GetStateResponse):
                self._game = reply.game
                return reply
            actual = reply.error.data.get("game") if isinstance(reply, ErrorMessage) else None
            if isinstance(actual, str) and actual != game and self.settings.game is None:
                self._game = actual  # joining a match of a game we were not told about
                continue
            raise ClientError(f"cannot read match {self._match_id}: {_reason(reply)}")
        raise ClientError(f"cannot read match {self._match_id}")

    async def _perform(self, action: WireAction) -> tuple[str | None, dict[str, Any]]:
        """(None, data) when the engine accepted the action, else (its reason, data).

        After a refusal the next action waits (doubling with each refusal in a row), and after
        ``max_refusals`` in a row the match is given up with ClientError: an engine that refuses
        everything costs a few frames a second, then one clear line, never a busy loop."""
        assert self._match_id is not None and self._game is not None
        if self._misses:
            await asyncio.sleep(self._miss_delay())
        message = PerformAction(game=self._game, match_id=self._match_id, agent_id=self.settings.agent_id,
                                action=Action(type=action.type, data=dict(action.data)))
        reply = await self._link_request(message)
        reason: str
        data: dict[str, Any] = {}
        if isinstance(reply, PerformActionResponse):
            body = reply.action_response
            if body.status == "success":
                self._misses = 0
                return None, body.data
            reason, data = body.message or "refused without a reason", body.data
        elif isinstance(reply, ErrorMessage):
            reason, data = reply.error.message, reply.error.data
        else:
            self._protocol_errors += 1
            reason = f"unexpected {reply.type} in answer to perform_action"
        self._missed(f"{_show(action)} was refused: {reason}"[:300])
        return reason, data

    def _missed(self, what: str) -> None:
        self._misses += 1
        if self._misses >= self.settings.max_refusals:
            raise ClientError(f"the engine accepted none of our last {self._misses} actions in match "
                              f"{self._match_id} (the last: {what}); giving up the match")

    def _miss_delay(self) -> float:
        return min(self.settings.refusal_delay * 2 ** (self._misses - 1), self.settings.refusal_max_delay)

    async def _link_request(self, message: Any) -> ServerMessage:
        if self._link is None:
            raise LinkLost("not connected")
        return await self._link.request(message, self.settings.response_timeout)

    async def _call(self, operation: Callable[[], Any]) -> Any:
        """Run one request; on a lost link, reconnect and run it again."""
        for _ in range(self.settings.reconnect_attempts + 1):
            try:
                return await operation()
            except LinkLost as exc:
                log.warning("lost the engine: %s; reconnecting", exc)
                await self._connect(first=False)
        raise ClientError("lost the engine too many times")

    async def _connect(self, *, first: bool) -> None:
        if self._link is not None:
            self._protocol_errors += self._link.protocol_errors
            await self._link.close()
            self._link = None
        delay = self.settings.reconnect_delay
        last = ""
        for attempt in range(self.settings.reconnect_attempts + 1):
            if attempt or not first:
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.settings.reconnect_max_delay)
            try:
                self._link = await Link.open(self.settings.url, self._push, self.settings.response_timeout,
                                             self._observe_frame if self._on_frame is not None else None)
            except InvalidURI as exc:
                raise ClientError(f"{self.settings.url} is not a WebSocket URL: {exc}") from None
            except LinkLost as exc:
                last = str(exc)
                continue
            if not first:
                self._reconnects += 1
                self._on_event("reconnected", {"attempt": attempt + 1})
            return
        raise ClientError(f"cannot reach the engine: {last}")

    def _observe_frame(self, direction: str, text: str) -> None:
        # Frames read by the link's own task arrive outside the turn's scope: give them the turn
        # in progress (turns are one at a time), so a turn's answers join it too.
        assert self._on_frame is not None
        with record_scope(**self._turn_scope):
            self._on_frame(direction, text)

    def _push(self, event: PushEvent) -> None:
        if event.match_id == self._match_id:
            with record_scope(**self._turn_scope):
                self._on_event("push", dict(event.event.data))
            self._changed.set()

    def _rules_for(self, state: GetStateResponse) -> GameRules[Any] | None:
        if self._rules is None or self._rules.name != state.game:
            self._rules = self._known_rules(state.game)
            if self._rules is None and self._make_text_player is None:
                raise ClientError(f"this agent has no rules for the game {state.game!r} (it knows "
                                  f"{', '.join(GAMES)}); an LLM player can play it from a rules text")
        return self._rules


def _registry_rules(game: str) -> GameRules[Any] | None:
    try:
        return get_rules(game)
    except KeyError:
        return None


def _mark_of(state: GetStateResponse, agent_id: str, rules: GameRules[Any] | None) -> str:
    marks = state.state.data.get("marks")
    if isinstance(marks, dict) and isinstance(marks.get(agent_id), str):
        return str(marks[agent_id])
    ids = [a.id for a in state.agents]
    if agent_id not in ids:
        return "?"
    if rules is not None and agent_id in ids[:2]:
        return rules.marks[ids.index(agent_id)]
    return f"seat {ids.index(agent_id) + 1}"


def _impossible(rules: GameRules[Any] | None, state: GetStateResponse) -> str | None:
    """Why no move can be made on the board the engine says we are to move on, or None."""
    if rules is None:
        return None  # a game we have no rules for: the engine alone judges
    position = rules.from_data(state.state.data)  # read already by the caller: it does not raise here
    outcome = rules.outcome(position)
    if outcome is not None:
        if outcome.winner is None:
            return "its board is a finished draw"
        return f"its board is already won by {rules.marks[outcome.winner]} while the match is still {state.status!r}"
    if not rules.legal_moves(position):
        return "its board has no legal move"
    return None


def _show(action: WireAction) -> str:
    return f"{action.type} {dict(action.data)}"


def _reason(reply: ServerMessage) -> str:
    if isinstance(reply, ErrorMessage):
        return reply.error.message
    return f"unexpected {reply.type}"

"""One session per game connection: the transport of the turn machine, and the chat.

The server creates a Session for each WebSocket and calls :meth:`Session.run` until the socket
closes; :meth:`Session.close` then cancels whatever still runs (LLM calls included) and flushes the
transcript. The turn's rules live in :mod:`agent.games.tangram.turn` (a pure state machine,
docs/turns.md). This module parses frames and feeds them to the machine as events, with the time;
carries out the actions it returns, in order (frames through one send lock, the player's calls as
tasks, timers on the clock); and answers chat requests in their own tasks, also during a turn.
Events are handled one at a time (``_act_lock``), so the machine sees them in the order they
happened. Bad frames are logged with a reason and never end the connection; texts are clipped and
parallel chat answers capped, so nothing a frame carries grows without bound.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import itertools
import json
import logging
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import replace
from typing import Any

from agent.core.images import ImagePool
from agent.core.memory import Memory, Speaker
from agent.core.transcript import Transcript, record_scope
from agent.games.tangram.config import Config
from agent.games.tangram.contract import Player, Supervisor, TurnView
from agent.games.tangram.geometry.build_check import marker_mismatch
from agent.games.tangram.link.chat_desk import ChatDesk
from agent.games.tangram.link.clock import Cancellable, Clock, LoopClock
from agent.games.tangram.link.inbound import clip, frame_record, type_hint
from agent.games.tangram.link.movers import Movers
from agent.games.tangram.link.views import Views, drop
from agent.games.tangram.protocol import (
    GameFrame,
    GameState,
    ProtocolError,
    chat_frame,
    finish_frame,
    parse_frame,
    play_frame,
    utf8_safe,
)
from agent.games.tangram.turn import TurnMachine, TurnRules
from agent.games.tangram.turn import actions as act
from agent.games.tangram.turn import events as ev
from agent.games.tangram.turn.lines import turn_lines
from agent.games.tangram.turn.state import TurnLines
from agent.games.tangram.turn.thinking import thinking_lines

log = logging.getLogger(__name__)

LARGE_FRAME = 256 * 1024
"""Frames above this are parsed in a worker thread so the event loop keeps serving other games."""
POLITE_SEND_S = 2.0
"""How long a polite close waits to say goodbye to a game that is not reading."""


class Session:
    def __init__(self, config: Config, connection: Any, player: Player, transcript: Transcript,
                 *, peer: str = "?", study: dict[str, Any] | None = None, clock: Clock | None = None,
                 thinking: Mapping[str, str] | None = None, lines: TurnLines | None = None,
                 on_turn_ended: Callable[[int], None] | None = None) -> None:
        self.config = config
        self.on_turn_ended = on_turn_ended
        """Told the AI turns ended so far each time a turn's finish goes out (an online study counts them)."""
        self.ws = connection
        self.player = player
        self.transcript = transcript
        self.peer = peer
        self.clock: Clock = clock or LoopClock()
        self.memory = Memory(max(2, 2 * config.chat_history))
        # The server renders the thinking line (by language) once for every session; made here only without one.
        thinking = thinking or (thinking_lines(config) if config.turn.thinking_line else None)
        # Likewise the words of the turn's own lines (turn_lines.j2), loaded and checked once.
        self.machine = TurnMachine(TurnRules.of(config.turn, thinking, lines or turn_lines(config)))
        self._act_lock = asyncio.Lock()
        self._idle = asyncio.Event()  # set while no turn is in progress
        self._idle.set()
        self._send_lock = asyncio.Lock()
        self._asks: dict[int, asyncio.Task[None]] = {}
        self._timers: dict[str, Cancellable] = {}
        self._fired: set[asyncio.Task[None]] = set()
        """Timer events on their way into the machine."""
        self._turn_ids = itertools.count(1)
        self._chat_ids = itertools.count(1)
        self.study = study or {}
        """Study metadata for session_start (agent version, config and template hashes, tags)."""
        self._closed = False
        self._build_warned = False
        self._counts = {"turns": 0, "turns_ended": 0, "bad_frames": 0}
        self.views = Views(config, player, self.memory, peer)
        self.movers = Movers()
        """Who moved each piece last, from the plays sent and the boards the game reports."""
        self.views.movers = self.movers
        self.supervisor: Supervisor | None = player.supervisor
        if self.supervisor is not None:
            self.supervisor.attach(self)
        self.views.transcript = self.transcript
        self.chat = ChatDesk(config, player, transcript, peer, self._chat_view, self._say, self._remember,
                             self._partner_language)
        """The chat requests, answered beside the turn (chat_desk.py states the rules)."""

    @property
    def stats(self) -> dict[str, int]:
        """What the session_end record counts: turns asked, turns ended by finish, chats, bad frames."""
        return {"turns": self._counts["turns"], "turns_ended": self._counts["turns_ended"],
                "chats": self.chat.answered, "bad_frames": self._counts["bad_frames"]}

    async def _partner_language(self, lang: str) -> None:
        """The partner's last chat line was in ``lang``: the turn's own lines follow it."""
        await self._feed(ev.PartnerLanguage(self.clock.now(), lang))

    async def _chat_view(self, frame: GameFrame, drawer: bool) -> TurnView:
        return await self.views.view(frame, drawer=drawer)

    @property
    def player_name(self) -> str:
        return self.player.name

    @property
    def images(self) -> ImagePool | None:
        """The process's image decoding threads (the server sets it); None: the default thread pool."""
        return self.views.images

    @images.setter
    def images(self, pool: ImagePool | None) -> None:
        self.views.images = pool

    # ------------------------------------------------------------------ lifecycle

    async def run(self, frames: Any) -> None:
        """Serve frames from an async iterator (the socket) until it ends."""
        self.transcript.record("session_start", peer=self.peer, player=self.player.name, **self.study)
        async for raw in frames:
            await self.handle_raw(raw)

    async def close(self, reason: str = "disconnected", polite: bool = False) -> None:
        """Stop everything. ``polite``: the socket still works, so end a running turn properly."""
        if self._closed:
            return
        if polite and self.machine.busy:
            # The machine waits for a landing play (as long as plays take to land on this connection),
            # then says goodbye and finishes. A game that stopped reading must not hold up the
            # shutdown, hence the bound.
            self._spawn(self._feed(ev.Shutdown(self.clock.now())))
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.machine.shutdown_wait_s + POLITE_SEND_S):
                    await self._idle.wait()
        self._closed = True
        for handle in self._timers.values():
            handle.cancel()
        # Whatever is left of a turn ends here without a finish (the game left, or would not listen).
        for action in self.machine.handle(ev.Closed(self.clock.now())):
            if isinstance(action, (act.Record, act.CancelPlayer, act.Log)):
                await self._carry_out_one(action)
        tasks = [t for t in (*self._asks.values(), *self._fired, *self.chat.pending()) if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        await self.views.close()
        with contextlib.suppress(Exception):
            await self.player.aclose()
        self.transcript.record("session_end", reason=reason, **self.stats)
        await self.transcript.close()

    # ------------------------------------------------------------------ frames in

    async def handle_raw(self, raw: str | bytes) -> None:
        """Handle one frame. Never raises (except cancellation): a bad frame is logged and answered."""
        try:
            await self._handle_raw(raw)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug handling one frame must not end the connection
            log.exception("%s: failed to handle a frame", self.peer)
            self.transcript.record("error", where="frame", error=f"{type(exc).__name__}: {exc}"[:500])

    async def _handle_raw(self, raw: str | bytes) -> None:
        if self._closed:  # shutting down: the socket is about to close, start nothing new
            return
        size = len(raw)
        try:
            frame = await asyncio.to_thread(parse_frame, raw) if size > LARGE_FRAME else parse_frame(raw)
        except ProtocolError as exc:
            self._counts["bad_frames"] += 1
            log.warning("%s: bad frame (%d bytes): %s", self.peer, size, exc)
            hint = type_hint(raw)
            self.transcript.record("bad_frame", reason=str(exc), bytes=size, type_hint=hint)
            await self._feed(ev.Unreadable(self.clock.now(), hint, str(exc)))
            return
        frame = clip(frame, self.peer)
        # Ids that let an analyst join a frame to its turn or a chat request to its reply.
        ids: dict[str, int] = {}
        if frame.type == "playRequest":
            ids["turn"] = next(self._turn_ids)
        elif frame.type == "chatRequest":
            ids["request"] = next(self._chat_ids)
        if "turn" not in ids and self.machine.turn_id is not None:
            ids["turn"] = self.machine.turn_id
        self.transcript.record("frame_in", **frame_record(frame, size), **ids)
        if self.supervisor is not None:
            try:
                self.supervisor.frame_in(frame)
            except Exception:  # the console must never cost the game a frame
                log.exception("%s: supervisor failed on a frame", self.peer)
        if frame.state.ignored:
            log.warning("%s: %s frame: ignored %s", self.peer, frame.type, "; ".join(frame.state.ignored[:5]))
        self._check_build(frame.state)
        if frame.type in ("playRequest", "playFeedback", "chatRequest"):
            self.movers.observe(frame.state, new_turn=frame.type == "playRequest")
        if frame.type == "playRequest":
            self._counts["turns"] += 1
            await self._feed(ev.TurnRequested(self.clock.now(), ids["turn"], frame))
        elif frame.type == "playFeedback":
            await self._feed(ev.Feedback(self.clock.now(), frame))
        elif frame.type == "chatRequest":
            await self.chat.request(frame, ids["request"])
        else:  # the game reports a problem with one of our frames
            log.warning("%s: game reported an error: %s", self.peer, frame.message[:200])
            self.transcript.record("game_error", message=frame.message[:500])

    def _check_build(self, state: GameState) -> None:
        """Warn once per session when the game's pieces are not the ones our table describes."""
        if self._build_warned:
            return
        for name, piece in state.on_board.items():
            problem = marker_mismatch(name, piece.position, piece.rotation, piece.vertices)
            if problem is not None:
                self._build_warned = True
                log.warning("%s: this game's pieces do not match the agent's geometry table (%s); playing on "
                            "what the game reports, but placements may collide", self.peer, problem)
                self.transcript.record("build_mismatch", detail=problem)
                return

    # ------------------------------------------------------------------ the machine's transport

    async def _feed(self, event: ev.Event) -> None:
        """One event into the machine through its queue: each event's actions are carried out, in
        order, before the next event is handled, and what carrying them out brings (a frame sent) is
        queued behind them. The machine is never asked while its actions are being carried out."""
        async with self._act_lock:
            queue: collections.deque[ev.Event] = collections.deque([event])
            while queue and not self._closed:
                actions = self.machine.handle(queue.popleft())
                queue.extend(await self._carry_out(actions))
            (self._idle.clear if self.machine.busy else self._idle.set)()

    async def _carry_out(self, actions: list[act.Action]) -> list[ev.Event]:
        """Carry out one event's actions; returns the events they bring, for the machine's queue."""
        turn = self.machine.turn_id
        brought: list[ev.Event] = []
        # Every record made for a turn (decision, repair, frames out, its LLM calls) carries its id.
        with record_scope(turn=turn) if turn is not None else contextlib.nullcontext():
            for action in actions:
                follow = await self._carry_out_one(action)
                if follow is not None:
                    brought.append(follow)
        return brought

    async def _carry_out_one(self, action: act.Action) -> ev.Event | None:
        """Carry out one action; a frame sent is reported back as the event it returns."""
        match action:
            case act.Say(text=text):
                await self._say(text)
            case act.SendPlay():
                ok = await self._send(play_frame(action.piece, action.x, action.y, action.rotation), "play")
                if ok:
                    self.movers.sent(action.piece, action.x, action.y, action.rotation)
                return ev.FrameSent(self.clock.now(), "play", ok)
            case act.SendFinish():
                # The one place a finish goes out: the machine asks for it once per turn.
                counted = self.machine.turn_id is not None
                ok = await self._send(finish_frame(), "finish")
                self._counts["turns_ended"] += counted
                if counted and ok and self.on_turn_ended is not None:
                    self.on_turn_ended(self._counts["turns_ended"])
                return ev.FrameSent(self.clock.now(), "finish", ok)
            case act.AskPlayer():
                task = asyncio.create_task(self._ask(action), name=f"decide-{action.ask_id}")
                self._asks[action.ask_id] = task
                task.add_done_callback(functools.partial(self._forget_ask, action.ask_id))
            case act.CancelPlayer(ask_id=ask):
                # Not awaited (the call may itself be waiting to hand in its stale decision), but kept
                # in _asks until done, so that close() waits for its clean-up (its llm record).
                call = self._asks.get(ask)
                if call is not None:
                    call.cancel()
            case act.Record(kind=kind, fields=fields):
                self.transcript.record(kind, **fields)
            case act.Remember(speaker=speaker, text=text):
                self._remember(speaker, text)
            case act.SetTimer(name=name, at=at):
                old = self._timers.pop(name, None)
                if old is not None:
                    old.cancel()
                self._timers[name] = self.clock.call_at(at, lambda: self._fire(name))
            case act.Log(level=level, message=message, error=error):
                exc_info = (type(error), error, error.__traceback__) if error is not None else None
                log.log(level, "%s: %s", self.peer, message, exc_info=exc_info)
        return None

    def _forget_ask(self, ask_id: int, task: asyncio.Task[None]) -> None:
        if self._asks.get(ask_id) is task:
            del self._asks[ask_id]

    def _fire(self, name: str) -> None:
        self._timers.pop(name, None)
        self._spawn(self._feed(ev.Timer(self.clock.now(), name)))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(coro)
        self._fired.add(task)
        task.add_done_callback(self._fired.discard)
        return task

    async def quiet(self) -> None:
        """Wait until no turn is in progress and every chat request has its answer (each ends by
        its deadline)."""
        while not self._idle.is_set() or self.chat.busy():
            await self._idle.wait()
            if self.chat.busy():
                await asyncio.wait(set(self.chat.tasks))

    async def settled(self) -> None:
        """Wait until every timer event that fired has been handled (for tests on a moved clock)."""
        while self._fired:
            await asyncio.wait(set(self._fired))

    async def _ask(self, ask: act.AskPlayer) -> None:
        """The player's call for one decision; its answer (or its failure) goes back as an event."""
        event: ev.Event
        try:
            # The player gets the view while its images are still being prepared, and does its own
            # preparation (the board description, a hint) meanwhile.
            view = await self.views.view(ask.frame, decide_by=ask.decide_by, lazy_images=True)
            if ask.kind == "adjust":
                view = replace(view, collisions=list(ask.collisions), previous=ask.previous, attempt=ask.attempt)
            try:
                decision = await (self.player.play(view) if ask.kind == "play" else self.player.adjust(view))
            finally:
                await drop(view.pending_images)  # a player that never looked at them (the planner, a wizard)
        except Exception as exc:  # a bug in the player costs this turn (the machine ends it politely)
            log.exception("%s: the player failed", self.peer)
            event = ev.DecisionFailed(self.clock.now(), ask.ask_id, f"{type(exc).__name__}: {exc}"[:500])
        else:
            event = ev.DecisionReady(self.clock.now(), ask.ask_id, decision)
        await self._feed(event)

    # ------------------------------------------------------------------ frames out

    async def _send(self, text: str, kind: str) -> bool:
        if self._closed:
            return False
        try:
            async with self._send_lock:
                await self.ws.send(text)
        except Exception as exc:  # a closed socket: the reader loop will end the session
            log.info("%s: could not send %s: %s", self.peer, kind, type(exc).__name__)
            return False
        self.transcript.record("frame_out", frame=json.loads(text))
        return True

    async def say(self, text: str) -> bool:
        """Send one chat line now for someone other than the player (the console's experimenter);
        the memory keeps it as the agent's, since that is who the partner thinks said it."""
        text = utf8_safe(text.strip())
        if not text or self._closed:
            return False
        self._remember("agent", text)
        return await self._send(chat_frame(self.transcript.mask(text)), "chat")

    async def _say(self, text: str) -> None:
        if text and text.strip():
            # The model's words go to the game as they are, except a secret it might repeat.
            await self._send(chat_frame(self.transcript.mask(text)), "chat")

    def _remember(self, speaker: Speaker, text: str) -> None:
        # The memory goes into every prompt: one unencodable character would fail every LLM call.
        self.memory.add(speaker, utf8_safe(text))

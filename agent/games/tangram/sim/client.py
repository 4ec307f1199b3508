"""The game side of the protocol over a real WebSocket: a reusable client for tests and runs.

::

    async with GameClient(url, objective="A house", seed=0) as game:
        turn = await game.ai_turn(deadline=10)      # playRequest ... finish / error / timeout
        reply = await game.chat("hello")            # chatRequest -> the agent's chat line
        game.human_move("Red", 50, 30, 0)           # the human's drag-and-drop, with the rules
        await game.send_raw('{"no": "type"}')       # anything at all, for hostile tests
        game.violations                              # what the agent did wrong, as the game sees it

Like the Godot game, the client dials the agent, sends frames without compression or pings, and
accepts the agent's frames one at a time in arrival order: every frame goes through
:meth:`SimGame.handle_agent_frame` at once, as the game's ``_process`` does, also while a play is
animating. A ``play`` starts a ``tween``-second animation (the game's is 0.5 s) and its
``playFeedback`` goes out when the animation and one more frame are over, whatever arrived
meanwhile. Frames are stamped when they arrive, so latencies do not include the simulator's own
queueing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from agent.games.tangram.sim.feedback_delay import FeedbackDelay
from agent.games.tangram.sim.humans import Move, ScriptedHuman, make_human
from agent.games.tangram.sim.simgame import (
    CLOSED,
    GODOT_TWEEN_S,
    NO_WAIT,
    TURN_TIMEOUT,
    Build,
    PlayRecord,
    SimGame,
    SimRuleError,
    StateLayout,
    Violation,
    frame_text,
)

log = logging.getLogger(__name__)

MAX_AGENT_FRAME = 16 * 1024 * 1024
"""Accept far more than Godot would, so an oversized frame is recorded instead of killing the socket."""
__all__ = ["GODOT_TWEEN_S", "ChatResult", "GameClient", "HumanTurn", "ReceivedFrame", "TurnResult"]


@dataclass(frozen=True, slots=True)
class ReceivedFrame:
    """One frame from the agent, as it arrived."""

    index: int
    at: float
    """Seconds since the game started."""
    size: int
    text: str
    data: dict[str, Any] | None
    """The parsed object, when the frame is a JSON object."""
    turn: int | None
    """The AI turn in progress when it arrived; None during the human's turn."""

    @property
    def type(self) -> str | None:
        if self.data is None:
            return None
        t = self.data.get("type")
        return t if isinstance(t, str) else None


@dataclass(frozen=True, slots=True)
class SentFrame:
    type: str
    size: int
    at: float
    turn: int | None


@dataclass(slots=True)
class ChatResult:
    message: str
    sent_at: float
    during_ai_turn: bool
    reply: str | None = None
    latency: float | None = None
    """Seconds from the chatRequest to the first agent chat line after it; None if none came."""


@dataclass(slots=True)
class TurnResult:
    """What the agent did in one AI turn."""

    index: int
    ended_by: str | None
    """"finish", "error", "timeout" or "closed"."""
    latency: float | None
    plays: list[PlayRecord]
    chat: list[str]
    error_message: str | None
    undone: bool
    collisions: list[str]
    """This turn's piece's collisions when the turn ended (before any undo)."""
    piece: str | None
    frames: list[ReceivedFrame]
    violations: list[Violation]

    @property
    def finished(self) -> bool:
        return self.ended_by == "finish"

    @property
    def errored(self) -> bool:
        return self.ended_by == "error"

    @property
    def timed_out(self) -> bool:
        return self.ended_by == "timeout"

    @property
    def ended(self) -> bool:
        return self.ended_by in ("finish", "error")


@dataclass(slots=True)
class HumanTurn:
    move: Move | None
    chats: list[ChatResult] = field(default_factory=list)


class GameClient:
    """One game against an agent server, played through a real WebSocket."""

    def __init__(self, url: str, *, objective: str = "A house", seed: int | str = 0,
                 human: str | ScriptedHuman | None = None, tween: float = 0.0,
                 state_layout: StateLayout = "dict", build: Build = "shipped", stale_collisions: bool = False,
                 max_size: int = MAX_AGENT_FRAME, open_timeout: float = 10.0, chat_timeout: float = 30.0,
                 feedback_delay: FeedbackDelay | None = None, false_tint: bool = False) -> None:
        self.url = url
        self.game = SimGame(objective, state_layout=state_layout, build=build, animation=tween,
                            stale_collisions=stale_collisions, feedback_delay=feedback_delay, feedback_seed=seed,
                            false_tint=false_tint)
        self.human = make_human(human, seed, objective) if isinstance(human, str) else human
        self.tween = tween
        self.chat_timeout = chat_timeout
        self._max_size = max_size
        self._open_timeout = open_timeout
        self.frames: list[ReceivedFrame] = []
        self.sent: list[SentFrame] = []
        self.chats: list[ChatResult] = []
        self._ws: ClientConnection | None = None
        self._inbox: asyncio.Queue[tuple[ReceivedFrame, str | bytes] | None] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._pending_chats: deque[tuple[ChatResult, asyncio.Future[None]]] = deque()
        self._turn_done = asyncio.Event()
        self._closed = asyncio.Event()
        self._drained = asyncio.Event()
        """The connection is gone and the game has handled every frame that came before."""
        self._closing = False
        self._frame_added = asyncio.Event()
        self._cursor = 0
        self._handled = 0
        """Frames the game has handled: next_frame hands out only these (self.frames[:self._handled])."""
        self._feedback_tasks: set[asyncio.Task[None]] = set()
        self._pending_feedback = 0
        """Plays whose playFeedback has not gone out yet."""

    # ------------------------------------------------------------------ connection

    async def __aenter__(self) -> GameClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> None:
        self._ws = await connect(self.url, max_size=self._max_size, compression=None, ping_interval=None,
                                 open_timeout=self._open_timeout, close_timeout=2)
        self._reader = asyncio.create_task(self._read_loop(), name="sim-reader")
        self._worker = asyncio.create_task(self._process_loop(), name="sim-worker")

    async def close(self) -> None:
        """Close the socket and stop; pending chat requests stay unanswered. Safe to repeat."""
        self._closing = True
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
        for feedback in list(self._feedback_tasks):
            feedback.cancel()
        for task in (self._reader, self._worker):
            if task is not None:
                with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(task, 5)
        self._resolve_all_chats()

    @property
    def connected(self) -> bool:
        return self._ws is not None and not self._closed.is_set()

    @property
    def local_port(self) -> int | None:
        addr = self._ws.local_address if self._ws is not None else None
        return int(addr[1]) if addr else None

    @property
    def violations(self) -> list[Violation]:
        return self.game.violations

    # ------------------------------------------------------------------ sending

    async def send_frame(self, frame: dict[str, Any]) -> int:
        """Send a frame the way the game writes it; returns its size in bytes (0 if the socket is gone)."""
        text = frame_text(frame)
        return await self._send_text(text, str(frame.get("type", "?")))

    async def send_raw(self, data: str | bytes) -> None:
        """Send anything at all (hostile-frame tests)."""
        if self._ws is None:
            raise RuntimeError("not connected")
        await self._ws.send(data)
        self.sent.append(SentFrame("raw", len(data), self.game.elapsed(), self._turn()))

    async def _send_text(self, text: str, ftype: str) -> int:
        if self._ws is None:
            raise RuntimeError("not connected")
        size = len(text.encode("utf-8"))
        try:
            await self._ws.send(text)
        except ConnectionClosed:
            return 0
        self.sent.append(SentFrame(ftype, size, self.game.elapsed(), self._turn()))
        return size

    def _turn(self) -> int | None:
        return self.game.turn_index if self.game.turn_owner == "ai" else None

    # ------------------------------------------------------------------ the AI's turn

    async def ai_turn(self, deadline: float = 60.0) -> TurnResult:
        """Start the AI's turn and wait until it ends (finish / error), or ``deadline`` seconds."""
        if self.game.turn_owner == "ai":
            raise SimRuleError("the AI's turn is already in progress")
        first = len(self.frames)
        self._turn_done = asyncio.Event()
        request = self.game.start_ai_turn()
        turn = self.game.turns[-1]
        await self.send_frame(request)
        if self.human is not None:
            for line in self.human.chat_during(self.game):
                await self.send_chat(line)
        done = asyncio.create_task(self._turn_done.wait())
        closed = asyncio.create_task(self._drained.wait())
        try:
            await asyncio.wait({done, closed}, timeout=deadline, return_when=asyncio.FIRST_COMPLETED)
        finally:
            done.cancel()
            closed.cancel()
        if self.game.current_turn is turn:  # nobody ended it
            if self._drained.is_set():
                self.game.abandon_turn("closed")
            else:
                self.game.violation(TURN_TIMEOUT, f"turn {turn.index} had no finish or error within {deadline:g} s")
                self.game.abandon_turn("timeout")
        frames = [f for f in self.frames[first:] if f.turn == turn.index]
        return TurnResult(turn.index, turn.ended_by, turn.latency, list(turn.plays), list(turn.agent_chat),
                          turn.error_message, turn.undone, list(turn.final_collisions), turn.piece, frames,
                          list(turn.violations))

    # ------------------------------------------------------------------ chat

    async def send_chat(self, text: str) -> ChatResult:
        """Send a chatRequest and return at once; the result fills in when the reply arrives."""
        result = ChatResult(text, self.game.elapsed(), self.game.turn_owner == "ai")
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending_chats.append((result, future))
        self.chats.append(result)
        if await self.send_frame(self.game.human_chat(text)) == 0:
            self._resolve_all_chats()
        return result

    async def chat(self, text: str, timeout: float | None = None) -> ChatResult:
        """Send a chatRequest and wait for the agent's reply (``reply`` is None after ``timeout``)."""
        result = await self.send_chat(text)
        await self.wait_chat(result, timeout)
        return result

    async def wait_chat(self, result: ChatResult, timeout: float | None = None) -> ChatResult:
        for pending, future in list(self._pending_chats):
            if pending is result:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(future), self.chat_timeout if timeout is None else timeout)
        return result

    async def settle_chats(self, timeout: float | None = None) -> None:
        """Wait (up to ``timeout`` overall) for replies to every chat request still open."""
        futures = [f for _, f in self._pending_chats]
        if futures:
            await asyncio.wait(futures, timeout=self.chat_timeout if timeout is None else timeout)

    def _resolve_chat(self, text: str, at: float) -> None:
        while self._pending_chats:
            result, future = self._pending_chats[0]
            if result.sent_at > at:
                return  # this line was sent before the oldest open request
            self._pending_chats.popleft()
            if future.done():
                continue
            result.reply = text
            result.latency = round(at - result.sent_at, 4)
            future.set_result(None)
            return

    def _resolve_all_chats(self) -> None:
        while self._pending_chats:
            _, future = self._pending_chats.popleft()
            if not future.done():
                future.set_result(None)

    # ------------------------------------------------------------------ the human's turn

    def human_move(self, shape: str, x: float, y: float, rotation: float) -> bool:
        """Drag one piece as the human (one piece per turn; a drop onto anything snaps back)."""
        return self.game.human_move(shape, x, y, rotation)

    async def human_turn(self) -> HumanTurn:
        """The scripted human's turn: its chat lines (each waits for the reply), then its move."""
        turn = HumanTurn(None)
        if self.human is None:
            return turn
        for line in self.human.chat_before(self.game):
            turn.chats.append(await self.chat(line))
        move = self.human.choose_move(self.game)
        if move is not None and self.game.human_move(*move):
            turn.move = move
        return turn

    # ------------------------------------------------------------------ looking at what arrived

    async def next_frame(self, timeout: float = 5.0, type: str | None = None) -> ReceivedFrame | None:
        """The next frame (of ``type``, if given) not returned before; None after ``timeout``.

        A frame is returned once the game has handled it, as the real game would have before anyone
        looks at the board: the turn it ends has ``ended_by`` set, its replies have gone out.
        """
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            for i in range(self._cursor, self._handled):
                frame = self.frames[i]
                if type is None or frame.type == type:
                    self._cursor = i + 1
                    return frame
            self._frame_added.clear()
            remaining = end - loop.time()
            if remaining <= 0 or self._drained.is_set():
                return None
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._frame_added.wait(), remaining)

    # ------------------------------------------------------------------ internals

    async def _read_loop(self) -> None:
        assert self._ws is not None
        try:
            async for message in self._ws:
                frame = self._stamp(message)
                self._inbox.put_nowait((frame, message))
        except ConnectionClosed:
            pass
        finally:
            if not self._closing:
                code = self._ws.close_code
                self.game.violation(CLOSED, f"the agent closed the connection (code {code})")
            self._closed.set()
            self._inbox.put_nowait(None)

    def _stamp(self, message: str | bytes) -> ReceivedFrame:
        text = message if isinstance(message, str) else message.decode("utf-8", "replace")
        data = None
        try:
            parsed = json.loads(text)
            data = parsed if isinstance(parsed, dict) else None
        except ValueError:
            pass
        frame = ReceivedFrame(len(self.frames), self.game.elapsed(), len(message if isinstance(message, bytes)
                                                                           else message.encode("utf-8", "replace")),
                              text, data, self._turn())
        self.frames.append(frame)
        return frame

    async def _process_loop(self) -> None:
        try:
            while True:
                item = await self._inbox.get()
                if item is None:
                    self._resolve_all_chats()
                    return
                frame, raw = item
                try:
                    await self._process(frame, raw)
                except Exception:  # a simulator bug must not hang the run; it shows in the log
                    log.exception("simulator failed on frame %d", frame.index)
                # Only now may a waiter look: which task wakes first after a frame arrives is up to the
                # event loop (Python 3.12's wait_for wakes the waiter before this task; 3.11's did not).
                self._handled = frame.index + 1
                self._frame_added.set()
        finally:
            self._drained.set()
            self._frame_added.set()

    async def _process(self, frame: ReceivedFrame, raw: str | bytes) -> None:
        if frame.type in ("play", "finish") and self._pending_feedback and not self.game.animating():
            # After the animation, before the feedback: the game takes it, but the agent could not
            # have seen the outcome of its play.
            self.game.violation(NO_WAIT, f"{frame.type} arrived before the playFeedback of the previous play")
        reaction = self.game.handle_agent_frame(raw)
        for reply in reaction.replies:
            await self.send_frame(reply)
        if reaction.send_feedback and reaction.play is not None:
            self._pending_feedback += 1
            task = asyncio.create_task(self._send_feedback(reaction.play), name="sim-feedback")
            self._feedback_tasks.add(task)
            task.add_done_callback(self._feedback_tasks.discard)
        if reaction.kind == "chat" and reaction.chat is not None:
            self._resolve_chat(reaction.chat, frame.at)
        if reaction.turn_ended:
            self._turn_done.set()

    async def _send_feedback(self, play: PlayRecord) -> None:
        """The rest of the game's aiPlayRequest: after the tween and a frame, the feedback goes out
        (also when the turn has ended meanwhile)."""
        try:
            delay = self.game.feedback_due(play) - self.game.elapsed()
            if delay > 0:
                await asyncio.sleep(delay)
            await self.send_frame(self.game.play_feedback_frame(play))
        finally:
            self._pending_feedback -= 1

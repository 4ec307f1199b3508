"""One session per game connection: reads frames, runs turns and chat, always ends every turn.

Lifecycle: the server creates a Session for each WebSocket, calls :meth:`Session.run`, and that
returns when the socket closes; :meth:`Session.close` then cancels whatever is still running
(LLM calls included) and flushes the transcript.

The rules this module exists to keep:
- Every AI turn ends with ``finish`` within ``turn.deadline`` seconds, whatever the player, the LLM
  or the game does. The game has no time-out of its own.
- A chatRequest is answered at once, in its own task, also while a turn is in progress.
- Bad frames are logged with a specific reason and never end the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import time
from dataclasses import dataclass, replace
from typing import Any

from agent.config import Config
from agent.geometry.collide import CLEARANCE_PX
from agent.geometry.feedback import correct_from_feedback
from agent.geometry.frames import Pose, normalize_rotation
from agent.geometry.repair import repair
from agent.images import ImageError, payload_summary, prepare_image
from agent.memory import Memory
from agent.players.base import Decision, Player, TurnView, board_of
from agent.protocol import (GameFrame, GameState, ProtocolError, chat_frame, error_frame, finish_frame,
                            parse_frame, play_frame)
from agent.transcript import Transcript

log = logging.getLogger(__name__)

SEND_MARGIN_S = 0.5
"""The turn's work stops this long before the deadline, so that ``finish`` still goes out in time."""
LARGE_FRAME = 256 * 1024
"""Frames above this are parsed in a worker thread so the event loop keeps serving other games."""


class Connection:
    """What a session needs from a socket; websockets' ServerConnection fits, and so do test fakes."""

    async def send(self, message: str) -> None: ...  # pragma: no cover

    async def recv(self) -> str | bytes: ...  # pragma: no cover


@dataclass(frozen=True)
class BadFrame:
    reason: str
    type_hint: str | None


class Session:
    def __init__(self, config: Config, connection: Any, player: Player, transcript: Transcript,
                 *, peer: str = "?") -> None:
        self.config = config
        self.ws = connection
        self.player = player
        self.transcript = transcript
        self.peer = peer
        self.memory = Memory(max(2, 2 * config.chat_history))
        self._turn_task: asyncio.Task[None] | None = None
        self._feedback: asyncio.Queue[GameFrame | BadFrame] = asyncio.Queue()
        self._chat_tasks: set[asyncio.Task[None]] = set()
        self._turn_ids = itertools.count(1)
        self._send_lock = asyncio.Lock()
        self._closed = False
        self._last_state: GameState | None = None
        self.stats = {"turns": 0, "turns_ended": 0, "chats": 0, "bad_frames": 0}

    # ------------------------------------------------------------------ lifecycle

    async def run(self, frames: Any) -> None:
        """Serve frames from an async iterator (the socket) until it ends."""
        self.transcript.record("session_start", peer=self.peer, player=self.player.name)
        async for raw in frames:
            await self.handle_raw(raw)

    async def close(self, reason: str = "disconnected", polite: bool = False) -> None:
        """Stop everything. ``polite``: the socket still works, so end a running turn properly."""
        if self._closed:
            return
        if polite and self._turn_task is not None and not self._turn_task.done():
            await self._say("I have to stop now: the AI partner is shutting down.")
            await self._send(finish_frame(), "finish")
        self._closed = True
        tasks = [t for t in (self._turn_task, *self._chat_tasks) if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        close = getattr(self.player, "aclose", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()
        self.transcript.record("session_end", reason=reason, **self.stats)
        await self.transcript.close()

    # ------------------------------------------------------------------ frames in

    async def handle_raw(self, raw: str | bytes) -> None:
        """Handle one frame. Never raises (except cancellation): a bad frame is logged and answered."""
        size = len(raw)
        try:
            if size > LARGE_FRAME:
                frame = await asyncio.to_thread(parse_frame, raw)
            else:
                frame = parse_frame(raw)
        except ProtocolError as exc:
            await self._bad_frame(BadFrame(str(exc), _type_hint(raw)), size)
            return
        self._record_in(frame, size)
        if frame.state.ignored:
            log.warning("%s: %s frame: ignored %s", self.peer, frame.type, "; ".join(frame.state.ignored[:5]))
        if frame.type == "playRequest":
            self._start_turn(frame)
        elif frame.type == "playFeedback":
            if self._turn_active():
                self._feedback.put_nowait(frame)
            else:
                log.warning("%s: playFeedback outside the AI's turn, ignored", self.peer)
        elif frame.type == "chatRequest":
            task = asyncio.create_task(self._answer_chat(frame), name="chat")
            self._chat_tasks.add(task)
            task.add_done_callback(self._chat_tasks.discard)
        else:  # the game reports a problem with one of our frames
            log.warning("%s: game reported an error: %s", self.peer, frame.message[:200])
            self.transcript.record("game_error", message=frame.message[:500])

    async def _bad_frame(self, bad: BadFrame, size: int) -> None:
        self.stats["bad_frames"] += 1
        log.warning("%s: bad frame (%d bytes): %s", self.peer, size, bad.reason)
        self.transcript.record("bad_frame", reason=bad.reason, bytes=size, type_hint=bad.type_hint)
        if self._turn_active():
            # The game may be waiting on us with state we cannot read: end the turn cleanly.
            self._feedback.put_nowait(bad)
        elif bad.type_hint == "playRequest":
            # A turn began but its frame is unreadable: the error frame ends it on the game's side.
            await self._send(error_frame(f"I could not read the game's request ({bad.reason})."), "error")
        elif bad.type_hint == "chatRequest":
            await self._say("Sorry, I could not read that message.")

    def _record_in(self, frame: GameFrame, size: int) -> None:
        data: dict[str, Any] = {"type": frame.type, "bytes": size, "objective": frame.objective,
                                "timestamp": frame.timestamp,
                                "state": frame.state.model_dump(exclude={"ignored"}) if frame.state else None}
        if frame.message:
            data["message"] = frame.message
        for key in ("board_img", "drawer_img"):
            value = getattr(frame, key)
            if value is not None:
                data[key] = payload_summary(value)
        if frame.state.ignored:
            data["ignored"] = frame.state.ignored
        self.transcript.record("frame_in", **data)

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

    async def _say(self, text: str) -> None:
        if text and text.strip():
            await self._send(chat_frame(text), "chat")

    # ------------------------------------------------------------------ turns

    def _turn_active(self) -> bool:
        return self._turn_task is not None and not self._turn_task.done()

    def _start_turn(self, frame: GameFrame) -> None:
        if self._turn_active():
            # The game only asks again once it considers the last turn over; follow the game.
            log.warning("%s: new playRequest while a turn was running; abandoning the old turn", self.peer)
            assert self._turn_task is not None
            self._turn_task.cancel()
        self._feedback = asyncio.Queue()
        turn_id = next(self._turn_ids)
        self._turn_task = asyncio.create_task(self._run_turn(frame, turn_id, self._feedback), name=f"turn-{turn_id}")

    async def _run_turn(self, frame: GameFrame, turn_id: int, feedback: asyncio.Queue[GameFrame | BadFrame]) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        self.stats["turns"] += 1
        self.transcript.record("turn_start", turn=turn_id, objective=frame.objective)
        outcome = "ended"
        try:
            async with asyncio.timeout_at(started + max(0.5, self.config.turn.deadline - SEND_MARGIN_S)):
                outcome = await self._play_turn(frame, feedback)
        except TimeoutError:
            outcome = "deadline"
            log.warning("%s: turn %d hit the %.0f s deadline", self.peer, turn_id, self.config.turn.deadline)
            await self._say("I ran out of time on this turn, sorry. Your go!")
        except asyncio.CancelledError:
            self.transcript.record("turn_end", turn=turn_id, outcome="cancelled",
                                   seconds=round(loop.time() - started, 3))
            raise
        except Exception as exc:  # a bug must cost one turn, never the session or the game
            outcome = "internal-error"
            log.exception("%s: turn %d failed", self.peer, turn_id)
            self.transcript.record("error", where="turn", error=f"{type(exc).__name__}: {exc}"[:500])
            await self._say("Something went wrong on my side this turn; your go!")
        await self._send(finish_frame(), "finish")
        self.stats["turns_ended"] += 1
        self.transcript.record("turn_end", turn=turn_id, outcome=outcome, seconds=round(loop.time() - started, 3))

    async def _play_turn(self, frame: GameFrame, feedback: asyncio.Queue[GameFrame | BadFrame]) -> str:
        self._note_partner_moves(frame.state)
        view = await self._view(frame)
        board = view.board()
        decision = await self.player.play(view)
        self.transcript.record("decision", source=decision.source, chat=decision.chat,
                               reasoning=decision.reasoning, pose=_pose_dict(decision.pose))
        said = False
        plays = 0
        while True:
            if decision.pose is None:
                await self._say(decision.chat)
                self.memory.add("agent", f"(passed) {decision.chat}")
                return "passed"
            others = {n: p for n, p in board.items() if n != decision.pose.piece}
            fixed = repair(decision.pose, others, clearance_px=CLEARANCE_PX)
            self.transcript.record("repair", proposed=_pose_dict(decision.pose), repaired=_pose_dict(fixed.pose),
                                   displacement=round(fixed.displacement, 3), reason=fixed.reason)
            if fixed.pose is None:
                await self._say(f"{fixed.reason} I'll pass this turn.")
                self.memory.add("agent", f"(passed) {fixed.reason}")
                return "no-valid-pose"
            pose = fixed.pose
            if not said:
                await self._say(decision.chat)
                said = True
            await self._send(play_frame(pose.piece, pose.x, pose.y, normalize_rotation(pose.rotation)), "play")
            plays += 1
            reply = await feedback.get()
            if isinstance(reply, BadFrame):
                await self._say("I couldn't read the game's answer to my move, so I'll stop here.")
                return "bad-feedback"
            self._last_state = reply.state
            reported = reply.state.on_board.get(pose.piece)
            collisions = list(reported.collisions) if reported is not None else ["(not on the board)"]
            if not collisions:
                self.memory.add("agent", f"(moved {pose.piece}) {decision.chat}")
                return "played"
            log.info("%s: %s collides with %s after play %d", self.peer, pose.piece, collisions, plays)
            if plays > self.config.turn.max_feedback_iterations:
                await self._say(f"I couldn't find a free spot for {pose.piece}, so it goes back.")
                return "gave-up"
            # Trust the game over our prediction: rebuild the board from what it just reported,
            # keeping the turn-start pose of a piece we did not move (it may have been pushed back).
            board = {**view.board(), **{n: p for n, p in board_of(reply.state).items() if n != pose.piece}}
            others = {n: p for n, p in board.items() if n != pose.piece}
            corrected = None
            if reported is not None:
                corrected = correct_from_feedback(pose, reported.position, reported.rotation, collisions, others)
            if corrected is not None:
                decision = replace(decision, pose=corrected, source=f"{decision.source}+feedback")
                continue
            adjust_view = replace(view, state=reply.state, collisions=collisions, previous=Decision(pose, decision.chat),
                                  attempt=plays)
            decision = await self.player.adjust(adjust_view)
            self.transcript.record("decision", source=decision.source, chat=decision.chat,
                                   reasoning=decision.reasoning, pose=_pose_dict(decision.pose), adjust=True)

    def _note_partner_moves(self, state: GameState) -> None:
        """Tell the memory what the partner moved since our last look, so both paths know."""
        before = self._last_state
        self._last_state = state
        if before is None:
            return
        for name, now in state.on_board.items():
            old = before.on_board.get(name)
            if old is None or abs(old.position[0] - now.position[0]) > 0.5 or abs(old.position[1] - now.position[1]) > 0.5 \
                    or abs(normalize_rotation(old.rotation) - normalize_rotation(now.rotation)) > 0.5:
                self.memory.add("event", f"partner moved {name} to ({now.position[0]:.0f}, {now.position[1]:.0f}),"
                                         f" rotation {normalize_rotation(now.rotation):g}")
        for name in before.on_board:
            if name not in state.on_board:
                self.memory.add("event", f"partner took {name} off the board")

    # ------------------------------------------------------------------ chat

    async def _answer_chat(self, frame: GameFrame) -> None:
        started = time.monotonic()
        self.stats["chats"] += 1
        message = frame.message.strip()
        if not message:
            return
        self.memory.add("player", message)
        view = await self._view(frame)
        try:
            async with asyncio.timeout(self.config.turn.deadline):
                reply = await self.player.chat(view)
        except TimeoutError:
            reply = "Sorry, I'm slow to answer right now."
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("%s: chat failed", self.peer)
            self.transcript.record("error", where="chat", error=f"{type(exc).__name__}: {exc}"[:500])
            reply = "Sorry, I couldn't think of an answer just now."
        self.memory.add("agent", reply)
        await self._say(reply)
        self.transcript.record("chat_reply", seconds=round(time.monotonic() - started, 3))

    # ------------------------------------------------------------------ views

    async def _view(self, frame: GameFrame) -> TurnView:
        cfg = self.config.images
        looks = getattr(self.player, "uses_images", True)  # the planner reads the state, not pictures
        wanted = {"board": looks and cfg.send_board and frame.board_img,
                  "drawer": looks and cfg.send_drawer and frame.drawer_img}
        prepared: dict[str, bytes | None] = {"board": None, "drawer": None}
        mime = "image/png" if cfg.format == "png" else "image/jpeg"
        for key, b64 in wanted.items():
            if not b64:
                continue
            try:
                image = await asyncio.to_thread(prepare_image, b64, cfg)
            except ImageError as exc:
                log.warning("%s: %s image left out: %s", self.peer, key, exc)
                self.transcript.record("image_error", image=key, reason=str(exc))
                continue
            prepared[key] = image.data
        return TurnView(objective=frame.objective, state=frame.state, memory=self.memory,
                        board_png=prepared["board"], drawer_png=prepared["drawer"], image_mime=mime,
                        message=frame.message)


def _pose_dict(pose: Pose | None) -> dict[str, Any] | None:
    if pose is None:
        return None
    return {"piece": pose.piece, "x": round(pose.x, 3), "y": round(pose.y, 3), "rotation": round(pose.rotation, 2)}


def _type_hint(raw: str | bytes) -> str | None:
    """Best guess at a broken frame's type, to know whether the game is waiting for an answer."""
    text = raw[:4096] if isinstance(raw, str) else raw[:4096].decode("utf-8", "ignore")
    for kind in ("playRequest", "playFeedback", "chatRequest"):
        if f'"{kind}"' in text or f'"{kind}"' in (raw[-4096:] if isinstance(raw, str) else ""):
            return kind
    return None


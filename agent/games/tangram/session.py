"""One session per game connection: reads frames, runs turns and chat, always ends every turn.

Lifecycle: the server creates a Session for each WebSocket, calls :meth:`Session.run`, and that
returns when the socket closes; :meth:`Session.close` then cancels whatever is still running
(LLM calls included) and flushes the transcript.

The rules this module exists to keep:
- Every AI turn ends with ``finish`` within ``turn.deadline`` seconds, whatever the player, the LLM
  or the game does. The game has no time-out of its own.
- A chatRequest is answered at once, in its own task, also while a turn is in progress.
- Bad frames are logged with a specific reason and never end the connection. One that arrives
  during the AI's turn ends that turn at once with an apology and ``finish``: the game may be
  waiting on an answer we could not read.
- Nothing a frame carries can grow without bound: texts are clipped, chat requests answered in
  parallel are capped, and a failure handling one frame is logged and costs only that frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import math
import time
from dataclasses import dataclass, replace
from typing import Any, Protocol

from agent.core.images import ImageError, ImagePool, payload_summary, prepare_image
from agent.core.memory import Memory, Speaker
from agent.core.transcript import Transcript, record_scope
from agent.games.tangram.config import Config
from agent.games.tangram.geometry.build_check import marker_mismatch
from agent.games.tangram.geometry.collide import CLEARANCE_PX, predict_collisions
from agent.games.tangram.geometry.feedback import correct_from_feedback
from agent.games.tangram.geometry.frames import Pose, normalize_rotation, pose_from_marker, rotation_to_send, start_pose
from agent.games.tangram.geometry.pieces import PIECES
from agent.games.tangram.geometry.repair import repair
from agent.games.tangram.players.base import Decision, Player, TurnView, board_of
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

log = logging.getLogger(__name__)

ANIMATION_S = 0.5
"""The game tweens every play for this long before it reports (GAME_FACTS). A ``finish`` or another
``play`` sent meanwhile is applied to the half-moved piece, so neither goes out while a play's
feedback is outstanding."""
FEEDBACK_GRACE_S = 1.5
"""When the turn's time is up (or a bad frame ends it) while a play's feedback is outstanding, wait
this long at most for that feedback before finishing: the animation, a frame, two PNGs."""
FINISH_MARGIN_S = 0.3
"""Kept free at the very end of the turn to send the last chat line and ``finish``."""
SEND_MARGIN_S = FEEDBACK_GRACE_S + FINISH_MARGIN_S
"""The turn's work (deciding, sending plays) stops this long before the deadline. A play can only
go out before then, so its feedback (waited for up to FEEDBACK_GRACE_S) and the ``finish`` still
fit within ``turn.deadline``, worst case."""
MIN_WORK_S = 0.2
FALLBACK_RESERVE_S = 3.0
"""A player's first decision must be ready this long before the turn's end, leaving time for a
fallback decision (the planner), the repair and the game's feedback."""
LARGE_FRAME = 256 * 1024
"""Frames above this are parsed in a worker thread so the event loop keeps serving other games."""
MAX_OBJECTIVE_CHARS = 300
MAX_MESSAGE_CHARS = 2000
"""Longer objectives and chat lines are clipped: they go into every prompt and the transcript."""
MAX_OPEN_CHATS = 4
"""Chat requests answered at once; more (a flood) get a short fixed reply without the LLM."""
POLITE_SEND_S = 2.0
"""How long a polite close waits to say goodbye to a game that is not reading."""


class _Interrupted(Exception):
    """A bad frame arrived before the turn's task had started."""


@dataclass(frozen=True)
class BadFrame:
    reason: str
    type_hint: str | None


@dataclass
class _Turn:
    """Book-keeping the frame reader shares with the running turn."""

    turn_id: int
    started: bool = False
    """False until the turn's task runs; an interrupt before that must not cancel it unstarted
    (a coroutine cancelled before its first step runs none of its clean-up: no finish)."""
    interruptible: bool = True
    """True while the turn is still deciding or playing; False once it is ending (finish on its way)."""
    interrupted: str | None = None
    """Why a bad frame asked the turn to end now."""
    awaiting_feedback: bool = False
    play_sent_at: float | None = None
    feedback_unreadable: bool = False
    """The answer to our play came but could not be read: the animation is over all the same."""
    ends_at: float = math.inf
    """Event-loop time by which ``finish`` must be out: the playRequest's arrival plus turn.deadline."""
    """Event-loop time of the last play sent; its feedback is outstanding while awaiting_feedback."""
    finish_claimed: bool = False
    """Set by whoever is about to send this turn's finish (the turn, or a polite close): only one does."""
    shutdown_finish: bool | None = None
    """Set when a polite close ended the turn: whether its finish went out (the turn's record says so)."""


class Supervisor(Protocol):
    """Someone watching the session who may step in: the experimenter console.

    It comes with the player (as ``player.supervisor``), because the server builds a session from a
    player source alone. Reviews of moves and chat lines happen inside the player's own calls and
    are bounded by the view's ``decide_by``, so the session's timing rules hold unchanged; the
    session only tells the supervisor that it exists and what each frame brought.
    """

    def attach(self, session: Session) -> Transcript:
        """The session is built; returns the transcript it writes to (the same one, watched)."""
        ...

    def frame_in(self, frame: GameFrame) -> None:
        """A readable frame arrived, images as the game sent them. Never blocks."""
        ...


class Session:
    def __init__(self, config: Config, connection: Any, player: Player, transcript: Transcript,
                 *, peer: str = "?", study: dict[str, Any] | None = None) -> None:
        self.config = config
        self.ws = connection
        self.player = player
        self.transcript = transcript
        self.peer = peer
        self.memory = Memory(max(2, 2 * config.chat_history))
        self._turn_task: asyncio.Task[None] | None = None
        self._turn: _Turn | None = None
        self._feedback: asyncio.Queue[GameFrame] = asyncio.Queue()
        self._chat_tasks: set[asyncio.Task[None]] = set()
        self._turn_ids = itertools.count(1)
        self._chat_ids = itertools.count(1)
        self.study = study or {}
        """Study metadata for session_start (agent version, config and template hashes, tags)."""
        self._send_lock = asyncio.Lock()
        self._closed = False
        self._last_state: GameState | None = None
        self._own_moves: dict[str, Pose] = {}
        """Where our plays of the last turn left each piece, so it is not taken for the partner's move."""
        self._build_warned = False
        self.stats = {"turns": 0, "turns_ended": 0, "chats": 0, "bad_frames": 0}
        self.images: ImagePool | None = None
        """The process's image decoding threads (the server sets it); None: the default thread pool."""
        self.supervisor: Supervisor | None = getattr(player, "supervisor", None)
        if self.supervisor is not None:
            self.transcript = self.supervisor.attach(self)

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
        turn = self._turn
        if polite and self._turn_active() and turn is not None:
            # A game that stopped reading must not hold up the shutdown, hence the time-outs.
            if not turn.finish_claimed:
                turn.finish_claimed = True
                turn.interruptible = False
                if turn.awaiting_feedback and turn.play_sent_at is not None:
                    # Never finish while the game still animates our last play (GAME_FACTS).
                    loop = asyncio.get_running_loop()
                    await asyncio.sleep(max(0.0, turn.play_sent_at + ANIMATION_S + 0.1 - loop.time()))
                turn.shutdown_finish = False
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(POLITE_SEND_S):
                        await self._say("I have to stop now: the AI partner is shutting down.")
                        turn.shutdown_finish = await self._send(finish_frame(), "finish")
                self.stats["turns_ended"] += 1
            else:  # the turn is sending its own finish: let it
                assert self._turn_task is not None
                await asyncio.wait({self._turn_task}, timeout=POLITE_SEND_S)
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
            if size > LARGE_FRAME:
                frame = await asyncio.to_thread(parse_frame, raw)
            else:
                frame = parse_frame(raw)
        except ProtocolError as exc:
            await self._bad_frame(BadFrame(str(exc), _type_hint(raw)), size)
            return
        frame = _clip(frame, self.peer)
        # Ids that let an analyst join a frame to its turn or a chat request to its reply.
        ids: dict[str, int] = {}
        if frame.type == "playRequest":
            ids["turn"] = next(self._turn_ids)
        elif frame.type == "chatRequest":
            ids["request"] = next(self._chat_ids)
        if "turn" not in ids and self._turn is not None and self._turn_active():
            ids["turn"] = self._turn.turn_id
        self._record_in(frame, size, ids)
        if self.supervisor is not None:
            try:
                self.supervisor.frame_in(frame)
            except Exception:  # the console must never cost the game a frame
                log.exception("%s: supervisor failed on a frame", self.peer)
        if frame.state.ignored:
            log.warning("%s: %s frame: ignored %s", self.peer, frame.type, "; ".join(frame.state.ignored[:5]))
        self._check_build(frame.state)
        if frame.type == "playRequest":
            self._start_turn(frame, ids["turn"])
        elif frame.type == "playFeedback":
            # Only an answer to a play we are waiting for counts; a stray one would be taken for the
            # answer to our next play (and each holds two images).
            if self._turn is not None and self._turn_active() and self._turn.awaiting_feedback \
                    and self._feedback.empty():
                self._feedback.put_nowait(frame)
            else:
                log.warning("%s: playFeedback we did not ask for, ignored", self.peer)
        elif frame.type == "chatRequest":
            if len(self._chat_tasks) >= MAX_OPEN_CHATS:
                log.warning("%s: %d chat requests still being answered; this one gets a short reply",
                            self.peer, len(self._chat_tasks))
                busy = "One moment please, I'm still answering your earlier messages."
                with record_scope(request=ids["request"]):
                    await self._say(busy)
                    self.transcript.record("chat_reply", reply=busy, outcome="busy", seconds=0.0)
                return
            task = asyncio.create_task(self._answer_chat(frame, ids["request"]), name="chat")
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
            if bad.type_hint == "playFeedback" and self._turn is not None and self._turn.awaiting_feedback:
                # The feedback did come (unreadable): the animation is over, nothing more to wait for.
                self._turn.feedback_unreadable = True
                if not self._turn.interruptible and self._feedback.empty():
                    # The turn is already ending and waits for this feedback: an empty one wakes it.
                    self._feedback.put_nowait(GameFrame(type="playFeedback"))
            # The game may be waiting on us with state we cannot read: end the turn cleanly.
            self._interrupt_turn(bad.reason)
        elif bad.type_hint == "playRequest":
            # A turn began but its frame is unreadable. Only finish ends it: the game build users run
            # ignores an error frame and would wait on this turn for ever (GAME_FACTS).
            self.transcript.record("unreadable_request", reason=bad.reason[:200], answered="finish")
            await self._say("I couldn't read the game's request, so I'll skip this turn. Your go!")
            await self._send(finish_frame(), "finish")
        elif bad.type_hint == "chatRequest":
            await self._say("Sorry, I could not read that message.")

    def _record_in(self, frame: GameFrame, size: int, ids: dict[str, int]) -> None:
        stamp = frame.timestamp
        if isinstance(stamp, str):
            stamp = stamp[:64]
        elif isinstance(stamp, float) and not math.isfinite(stamp):
            stamp = str(stamp)
        data: dict[str, Any] = {"type": frame.type, "bytes": size, "objective": frame.objective,
                                "timestamp": stamp,
                                "state": frame.state.model_dump(exclude={"ignored"}) if frame.state else None}
        if frame.message:
            data["message"] = frame.message
        for key in ("board_img", "drawer_img"):
            value = getattr(frame, key)
            if value is not None:
                data[key] = payload_summary(value)
        if frame.state.ignored:
            data["ignored"] = frame.state.ignored[:20]
            data["ignored_count"] = len(frame.state.ignored)
        self.transcript.record("frame_in", **data, **ids)

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

    # ------------------------------------------------------------------ turns

    def _turn_active(self) -> bool:
        return self._turn_task is not None and not self._turn_task.done()

    def _start_turn(self, frame: GameFrame, turn_id: int | None = None) -> None:
        if self._turn_active():
            # The game only asks again once it considers the last turn over; follow the game.
            log.warning("%s: new playRequest while a turn was running; abandoning the old turn", self.peer)
            assert self._turn_task is not None
            self._turn_task.cancel()
        self._feedback = asyncio.Queue()
        turn = self._turn = _Turn(turn_id if turn_id is not None else next(self._turn_ids))
        self._turn_task = asyncio.create_task(self._run_turn(frame, turn, self._feedback), name=f"turn-{turn.turn_id}")

    def _interrupt_turn(self, reason: str) -> None:
        """End the running turn now (a frame we could not read arrived during it)."""
        turn, task = self._turn, self._turn_task
        if turn is None or task is None or task.done() or not turn.interruptible or turn.interrupted is not None:
            return  # already ending: its finish is on the way
        turn.interrupted = reason
        if turn.started:
            task.cancel()  # _run_turn tells this cancel from a real one by turn.interrupted
        # else: _run_turn sees turn.interrupted as soon as it starts and ends the turn there

    async def _run_turn(self, frame: GameFrame, turn: _Turn, feedback: asyncio.Queue[GameFrame]) -> None:
        # Every record made during the turn (decision, repair, llm, frames out) carries its id.
        with record_scope(turn=turn.turn_id):
            await self._run_scoped_turn(frame, turn, feedback)

    async def _run_scoped_turn(self, frame: GameFrame, turn: _Turn, feedback: asyncio.Queue[GameFrame]) -> None:
        turn.started = True
        loop = asyncio.get_running_loop()
        started = loop.time()
        turn_id = turn.turn_id
        self.stats["turns"] += 1
        self.transcript.record("turn_start", turn=turn_id, objective=frame.objective)
        outcome = "ended"
        turn.ends_at = started + self.config.turn.deadline
        work_until = started + max(MIN_WORK_S, self.config.turn.deadline - SEND_MARGIN_S)
        try:
            try:
                if turn.interrupted is not None:
                    raise _Interrupted
                async with asyncio.timeout_at(work_until):
                    reserve = min(FALLBACK_RESERVE_S, 0.4 * (work_until - started))  # short test deadlines
                    outcome = await self._play_turn(frame, feedback, turn, work_until - reserve)
            finally:
                turn.interruptible = False
        except _Interrupted:
            outcome = await self._interrupted(turn)
        except TimeoutError:
            outcome = "deadline"
            log.warning("%s: turn %d hit the %.0f s deadline", self.peer, turn_id, self.config.turn.deadline)
            await self._say("I ran out of time on this turn, sorry. Your go!")
        except asyncio.CancelledError:
            task = asyncio.current_task()
            # uncancel() == 0: our interrupt was the only cancel; anything else (the game left,
            # a new playRequest, shutdown) really cancels the turn.
            if turn.interrupted is None or task is None or task.uncancel() > 0:
                # What the game saw: a shutdown that sent finish is not a turn cut off silently.
                ended = {"outcome": "cancelled"} if turn.shutdown_finish is None else {
                    "outcome": "shutdown", "finish_sent": turn.shutdown_finish}
                self.transcript.record("turn_end", turn=turn_id, seconds=round(loop.time() - started, 3), **ended)
                raise
            outcome = await self._interrupted(turn)
        except Exception as exc:  # a bug must cost one turn, never the session or the game
            outcome = "internal-error"
            log.exception("%s: turn %d failed", self.peer, turn_id)
            self.transcript.record("error", where="turn", error=f"{type(exc).__name__}: {exc}"[:500])
            await self._say("Something went wrong on my side this turn; your go!")
        if not turn.finish_claimed:
            await self._settle_feedback(turn, feedback)
        if not turn.finish_claimed:
            turn.finish_claimed = True
            await self._send(finish_frame(), "finish")
            self.stats["turns_ended"] += 1
        pieces = len(self._last_state.on_board) if self._last_state is not None else None
        self.transcript.record("turn_end", turn=turn_id, outcome=outcome, seconds=round(loop.time() - started, 3),
                               pieces_on_board=pieces)

    async def _settle_feedback(self, turn: _Turn, feedback: asyncio.Queue[GameFrame]) -> None:
        """A play's feedback is still outstanding: wait for it (a bounded time) so that ``finish``
        never reaches the game while it animates the piece."""
        if not turn.awaiting_feedback or turn.feedback_unreadable:
            return
        loop = asyncio.get_running_loop()
        until = min(loop.time() + FEEDBACK_GRACE_S, turn.ends_at - FINISH_MARGIN_S)
        if turn.play_sent_at is not None:  # never less than the animation itself
            until = max(until, turn.play_sent_at + ANIMATION_S + 0.1)
        try:
            async with asyncio.timeout_at(until):
                reply = await feedback.get()
            self._note_own_feedback(turn, reply)
        except TimeoutError:
            log.warning("%s: turn %d: no feedback %.1f s after the last play; finishing anyway", self.peer,
                        turn.turn_id, loop.time() - (turn.play_sent_at or loop.time()))
        turn.awaiting_feedback = False

    def _note_own_feedback(self, turn: _Turn, reply: GameFrame) -> None:
        """The late feedback of our last play (the turn ends now whatever it says)."""
        collisions = {name: list(p.collisions) for name, p in reply.state.on_board.items() if p.collisions}
        self.transcript.record("late_feedback", turn=turn.turn_id, collisions=collisions)

    async def _interrupted(self, turn: _Turn) -> str:
        log.info("%s: turn %d ends early after an unreadable frame", self.peer, turn.turn_id)
        await self._say("I couldn't read the game's answer to my move, so I'll stop here. Your go!"
                        if turn.awaiting_feedback else
                        "I couldn't read the game's last message, so I'm ending my turn here. Your go!")
        return "bad-frame"

    async def _play_turn(self, frame: GameFrame, feedback: asyncio.Queue[GameFrame], turn: _Turn,
                         decide_by: float) -> str:
        self._note_partner_moves(frame.state)
        # The player gets the view while its images are still being prepared, and does its own
        # preparation (the board description, a hint) meanwhile.
        view = await self._view(frame, decide_by=decide_by, lazy_images=True)
        try:
            decision = await self.player.play(view)
        finally:
            await _drop(view.pending_images)  # a player that never looked at them (the planner, a wizard)
        board = view.board()
        self.transcript.record("decision", source=decision.source, chat=decision.chat,
                               reasoning=decision.reasoning, pose=_pose_dict(decision.pose), **_marks(decision))
        latest = frame.state
        """The newest state the game reported: where each piece is and its unnormalised rotation."""
        said = False
        plays = 0
        resent: Pose | None = None
        resend: Pose | None = None
        while True:
            if resend is not None:
                pose, resend = resend, None
            else:
                if decision.pose is None:
                    await self._say(decision.chat)
                    self._remember("agent", f"(passed) {decision.chat}")
                    return "passed"
                others = {n: p for n, p in board.items() if n != decision.pose.piece}
                fixed = repair(decision.pose, others, clearance_px=CLEARANCE_PX)
                self.transcript.record("repair", proposed=_pose_dict(decision.pose),
                                       repaired=_pose_dict(fixed.pose), displacement=round(fixed.displacement, 3),
                                       reason=fixed.reason)
                if fixed.pose is None:
                    await self._say(f"{fixed.reason} I'll pass this turn.")
                    self._remember("agent", f"(passed) {fixed.reason}")
                    return "no-valid-pose"
                pose = fixed.pose
            if not self._time_for_a_play(turn):
                await self._say("I'm out of time to move a piece this turn, sorry. Your go!")
                return "no-time"
            if not said:
                await self._say(decision.chat)
                said = True
            reply = await self._play(pose, latest, feedback, turn)
            plays += 1
            latest = reply.state
            reported = reply.state.on_board.get(pose.piece)
            collisions = list(reported.collisions) if reported is not None else ["(not on the board)"]
            if not collisions:
                # Only a move that stands changes what we know; a colliding one is put back by the
                # game, and must not look like the partner's move at the next turn.
                self._last_state = reply.state
                self._remember("agent", f"(moved {pose.piece}) {decision.chat}")
                return "played"
            log.info("%s: %s collides with %s after play %d", self.peer, pose.piece, collisions, plays)
            # Trust the game over our prediction: rebuild the board from what it just reported,
            # keeping the turn-start pose of a piece we did not move (it may have been pushed back).
            board = {**view.board(), **{n: p for n, p in board_of(reply.state).items() if n != pose.piece}}
            others = {n: p for n, p in board.items() if n != pose.piece}
            if reported is not None and resent is None and self._contradicts(pose.piece, reported.position,
                                                                          reported.rotation, collisions, others):
                # Godot may list overlaps one physics step old (GAME_FACTS): our exact geometry says the
                # reported pose is clear, so the same play again (a zero-length move) settles it.
                resent = resend = pose
                self.transcript.record("stale_feedback", piece=pose.piece, collisions=collisions)
                continue
            if plays - (resent is not None) > self.config.turn.max_feedback_iterations:  # a re-send corrects nothing
                return await self._give_up(pose.piece, view.state, latest, feedback, turn)
            corrected = None
            if reported is not None:
                corrected = correct_from_feedback(pose, reported.position, reported.rotation, collisions, others)
            if corrected is not None:
                decision = replace(decision, pose=corrected, source=f"{decision.source}+feedback")
                continue
            # The board as the game shows it now (our piece where it collides), image included.
            adjust_view = replace(await self._view(reply, decide_by=decide_by, lazy_images=True),
                                  collisions=collisions, previous=Decision(pose, decision.chat), attempt=plays)
            try:
                decision = await self.player.adjust(adjust_view)
            finally:
                await _drop(adjust_view.pending_images)
            self.transcript.record("decision", source=decision.source, chat=decision.chat,
                                   reasoning=decision.reasoning, pose=_pose_dict(decision.pose), adjust=True,
                                   **_marks(decision))

    def _time_for_a_play(self, turn: _Turn) -> bool:
        """A play must be seen through before the deadline: its animation, its feedback, finish."""
        return asyncio.get_running_loop().time() + FEEDBACK_GRACE_S + FINISH_MARGIN_S <= turn.ends_at

    async def _play(self, pose: Pose, latest: GameState, feedback: asyncio.Queue[GameFrame], turn: _Turn) -> GameFrame:
        """Send one play (turning the short way from where the piece is now) and wait for its feedback."""
        current = _reported_rotation(latest, pose.piece)
        rotation = rotation_to_send(current, pose.rotation)
        await self._send(play_frame(pose.piece, pose.x, pose.y, rotation), "play")
        self._own_moves[pose.piece] = pose
        turn.play_sent_at = asyncio.get_running_loop().time()
        turn.awaiting_feedback = True
        reply = await feedback.get()
        turn.awaiting_feedback = False
        return reply

    @staticmethod
    def _contradicts(piece: str, marker: tuple[float, float], rotation: float, collisions: list[str],
                     others: dict[str, Pose]) -> bool:
        """True when our geometry finds the reported pose clear of everything the game reports."""
        actual = pose_from_marker(piece, marker[0], marker[1], rotation)
        known = set(others) | {"BOUNDARY"}
        if any(c not in known for c in collisions):
            return False
        return not predict_collisions(actual, others, 0.0)

    async def _give_up(self, piece: str, start: GameState, latest: GameState, feedback: asyncio.Queue[GameFrame],
                       turn: _Turn) -> str:
        """No clear spot after the corrections allowed. Put the piece back where it was at the turn's
        start (so nothing is left overlapping for the finish check), if there is time; say what
        really happened either way."""
        back = _start_of_turn_pose(start, piece)
        if self._time_for_a_play(turn):
            reply = await self._play(back, latest, feedback, turn)
            reported = reply.state.on_board.get(piece)
            if reported is None or not reported.collisions:
                self._own_moves.pop(piece, None)
                self._last_state = reply.state
                await self._say(f"I couldn't find a clear spot for {piece}, so I put it back where it was.")
                self._remember("agent", f"(could not place {piece}; put it back)")
                return "gave-up"
        await self._say(f"I couldn't find a clear spot for {piece} this turn, sorry.")
        self._remember("agent", f"(could not place {piece})")
        return "gave-up"

    def _note_partner_moves(self, state: GameState) -> None:
        """Tell the memory what the partner moved since our last look, so both paths know."""
        before = self._last_state
        own, self._own_moves = self._own_moves, {}
        self._last_state = state
        if before is None:
            return
        for name, now in state.on_board.items():
            old = before.on_board.get(name)
            mine = own.get(name)
            if mine is not None and _same_place(mine.marker_board(), mine.rotation, now.position, now.rotation):
                continue  # where our own play left it (its feedback may never have reached us)
            if old is None or not _same_place(old.position, old.rotation, now.position, now.rotation):
                self._remember("event", f"partner moved {name} to ({now.position[0]:.0f}, {now.position[1]:.0f}),"
                                        f" rotation {normalize_rotation(now.rotation):g}")
        for name in before.on_board:
            if name not in state.on_board:
                self._remember("event", f"partner took {name} off the board")

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

    def _remember(self, speaker: Speaker, text: str) -> None:
        # The memory goes into every prompt: one unencodable character would fail every LLM call.
        self.memory.add(speaker, utf8_safe(text))

    # ------------------------------------------------------------------ chat

    async def _answer_chat(self, frame: GameFrame, request_id: int) -> None:
        # The LLM call and the chat line sent carry the request's id too.
        with record_scope(request=request_id):
            await self._answer_scoped_chat(frame)

    async def _answer_scoped_chat(self, frame: GameFrame) -> None:
        started = time.monotonic()
        self.stats["chats"] += 1
        message = frame.message.strip()
        if not message:
            self.transcript.record("chat_reply", reply=None, outcome="empty", seconds=0.0)
            return
        self._remember("player", message)
        outcome = "answered"
        try:
            async with asyncio.timeout(self.config.turn.deadline):
                # Chat prompts show the board, and the drawer too when the config asks for it.
                view = await self._view(frame, drawer=self.config.llm.chat_drawer_image)
                reply = await self.player.chat(view)
        except TimeoutError:
            reply, outcome = "Sorry, I'm slow to answer right now.", "timeout"
        except asyncio.CancelledError:
            self.transcript.record("chat_reply", reply=None, outcome="cancelled",
                                   seconds=round(time.monotonic() - started, 3))
            raise
        except Exception as exc:
            log.exception("%s: chat failed", self.peer)
            self.transcript.record("error", where="chat", error=f"{type(exc).__name__}: {exc}"[:500])
            reply, outcome = "Sorry, I couldn't think of an answer just now.", "error"
        self._remember("agent", reply)
        await self._say(reply)
        self.transcript.record("chat_reply", reply=reply, outcome=outcome, seconds=round(time.monotonic() - started, 3))

    # ------------------------------------------------------------------ views

    async def _prepare(self, key: str, b64: str, encode: bool = True) -> Any:
        """One image as the LLM gets it (bytes; with ``encode=False`` the pixels when they need
        encoding), or None (recorded) when it is broken."""
        cfg = self.config.images
        try:
            if self.images is not None:
                image = await self.images.prepare(b64, cfg, encode)
            else:
                image = await asyncio.to_thread(prepare_image, b64, cfg, encode)
        except Exception as exc:  # ImageError, or whatever else a hostile PNG makes Pillow raise
            reason = str(exc) if isinstance(exc, ImageError) else f"broken image ({type(exc).__name__})"
            log.warning("%s: %s image left out: %s", self.peer, key, reason)
            self.transcript.record("image_error", image=key, reason=reason)
            return None
        return image.pixels if image.pixels is not None else image.data

    async def _view(self, frame: GameFrame, *, drawer: bool = True, decide_by: float | None = None,
                    lazy_images: bool = False) -> TurnView:
        """The player's view of ``frame``. ``lazy_images``: return at once, the images still being
        prepared (``view.with_images()`` waits for them); the caller cancels them if unused."""
        cfg = self.config.images
        looks = getattr(self.player, "uses_images", True)  # the planner reads the state, not pictures
        wanted = {"board": looks and cfg.send_board and frame.board_img,
                  "drawer": looks and drawer and cfg.send_drawer and frame.drawer_img}
        mime = "image/png" if cfg.format == "png" else "image/jpeg"
        # Both images at once (the pool's threads; Pillow works outside the GIL): a turn waits for
        # the slower one, not for the sum.
        pending = asyncio.ensure_future(self._prepare_both(wanted))
        view = TurnView(objective=frame.objective, state=frame.state, memory=self.memory, image_mime=mime,
                        message=frame.message, decide_by=decide_by, pending_images=pending)
        return view if lazy_images else await view.with_images()

    async def _prepare_both(self, wanted: dict[str, Any]) -> tuple[Any, bytes | None]:
        board, drawer = wanted["board"], wanted["drawer"]
        # A player that draws marks on the board encodes it once, marks included: not here too.
        encode_board = not getattr(self.player, "marks_board", False)
        got = await asyncio.gather(self._prepare("board", str(board), encode_board) if board else _nothing(),
                                   self._prepare("drawer", str(drawer)) if drawer else _nothing())
        return got[0], got[1]


async def _nothing() -> None:
    return None


async def _drop(task: asyncio.Future[Any] | None) -> None:
    """Cancel ``task`` if it is still running and wait until it has stopped (a worker thread it
    waits on finishes on its own; nothing of the task is left behind)."""
    if task is not None and not task.done():
        task.cancel()
        await asyncio.wait({task})


def _same_place(a: tuple[float, float], rot_a: float, b: tuple[float, float], rot_b: float) -> bool:
    return abs(a[0] - b[0]) <= 0.5 and abs(a[1] - b[1]) <= 0.5 and \
        min(abs(normalize_rotation(rot_a) - normalize_rotation(rot_b)),
            360.0 - abs(normalize_rotation(rot_a) - normalize_rotation(rot_b))) <= 0.5


def _reported_rotation(state: GameState, piece: str) -> float:
    """The piece's rotation as the game last reported it (unnormalised), or its start rotation."""
    if piece in state.on_board:
        return state.on_board[piece].rotation
    if piece in state.off_board:
        return state.off_board[piece].rotation
    return PIECES[piece].start_rotation


def _start_of_turn_pose(state: GameState, piece: str) -> Pose:
    """Where the piece was when the turn began: its reported pose on the board, or its drawer slot
    (a piece off the board always sits at its start position, with the reported rotation)."""
    entry = state.on_board.get(piece)
    if entry is not None:
        return pose_from_marker(piece, entry.position[0], entry.position[1], entry.rotation)
    drawer = start_pose(piece)
    rotation = state.off_board[piece].rotation if piece in state.off_board else drawer.rotation
    return Pose(piece, drawer.x, drawer.y, rotation)


def _marks(decision: Decision) -> dict[str, Any]:
    """An LLM decision's record says whether it named a checked candidate (its letter) or made its
    own move (null), and which marks the board image it saw carried."""
    return {"candidate": decision.candidate, "image_layers": list(decision.image_layers)}


def _pose_dict(pose: Pose | None) -> dict[str, Any] | None:
    if pose is None:
        return None
    return {"piece": pose.piece, "x": round(pose.x, 3), "y": round(pose.y, 3), "rotation": round(pose.rotation, 2)}


def _clip(frame: GameFrame, peer: str) -> GameFrame:
    """Bound the free texts a frame carries (they go into prompts, memory and the transcript)."""
    update: dict[str, str] = {}
    for name, limit in (("objective", MAX_OBJECTIVE_CHARS), ("message", MAX_MESSAGE_CHARS)):
        value: str = getattr(frame, name)
        if len(value) > limit:
            log.warning("%s: %s of %d characters clipped to %d", peer, name, len(value), limit)
            value = value[:limit]
        if value is not getattr(frame, name):
            update[name] = value
    return frame.model_copy(update=update) if update else frame


def _type_hint(raw: str | bytes) -> str | None:
    """Best guess at a broken frame's type, to know whether the game is waiting for an answer."""
    ends = (raw[:4096], raw[-4096:])
    text = "".join(e if isinstance(e, str) else e.decode("utf-8", "ignore") for e in ends)
    for kind in ("playRequest", "playFeedback", "chatRequest"):
        if f'"{kind}"' in text:
            return kind
    return None

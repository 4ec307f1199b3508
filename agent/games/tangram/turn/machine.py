"""The AI's turn as a state machine: events in, actions out, no I/O and no clock.

One :class:`TurnMachine` lives per session (a connection). The session feeds it events
(:mod:`.events`), each carrying the time it happened, and carries out the actions it returns
(:mod:`.actions`) in order. The rules the real game needs (GAME_FACTS) are kept here and only here:

- ``finish`` is sent once per turn, and only on entering FINISHED (:meth:`TurnMachine._finish`
  is the one place that emits it);
- neither a ``play`` nor the ``finish`` goes out while a play's feedback is outstanding, whatever
  the deadline says: the turn waits for it (bounded only by the hard cap, timing.FEEDBACK_LOST_S);
- the time the game takes to land a play is learnt from this connection's plays and reserved
  before a play is started: a play that could not land before the deadline is not started;
- a decision that comes back after its turn moved on (the deadline, a bad frame, a new turn) is
  dropped;
- a bug while handling an event ends the turn politely (a chat line, then ``finish``), and every
  turn ends whatever the player or the game does: by its deadline, unless the game is slower to
  land a play than it has been (then by as much), at the latest at the hard cap;
- the turn's own chat lines say what happened (nothing played, the piece put back, left for the
  game to check); their words are in prompts/tangram/turn_lines.j2.

Phases: IDLE (no turn) -> DECIDING (the player's move) -> PLAYING (a play is out, its feedback
awaited) -> ADJUSTING (the player corrects after a reported collision) -> PLAYING ... ; any of them
-> SETTLING (the turn is over but a play's feedback is still outstanding, or its animation still
runs) -> FINISHED (``finish`` sent) -> IDLE once the session reports it sent. See docs/turns.md.
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace
from typing import Literal

from agent.games.tangram.contract import Decision, board_of
from agent.games.tangram.geometry.collide import CLEARANCE_PX
from agent.games.tangram.geometry.feedback import correct_from_feedback
from agent.games.tangram.geometry.frames import Pose, rotation_to_send
from agent.games.tangram.geometry.repair import repair
from agent.games.tangram.protocol import GameFrame, GameState
from agent.games.tangram.turn import actions as act
from agent.games.tangram.turn import events as ev
from agent.games.tangram.turn.reports import (
    contradicts,
    decision_fields,
    partner_moves,
    pose_dict,
    reported_rotation,
    start_of_turn_pose,
)
from agent.games.tangram.turn.state import (
    ASKING,
    HOLD,
    LOST,
    SETTLE,
    THINKING,
    WORK,
    LineName,
    Phase,
    TurnLines,
    TurnRules,
    TurnState,
)
from agent.games.tangram.turn.timing import (
    ANIMATION_MARGIN_S,
    ANIMATION_S,
    FEEDBACK_LOST_S,
    LandingTimes,
    TurnTimes,
)


class TurnMachine:
    """The turn's rules. :meth:`handle` never raises and never blocks."""

    def __init__(self, rules: TurnRules) -> None:
        if rules.lines is None:
            raise ValueError("TurnRules.lines is required: the words of the turn's own chat lines "
                             "(agent.games.tangram.turn.lines)")
        self.rules = rules
        self._lines: TurnLines = rules.lines
        self._landing = LandingTimes()
        """How long this connection's game takes to land a play, learnt from its feedbacks."""
        self.phase = Phase.IDLE
        self._turn: TurnState | None = None
        self._asks = 0
        self._timers: dict[str, float] = {}
        self._quiet_at = -math.inf
        """Until then the game may still animate our last play (its feedback has not come)."""
        self.last_state: GameState | None = None
        """What the game reported last (the turn's request, or the feedback of a move that stood)."""
        self._own_moves: dict[str, Pose] = {}
        """Where our plays of the last turn left each piece, so it is not taken for the partner's move."""
        self._out: list[act.Action] = []
        self.partner_lang = "en"
        """The language of the partner's last chat line (the game's own before any): the turn's
        own lines and the "thinking" line are said in it."""

    @property
    def turn_id(self) -> int | None:
        return self._turn.turn_id if self._turn is not None else None

    @property
    def landing_s(self) -> float:
        """The time reserved for a play to land, as learnt so far on this connection."""
        return self._landing.reserve(self.rules.deadline)

    @property
    def shutdown_wait_s(self) -> float:
        """The longest a polite stop waits for the machine's finish (the landing of a play out now)."""
        return max(ANIMATION_S + ANIMATION_MARGIN_S, self.landing_s)

    @property
    def busy(self) -> bool:
        """A turn is in progress (its finish has not been reported sent)."""
        return self.phase is not Phase.IDLE

    # ------------------------------------------------------------------ dispatch

    def handle(self, event: ev.Event) -> list[act.Action]:
        """The actions ``event`` calls for, in the order they are to be carried out."""
        self._out = []
        try:
            self._dispatch(event)
        except Exception as exc:  # a bug must cost one turn, never the session or the game
            self._bug(event.at, exc)
        out, self._out = self._out, []
        return out

    def _dispatch(self, event: ev.Event) -> None:
        match event:
            case ev.TurnRequested():
                self._on_request(event)
            case ev.DecisionReady():
                self._on_decision(event)
            case ev.DecisionFailed():
                if self._current_ask(event.ask_id):
                    raise _PlayerFailed(event.error)
            case ev.Feedback():
                self._on_feedback(event.at, event.frame)
            case ev.Unreadable():
                self._on_unreadable(event)
            case ev.FrameSent():
                self._on_sent(event)
            case ev.Timer():
                self._on_timer(event)
            case ev.Shutdown():
                self._on_shutdown(event.at)
            case ev.Closed():
                self._on_closed(event.at)
            case ev.PartnerLanguage():
                self.partner_lang = event.lang

    def _emit(self, *actions: act.Action) -> None:
        self._out.extend(actions)

    def _record(self, kind: str, **fields: object) -> None:
        self._emit(act.Record(kind, dict(fields)))

    def _say(self, line: LineName, *, piece: str = "", reason: str = "") -> None:
        """One of the turn's own lines, in the template's words and the partner's language."""
        self._emit(act.Say(self._lines(line, piece=piece, reason=reason, lang=self.partner_lang)))

    def _timer(self, name: str, at: float) -> None:
        self._timers[name] = at
        self._emit(act.SetTimer(name, at))

    def _current_ask(self, ask_id: int) -> bool:
        t = self._turn
        current = t is not None and self.phase in ASKING and t.ask_id == ask_id
        if not current:
            self._emit(act.Log(logging.INFO, f"a decision (ask {ask_id}) came after its turn moved on; dropped"))
        return current

    # ------------------------------------------------------------------ a turn begins

    def _on_request(self, event: ev.TurnRequested) -> None:
        if self.busy:
            # The game only asks again once it considers the last turn over; follow the game. A
            # finish for the old turn now would end the new one.
            self._emit(act.Log(logging.WARNING, "new playRequest while a turn was running; abandoning the old turn"))
            self._abandon(event.at, "cancelled")
        times = TurnTimes.of(event.at, self.rules.deadline, self.landing_s)
        t = self._turn = TurnState(event.turn_id, times, frame=event.frame, latest=event.frame.state,
                               board=board_of(event.frame.state))
        self._record("turn_start", turn=t.turn_id, objective=event.frame.objective)
        for speaker, text in partner_moves(self.last_state, event.frame.state, self._own_moves):
            self._emit(act.Remember(speaker, text))
        self.last_state, self._own_moves = event.frame.state, {}
        self._timer(WORK, times.work_until)
        after = self.rules.thinking_after_s
        if after is not None and event.at + after < times.work_until:
            self._timer(THINKING, event.at + after)
        self._ask(Phase.DECIDING, "play", event.frame)

    def _ask(self, phase: Phase, kind: Literal["play", "adjust"], frame: GameFrame, *,
             collisions: tuple[str, ...] = (), previous: Decision | None = None, attempt: int = 0) -> None:
        t = self._need_turn()
        self._asks += 1
        t.ask_id = self._asks
        self.phase = phase
        self._emit(act.AskPlayer(self._asks, kind, frame, t.times.decide_by, collisions, previous, attempt))

    # ------------------------------------------------------------------ decisions and plays

    def _on_decision(self, event: ev.DecisionReady) -> None:
        if not self._current_ask(event.ask_id):
            return
        t = self._need_turn()
        t.ask_id = None
        decision = event.decision
        self._record("decision", **decision_fields(decision, adjust=self.phase is Phase.ADJUSTING))
        t.decision = decision
        self._next_play(event.at, None)

    def _next_play(self, now: float, resend: Pose | None) -> None:
        """Repair the decision's pose and send it (or pass, or say why not)."""
        t = self._need_turn()
        decision = t.decision
        assert decision is not None
        if resend is not None:
            pose = resend
        else:
            if decision.pose is None:
                self._emit(act.Say(decision.chat), act.Remember("agent", f"(passed) {decision.chat}"))
                self._end(now, "passed")
                return
            others = {n: p for n, p in t.board.items() if n != decision.pose.piece}
            fixed = repair(decision.pose, others, clearance_px=CLEARANCE_PX)
            self._record("repair", proposed=pose_dict(decision.pose), repaired=pose_dict(fixed.pose),
                         displacement=round(fixed.displacement, 3), reason=fixed.reason)
            if fixed.pose is None:
                self._say("no_valid_pose", reason=fixed.reason)
                self._emit(act.Remember("agent", f"(passed) {fixed.reason}"))
                self._end(now, "no-valid-pose")
                return
            pose = fixed.pose
        if not self._may_play(now):
            self._no_time(now, pose.piece, stale=resend is not None)
            return
        self._play(now, pose, "move")

    def _may_play(self, now: float) -> bool:
        """A play started now (or when an earlier one's animation is over) lands before the deadline,
        with the landing time learnt so far; none starts once the work time ended during a landing."""
        t = self._need_turn()
        return not t.overtime and t.times.time_for_a_play(max(now, self._quiet_at), self.landing_s)

    def _no_time(self, now: float, piece: str, *, stale: bool = False) -> None:
        """No play can land before the deadline: say what that leaves on the board, and end."""
        t = self._need_turn()
        if t.plays == 0:  # nothing of ours moved this turn
            self._say("no_time")
            self._emit(act.Remember("agent", "(no time to move a piece)"))
        elif stale:  # our geometry says it is clear; the game checks again at the finish
            self._say("no_time_check", piece=piece)
            self._emit(act.Remember("agent", f"(no time to settle {piece})"))
        else:  # it overlaps as reported: the finish puts it back
            self._say("no_time_fix", piece=piece)
            self._emit(act.Remember("agent", f"(no time to fix {piece}; the game puts it back)"))
        self._end(now, "no-time")

    def _play(self, now: float, pose: Pose, purpose: Literal["move", "return"]) -> None:
        t = self._need_turn()
        t.pose, t.purpose = pose, purpose
        self.phase = Phase.PLAYING
        if now < self._quiet_at:  # an earlier play (another turn's) may still animate: not yet
            t.held = pose
            self._timer(HOLD, self._quiet_at)
            return
        assert t.latest is not None and t.decision is not None
        rotation = rotation_to_send(reported_rotation(t.latest, pose.piece), pose.rotation)
        if purpose == "move" and not t.said:  # the decision's line goes out with its play, not before
            self._emit(act.Say(t.decision.chat))
            t.said = True
        self._own_moves[pose.piece] = pose
        t.awaiting, t.held = True, None
        t.sent += 1
        # Until the session reports the play sent, count from now; FrameSent moves both.
        self._sent(now)
        self._emit(act.SendPlay(pose.piece, pose.x, pose.y, rotation))

    def _sent(self, at: float) -> None:
        """The play out now left at ``at``: its animation, its landing time and the hard cap count from there."""
        t = self._need_turn()
        t.sent_at = at
        self._quiet_at = at + ANIMATION_S + ANIMATION_MARGIN_S
        self._timer(LOST, at + FEEDBACK_LOST_S)

    def _landed(self, now: float) -> None:
        """The play out now was answered (readably or not): its landing time is learnt, the wait is over."""
        t = self._need_turn()
        t.awaiting, self._quiet_at = False, -math.inf
        self._timers.pop(LOST, None)
        if t.sent_at is not None:
            seconds = now - t.sent_at
            self._landing.observe(seconds)
            self._record("landing", seconds=round(seconds, 3), reserve_s=round(self.landing_s, 3))

    def _on_feedback(self, now: float, frame: GameFrame) -> None:
        t = self._turn
        if t is None or not t.awaiting or self.phase not in (Phase.PLAYING, Phase.SETTLING):
            # Only an answer to a play we wait for counts; a stray one would be taken for the answer
            # to our next play (and each holds two images).
            self._emit(act.Log(logging.WARNING, "playFeedback we did not ask for, ignored"))
            return
        self._landed(now)
        t.latest = frame.state
        if self.phase is Phase.SETTLING:  # the turn is ending anyway: note what the game says, finish
            collisions = {n: list(p.collisions) for n, p in frame.state.on_board.items() if p.collisions}
            self._record("late_feedback", turn=t.turn_id, collisions=collisions)
            self._finish()
            return
        assert t.pose is not None
        if t.purpose == "return":
            self._returned(now, t.pose.piece, frame.state)
            return
        self._judge(now, t, t.pose, frame)

    def _judge(self, now: float, t: TurnState, pose: Pose, frame: GameFrame) -> None:
        """The game's report on our move: it stands, or the same play once more, or a correction."""
        decision = t.decision
        assert decision is not None and t.frame is not None
        t.plays += 1
        reported = frame.state.on_board.get(pose.piece)
        collisions = list(reported.collisions) if reported is not None else ["(not on the board)"]
        if not collisions:
            # Only a move that stands changes what we know; a colliding one is put back by the game,
            # and must not look like the partner's move at the next turn.
            self.last_state = frame.state
            self._emit(act.Remember("agent", f"(moved {pose.piece}) {decision.chat}"))
            self._end(now, "played")
            return
        self._emit(act.Log(logging.INFO, f"{pose.piece} collides with {collisions} after play {t.plays}"))
        # Trust the game over our prediction: rebuild the board from what it just reported, keeping
        # the turn-start pose of a piece we did not move (it may have been pushed back).
        t.board = {**board_of(t.frame.state), **{n: p for n, p in board_of(frame.state).items() if n != pose.piece}}
        others = {n: p for n, p in t.board.items() if n != pose.piece}
        if reported is not None and not t.resent and contradicts(pose.piece, reported.position, reported.rotation,
                                                                 collisions, others):
            # Godot may list overlaps one physics step old (GAME_FACTS): our exact geometry says the
            # reported pose is clear, so the same play again (a zero-length move) settles it.
            t.resent = True
            self._record("stale_feedback", piece=pose.piece, collisions=collisions)
            self._next_play(now, pose)
            return
        if t.plays - t.resent > self.rules.max_feedback_iterations:  # a re-send corrects nothing
            self._give_up(now, pose.piece)
            return
        corrected = None
        if reported is not None:
            corrected = correct_from_feedback(pose, reported.position, reported.rotation, collisions, others)
        if corrected is not None:
            t.decision = replace(decision, pose=corrected, source=f"{decision.source}+feedback")
            self._next_play(now, None)
            return
        if not self._may_play(now):  # no point asking for a move that could not land
            self._no_time(now, pose.piece)
            return
        # The board as the game shows it now (our piece where it collides), image included.
        self._ask(Phase.ADJUSTING, "adjust", frame, collisions=tuple(collisions),
                  previous=Decision(pose, decision.chat), attempt=t.plays)

    def _give_up(self, now: float, piece: str) -> None:
        """No clear spot after the corrections allowed: put the piece back where it was at the turn's
        start (nothing is left overlapping for the finish check), if there is time for that play."""
        t = self._need_turn()
        assert t.frame is not None
        if t.ask_id is not None:  # the work time ended while the player was adjusting
            self._emit(act.CancelPlayer(t.ask_id))
            t.ask_id = None
        if self._may_play(now):
            self._play(now, start_of_turn_pose(t.frame.state, piece), "return")
            return
        self._say("gave_up", piece=piece)
        self._emit(act.Remember("agent", f"(could not place {piece})"))
        self._end(now, "gave-up")

    def _returned(self, now: float, piece: str, state: GameState) -> None:
        reported = state.on_board.get(piece)
        if reported is None or not reported.collisions:
            self._own_moves.pop(piece, None)
            self.last_state = state
            self._say("gave_up_back", piece=piece)
            self._emit(act.Remember("agent", f"(could not place {piece}; put it back)"))
        else:  # say what really happened
            self._say("gave_up", piece=piece)
            self._emit(act.Remember("agent", f"(could not place {piece})"))
        self._end(now, "gave-up")

    # ------------------------------------------------------------------ off the path

    def _on_unreadable(self, event: ev.Unreadable) -> None:
        t = self._turn
        if t is None or self.phase is Phase.FINISHED:
            if event.type_hint == "playRequest":
                # A turn began but its frame is unreadable. Only finish ends it: the game build users
                # run ignores an error frame and would wait on this turn for ever (GAME_FACTS).
                self._record("unreadable_request", reason=event.reason[:200], answered="finish")
                self._say("bad_request")
                if t is None:
                    self._turn = TurnState(None, TurnTimes.of(event.at, self.rules.deadline, self.landing_s))
                    self._end(event.at, "unreadable-request")
            elif event.type_hint == "chatRequest":
                self._say("bad_chat")
            return
        if self.phase is Phase.SETTLING:
            if event.type_hint == "playFeedback" and t.awaiting:
                # The awaited feedback did come, unreadable: the play has landed, finish now.
                self._landed(event.at)
                self._finish()
            return
        # The game may be waiting on us with state we cannot read: end the turn cleanly (once a
        # play out now has landed).
        self._emit(act.Log(logging.INFO, f"turn {t.turn_id} ends early after an unreadable frame"))
        if event.type_hint == "playFeedback" and t.awaiting:
            self._landed(event.at)
            self._say("bad_feedback")
        else:
            self._say("bad_frame")
        self._end(event.at, "bad-frame")

    def _on_timer(self, event: ev.Timer) -> None:
        due = self._timers.get(event.name)
        # A timer set again (or for a turn that is over) fires for nothing.
        if due is None or event.at + 1e-6 < due:
            return
        del self._timers[event.name]
        t = self._turn
        if t is None:
            return
        if event.name == WORK and self.phase in (*ASKING, Phase.PLAYING):
            self._work_over(event.at, t)
        elif event.name == LOST and t.awaiting and self.phase in (Phase.PLAYING, Phase.SETTLING):
            waited = event.at - (t.sent_at if t.sent_at is not None else event.at)
            self._emit(act.Log(logging.WARNING, f"turn {t.turn_id}: no feedback {waited:.0f} s after the play; "
                                                "taking it as lost and finishing"))
            self._landed(event.at)  # learnt as a very slow play: later plays keep their distance
            self._record("feedback_lost", turn=t.turn_id, waited_s=round(waited, 3))
            if self.phase is Phase.SETTLING:
                self._finish()
            else:
                self._say("no_feedback")
                self._end(event.at, "no-feedback")
        elif event.name == SETTLE and self.phase is Phase.SETTLING:
            if t.awaiting:  # a shutdown waited the landing time learnt so far (the only such case)
                self._emit(act.Log(logging.WARNING, f"turn {t.turn_id}: stopping; the last play's feedback "
                                                    "has not come within its usual landing time"))
            self._finish()
        elif event.name == HOLD and self.phase is Phase.PLAYING and t.held is not None:
            self._play(event.at, t.held, t.purpose)
        elif event.name == THINKING and self.phase is Phase.DECIDING and t.sent == 0 and not t.thought:
            t.thought = True
            text = self.rules.thinking_in(self.partner_lang)
            self._emit(act.Say(text))
            self._record("thinking", after_s=round(event.at - t.times.started, 3), text=text)

    def _work_over(self, now: float, t: TurnState) -> None:
        """The turn's work time is over: what is landing lands; nothing new starts."""
        if self.phase is Phase.PLAYING and t.awaiting:
            # The play was started with its landing reserved: see it through, whatever the clock says.
            t.overtime = True
            self._emit(act.Log(logging.INFO, f"turn {t.turn_id}: work time over; waiting for the play to land"))
            return
        self._emit(act.Log(logging.WARNING, f"turn {t.turn_id} hit the {self.rules.deadline:.0f} s deadline"))
        if self.phase is Phase.ADJUSTING:  # our piece overlaps something: put it back if there is time
            assert t.pose is not None
            self._give_up(now, t.pose.piece)
            return
        if t.sent == 0:  # deciding, or the first play still held: nothing of ours was played
            self._say("ran_out")
            self._emit(act.Remember("agent", "(ran out of time; no piece moved)"))
            self._end(now, "deadline")
            return
        assert t.pose is not None  # a correction held back: the piece overlaps as reported
        self._say("no_time_fix", piece=t.pose.piece)
        self._end(now, "deadline")

    def _on_shutdown(self, now: float) -> None:
        t = self._turn
        if t is None or self.phase is Phase.FINISHED:
            return
        if self.phase is Phase.SETTLING:  # ending already: only the wait gets shorter
            self._timer(SETTLE, self._shutdown_settle(now, t))
            return
        t.shutdown = True
        self._say("stopping")
        self._end(now, "shutdown")

    def _shutdown_settle(self, now: float, t: TurnState) -> float:
        """A polite stop waits for a landing play's feedback as long as plays take to land here
        (the hard cap would keep the person stopping the agent waiting), and for the animation."""
        until = max(now, self._quiet_at)
        if t.awaiting and t.sent_at is not None:
            until = max(until, t.sent_at + self.landing_s)
        return until

    def _on_closed(self, now: float) -> None:
        if self._turn is not None:
            self._abandon(now, "shutdown" if self._turn.shutdown else "cancelled")

    def _on_sent(self, event: ev.FrameSent) -> None:
        t = self._turn
        if t is None:
            return
        if event.kind == "play" and t.awaiting:
            self._sent(event.at)  # the animation starts now
        elif event.kind == "finish" and self.phase is Phase.FINISHED:
            self._close_turn(event.at, finish_sent=event.ok)

    def _bug(self, now: float, exc: Exception) -> None:
        # The player's own exception was logged with its traceback by the session that caught it.
        player = isinstance(exc, _PlayerFailed)
        error = str(exc) if player else f"{type(exc).__name__}: {exc}"[:500]
        if not player:
            self._emit(act.Log(logging.ERROR, f"turn {self.turn_id} failed: {error}", exc))
        self._emit(act.Record("error", {"where": "turn", "error": error}))
        if self._turn is None or self.phase in (Phase.FINISHED, Phase.IDLE):
            return
        try:
            self._say("bug")
            self._end(now, "internal-error")
        except Exception as again:  # never leave the game waiting: finish, once
            self._emit(act.Record("error", {"where": "turn", "error": f"{type(again).__name__}: {again}"[:500]}))
            self._finish()  # a no-op when the finish is already on its way

    # ------------------------------------------------------------------ the end of a turn

    def _end(self, now: float, outcome: str) -> None:
        """The turn's work is over: finish now, or first wait out the last play (SETTLING)."""
        t = self._need_turn()
        t.outcome = outcome
        if t.ask_id is not None:
            self._emit(act.CancelPlayer(t.ask_id))
            t.ask_id = None
        t.held = None
        self._timers.pop(WORK, None)
        self._timers.pop(THINKING, None)
        if t.awaiting:
            # Never a finish while a play is landing: wait for its feedback. The LOST timer (the
            # hard cap) bounds the wait; a shutdown waits the usual landing time at most.
            self.phase = Phase.SETTLING
            if t.shutdown:
                self._timer(SETTLE, self._shutdown_settle(now, t))
            return
        if now < self._quiet_at:  # an animation we have no feedback to wait for (an earlier turn's)
            self.phase = Phase.SETTLING
            self._timer(SETTLE, self._quiet_at)
            return
        self._finish()

    def _finish(self) -> None:
        """The one place a ``finish`` is asked for: on entering FINISHED, once per turn."""
        if self.phase is Phase.FINISHED:
            return
        self.phase = Phase.FINISHED
        self._timers.clear()
        self._emit(act.SendFinish())

    def _close_turn(self, now: float, *, finish_sent: bool) -> None:
        t = self._need_turn()
        if t.turn_id is not None:
            seconds = round(now - t.times.started, 3)
            if t.shutdown:  # what the game saw: a shutdown that sent finish is not a turn cut off silently
                self._record("turn_end", turn=t.turn_id, outcome="shutdown", seconds=seconds, finish_sent=finish_sent)
            else:
                pieces = len(self.last_state.on_board) if self.last_state is not None else None
                self._record("turn_end", turn=t.turn_id, outcome=t.outcome, seconds=seconds, pieces_on_board=pieces)
        self._turn = None
        self.phase = Phase.IDLE

    def _abandon(self, now: float, outcome: str) -> None:
        """The turn ends with no finish of ours: the game left, or moved on to a new turn."""
        t = self._need_turn()
        if t.ask_id is not None:
            self._emit(act.CancelPlayer(t.ask_id))
        if t.turn_id is not None:
            fields: dict[str, object] = {"outcome": outcome}
            if outcome == "shutdown":
                fields["finish_sent"] = False
            self._record("turn_end", turn=t.turn_id, seconds=round(now - t.times.started, 3), **fields)
        self._timers.clear()
        self._turn = None
        self.phase = Phase.IDLE

    def _need_turn(self) -> TurnState:
        if self._turn is None:
            raise RuntimeError(f"no turn in phase {self.phase.value}")
        return self._turn


class _PlayerFailed(Exception):
    """The player's call raised (DecisionFailed): handled like any other bug in the turn."""

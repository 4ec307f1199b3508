"""The turn machine in lockstep with the simulator's game on one fake clock.

The simulator's game (sim/game.py) is the game's rules with no sockets: it flags a ``play`` or a
``finish`` that arrives during the 0.5 s animation, a turn left hanging, an ``error`` the shipped
build ignores. Each scenario below runs whole turns with no real time passing and asserts the game
saw no violation and every turn ended with exactly one ``finish``.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable

import pytest

from agent.games.tangram.contract import Decision
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.protocol import chat_frame, finish_frame, parse_frame, play_frame
from agent.games.tangram.sim.feedback_delay import PRESETS, FeedbackDelay
from agent.games.tangram.sim.simgame import PlayRecord, SimGame, frame_text
from agent.games.tangram.turn import Phase, TurnMachine, TurnRules
from agent.games.tangram.turn import actions as act
from agent.games.tangram.turn import events as ev
from agent.games.tangram.turn.timing import FEEDBACK_LOST_S
from tests.tangram.turn.support import LINES


class Lockstep:
    """A discrete-event loop: the machine's timers, the player's answers and the game's feedback
    are all events at fake times, run in time order."""

    def __init__(self, decisions: list[Decision | None], *, deadline: float = 10.0, think_s: float = 1.0,
                 feedback_delay: FeedbackDelay | None = None, stale: bool = False) -> None:
        self.now = 0.0
        self.game = SimGame(clock=lambda: self.now, animation=0.5, stale_collisions=stale,
                            feedback_delay=feedback_delay)
        self.machine = TurnMachine(TurnRules(deadline, 3, lines=LINES))
        self.decisions = list(decisions)
        self.think_s = think_s
        self.feedbacks: list[float] = []
        """When each play's feedback went out (the game's clock)."""
        self._queue: list[tuple[float, int, Callable[[], None]]] = []
        self._order = itertools.count()
        self._timers: dict[str, float] = {}
        self.outcomes: list[str] = []
        self.lose_feedback = False

    def at(self, when: float, fn: Callable[[], None]) -> None:
        heapq.heappush(self._queue, (when, next(self._order), fn))

    def feed(self, event: ev.Event) -> None:
        for action in self.machine.handle(event):
            self.carry_out(action)

    def carry_out(self, action: act.Action) -> None:
        if isinstance(action, act.Say):
            if action.text.strip():
                self.game.handle_agent_frame(chat_frame(action.text))
        elif isinstance(action, act.SendPlay):
            reaction = self.game.handle_agent_frame(play_frame(action.piece, action.x, action.y, action.rotation))
            self.feed(ev.FrameSent(self.now, "play", True))
            if reaction.send_feedback and reaction.play is not None and not self.lose_feedback:
                play = reaction.play
                self.at(self.game.feedback_due(play), lambda: self._feedback(play))
        elif isinstance(action, act.SendFinish):
            self.game.handle_agent_frame(finish_frame())
            self.feed(ev.FrameSent(self.now, "finish", True))
        elif isinstance(action, act.AskPlayer):
            ask = action
            self.at(self.now + self.think_s, lambda: self._answer(ask))
        elif isinstance(action, act.SetTimer):
            self._timers[action.name] = action.at
            name, due = action.name, action.at
            self.at(due, lambda: self._timer(name, due))
        elif isinstance(action, act.Record) and action.kind == "turn_end":
            self.outcomes.append(action.fields["outcome"])

    def _feedback(self, play: PlayRecord) -> None:
        self.feedbacks.append(self.now)
        self.feed(ev.Feedback(self.now, parse_frame(frame_text(self.game.play_feedback_frame(play)))))

    def _answer(self, ask: act.AskPlayer) -> None:
        if self.decisions:
            decision = self.decisions.pop(0)
            if decision is not None:  # None: a player that never answers
                self.feed(ev.DecisionReady(self.now, ask.ask_id, decision))

    def _timer(self, name: str, due: float) -> None:
        if self._timers.get(name) == due:
            self.feed(ev.Timer(self.now, name))

    def turn(self) -> None:
        """One AI turn from the game's playRequest to whatever ends it (or nothing more to run)."""
        self.feed(ev.TurnRequested(self.now, len(self.game.turns) + 1,
                                   parse_frame(frame_text(self.game.start_ai_turn()))))
        self.run()

    def run(self, until: float | None = None) -> None:
        while self._queue and (until is None or self._queue[0][0] <= until):
            when, _, fn = heapq.heappop(self._queue)
            self.now = max(self.now, when)
            fn()
        if until is not None:
            self.now = max(self.now, until)

    def assert_clean(self, turns: int) -> None:
        assert [v.kind for v in self.game.violations] == []
        assert len(self.game.turns) == turns and all(t.ended_by == "finish" for t in self.game.turns)
        assert self.machine.phase is Phase.IDLE
        # The simulator's game only flags a finish during the tween; a slow game's landing lasts
        # until its feedback: no finish (nor play) of a turn before its plays' feedbacks.
        for turn in self.game.turns:
            assert turn.ended_at is not None
            for play in turn.plays:
                if play.landing is not None:
                    assert turn.ended_at >= play.at + play.landing - 1e-9, (turn.ended_at, play.at, play.landing)


GREEN = Pose("Green", 50.0, 50.0, 0.0)


def test_clean_turns_one_after_another() -> None:
    run = Lockstep([Decision(GREEN, "Green."), Decision(Pose("Yellow", 20.0, 20.0, 270.0), "Yellow."),
                    Decision(None, "pass")])
    for _ in range(3):
        run.turn()
    run.assert_clean(3)
    assert run.outcomes == ["played", "played", "passed"]
    assert run.game.spins and max(run.game.spins) <= 180.5  # Yellow turned the short way from -90


def test_a_play_onto_a_piece_is_corrected_without_touching_the_animation() -> None:
    run = Lockstep([Decision(GREEN, "Green.")])
    run.game.place("Red", 50.0, 50.0, 0.0)  # the partner's piece we do not know about yet
    frame = parse_frame(frame_text(run.game.start_ai_turn()))
    run.game.place("Red", 50.0, 50.0, 0.0)
    # The request we act on shows an empty board: our play lands on Red and the game says so.
    empty = frame.model_copy(update={"state": frame.state.model_copy(update={"on_board": {}})})
    run.feed(ev.TurnRequested(run.now, 1, empty))
    run.run()
    run.assert_clean(1)
    plays = run.game.turns[0].plays
    assert len(plays) >= 2 and plays[-1].collisions == [] and run.outcomes == ["played"]


@pytest.mark.parametrize("stale", [False, True])
def test_stale_collisions_are_settled_by_the_same_play(stale: bool) -> None:
    run = Lockstep([Decision(Pose("Green", 10.0, 90.0, 0.0), "Green."), Decision(GREEN, "again")], stale=stale)
    run.turn()
    run.turn()
    run.assert_clean(2)


@pytest.mark.parametrize("think_s", [1.0, 4.6])
def test_a_slow_game_gets_its_finish_only_after_the_feedback(think_s: float) -> None:
    # 4.6 s: the decision comes just before the first turn's work time ends (10 - 5 - 0.3 s).
    run = Lockstep([Decision(GREEN, "Green.")], deadline=10.0, think_s=think_s, feedback_delay=PRESETS["loaded"])
    run.turn()
    run.assert_clean(1)
    turn = run.game.turns[0]
    [play] = turn.plays
    assert play.landing is not None and play.landing >= 4.0 and run.outcomes == ["played"]
    assert turn.ended_at == pytest.approx(play.at + play.landing)


def test_turns_on_the_real_games_times_all_end_played_and_after_their_feedback() -> None:
    decisions: list[Decision | None] = [Decision(Pose("Green", 20.0 + 8 * i, 50.0, 0.0), "Green.") for i in range(8)]
    run = Lockstep(decisions, deadline=12.0, think_s=2.0, feedback_delay=PRESETS["real"])
    for _ in range(8):
        run.turn()
    run.assert_clean(8)
    assert run.outcomes == ["played"] * 8 and all(t.ended_at is not None for t in run.game.turns)
    assert run.machine.landing_s > 4.0  # learnt from the game's own times, with headroom


def test_a_game_that_never_answers_a_play_still_gets_finish_at_the_hard_cap() -> None:
    run = Lockstep([Decision(GREEN, "Green.")], deadline=6.0)
    run.lose_feedback = True
    run.turn()
    run.assert_clean(1)
    [play] = run.game.turns[0].plays
    assert run.game.turns[0].ended_at == pytest.approx(play.at + FEEDBACK_LOST_S)
    assert run.outcomes == ["no-feedback"]


def test_a_player_that_never_answers_ends_with_finish_by_the_deadline() -> None:
    run = Lockstep([None], deadline=5.0)
    run.turn()
    run.assert_clean(1)
    assert run.outcomes == ["deadline"] and run.game.turns[0].ended_at <= 5.0  # type: ignore[operator]


@pytest.mark.parametrize("after", [0.0, 0.2, 0.45, 0.7])
def test_shutdown_at_any_moment_of_the_animation_finishes_after_it(after: float) -> None:
    run = Lockstep([Decision(GREEN, "Green.")])
    run.feed(ev.TurnRequested(run.now, 1, parse_frame(frame_text(run.game.start_ai_turn()))))
    run.run(until=1.0)  # the decision came at 1.0 and the play went out
    run.run(until=1.0 + after)
    run.feed(ev.Shutdown(run.now))
    run.run()
    run.assert_clean(1)
    assert run.outcomes == ["played" if after >= 0.5 + 1 / 60 else "shutdown"]

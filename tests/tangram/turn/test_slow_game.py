"""The turn machine on a slow game (issue 49, "must have 1"), on a fake clock.

The real game takes 2.3–4.8 s (4–6 s under load) from a ``play`` to its ``playFeedback``; a
``finish`` sent meanwhile checks the half-moved piece and lands it unchecked. So: no ``finish``
while a play's feedback is outstanding, whatever the deadline says; the landing time is learnt from
the connection's own plays and reserved before a play is started; a play that cannot land in time
is not started, and the chat line then says what happened.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.games.tangram.contract import Decision
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.turn import Phase
from agent.games.tangram.turn import actions as act
from agent.games.tangram.turn import events as ev
from agent.games.tangram.turn.timing import (
    ANIMATION_MARGIN_S,
    ANIMATION_S,
    FEEDBACK_LOST_S,
    FINISH_MARGIN_S,
    LANDING_HEADROOM,
    SLOW_LANDING_S,
)
from tests.tangram.turn.support import LINES, Driver

GREEN = Pose("Green", 50.0, 50.0, 0.0)
CLEAR: dict[str, tuple[float, float, float, list[str]]] = {"Green": (50, 50, 0, [])}
PLACED = "I placed Cream as the chest: big pieces first."
"""The planner's line from the real-game transcript that was followed by "I ran out of time"."""


def ends(d: Driver) -> list[str]:
    return [r["outcome"] for r in d.records("turn_end")]


def play_turns(d: Driver, n: int, landing: float) -> None:
    """``n`` clean turns whose play takes ``landing`` seconds to be answered."""
    for _ in range(n):
        d.request()
        d.decide(Decision(GREEN, "Green."))
        d.advance(landing)
        d.feedback(CLEAR)
        assert d.machine.phase is Phase.IDLE
        d.advance(1.0)


# ---------------------------------------------------------------------- finish waits


def test_a_feedback_slower_than_the_old_grace_is_waited_for_and_the_turn_ends_played() -> None:
    d = Driver(deadline=10.0)
    d.request()
    d.advance(4.5)
    d.decide(Decision(GREEN, PLACED))  # just before the work time ends (4.7 s on a first turn)
    d.advance(4.7)  # the work time ended while the play lands; 1.5 s (the old grace) long gone
    assert d.kinds() == ["chat", "play"] and d.machine.phase is Phase.PLAYING
    d.feedback(CLEAR)  # 4.7 s after the play: within the real game's range
    assert d.kinds() == ["chat", "play", "finish"] and ends(d) == ["played"]
    assert d.at(act.SendFinish) == [pytest.approx(9.2)] and d.said() == [PLACED]
    d.check_rules()


def test_a_game_slower_than_assumed_gets_its_finish_after_the_feedback_even_past_the_deadline() -> None:
    d = Driver(deadline=10.0)
    d.request()
    d.advance(4.6)
    d.decide(Decision(GREEN, PLACED))
    d.advance(7.0)  # past the 10 s deadline: the piece's safety wins over a few seconds
    assert "finish" not in d.kinds()
    d.feedback(CLEAR)
    assert d.at(act.SendFinish) == [pytest.approx(11.6)] and ends(d) == ["played"]
    # The transcript's contradiction: a play was made, so no "ran out of time" line follows it.
    assert d.said() == [PLACED] and LINES("ran_out") not in d.said()


def test_the_decisions_line_goes_out_with_its_play_never_for_a_play_that_was_not_made() -> None:
    d = Driver(deadline=10.0)
    d.request()
    d.now = 4.8  # a fallback decision handled just after the work time, before its timer
    d.decide(Decision(GREEN, PLACED))
    assert d.kinds() == ["chat", "finish"] and PLACED not in d.said()


# ---------------------------------------------------------------------- plays that cannot land


def test_an_llm_time_out_then_a_fallback_that_cannot_land_is_not_started() -> None:
    # configs/local.yaml: a 90 s turn. The model runs out at decide_by, the planner's fallback
    # comes a little after the work time (the event is handled before the timer that is also due).
    d = Driver(deadline=90.0)
    d.request()
    ask = d.asks[-1]
    work_until = 90.0 - SLOW_LANDING_S - FINISH_MARGIN_S
    assert ask.decide_by == pytest.approx(work_until - 3.0)
    d.now = work_until + 0.3
    d.decide(Decision(Pose("Cream", 50, 40, 0), PLACED), ask)
    assert d.kinds() == ["chat", "finish"] and d.said() == [LINES("no_time")] and ends(d) == ["no-time"]
    assert PLACED not in d.said()


def test_the_real_transcripts_fallback_four_seconds_before_the_deadline_is_not_started() -> None:
    d = Driver(deadline=90.0)
    d.request()
    ask = d.asks[-1]
    d.advance(86.0)  # the fallback came 4 s before the deadline: the work timer ended the turn first
    d.decide(Decision(Pose("Cream", 50, 40, 0), PLACED), ask)
    assert d.kinds() == ["chat", "finish"] and d.said() == [LINES("ran_out")] and ends(d) == ["deadline"]
    assert d.at(act.SendFinish) == [pytest.approx(90.0 - SLOW_LANDING_S - FINISH_MARGIN_S)]


def test_a_slow_landing_learnt_during_the_turn_stops_a_correction_that_could_not_land() -> None:
    d = Driver(deadline=10.0)
    d.request()
    d.decide(Decision(GREEN, "Green."))
    d.advance(4.6)  # the first landing took 4.6 s: the reserve grows to 1.25 x 4.6
    d.feedback({"Green": (50, 50, 0, ["Red"]), "Red": (50, 50, 0, ["Green"])})  # the engine could correct it
    assert d.machine.landing_s == pytest.approx(LANDING_HEADROOM * 4.6)
    assert d.kinds() == ["chat", "play", "chat", "finish"] and ends(d) == ["no-time"]
    assert d.said()[-1] == LINES("no_time_fix", piece="Green")  # it overlaps: the game puts it back


def test_a_correction_that_can_land_is_sent() -> None:
    d = Driver(deadline=10.0)
    d.request()
    d.decide(Decision(GREEN, "Green."))
    d.advance(2.0)
    d.feedback({"Green": (50, 50, 0, ["Red"]), "Red": (50, 50, 0, ["Green"])})
    assert d.kinds() == ["chat", "play", "play"]


def test_a_collision_reported_after_the_work_time_is_not_corrected_and_the_line_says_so() -> None:
    d = Driver(deadline=10.0)
    d.request()
    d.advance(4.0)
    d.decide(Decision(GREEN, "Green."))
    d.advance(1.0)  # the work time ends while the play lands
    d.feedback({"Green": (50, 50, 0, ["Red"]), "Red": (50, 50, 0, ["Green"])})
    assert d.kinds() == ["chat", "play", "chat", "finish"] and ends(d) == ["no-time"]
    assert d.said()[-1] == LINES("no_time_fix", piece="Green")


def test_a_stale_collision_after_the_work_time_is_not_resent_and_the_line_says_the_game_checks() -> None:
    d = Driver(deadline=10.0)
    d.request()
    d.advance(4.0)
    d.decide(Decision(GREEN, "Green."))
    d.advance(1.0)
    d.feedback({"Green": (50, 50, 0, ["BOUNDARY"])})  # our geometry: clear
    assert d.kinds() == ["chat", "play", "chat", "finish"]
    assert d.said()[-1] == LINES("no_time_check", piece="Green")


def test_the_work_time_ending_while_the_player_adjusts_puts_the_piece_back_if_it_can_land() -> None:
    d = Driver(deadline=10.0)
    d.request()
    d.decide(Decision(GREEN, "Green."))
    d.advance(0.6)
    d.feedback({"Green": (50, 50, 0, ["Purple"])})  # no engine correction: the player is asked
    adjust = d.asks[-1]
    assert d.machine.phase is Phase.ADJUSTING
    d.advance(5.0)  # the player never answers; the work time (4.7 s) ends
    assert adjust.ask_id in d.cancelled
    back = d.sent[-1][1]
    assert isinstance(back, act.SendPlay) and back.x > 100  # to the drawer
    d.advance(3.0)
    d.feedback({})
    assert d.said()[-1] == LINES("gave_up_back", piece="Green") and ends(d) == ["gave-up"]
    d.check_rules()


# ---------------------------------------------------------------------- learning


def test_the_landing_time_is_learnt_from_the_connections_own_plays() -> None:
    d = Driver(deadline=60.0)
    d.request()
    assert d.asks[-1].decide_by == pytest.approx(60.0 - SLOW_LANDING_S - FINISH_MARGIN_S - 3.0)
    d.decide(Decision(GREEN, "Green."))
    d.advance(0.52)
    d.feedback(CLEAR)
    play_turns(d, 2, 0.52)  # the simulator's quick game
    assert [r["seconds"] for r in d.records("landing")] == [0.52, 0.52, 0.52]
    d.request()
    quick = LANDING_HEADROOM * 0.52
    assert d.machine.landing_s == pytest.approx(quick)
    assert d.asks[-1].decide_by == pytest.approx(d.now + 60.0 - quick - FINISH_MARGIN_S - 3.0)


def test_a_connection_that_turns_slow_reserves_more_and_stops_starting_late_plays() -> None:
    d = Driver(deadline=20.0)
    play_turns(d, 3, 0.52)
    quick = d.machine.landing_s
    play_turns(d, 3, 4.8)  # the real game under load
    assert d.machine.landing_s == pytest.approx(LANDING_HEADROOM * 4.8) and quick < 1.0
    d.request()
    start = d.now
    d.now = start + 20.0 - LANDING_HEADROOM * 4.8 - FINISH_MARGIN_S + 0.2  # before its work timer is handled
    d.decide(Decision(GREEN, "Green."))
    assert d.kinds()[-2:] == ["chat", "finish"] and d.said()[-1] == LINES("no_time")


# ---------------------------------------------------------------------- no finish while landing, ever


def _run(deadline: float, decide_at: float, delay: float | None, interrupt: str | None,
         interrupt_at: float) -> tuple[Driver, list[tuple[float, float | None]]]:
    """One turn: a decision at ``decide_at``, each play answered ``delay`` s later (None: never),
    and perhaps an unreadable frame, a player failure or a shutdown. Returns the plays' (sent,
    answered) times."""
    d = Driver(deadline=deadline)
    d.request()
    ask = d.asks[-1]
    pending: list[tuple[float, str]] = [(decide_at, "decide")]
    if interrupt is not None:
        pending.append((interrupt_at, interrupt))
    plays: list[tuple[float, float | None]] = []
    while pending:
        pending.sort()
        at, what = pending.pop(0)
        d.advance(max(0.0, at - d.now))
        if what == "decide":
            d.decide(Decision(GREEN, "Green."), ask)
        elif what == "feedback":
            d.feedback(CLEAR)
        elif what == "unreadable":
            d.feed(ev.Unreadable(d.now, "chatRequest", "message 7"))
        elif what == "bug":
            d.feed(ev.DecisionFailed(d.now, d.asks[-1].ask_id, "RuntimeError: boom"))
        elif what == "shutdown":
            d.feed(ev.Shutdown(d.now))
        for sent in d.at(act.SendPlay)[len(plays):]:
            answered = None if delay is None else sent + delay
            plays.append((sent, answered))
            if answered is not None:
                pending.append((answered, "feedback"))
    d.advance(FEEDBACK_LOST_S + deadline + 10.0)
    return d, plays


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deadline=st.floats(2.0, 120.0), decide=st.floats(0.0, 1.2), delay=st.one_of(st.none(), st.floats(0.52, 40.0)),
       interrupt=st.sampled_from([None, "unreadable", "bug", "shutdown"]), interrupt_at=st.floats(0.0, 1.2))
def test_no_finish_while_a_feedback_is_outstanding_under_any_deadline(deadline: float, decide: float,
                                                                      delay: float | None, interrupt: str | None,
                                                                      interrupt_at: float) -> None:
    d, plays = _run(deadline, decide * deadline, delay, interrupt, interrupt_at * deadline)
    assert d.kinds().count("finish") == 1 and d.machine.phase is Phase.IDLE
    [finished] = d.at(act.SendFinish)
    first_reserve = min(SLOW_LANDING_S, 0.5 * deadline)
    for sent, answered in plays:
        # Started only when it could land before the deadline with the reserve known then.
        assert sent + max(first_reserve, ANIMATION_S + ANIMATION_MARGIN_S) + FINISH_MARGIN_S <= deadline + 1e-6
        lost = answered is None or answered >= sent + FEEDBACK_LOST_S
        if interrupt == "shutdown" and d.records("turn_end")[0]["outcome"] == "shutdown":
            # A polite stop waits as long as plays take to land here, at least the animation.
            assert finished >= min(answered or float("inf"), sent + max(first_reserve, ANIMATION_S + 0.1)) - 1e-9
        elif lost:
            assert finished >= sent + FEEDBACK_LOST_S - 1e-9  # the hard cap, and only then
        else:
            assert answered is not None and finished >= answered - 1e-9
    # Never later than needed: the deadline, or the feedback of a play that was out, or the cap.
    latest = max([deadline, *[a if a is not None and a < s + FEEDBACK_LOST_S else s + FEEDBACK_LOST_S
                              for s, a in plays]])
    assert finished <= latest + 1e-6

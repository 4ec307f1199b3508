"""The turn machine on a fake clock: every rule of the turn, and each way off the path."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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
    SLOW_LANDING_S,
)
from tests.tangram.turn.support import LINES, Driver

GREEN = Pose("Green", 50.0, 50.0, 0.0)
CLEAR = {"Green": (50, 50, 0, [])}
RAN_OUT, BAD_FEEDBACK, BAD_FRAME = LINES("ran_out"), LINES("bad_feedback"), LINES("bad_frame")
BAD_REQUEST, BUG, STOPPING = LINES("bad_request"), LINES("bug"), LINES("stopping")
FIRST_LANDING_10 = 5.0
"""The landing reserve of a first turn with a 10 s deadline: the slow case, at most half the turn."""
WORK_10 = 10.0 - FIRST_LANDING_10 - FINISH_MARGIN_S
"""The work time of a first turn with a 10 s deadline."""


def ends(d: Driver) -> list[str]:
    return [r["outcome"] for r in d.records("turn_end")]


# ---------------------------------------------------------------------- the path


def test_a_clean_play_is_said_sent_and_finished_once_its_feedback_is_in() -> None:
    d = Driver()
    d.request()
    assert d.machine.phase is Phase.DECIDING and d.asks[-1].kind == "play"
    d.advance(1.0)
    d.decide(Decision(GREEN, "Green in the middle."))
    assert d.kinds() == ["chat", "play"] and d.machine.phase is Phase.PLAYING
    d.advance(0.52)
    d.feedback(CLEAR)
    assert d.kinds() == ["chat", "play", "finish"] and d.machine.phase is Phase.IDLE
    assert ends(d) == ["played"]
    assert d.records("turn_end")[0]["seconds"] == pytest.approx(1.52)
    d.check_rules()


def test_the_decision_deadline_leaves_the_fallback_reserve_and_the_slow_games_landing() -> None:
    d = Driver(deadline=60.0)
    d.request()
    work_until = 60.0 - SLOW_LANDING_S - FINISH_MARGIN_S  # a first turn assumes the slow real game
    assert d.asks[-1].decide_by == pytest.approx(work_until - 3.0)
    assert d.timers["work"] == pytest.approx(work_until)


def test_a_pass_says_why_and_finishes() -> None:
    d = Driver()
    d.request()
    d.decide(Decision(None, "The house is complete!"))
    assert d.kinds() == ["chat", "finish"] and d.said() == ["The house is complete!"] and ends(d) == ["passed"]


def test_a_collision_the_geometry_confirms_is_corrected_then_finished() -> None:
    red = {"Red": (50, 50, 0, ["Green"])}
    d = Driver()
    d.request()
    d.decide(Decision(GREEN, "Green."))
    d.advance(0.6)
    d.feedback({"Green": (50, 50, 0, ["Red"]), **red})
    assert d.kinds() == ["chat", "play", "play"]  # corrected by the engine, no player call
    assert len(d.asks) == 1
    d.advance(0.6)
    second = d.sent[-1][1]
    assert isinstance(second, act.SendPlay)
    d.feedback({"Green": (second.x, second.y, 0, []), "Red": (50, 50, 0, [])})
    assert d.kinds()[-1] == "finish" and ends(d) == ["played"]
    d.check_rules()


def test_a_stale_collision_is_answered_by_the_same_play_once() -> None:
    d = Driver()
    d.request()
    d.decide(Decision(GREEN, "Green."))
    d.advance(0.6)
    d.feedback({"Green": (50, 50, 0, ["BOUNDARY"])})  # our geometry: clear
    first, again = [a for _, a in d.sent if isinstance(a, act.SendPlay)]
    assert (first.x, first.y, first.rotation) == (again.x, again.y, again.rotation)
    assert d.records("stale_feedback") == [{"piece": "Green", "collisions": ["BOUNDARY"]}]


def test_corrections_are_bounded_then_the_piece_goes_back_and_the_turn_says_so() -> None:
    d = Driver(max_feedback_iterations=0)
    d.request()
    d.decide(Decision(GREEN, "Green."))
    d.advance(0.6)
    d.feedback({"Green": (50, 50, 0, ["Red"]), "Red": (50, 50, 0, ["Green"])})
    back = d.sent[-1][1]
    assert isinstance(back, act.SendPlay) and back.x > 100  # to the drawer
    d.advance(0.6)
    d.feedback({"Red": (50, 50, 0, [])})
    assert "put it back where it was" in d.said()[-1] and ends(d) == ["gave-up"]
    d.check_rules()


def test_the_player_is_asked_to_adjust_when_the_engine_cannot_correct() -> None:
    d = Driver()
    d.request()
    d.decide(Decision(GREEN, "Green."))
    d.advance(0.6)
    d.feedback({"Green": (50, 50, 0, ["Purple"])})  # a piece we do not know of: no engine correction
    assert d.machine.phase is Phase.ADJUSTING
    ask = d.asks[-1]
    assert ask.kind == "adjust" and ask.collisions == ("Purple",) and ask.attempt == 1
    d.decide(Decision(Pose("Green", 20, 20, 0), "moved"))
    assert [r.get("adjust") for r in d.records("decision")] == [None, True]
    assert d.kinds() == ["chat", "play", "play"]  # the first chat line only


# ---------------------------------------------------------------------- deadlines


def test_a_player_that_never_answers_is_cut_off_at_the_work_deadline() -> None:
    d = Driver(deadline=10.0)
    d.request()
    d.advance(10.0)
    assert d.kinds() == ["chat", "finish"] and d.said() == [RAN_OUT]
    assert d.at(act.SendFinish) == [pytest.approx(WORK_10)]
    assert d.cancelled == [d.asks[-1].ask_id] and ends(d) == ["deadline"]


def test_a_late_decision_after_the_deadline_is_dropped() -> None:
    d = Driver(deadline=10.0)
    d.request()
    ask = d.asks[-1]
    d.advance(10.0)
    out = d.decide(Decision(GREEN, "Green."), ask)
    assert not [a for a in out if isinstance(a, (act.SendPlay, act.Say, act.SendFinish))]
    assert d.kinds().count("finish") == 1


def test_feedback_that_never_comes_is_waited_for_up_to_the_hard_cap_then_finish() -> None:
    d = Driver(deadline=10.0)
    d.request()
    d.advance(1.0)
    d.decide(Decision(GREEN, "Green."))
    d.advance(FEEDBACK_LOST_S - 0.01)  # far past the deadline: still no finish while the play may land
    assert d.kinds() == ["chat", "play"] and d.machine.phase is Phase.PLAYING
    d.advance(1.0)
    [played], [finished] = d.at(act.SendPlay), d.at(act.SendFinish)
    assert finished == pytest.approx(played + FEEDBACK_LOST_S)
    assert d.said()[-1] == LINES("no_feedback") and ends(d) == ["no-feedback"]
    assert d.records("feedback_lost") == [{"turn": 1, "waited_s": FEEDBACK_LOST_S}]
    assert d.machine.landing_s > SLOW_LANDING_S  # a lost feedback makes later plays keep their distance


def test_feedback_during_the_settling_wait_finishes_at_once_and_is_recorded_late() -> None:
    d = Driver(deadline=10.0)
    d.request()
    d.decide(Decision(GREEN, "Green."))
    d.advance(0.3)
    d.feed(ev.Unreadable(d.now, "chatRequest", "message 7"))  # ends the turn, once the play has landed
    assert d.machine.phase is Phase.SETTLING
    d.advance(3.0)  # longer than the animation: still waiting for the feedback
    assert d.kinds()[-1] == "chat"
    d.feedback(CLEAR)
    assert d.at(act.SendFinish) == [pytest.approx(3.3)]
    assert d.records("late_feedback") == [{"turn": 1, "collisions": {}}]


def test_no_play_is_sent_that_cannot_land_before_the_deadline() -> None:
    d = Driver(deadline=10.0)
    d.request()
    d.advance(WORK_10 - 0.01)
    d.decide(Decision(GREEN, "Green."))  # just in time for the play to land
    assert d.kinds()[-1] == "play"
    d2 = Driver(deadline=10.0)
    d2.request()
    d2.now = WORK_10 + 0.01  # the decision is handled before the work timer that is also due
    d2.decide(Decision(GREEN, "Green."))
    assert "play" not in d2.kinds() and ends(d2) == ["no-time"] and d2.said() == [LINES("no_time")]


# ---------------------------------------------------------------------- unreadable frames


def test_an_unreadable_frame_while_deciding_ends_the_turn_politely() -> None:
    d = Driver()
    d.request()
    d.feed(ev.Unreadable(d.now, None, "not JSON"))
    assert d.kinds() == ["chat", "finish"] and d.said() == [BAD_FRAME] and ends(d) == ["bad-frame"]
    assert d.cancelled == [d.asks[-1].ask_id]


def test_an_unreadable_feedback_ends_the_turn_at_once_the_animation_being_over() -> None:
    d = Driver()
    d.request()
    d.decide(Decision(GREEN, "Green."))
    d.advance(0.6)
    d.feed(ev.Unreadable(d.now, "playFeedback", "state 12"))
    assert d.kinds() == ["chat", "play", "chat", "finish"] and d.said()[-1] == BAD_FEEDBACK
    assert d.at(act.SendFinish) == [pytest.approx(0.6)]


def test_another_unreadable_frame_during_the_animation_waits_for_the_feedback() -> None:
    d = Driver()
    d.request()
    d.decide(Decision(GREEN, "Green."))
    d.advance(0.1)
    d.feed(ev.Unreadable(d.now, "chatRequest", "message 7"))
    assert d.kinds() == ["chat", "play", "chat"] and d.machine.phase is Phase.SETTLING
    d.advance(0.4)
    d.feedback(CLEAR)
    assert d.kinds()[-1] == "finish" and d.at(act.SendFinish) == [pytest.approx(0.5)]
    d.check_rules()


def test_an_unreadable_feedback_during_the_settling_wait_ends_it_at_once() -> None:
    d = Driver(deadline=10.0)
    d.request()
    d.decide(Decision(GREEN, "Green."))
    d.feed(ev.Unreadable(d.now, None, "not JSON"))
    assert d.machine.phase is Phase.SETTLING and d.said()[-1] == BAD_FRAME
    d.advance(2.5)
    d.feed(ev.Unreadable(d.now, "playFeedback", "state 12"))
    assert d.at(act.SendFinish) == [pytest.approx(2.5)]


def test_an_unreadable_play_request_gets_a_chat_line_and_finish_and_no_turn() -> None:
    d = Driver()
    d.feed(ev.Unreadable(0.0, "playRequest", "state 17"))
    assert d.kinds() == ["chat", "finish"] and d.said() == [BAD_REQUEST]
    assert d.records("unreadable_request") == [{"reason": "state 17", "answered": "finish"}]
    assert d.records("turn_start") == [] and d.machine.phase is Phase.IDLE


def test_an_unreadable_chat_request_between_turns_is_answered_without_a_finish() -> None:
    d = Driver()
    d.feed(ev.Unreadable(0.0, "chatRequest", "message 7"))
    assert d.kinds() == ["chat"]


def test_a_stray_feedback_and_a_second_one_are_ignored() -> None:
    d = Driver()
    d.request()
    d.feedback({"Green": (50, 50, 0, ["Red"])})  # before any play
    assert d.kinds() == [] and d.machine.phase is Phase.DECIDING
    d.decide(Decision(GREEN, "Green."))
    d.advance(0.6)
    d.feedback(CLEAR)
    d.feedback({"Green": (50, 50, 0, ["Red"])})  # twice
    assert d.kinds() == ["chat", "play", "finish"] and ends(d) == ["played"]


# ---------------------------------------------------------------------- turns overlapping


def test_a_second_play_request_abandons_the_old_turn_without_its_finish() -> None:
    d = Driver()
    d.request()
    old = d.asks[-1]
    d.advance(1.0)
    d.request()
    assert d.cancelled == [old.ask_id] and ends(d) == ["cancelled"]
    d.decide(Decision(GREEN, "Green."), old)  # the old turn's answer: dropped
    assert d.kinds() == []
    d.decide(Decision(None, "pass"))
    assert d.kinds() == ["chat", "finish"] and ends(d) == ["cancelled", "passed"]


def test_a_second_play_request_during_the_animation_holds_the_next_play_until_it_is_over() -> None:
    d = Driver()
    d.request()
    d.decide(Decision(GREEN, "Green."))
    d.advance(0.1)
    d.request()
    d.decide(Decision(Pose("Green", 30, 30, 0), "again"))
    assert d.kinds() == ["chat", "play"]  # the play (and its line) wait for the first one's animation
    d.advance(0.6)
    assert d.kinds() == ["chat", "play", "chat", "play"]
    first, second = d.at(act.SendPlay)
    assert second >= first + ANIMATION_S


# ---------------------------------------------------------------------- shutdown and bugs


def test_shutdown_while_deciding_says_goodbye_and_finishes() -> None:
    d = Driver()
    d.request()
    d.feed(ev.Shutdown(d.now))
    assert d.kinds() == ["chat", "finish"] and d.said() == [STOPPING]
    assert d.records("turn_end")[0] == {**d.records("turn_end")[0], "outcome": "shutdown", "finish_sent": True}


def test_shutdown_while_a_play_lands_finishes_when_its_feedback_comes() -> None:
    d = Driver()
    d.request()
    d.decide(Decision(GREEN, "Green."))
    d.advance(0.1)
    d.feed(ev.Shutdown(d.now))
    assert d.kinds() == ["chat", "play", "chat"]
    d.advance(2.4)  # the slow game's feedback, long after the animation
    assert d.kinds()[-1] == "chat"
    d.feedback(CLEAR)
    [played], [finished] = d.at(act.SendPlay), d.at(act.SendFinish)
    assert finished - played == pytest.approx(2.5)
    assert ends(d) == ["shutdown"]


def test_shutdown_waits_for_a_feedback_no_longer_than_plays_take_to_land_here() -> None:
    d = Driver()
    d.request()
    d.decide(Decision(GREEN, "Green."))
    d.advance(0.1)
    d.feed(ev.Shutdown(d.now))
    d.advance(60.0)
    [played], [finished] = d.at(act.SendPlay), d.at(act.SendFinish)
    assert finished - played == pytest.approx(FIRST_LANDING_10)
    assert d.machine.shutdown_wait_s == pytest.approx(FIRST_LANDING_10)
    assert finished - played >= ANIMATION_S + ANIMATION_MARGIN_S


def test_a_finish_that_could_not_be_sent_is_recorded_so() -> None:
    d = Driver(auto_sent=False)
    d.request()
    d.feed(ev.Shutdown(0.0))
    d.feed(ev.FrameSent(0.0, "finish", False))
    assert d.records("turn_end")[0]["finish_sent"] is False


def test_the_connection_closing_mid_turn_cancels_the_player_and_records_it() -> None:
    d = Driver()
    d.request()
    d.feed(ev.Closed(2.0))
    assert d.kinds() == [] and d.cancelled == [d.asks[-1].ask_id] and ends(d) == ["cancelled"]


def test_a_player_that_raises_costs_the_turn_politely() -> None:
    d = Driver()
    d.request()
    d.feed(ev.DecisionFailed(0.0, d.asks[-1].ask_id, "RuntimeError: boom"))
    assert d.kinds() == ["chat", "finish"] and d.said() == [BUG] and ends(d) == ["internal-error"]
    assert d.records("error") == [{"where": "turn", "error": "RuntimeError: boom"}]


def test_a_bug_in_the_machine_ends_the_turn_with_chat_and_one_finish() -> None:
    # A decision whose pose is not a pose raises inside the machine (a stand-in for any bug).
    d2 = Driver()
    d2.request()
    d2.decide(Decision(object(), "?"))  # type: ignore[arg-type]
    assert d2.kinds() == ["chat", "finish"] and d2.said() == [BUG] and ends(d2) == ["internal-error"]
    assert d2.records("error")[0]["where"] == "turn"


def test_a_bug_during_the_animation_still_waits_for_it() -> None:
    d = Driver()
    d.request()
    d.decide(Decision(GREEN, "Green."))
    d.advance(0.1)
    d.feed(ev.DecisionFailed(d.now, d.asks[-1].ask_id, "late"))  # stale: dropped, nothing happens
    assert d.kinds() == ["chat", "play"] and d.machine.phase is Phase.PLAYING


# ---------------------------------------------------------------------- memory across turns


def test_our_own_move_whose_feedback_never_came_is_not_the_partners() -> None:
    d = Driver(deadline=5.0)
    d.request()
    d.decide(Decision(GREEN, "Green."))
    d.advance(FEEDBACK_LOST_S + 1.0)
    play = d.at(act.SendPlay)
    assert play
    sent = next(a for _, a in d.sent if isinstance(a, act.SendPlay))
    marker = GREEN.marker_board()
    before = len(d.actions)
    d.request({"Green": (marker[0], marker[1], sent.rotation, []), "Blue": (30, 40, 90, [])})
    lines = [a.text for a in d.actions[before:] if isinstance(a, act.Remember)]
    assert lines == ["partner moved Blue to (30, 40), rotation 90"]


# ---------------------------------------------------------------------- purity


def test_the_machine_imports_no_io_and_reads_no_clock() -> None:
    banned = {"asyncio", "websockets", "time", "socket", "threading", "datetime", "aiohttp", "os"}
    folder = Path(__file__).resolve().parents[3] / "agent" / "games" / "tangram" / "turn"
    for path in folder.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                assert name.split(".")[0] not in banned, (path.name, name)
            if isinstance(node, ast.Attribute):
                assert node.attr not in {"monotonic", "perf_counter", "time_ns"}, path.name

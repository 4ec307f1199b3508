"""The session against what the real game does (GAME_FACTS, last section), with no socket."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from agent.games.tangram.contract import Decision
from agent.games.tangram.geometry.frames import Pose, pose_from_marker, rotation_to_send
from agent.games.tangram.sim import godot
from agent.games.tangram.turn.timing import FEEDBACK_LOST_S
from tests.tangram.link.test_session import ScriptedPlayer, advance, make_session

GREEN = Pose("Green", 50.0, 50.0, 0.0)


def raw_frame(ftype: str, on_board: dict[str, dict[str, Any]] | None = None,
              off_board: dict[str, float] | None = None) -> str:
    off = {"Red": 180.0, "Cream": 90.0, "Blue": 225.0, "Green": 0.0, "Yellow": -90.0, "Purple": 45.0, "Brown": 0.0}
    off.update(off_board or {})
    board = on_board or {}
    state = {"on_board": board, "off_board": {n: {"rotation": r} for n, r in off.items() if n not in board}}
    return json.dumps({"type": ftype, "objective": "A house", "state": state, "board_img": "", "drawer_img": "",
                       "timestamp": 3})


def entry(pose: Pose, collisions: list[str] | None = None, rotation: float | None = None,
          vertices: list[tuple[float, float]] | None = None) -> dict[str, Any]:
    """A piece as the game reports it at ``pose`` (its markers from our table)."""
    mx, my = pose.marker_board()
    verts = pose.vertex_markers_board() if vertices is None else vertices
    return {"position": {"position": godot.vector_text(mx, my), "vertices": [godot.vector_text(*v) for v in verts]},
            "rotation": pose.rotation if rotation is None else rotation, "collisions": collisions or []}


@pytest.mark.parametrize(("current", "target", "sent"), [
    (-90.0, 270.0, -90.0), (225.0, 0.0, 360.0), (405.0, 90.0, 450.0), (0.0, 180.0, 180.0), (-90.0, 90.0, 90.0),
    (359.99, 0.0, 360.0), (10.0, 350.0, -10.0),
])
def test_rotation_to_send_turns_the_short_way(current: float, target: float, sent: float) -> None:
    value = rotation_to_send(current, target)
    assert value == pytest.approx(sent)
    assert abs(value - current) <= 180.0 + 1e-9


async def test_a_play_turns_the_piece_the_short_way_from_its_reported_rotation() -> None:
    # Yellow sits in the drawer at -90 (its start); the player wants 270 (the same orientation).
    player = ScriptedPlayer([Decision(Pose("Yellow", 50.0, 50.0, 270.0), "Yellow.")])
    session, conn = make_session(player)
    await session.handle_raw(raw_frame("playRequest"))
    play = await conn.until("play")
    assert play["rotation"] == pytest.approx(-90.0)
    await session.close()


async def test_a_stale_collision_is_answered_by_the_same_play_once() -> None:
    player = ScriptedPlayer([Decision(GREEN, "Green.")])
    session, conn = make_session(player)
    await session.handle_raw(raw_frame("playRequest"))
    first = await conn.until("play")
    # The game says BOUNDARY in the middle of the board: our exact geometry disagrees.
    await session.handle_raw(raw_frame("playFeedback", {"Green": entry(GREEN, ["BOUNDARY"])}))
    second = await conn.until("play")
    assert second["position"] == first["position"] and second["rotation"] == first["rotation"]
    await session.handle_raw(raw_frame("playFeedback", {"Green": entry(GREEN)}))
    await conn.until("finish")
    assert sum(f["type"] == "play" for f in conn.sent) == 2
    await session.close()


async def test_a_collision_reported_twice_is_believed_and_the_piece_moves() -> None:
    player = ScriptedPlayer([Decision(GREEN, "Green.")], adjusts=[Decision(Pose("Green", 30, 30, 0), "moved")])
    session, conn = make_session(player)
    await session.handle_raw(raw_frame("playRequest"))
    first = await conn.until("play")
    for _ in range(2):
        await session.handle_raw(raw_frame("playFeedback", {"Green": entry(GREEN, ["BOUNDARY"])}))
        again = await conn.until("play")
    assert again["position"] != first["position"]  # the second report is trusted: a correction
    x, y = again["position"]
    await session.handle_raw(raw_frame("playFeedback", {"Green": entry(Pose("Green", x, y, 0.0))}))
    await conn.until("finish")
    await session.close()


async def test_a_collision_our_geometry_confirms_is_corrected_at_once() -> None:
    red = Pose("Red", 50.0, 50.0, 0.0)
    player = ScriptedPlayer([Decision(GREEN, "Green.")], adjusts=[Decision(Pose("Green", 20, 20, 0), "moved")])
    session, conn = make_session(player)
    await session.handle_raw(raw_frame("playRequest"))
    first = await conn.until("play")
    # Red really is where Green went (the partner's move we did not know of): no re-send.
    await session.handle_raw(raw_frame("playFeedback", {"Green": entry(GREEN, ["Red"]), "Red": entry(red, ["Green"])}))
    second = await conn.until("play")
    assert second["position"] != first["position"]
    await session.close()


async def test_giving_up_puts_the_piece_back_and_says_so_honestly() -> None:
    player = ScriptedPlayer([Decision(GREEN, "Green.")], adjusts=[Decision(Pose("Green", 30, 30, 0), "again")] * 3)
    session, conn = make_session(player, max_feedback_iterations=0)
    red = Pose("Red", 50.0, 50.0, 0.0)
    await session.handle_raw(raw_frame("playRequest", {"Red": entry(red)}))
    await conn.until("play")
    await session.handle_raw(raw_frame("playFeedback", {"Green": entry(GREEN, ["Red"]), "Red": entry(red, ["Green"])}))
    back = await conn.until("play")  # no corrections allowed: back to the drawer, at its rotation there
    assert back["position"][0] > 100 and back["rotation"] == pytest.approx(0.0)
    await session.handle_raw(raw_frame("playFeedback", {"Red": entry(red)}))
    await conn.until("finish")
    lines = [f["message"] for f in conn.sent if f["type"] == "chat"]
    assert any("put it back where it was" in line for line in lines)
    assert not any("goes back" in line for line in lines)
    await session.close()


async def test_our_own_move_is_not_remembered_as_the_partners() -> None:
    player = ScriptedPlayer([Decision(GREEN, "Green."), Decision(None, "pass")])
    session, conn = make_session(player, deadline=3.0)
    await session.handle_raw(raw_frame("playRequest"))
    await conn.until("play")
    await advance(session, FEEDBACK_LOST_S + 1.0)
    await conn.until("finish")  # the game never answered: the hard cap ended the turn
    await session.handle_raw(raw_frame("playRequest", {"Green": entry(GREEN)}))
    await conn.until("finish")
    assert not any("partner" in e.text and "Green" in e.text for e in session.memory.recent())
    await session.close()


async def test_a_different_game_build_is_reported_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    red = Pose("Red", 50.0, 50.0, 0.0)
    wrong = [(x + 1.0, y) for x, y in red.vertex_markers_board()]
    player = ScriptedPlayer([Decision(None, "pass"), Decision(None, "pass")])
    session, conn = make_session(player)
    for _ in range(2):
        await session.handle_raw(raw_frame("playRequest", {"Red": entry(red, vertices=wrong)}))
        await conn.until("finish")
    warnings = [r for r in caplog.records if "do not match the agent's geometry table" in r.getMessage()]
    assert len(warnings) == 1
    await session.close()


async def test_the_games_own_vertices_raise_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    pose = pose_from_marker("Blue", 40.0, 60.0, 135.0)
    session, conn = make_session(ScriptedPlayer([Decision(None, "pass")]))
    await session.handle_raw(raw_frame("playRequest", {"Blue": entry(pose)}))
    await conn.until("finish")
    assert not [r for r in caplog.records if "geometry table" in r.getMessage()]
    await session.close()


async def test_a_polite_close_waits_for_the_landing_play_before_finish() -> None:
    session, conn = make_session(ScriptedPlayer([Decision(GREEN, "Green.")]))
    await session.handle_raw(raw_frame("playRequest"))
    await conn.until("play")
    # The agent shuts down while the game lands the play: the goodbye goes out at once, the
    # finish only once the play's feedback is in (a slow game: long after the animation).
    closing = asyncio.create_task(session.close(polite=True))
    assert (await conn.until("chat"))["message"].startswith("I have to stop now")
    await advance(session, 1.8)
    assert "finish" not in [f["type"] for f in conn.sent]
    await session.handle_raw(raw_frame("playFeedback", {"Green": entry(GREEN)}))
    await closing
    assert [f["type"] for f in conn.sent][-1] == "finish"
    [played], [finished] = conn.at("play"), conn.at("finish")
    assert finished - played == pytest.approx(1.8)


async def test_an_unreadable_feedback_ends_the_wait_at_the_deadline_at_once() -> None:
    # The turn's time is up while the play's feedback is pending; the feedback then arrives unreadable.
    session, conn = make_session(ScriptedPlayer([Decision(GREEN, "Green.")]), deadline=2.2)
    await session.handle_raw(raw_frame("playRequest"))
    await conn.until("play")
    await advance(session, 0.6)  # past the work window (2.2 - 1.8 s): the turn now waits for the feedback
    assert "finish" not in [f["type"] for f in conn.sent]
    sent = session.clock.now()
    await session.handle_raw('{"type": "playFeedback", "state": 12}')
    await conn.until("finish")
    assert conn.at("finish") == [sent]
    await session.close()

"""The simulator's rules and frames, checked against GAME_FACTS (no sockets here)."""

from __future__ import annotations

import base64
import io
import json
import re

import pytest
from PIL import Image

from agent.games.tangram.geometry.collide import BOUNDARY
from agent.games.tangram.geometry.pieces import PIECE_NAMES, PIECES
from agent.games.tangram.protocol import parse_frame, parse_vector
from agent.games.tangram.replica import scene
from agent.games.tangram.sim import godot
from agent.games.tangram.sim.simgame import (
    AGENT_ERROR_PREFIX,
    NO_TYPE_ERROR,
    UNDO_MESSAGE,
    SimGame,
    SimRuleError,
    frame_text,
)

VECTOR = re.compile(r"^\((-?[0-9.e+-]+), (-?[0-9.e+-]+)\)$")


# ---------------------------------------------------------------- Godot's text


@pytest.mark.parametrize(("x", "y", "text"), [
    (30, 50, "(30, 50)"),
    (49.925816, 28.757764, "(49.92582, 28.75776)"),
    (1e-05, 3, "(0.00001, 3)"),  # fixed point, never an exponent (Godot 4.2)
    (1e-07, 3, "(0, 3)"),
    (-1e-07, 3, "(-0, 3)"),
    (-2.5, 0.125, "(-2.5, 0.125)"),
    (-0.0, 100, "(0, 100)"),
    (3.14159265, 123.456789, "(3.141593, 123.4568)"),
])
def test_vectors_print_like_godot(x: float, y: float, text: str) -> None:
    assert godot.vector_text(x, y) == text


@pytest.mark.parametrize(("deg", "snapped"), [(225, 225.0), (180, 180.0), (-90, -90.0), (405, 405.0),
                                              (12.345, 12.35), (0.57, 0.57), (-0.001, 0.0)])
def test_rotation_is_snapped_to_hundredths_and_not_normalised(deg: float, snapped: float) -> None:
    assert godot.snapped_degrees(deg) == snapped
    assert json.dumps(godot.snapped_degrees(deg)) == json.dumps(snapped)


def test_stringify_is_compact_sorted_and_keeps_unicode() -> None:
    assert godot.stringify({"b": 1, "a": "olá"}) == '{"a":"olá","b":1}'


# ---------------------------------------------------------------- state and frames


def test_start_poses_are_all_in_the_drawer_with_the_games_rotations() -> None:
    game = SimGame()
    state = game.state()
    assert state["on_board"] == {}
    assert state["off_board"] == {n: {"rotation": PIECES[n].start_rotation} for n in PIECE_NAMES}
    assert json.dumps(state["off_board"]["Yellow"]) == '{"rotation": -90.0}'
    for name in PIECE_NAMES:  # the drawer's classic square: nothing overlaps
        assert game.collisions(name) == [], name


def test_on_board_entry_matches_the_game_facts_example() -> None:
    # GAME_FACTS: Red at rotation 0 reports position "(49.92582, 28.75776)", i.e. origin (50, 30).
    game = SimGame()
    game.place("Red", 50, 30, 0)
    red = game.state()["on_board"]["Red"]
    assert set(red) == {"position", "rotation", "collisions"}
    assert red["position"]["position"] == "(49.92582, 28.75776)"
    assert red["rotation"] == 0.0 and red["collisions"] == []
    assert len(red["position"]["vertices"]) == 3
    expected = [(49.92582, 38.07453), (65.65282, 21.92547), (34.79228, 21.92547)]
    for text, (ex, ey) in zip(red["position"]["vertices"], expected, strict=False):
        assert VECTOR.match(text), text
        vx, vy = parse_vector(text)
        assert vx == pytest.approx(ex, abs=1e-3) and vy == pytest.approx(ey, abs=1e-3)
    assert "Red" not in game.state()["off_board"]


def test_play_request_frame_has_the_games_fields_and_types() -> None:
    game = SimGame("A fish")
    frame = game.play_request_frame()
    assert set(frame) == {"type", "objective", "state", "board_img", "drawer_img", "timestamp"}
    assert frame["type"] == "playRequest" and frame["objective"] == "A fish"
    assert isinstance(frame["timestamp"], int)
    chat = game.chat_request_frame("hi")
    assert chat["type"] == "chatRequest" and chat["message"] == "hi"
    text = frame_text(frame)
    assert text.startswith('{"board_img":')  # sorted keys, no spaces, like JSON.stringify
    parsed = parse_frame(text)  # our agent's parser reads it
    assert parsed.type == "playRequest" and parsed.objective == "A fish"
    assert set(parsed.state.off_board) == set(PIECE_NAMES)


def test_images_have_the_games_sizes_and_are_cached() -> None:
    game = SimGame()
    board, drawer = game.images()
    assert Image.open(io.BytesIO(base64.b64decode(board))).size == (562, 540)
    assert Image.open(io.BytesIO(base64.b64decode(drawer))).size == (210, 210)
    assert game.images() is game.images()
    game.place("Red", 50, 50, 0)
    red_board = Image.open(io.BytesIO(base64.b64decode(game.images()[0]))).convert("RGB")
    empty_board = Image.open(io.BytesIO(base64.b64decode(board))).convert("RGB")
    assert red_board.getpixel((280, 270)) != empty_board.getpixel((280, 270))


def test_list_layout_is_the_older_builds_shape() -> None:
    game = SimGame(state_layout="list")
    game.place("Green", 50, 50, 0)
    state = game.state()
    assert isinstance(state["on_board"], list) and list(state["on_board"][0]) == ["Green"]
    assert parse_frame(frame_text(game.play_feedback_frame())).state.on_board["Green"].position


# ---------------------------------------------------------------- collisions


def test_touching_pieces_collide() -> None:
    # The simulator's own separating-axis test: shapes that share an edge or a corner overlap.
    square = ((0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0))
    above = ((0.0, -10.0), (10.0, -10.0), (10.0, 0.0), (0.0, 0.0))
    corner = ((10.0, 10.0), (20.0, 10.0), (20.0, 20.0))
    apart = ((0.0, -10.0), (10.0, -10.0), (10.0, -1e-6), (0.0, -1e-6))
    assert scene.convex_overlap(square, above) and scene.convex_overlap(square, corner)
    assert not scene.convex_overlap(square, apart)
    game = SimGame()
    game.place("Purple", 50, 40, 0)
    game.place("Brown", 50, 40, 0)
    assert game.collisions("Brown") == ["Purple"]
    assert game.state()["on_board"]["Purple"]["collisions"] == ["Brown"]


@pytest.mark.parametrize(("gap_px", "hit"), [(1.0, False), (0.1, False), (-0.1, True)])
def test_a_pixel_apart_is_free(gap_px: float, hit: bool) -> None:
    # Purple's top edge is 18.92 px above its origin, Brown's bottom edge 12.8 px below its own.
    game = SimGame()
    game.place("Purple", 50, 40, 0)
    game.place("Brown", 50, 40 + (18.92 + 12.8 + gap_px) / 3.22, 0)
    assert game.collisions("Brown") == (["Purple"] if hit else [])


def test_sticking_out_of_the_board_is_boundary() -> None:
    game = SimGame()
    game.place("Green", 2, 50, 0)  # 25.6 px half-width, origin 6.7 px from the left edge
    assert game.is_on_board("Green")
    assert game.state()["on_board"]["Green"]["collisions"] == [BOUNDARY]


# ---------------------------------------------------------------- the turn rules


def _play(shape: str, x: float, y: float, rot: float) -> str:
    return json.dumps({"type": "play", "shape": shape, "position": [x, y], "rotation": rot})


def test_play_moves_the_piece_and_asks_for_feedback() -> None:
    game = SimGame()
    game.start_ai_turn()
    reaction = game.handle_agent_frame(_play("Red", 50, 30, 0))
    assert reaction.kind == "play" and reaction.send_feedback
    assert game.state()["on_board"]["Red"]["position"]["position"] == "(49.92582, 28.75776)"
    feedback = game.play_feedback_frame()
    assert feedback["type"] == "playFeedback" and "Red" in feedback["state"]["on_board"]


def test_one_piece_per_turn_puts_the_first_back() -> None:
    game = SimGame()
    game.start_ai_turn()
    game.handle_agent_frame(_play("Red", 50, 30, 0))
    game.handle_agent_frame(_play("Green", 20, 80, 0))
    assert game.poses["Red"] == scene.start_pose("Red")
    assert set(game.state()["on_board"]) == {"Green"}
    assert game.turns[-1].plays[-1].replaced == "Red"
    game.handle_agent_frame('{"type": "finish"}')
    assert game.turns[-1].piece == "Green" and not game.turns[-1].undone


def test_finish_with_an_overlap_undoes_the_move() -> None:
    game = SimGame()
    game.place("Purple", 50, 50, 0)
    game.start_ai_turn()
    game.handle_agent_frame(_play("Green", 50, 50, 0))
    reaction = game.handle_agent_frame('{"type": "finish"}')
    assert reaction.turn_ended and reaction.undone
    assert "Green" not in game.state()["on_board"]
    turn = game.turns[-1]
    assert turn.undone and turn.undone_piece == "Green" and turn.final_collisions == ["Purple"]
    assert game.chat_log[-1].text == UNDO_MESSAGE
    assert game.turn_owner == "human"


def test_finish_across_the_edge_is_undone_too() -> None:
    game = SimGame()
    game.start_ai_turn()
    game.handle_agent_frame(_play("Green", 99, 50, 0))
    assert game.handle_agent_frame('{"type": "finish"}').undone
    assert game.turns[-1].final_collisions == [BOUNDARY]


def test_a_clean_finish_keeps_the_move() -> None:
    game = SimGame()
    game.start_ai_turn()
    game.handle_agent_frame(_play("Green", 50, 50, 45))
    reaction = game.handle_agent_frame('{"type": "finish"}')
    assert reaction.turn_ended and not reaction.undone
    assert game.state()["on_board"]["Green"]["rotation"] == 45.0


def test_the_shipped_build_ignores_an_error_frame() -> None:
    game = SimGame()
    game.start_ai_turn()
    reaction = game.handle_agent_frame('{"type": "error", "message": "no idea"}')
    assert reaction.kind == "ignored" and not reaction.turn_ended and game.turn_owner == "ai"
    assert [v.kind for v in game.violations] == ["error_ignored"]


def test_the_current_source_ends_the_turn_on_an_error_frame_and_shows_it() -> None:
    game = SimGame(build="source")
    game.start_ai_turn()
    reaction = game.handle_agent_frame('{"type": "error", "message": "no idea"}')
    assert reaction.kind == "error" and reaction.turn_ended
    assert game.turns[-1].ended_by == "error" and game.turns[-1].error_message == "no idea"
    assert game.chat_log[-1].text == AGENT_ERROR_PREFIX + "no idea"


def test_chat_is_shown_at_once() -> None:
    game = SimGame()
    reaction = game.handle_agent_frame(json.dumps({"type": "chat", "message": "hello"}))
    assert reaction.kind == "chat" and reaction.chat == "hello"
    assert game.chat_log[-1].speaker == "agent" and game.violations == []


def test_chat_without_message_gets_the_games_error() -> None:
    game = SimGame()
    # The game reads "message" only.
    reaction = game.handle_agent_frame(json.dumps({"type": "chat", "content": "hello"}))
    assert reaction.kind == "ignored"
    assert reaction.reply == {"type": "error", "message": "Error: Missing message field in received JSON"}


def test_frame_without_type_is_answered_like_the_game() -> None:
    game = SimGame()
    reaction = game.handle_agent_frame('{"shape": "Red"}')
    assert reaction.reply == {"type": "error", "message": NO_TYPE_ERROR}
    assert [v.kind for v in game.violations] == ["no_type"]


@pytest.mark.parametrize(("raw", "kind"), [
    (_play("Orange", 50, 50, 0), "unknown_piece"),
    ("{not json", "malformed_frame"),
    ('{"type": "play", "shape": "Red", "position": [NaN, 1], "rotation": 0}', "malformed_frame"),
    ("[1, 2]", "malformed_frame"),
    ('{"type": "dance"}', "unknown_type"),
    ('{"type": "chat"}', "bad_chat"),
    (json.dumps({"type": "chat", "message": "x" * 70_000}), "frame_too_large"),
])
def test_violations_are_recorded_and_the_frame_ignored(raw: str, kind: str) -> None:
    game = SimGame()
    game.start_ai_turn()
    before = dict(game.poses)
    reaction = game.handle_agent_frame(raw)
    assert reaction.kind == "ignored" and not reaction.send_feedback and not reaction.turn_ended
    assert [v.kind for v in game.violations] == [kind]
    assert game.turns[-1].violations == game.violations
    assert game.poses == before


@pytest.mark.parametrize("raw", ['{"type": "play", "shape": "Red", "position": "50,50", "rotation": 0}',
                                 '{"type": "play", "shape": "Red", "position": [50, 50]}'])
def test_a_bad_play_gets_errors_and_hands_the_turn_over(raw: str) -> None:
    game = SimGame()
    game.start_ai_turn()
    reaction = game.handle_agent_frame(raw)
    assert reaction.turn_ended and reaction.replies and all(r["type"] == "error" for r in reaction.replies)
    assert game.turn_owner == "human" and game.turns[-1].ended_by == "bad_play"
    assert [v.kind for v in game.violations] == ["bad_play"]
    assert "Red" not in game.on_board()  # the script fails on the field: nothing moves


def test_a_wrong_length_position_still_moves_the_piece() -> None:
    game = SimGame()
    game.start_ai_turn()
    reaction = game.handle_agent_frame('{"type": "play", "shape": "Red", "position": [50, 30, 1], "rotation": 0}')
    assert reaction.turn_ended and reaction.send_feedback and "Red" in game.on_board()


def test_play_and_finish_outside_the_ai_turn_are_applied_and_flagged() -> None:
    game = SimGame()
    assert game.handle_agent_frame(_play("Red", 50, 30, 0)).kind == "play"
    assert "Red" in game.state()["on_board"]
    assert not game.human_move("Green", 20, 80, 0)  # the AI's piece now holds the one-piece lock
    assert game.handle_agent_frame('{"type": "finish"}').kind == "finish"
    assert game.human_move("Green", 20, 80, 0)  # finish cleared it
    assert [v.kind for v in game.violations] == ["out_of_turn", "out_of_turn"]


def test_timestamps_are_whole_seconds_since_the_start() -> None:
    now = [100.0]
    game = SimGame(clock=lambda: now[0])
    now[0] = 137.9
    assert game.play_request_frame()["timestamp"] == 37


def test_human_rules_one_piece_and_no_overlapping_drop() -> None:
    game = SimGame()
    assert game.human_move("Purple", 50, 50, 0)
    assert not game.human_move("Green", 20, 20, 0)  # a second piece in the same turn
    assert game.human_move("Purple", 60, 50, 0)  # the same piece again is fine
    game.start_ai_turn()
    with pytest.raises(SimRuleError):
        game.human_move("Purple", 50, 50, 0)
    game.handle_agent_frame('{"type": "finish"}')
    assert not game.human_move("Green", 60, 50, 0)  # would land on Purple: snaps back
    assert not game.human_move("Green", 99, 50, 0)  # across the edge: snaps back
    assert "Green" not in game.on_board()

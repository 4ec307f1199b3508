"""Frames in both dialects (API document and the real game), and the guarantees on frames out."""

import json

import pytest

from agent.games.tangram.protocol import (
    MAX_OUT_FRAME_BYTES,
    ProtocolError,
    chat_frame,
    clean_chat_text,
    finish_frame,
    parse_frame,
    parse_vector,
    play_frame,
)

REAL_GAME_FRAME = {
    "objective": "A house",
    "state": {
        "on_board": {"Red": {"position": {"position": "(49.92582, 28.75776)",
                                          "vertices": ["(49.92582, 38.07453)", "(65.65282, 21.92547)",
                                                       "(34.79228, 21.92547)"]},
                             "rotation": 0.0, "collisions": ["Cream", "BOUNDARY"]}},
        "off_board": {"Blue": {"rotation": 225.0}, "Cream": {"rotation": -90}},
    },
    "board_img": "", "drawer_img": "", "timestamp": 37, "type": "playRequest",
}

DOC_FRAME = {
    "type": "playFeedback", "objective": "A fish",
    "state": {"on_board": {"Green": {"position": [30, 50], "vertices": [[30, 55], [25, 45], [35, 45]],
                                     "rotation": 405, "collisions": []}},
              "off_board": {"Red": {"vertices": {"a": 1}, "rotation": 180}}},
    "board_img": None, "drawer_img": None, "timestamp": "2024-05-01T10:00:00Z",
}


@pytest.mark.parametrize("text, expected", [
    ("(49.92582, 28.75776)", (49.92582, 28.75776)),
    ("(30, 50)", (30.0, 50.0)),
    ("(1e-05, 3)", (1e-05, 3.0)),
    ("(-2.5, -0)", (-2.5, 0.0)),
    ("( 1.5e+02 ,4 )", (150.0, 4.0)),
    ([1, 2.5], (1.0, 2.5)),
    ({"x": 3, "y": 4}, (3.0, 4.0)),
])
def test_parse_vector_accepts_godot_text_and_arrays(text, expected):
    assert parse_vector(text) == pytest.approx(expected)


@pytest.mark.parametrize("bad", ["(1, 2, 3)", "1, 2", "(a, b)", [1], [True, 2], "(inf, 2)", "(nan, 1)", None, 5])
def test_parse_vector_rejects_malformed(bad):
    with pytest.raises(ValueError):
        parse_vector(bad)


def test_real_game_frame_is_normalised():
    frame = parse_frame(json.dumps(REAL_GAME_FRAME))
    red = frame.state.on_board["Red"]
    assert red.position == pytest.approx((49.92582, 28.75776))
    assert len(red.vertices) == 3 and red.vertices[1] == pytest.approx((65.65282, 21.92547))
    assert red.collisions == ["Cream", "BOUNDARY"]
    assert frame.state.off_board["Cream"].rotation == -90
    assert frame.timestamp == 37
    assert frame.board_img is None  # empty image strings count as absent


def test_api_document_frame_is_normalised():
    frame = parse_frame(json.dumps(DOC_FRAME))
    assert frame.type == "playFeedback"
    assert frame.state.on_board["Green"].position == (30.0, 50.0)
    assert frame.state.on_board["Green"].rotation == 405
    assert "Red" in frame.state.off_board


def test_on_board_as_list_of_single_key_objects():
    raw = {"type": "playRequest", "state": {"on_board": [{"Red": {"position": {"position": "(1, 2)", "vertices": []},
                                                                   "rotation": 0, "collisions": []}}],
                                            "off_board": [{"Blue": {"rotation": 5}}]}}
    frame = parse_frame(json.dumps(raw))
    assert set(frame.state.on_board) == {"Red"} and set(frame.state.off_board) == {"Blue"}


def test_unknown_pieces_are_dropped_and_reported():
    raw = {"type": "playRequest", "state": {"on_board": {"Pink": {"position": [1, 2]}}, "off_board": {}}}
    frame = parse_frame(json.dumps(raw))
    assert frame.state.on_board == {}
    assert any("Pink" in note for note in frame.state.ignored)


def test_a_broken_piece_entry_does_not_lose_the_others():
    raw = {"type": "playRequest", "state": {"on_board": {
        "Red": {"position": "(bad)"}, "Blue": {"position": [10, 10], "rotation": 0, "collisions": []}}}}
    frame = parse_frame(json.dumps(raw))
    assert set(frame.state.on_board) == {"Blue"}
    assert any(note.startswith("on_board.Red") for note in frame.state.ignored)


@pytest.mark.parametrize("raw, fragment", [
    ("not json", "not JSON"),
    ("[1, 2]", "not an object"),
    ('{"objective": "x"}', "no 'type'"),
    ('{"type": "dance"}', "unknown frame type"),
    ('{"type": "chatRequest", "message": 5}', "message"),
    ('{"type": "playRequest", "state": "everything"}', "state"),
    ('{"type": "playRequest", "timestamp": NaN}', "NaN"),
    (b"\xff\xfe\x00", "UTF-8"),
])
def test_bad_frames_raise_specific_errors(raw, fragment):
    with pytest.raises(ProtocolError, match=fragment):
        parse_frame(raw)


def test_outgoing_play_frame_has_floats_iso_timestamp_and_real_piece():
    frame = json.loads(play_frame("Red", 50, 40, 90))
    assert frame["type"] == "play" and frame["shape"] == "Red"
    assert frame["position"] == [50.0, 40.0] and all(isinstance(v, float) for v in frame["position"])
    assert isinstance(frame["rotation"], float)
    assert "T" in frame["timestamp"] and frame["timestamp"].endswith("+00:00")


@pytest.mark.parametrize("args", [("Pink", 1, 1, 0), ("Red", float("nan"), 1, 0), ("Red", 1, 1, float("inf"))])
def test_play_frame_refuses_what_would_break_the_game(args):
    with pytest.raises(ValueError):
        play_frame(*args)


def test_chat_frames_stay_small_and_single_line_whatever_the_text():
    hostile = "line1\nline2\x00\x1b[31m" + "é" * 100_000
    text = chat_frame(hostile)
    frame = json.loads(text)
    assert len(text.encode()) < MAX_OUT_FRAME_BYTES
    assert "\n" not in frame["message"] and "\x00" not in frame["message"]
    assert frame["message"] == frame["content"]
    assert json.loads(finish_frame())["type"] == "finish"


def test_clean_chat_text_keeps_ordinary_text():
    assert clean_chat_text("  I placed  Red as the roof. ") == "I placed Red as the roof."


def test_numbers_no_float_can_hold_drop_only_that_piece():
    raw = ('{"type": "playRequest", "state": {"on_board": {"Red": {"position": [1' + "0" * 400 + ', 2]}, '
           '"Blue": {"position": [10, 10]}}}}')
    frame = parse_frame(raw)
    assert set(frame.state.on_board) == {"Blue"} and "too large" in frame.state.ignored[0]


def test_integers_past_pythons_digit_limit_are_a_protocol_error():
    with pytest.raises(ProtocolError, match="not JSON"):
        parse_frame('{"type": "playRequest", "timestamp": ' + "1" * 5000 + "}")


def test_lone_surrogates_in_texts_are_replaced():
    frame = parse_frame('{"type": "chatRequest", "message": "hi \\ud800 there"}')
    assert frame.message == "hi ? there"
    frame.message.encode("utf-8")

"""Salvage rules: each sloppy answer either becomes the nearest move it supports (with a record of
what changed and why) or a precise problem for the re-ask; a pass the model chose stays a pass."""

from __future__ import annotations

import random
from typing import Any

import pytest

from agent.core.testing.random_schema import RandomSchemaOptions, random_instance
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.llm_player.resolve import move_to_pose
from agent.games.tangram.llm_player.salvage import Salvaged, salvage_answer
from agent.games.tangram.llm_player.schema import move_schema
from agent.games.tangram.protocol import GameState, OnBoardPiece

BOARD = {"Blue": (30.0, 30.0), "Green": (60.0, 30.0)}
"""Pieces on the board and their reported positions."""
EMPTY: dict[str, Any] = {"reasoning": "r", "action": "place", "piece": None, "rotation": None, "x": None, "y": None,
                         "relation": None, "anchor": None, "relation2": None, "anchor2": None, "chat": "c"}


def answer(**fields: Any) -> dict[str, Any]:
    return {**EMPTY, **fields}


def kinds(result: Salvaged) -> list[str]:
    return [s.kind for s in result.salvages]


def test_a_clean_answer_is_played_as_given():
    for data in (answer(piece="Red", x=50, y=50, rotation=90),
                 answer(piece="Red", relation="above", anchor="Blue"),
                 answer(piece="Red", relation="above", anchor="Blue", relation2="left_of", anchor2="Green"),
                 answer(action="rotate", piece="Blue", rotation=45)):
        result = salvage_answer(data, BOARD)
        assert result.problem is None and result.salvages == ()
        assert result.move is not None and result.move.model_dump(exclude={"candidate"}) == data


def test_a_pass_the_model_chose_stays_a_pass_whatever_else_it_says():
    result = salvage_answer(answer(action="pass", piece="Red", relation="above", anchor="Cream"), BOARD)
    assert result.move is not None and result.move.action == "pass" and result.problem is None
    assert result.salvages == ()


@pytest.mark.parametrize("half", [{"relation2": "above"}, {"anchor2": "Green"}])
def test_half_a_second_relation_is_dropped(half):
    result = salvage_answer(answer(piece="Red", relation="left_of", anchor="Blue", **half), BOARD)
    assert kinds(result) == ["second_half"]
    move = result.move
    assert move is not None and (move.relation, move.anchor, move.relation2, move.anchor2) == \
        ("left_of", "Blue", None, None)
    assert "only work together" in result.salvages[0].why


@pytest.mark.parametrize("anchor2, why", [("Cream", "Cream is not on the board"),
                                          ("Red", "Red cannot be its own anchor"),
                                          ("Blue", "the second anchor is the first one again")])
def test_an_unusable_second_anchor_is_dropped(anchor2, why):
    result = salvage_answer(answer(piece="Red", relation="left_of", anchor="Blue", relation2="above",
                                   anchor2=anchor2), BOARD)
    assert kinds(result) == ["second_unusable"] and result.salvages[0].why == why
    assert result.move is not None and result.move.relation2 is None and result.move.anchor == "Blue"


def test_an_anchor_off_the_board_falls_back_to_the_answers_coordinates():
    result = salvage_answer(answer(piece="Red", relation="above", anchor="Cream", x=40, y=70, rotation=180), BOARD)
    assert kinds(result) == ["anchor_off_board"]
    note = result.salvages[0]
    assert (note.said, note.why) == ("Red above Cream", "Cream is not on the board")
    assert note.played == "Red at (40, 70), the answer's own coordinates"
    move = result.move
    assert move is not None and (move.x, move.y, move.rotation, move.relation, move.anchor) == (40, 70, 180, None, None)


def test_an_anchor_off_the_board_gives_way_to_a_usable_second_relation():
    result = salvage_answer(answer(piece="Red", relation="above", anchor="Cream", relation2="right_of",
                                   anchor2="Green"), BOARD)
    assert kinds(result) == ["anchor_off_board"] and result.salvages[0].played == "Red right_of Green"
    move = result.move
    assert move is not None and (move.relation, move.anchor, move.relation2) == ("right_of", "Green", None)


def test_an_anchor_off_the_board_with_nothing_else_is_a_problem_naming_it():
    result = salvage_answer(answer(piece="Red", relation="above", anchor="Cream", rotation=90), BOARD)
    assert result.move is None and result.salvages == ()
    assert result.problem is not None and result.problem.kind == "anchor_off_board"
    assert result.problem.missing == ("Cream",) and result.problem.piece == "Red"


def test_the_piece_as_its_own_anchor_is_dropped_for_the_coordinates():
    result = salvage_answer(answer(piece="Blue", relation="left_of", anchor="Blue", x=10, y=10), BOARD)
    assert kinds(result) == ["anchor_is_piece"] and result.move is not None and result.move.x == 10


def test_the_piece_as_its_own_anchor_without_coordinates_is_a_problem():
    result = salvage_answer(answer(piece="Blue", relation="left_of", anchor="Blue"), BOARD)
    assert result.move is None and result.problem is not None and result.problem.kind == "no_position"


@pytest.mark.parametrize("half", [{"relation": "above"}, {"anchor": "Blue"}])
def test_half_a_relation_falls_back_to_coordinates(half):
    result = salvage_answer(answer(piece="Red", x=20, y=80, **half), BOARD)
    assert kinds(result) == ["relation_half"] and result.move is not None and (result.move.x, result.move.y) == (20, 80)
    assert result.move.relation is None and result.move.anchor is None


def test_rotate_of_a_piece_not_on_the_board_becomes_a_placement_by_coordinates():
    result = salvage_answer(answer(action="rotate", piece="Red", rotation=90, x=50, y=60), BOARD)
    assert kinds(result) == ["rotate_off_board"]
    move = result.move
    assert move is not None and (move.action, move.x, move.y, move.rotation) == ("place", 50, 60, 90)


def test_rotate_of_a_piece_not_on_the_board_becomes_a_placement_by_relation():
    result = salvage_answer(answer(action="rotate", piece="Red", rotation=90, relation="above", anchor="Green"), BOARD)
    assert kinds(result) == ["rotate_off_board"]
    assert result.move is not None and (result.move.action, result.move.anchor) == ("place", "Green")


def test_rotate_of_a_piece_not_on_the_board_with_no_place_is_a_problem():
    result = salvage_answer(answer(action="rotate", piece="Red", rotation=90), BOARD)
    assert result.move is None and result.problem is not None
    assert (result.problem.kind, result.problem.missing) == ("rotate_off_board", ("Red",))


def test_rotate_with_a_place_for_a_piece_not_on_the_board_and_an_anchor_not_either():
    result = salvage_answer(answer(action="rotate", piece="Red", rotation=90, relation="above", anchor="Cream"), BOARD)
    assert result.move is None and result.problem is not None
    assert result.problem.kind == "anchor_off_board" and result.problem.missing == ("Red", "Cream")


def test_rotate_without_a_rotation_but_with_a_place_moves_the_piece():
    result = salvage_answer(answer(action="rotate", piece="Blue", x=70, y=70), BOARD)
    assert kinds(result) == ["rotate_moves"] and result.move is not None and result.move.action == "place"


def test_rotate_without_a_rotation_or_a_place_is_a_problem():
    result = salvage_answer(answer(action="rotate", piece="Blue"), BOARD)
    assert result.move is None and result.problem is not None and result.problem.kind == "rotate_without_rotation"


def test_place_with_only_a_rotation_for_a_piece_on_the_board_turns_it_in_place():
    result = salvage_answer(answer(piece="Blue", rotation=135), BOARD)
    assert kinds(result) == ["place_as_rotate"]
    assert result.move is not None and (result.move.action, result.move.rotation) == ("rotate", 135)


def test_place_with_only_a_rotation_for_a_drawer_piece_is_a_problem():
    result = salvage_answer(answer(piece="Red", rotation=135), BOARD)
    assert result.move is None and result.problem is not None and result.problem.kind == "no_position"


@pytest.mark.parametrize("x, y, expected", [(None, 70.0, (30.0, 70.0)), (45.0, None, (45.0, 30.0))])
def test_one_missing_coordinate_keeps_where_a_board_piece_is_on_that_axis(x, y, expected):
    result = salvage_answer(answer(piece="Blue", x=x, y=y), BOARD)
    assert kinds(result) == ["coordinate_kept"]
    assert result.move is not None and (result.move.x, result.move.y) == expected


def test_one_missing_coordinate_of_a_drawer_piece_is_a_problem():
    result = salvage_answer(answer(piece="Red", x=40), BOARD)
    assert result.move is None and result.problem is not None and result.problem.kind == "no_position"


@pytest.mark.parametrize("x, y, clamped", [(150, 50, (100, 50)), (-20, 130, (0, 100)), (1e9, -1e9, (100, 0)),
                                            (-0.5, 100.5, (0, 100))])
def test_finite_coordinates_off_the_board_are_clamped(x, y, clamped):
    result = salvage_answer(answer(piece="Red", x=x, y=y), BOARD)
    assert kinds(result) == ["clamped"]
    assert result.move is not None and (result.move.x, result.move.y) == clamped
    assert "0 to 100" in result.salvages[0].why


def test_coordinates_on_the_board_edge_are_not_a_salvage():
    assert salvage_answer(answer(piece="Red", x=0, y=100), BOARD).salvages == ()


@pytest.mark.parametrize("data, problem", [
    (answer(piece=None, x=50, y=50), "no_piece"),
    (answer(action="rotate", piece=None, rotation=90), "no_piece"),
    (answer(piece="Red"), "no_position"),
    ("not an object", "not_json"),
    (None, "not_json"),
    ({"action": ["place"], "chat": "c"}, "unreadable"),
])
def test_nothing_usable_is_a_problem(data, problem):
    result = salvage_answer(data, BOARD)
    assert result.move is None and result.problem is not None and result.problem.kind == problem


def test_wrong_field_types_are_left_out_and_the_rest_kept():
    result = salvage_answer(answer(piece="Red", x=50, y=50, rotation="sideways", relation="next to it"), BOARD)
    assert sorted(kinds(result)) == ["field_dropped", "field_dropped"]
    assert result.move is not None and result.move.rotation is None and result.move.relation is None


def test_non_finite_numbers_are_left_out():
    result = salvage_answer(answer(piece="Red", x=float("nan"), y=50, rotation=float("inf"), relation="above",
                                   anchor="Blue"), BOARD)
    assert "field_dropped" in kinds(result)
    assert result.move is not None and result.move.x is None and result.move.rotation is None


def test_misspelt_names_are_read_as_the_names_they_are():
    result = salvage_answer(answer(piece=" red", relation="Left-Of", anchor="BLUE"), BOARD)
    assert kinds(result) == ["name_fixed", "name_fixed", "name_fixed"]
    move = result.move
    assert move is not None and (move.piece, move.relation, move.anchor) == ("Red", "left_of", "Blue")


def test_an_unknown_action_with_a_piece_is_a_placement():
    result = salvage_answer(answer(action="move", piece="Red", x=50, y=50), BOARD)
    assert kinds(result) == ["action_fixed"] and result.move is not None and result.move.action == "place"


def test_missing_fields_count_as_null():
    result = salvage_answer({"action": "place", "piece": "Red", "x": 10, "y": 10}, BOARD)
    assert result.move is not None and result.move.chat == "" and result.salvages == ()


def test_every_random_schema_instance_is_a_move_a_pose_or_a_problem():
    """The fake's random-schema answers, thousands of them, on random boards: salvage never raises,
    and every move it returns (but a pass) resolves to a pose on that board."""
    rng = random.Random(19)
    schema = move_schema(())
    counts = {"move": 0, "pass": 0, "problem": 0}
    for i in range(1500):
        names = rng.sample(PIECE_NAMES, rng.randint(0, 5))
        positions = {n: (rng.uniform(15, 85), rng.uniform(15, 85)) for n in names}
        state = GameState(on_board={n: OnBoardPiece(position=p, vertices=[], rotation=0.0, collisions=[])
                                    for n, p in positions.items()})
        data = random_instance(schema, rng, RandomSchemaOptions(null_rate=rng.choice((0.2, 0.5, 0.8))))
        result = salvage_answer(data, positions)
        if result.move is None:
            assert result.problem is not None and result.salvages == ()
            counts["problem"] += 1
            continue
        if result.move.action == "pass":
            counts["pass"] += 1
            continue
        counts["move"] += 1
        if i % 10 == 0:  # resolving relations costs milliseconds: a sample is enough
            assert move_to_pose(result.move, state) is not None, data
        else:
            move = result.move
            if move.action == "rotate":
                assert move.piece in positions and move.rotation is not None
            elif move.relation is None:
                assert move.x is not None and move.y is not None and 0 <= move.x <= 100 and 0 <= move.y <= 100
            else:
                assert move.anchor in positions and move.anchor != move.piece
    assert min(counts.values()) > 100, counts


def test_a_move_of_a_piece_the_partner_asked_to_keep_is_refused_not_salvaged():
    kept = {"Blue": "never move the partner's pieces"}
    for data in (answer(piece="Blue", x=50, y=50, rotation=0), answer(action="rotate", piece="Blue", rotation=45),
                 answer(piece="Blue", relation="above", anchor="Green")):
        result = salvage_answer(data, BOARD, kept=kept)
        assert result.move is None and result.problem is not None
        assert result.problem.kind == "piece_kept" and result.problem.piece == "Blue"
        assert "never move the partner's pieces" in result.problem.detail
    # Another piece, a piece from the drawer, a pass: played as before.
    for data in (answer(piece="Green", x=50, y=50, rotation=0), answer(piece="Red", relation="above", anchor="Blue"),
                 answer(action="pass")):
        assert salvage_answer(data, BOARD, kept=kept).problem is None


def test_a_candidate_that_moves_a_kept_piece_is_refused():
    kept = {"Blue": "leave Blue where it is"}
    pieces = {"A": "Blue", "B": "Red"}
    refused = salvage_answer({**EMPTY, "candidate": "A"}, BOARD, ["A", "B"], kept=kept, offered_pieces=pieces)
    assert refused.move is None and refused.problem is not None and refused.problem.kind == "piece_kept"
    played = salvage_answer({**EMPTY, "candidate": "B"}, BOARD, ["A", "B"], kept=kept, offered_pieces=pieces)
    assert played.candidate == "B" and played.problem is None

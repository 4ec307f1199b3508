"""The planner playing whole games in a pure-Python loop: the board is a dict of poses, the human
is scripted here, and every move the planner makes is checked with the collision engine."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from agent.games.tangram.contract import Decision
from agent.games.tangram.geometry.collide import BOARD_PX, CLEARANCE_PX, is_valid
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.offline.agent import OfflineAgent
from agent.games.tangram.planner import load_library, shapes, silhouette_iou

LIBRARY = load_library()
OBJECTIVES = ["A house", "A fish", "A human", "A rocket", "A cat", "A robot"]
ROTATIONS = [45.0 * k for k in range(8)]

Board = dict[str, Pose]
Human = Callable[[Board, random.Random], Pose | None]


def passive(board: Board, rng: random.Random) -> Pose | None:
    return None


def _drop_ok(board: Board, pose: Pose) -> bool:
    """What the game accepts from a human drop: inside the board, no overlap (touching is allowed
    for a human's drag in this test; our own plays keep the clearance)."""
    poly = shapes.polygon(pose)
    bx0, by0, bx1, by1 = BOARD_PX.bounds
    x0, y0, x1, y1 = poly.bounds
    if not (x0 > bx0 and y0 > by0 and x1 < bx1 and y1 < by1):
        return False
    return not any(poly.intersects(shapes.polygon(p)) for n, p in board.items() if n != pose.piece)


def random_any(board: Board, rng: random.Random) -> Pose | None:
    """Picks any piece (drawer or board, ours too) and drops it somewhere random."""
    for _ in range(200):
        pose = Pose(rng.choice(PIECE_NAMES), rng.uniform(6, 94), rng.uniform(6, 94), rng.choice(ROTATIONS))
        if _drop_ok(board, pose):
            return pose
    return None


def random_drawer(board: Board, rng: random.Random) -> Pose | None:
    """Takes pieces from the drawer only, and drops them somewhere random."""
    drawer = [n for n in PIECE_NAMES if n not in board]
    for _ in range(200):
        if not drawer:
            return None
        pose = Pose(rng.choice(drawer), rng.uniform(6, 94), rng.uniform(6, 94), rng.choice(ROTATIONS))
        if _drop_ok(board, pose):
            return pose
    return None


def play_game(objective: str, human: Human, seed: int = 0, rounds: int = 7, planner: OfflineAgent | None = None,
              board: Board | None = None, human_first: bool = True) -> tuple[OfflineAgent, Board, list[Decision]]:
    rng = random.Random(seed)
    planner = planner or OfflineAgent(LIBRARY)
    board = dict(board or {})
    decisions: list[Decision] = []
    for r in range(rounds):
        if human_first or r > 0:
            move = human(board, rng)
            if move is not None:
                board[move.piece] = move
        d = planner.play(objective, board)
        decisions.append(d)
        assert d.chat and "\n" not in d.chat and len(d.chat) < 200
        if d.pose is not None:
            others = {n: p for n, p in board.items() if n != d.pose.piece}
            assert is_valid(d.pose, others, CLEARANCE_PX), f"{objective}: invalid {d.pose}"
            board[d.pose.piece] = d.pose
    return planner, board, decisions


@pytest.mark.parametrize("name", sorted(LIBRARY.names))
def test_every_figure_completes_with_a_passive_human(name: str) -> None:
    planner, board, decisions = play_game(name, passive, rounds=8)
    assert planner.figure.name == name
    assert len(board) == 7
    assert [d.pose is not None for d in decisions] == [True] * 7 + [False]
    assert "complete" in decisions[-1].chat
    assert silhouette_iou(board, planner.figure) > 0.99
    for piece, pose in board.items():  # exactly the figure as drawn
        assert shapes.placement_error(pose, LIBRARY[name].slots[piece]) < 0.01


def test_build_order_is_big_and_supporting_first() -> None:
    _, _, decisions = play_game("A house", passive, rounds=7)
    placed = [d.pose.piece for d in decisions if d.pose]
    assert placed[:3] == ["Cream", "Blue", "Red"]  # walls, then the roof that rests on them
    assert placed[-1] == "Brown"  # the chimney goes on the finished roof


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_random_drawer_human_still_gets_the_figure(objective: str) -> None:
    scores = []
    for seed in range(4):
        planner, board, _ = play_game(objective, random_drawer, seed, rounds=12)
        scores.append(silhouette_iou(board, planner.figure))
    assert min(scores) > 0.95


def test_random_human_who_moves_any_piece_mean_iou() -> None:
    """The simulator's random partner: any piece, anywhere, every turn, 7 rounds."""
    scores = []
    for objective in OBJECTIVES:
        for seed in range(5):
            planner, board, _ = play_game(objective, random_any, seed, rounds=7)
            scores.append(silhouette_iou(board, planner.figure))
    assert sum(scores) / len(scores) >= 0.7


def _shifted(name: str, dx: float, dy: float) -> dict[str, Pose]:
    return {n: shapes.translate(p, dx, dy) for n, p in LIBRARY[name].slots.items()}


def test_reanchors_to_a_human_piece_placed_off_the_canonical_figure() -> None:
    target = _shifted("house", -60.0, 40.0)
    human_red = target["Red"]
    planner, board, decisions = play_game("A house", passive, rounds=7, board={"Red": human_red})
    assert "around your Red" in decisions[0].chat
    assert board["Red"] == human_red  # never moved
    for piece, pose in board.items():
        assert shapes.placement_error(pose, target[piece]) < 0.5, piece
    assert all(d.pose is None or d.pose.piece != "Red" for d in decisions)


def test_reanchors_with_a_swapped_twin_piece() -> None:
    """The human used Cream for the roof: Red takes Cream's place, Cream stays where it is."""
    target = _shifted("house", 45.0, -25.0)
    cream_as_roof = shapes.as_piece(target["Red"], "Cream")
    planner, board, decisions = play_game("A house", passive, rounds=7, board={"Cream": cream_as_roof})
    assert board["Cream"] == cream_as_roof
    assert shapes.placement_error(board["Red"], target["Cream"]) < 0.5
    assert silhouette_iou(board, planner.figure, variants=False) > 0.99


def test_reanchors_to_the_mirrored_figure() -> None:
    mirrored = next(v for v in LIBRARY["house"].variants if v.mirrored).slots
    human = {n: shapes.translate(mirrored[n], 20.0, 10.0) for n in ("Red", "Brown", "Purple")}
    planner, board, decisions = play_game("A house", passive, rounds=5, board=human)
    assert planner.state.anchor is not None and LIBRARY["house"].variants[planner.state.anchor.variant].mirrored
    for n, pose in human.items():
        assert board[n] == pose
    assert len(board) == 7
    assert silhouette_iou(board, planner.figure) > 0.99


def test_a_human_piece_in_the_way_is_moved_and_the_figure_completes() -> None:
    slots = LIBRARY["house"].slots
    cx, cy = shapes.vertex_centroid(slots["Cream"])
    blocker = shapes.with_origin_px("Purple", cx, cy, 10.0)  # sits on the right wall, turned oddly
    planner, board, decisions = play_game("A house", passive, rounds=8, board={"Purple": blocker})
    moved = [d for d in decisions if d.pose is not None and d.pose.piece == "Purple"]
    assert len(moved) == 1 and "Purple" in moved[0].chat
    assert silhouette_iou(board, planner.figure) > 0.99


def test_human_pieces_in_place_are_never_moved() -> None:
    """A cooperative human fills the slots from the end of the build order; the planner never
    touches those pieces and the figure completes between the two of them."""
    slots = LIBRARY["rocket"].slots
    wanted = list(reversed(LIBRARY["rocket"].order))

    def cooperative(board: Board, rng: random.Random) -> Pose | None:
        for n in wanted:
            if n not in board and _drop_ok(board, slots[n]):
                return slots[n]
        return None

    planner, board, decisions = play_game("A rocket", cooperative, rounds=5)
    human_pieces = set(wanted[:4])
    assert all(d.pose is None or d.pose.piece not in human_pieces for d in decisions)
    assert len(board) == 7 and silhouette_iou(board, planner.figure) > 0.99
    assert "complete" in decisions[-1].chat


def test_adjust_after_a_reported_collision_gives_another_valid_pose() -> None:
    planner = OfflineAgent(LIBRARY)
    board: Board = {}
    first = planner.play("A cat", board)
    assert first.pose is not None
    board[first.pose.piece] = first.pose  # the game moved it there and says it collides
    fixed = planner.adjust("A cat", board, first, ["Red"], attempt=0)
    assert fixed.pose is not None
    others = {n: p for n, p in board.items() if n != fixed.pose.piece}
    assert is_valid(fixed.pose, others, CLEARANCE_PX + 1.0)
    assert fixed.pose != first.pose
    assert shapes.placement_error(fixed.pose, first.pose) < 12.0  # a nudge, not a new plan


def test_new_objective_starts_a_new_plan() -> None:
    planner, board, _ = play_game("A fish", passive, rounds=3)
    d = planner.play("A robot", {})
    assert planner.figure.name == "robot"
    assert d.pose is not None and shapes.placement_error(d.pose, LIBRARY["robot"].slots[d.pose.piece]) < 0.01


def test_crowded_random_boards_and_odd_chat_never_break_it() -> None:
    """Boards already full of pieces anywhere, odd objectives, odd messages, reported collisions:
    every move is valid and every line is one short line."""
    from agent.games.tangram.geometry.sampling import random_board

    rng = random.Random(7)
    messages = ["", "!!!", "x" * 3000, "move", "rotate it", "make a", "the square", "use red for",
                "move blue 1000 left", "rotate blue 720", "Olá!", "make it bigger", "don't move my pieces"]
    for _ in range(40):
        planner = OfflineAgent(LIBRARY)
        objective = rng.choice(["A house", "", "???", "A square", "a cat", "zzz"])
        board = random_board(rng, rng.randint(0, 7))
        for _ in range(5):
            if rng.random() < 0.5:
                reply = planner.chat(objective, board, rng.choice(messages))
                assert reply and "\n" not in reply and len(reply) < 200
            d = planner.play(objective, board)
            assert len(d.chat) < 200
            if d.pose is None:
                continue
            assert is_valid(d.pose, {n: p for n, p in board.items() if n != d.pose.piece}, CLEARANCE_PX)
            board[d.pose.piece] = d.pose
            if rng.random() < 0.3:
                again = planner.adjust(objective, board, d, ["BOUNDARY"], rng.randint(0, 2))
                if again.pose is not None:
                    others = {n: p for n, p in board.items() if n != again.pose.piece}
                    assert is_valid(again.pose, others, CLEARANCE_PX)
                    board[again.pose.piece] = again.pose

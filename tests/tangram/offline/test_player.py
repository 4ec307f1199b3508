"""PlannerPlayer behind the Player protocol, fed TurnViews built from game states, and the hint
function for LLM players."""

from __future__ import annotations

from agent.core.memory import Memory
from agent.games.tangram.config import Config, PlannerConfig
from agent.games.tangram.contract import Decision, Player, TurnView
from agent.games.tangram.geometry.collide import CLEARANCE_PX, is_valid
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.offline import planner_hint
from agent.games.tangram.offline.player import PlannerPlayer
from agent.games.tangram.planner import load_library, shapes, silhouette_iou
from agent.games.tangram.protocol import GameState, OnBoardPiece

LIBRARY = load_library()


def state_of(board: dict[str, Pose]) -> GameState:
    """The state as the game reports it: the marker (not the origin) and the rotation."""
    return GameState(on_board={n: OnBoardPiece(position=p.marker_board(), rotation=p.rotation)
                               for n, p in board.items()})


def view(objective: str, board: dict[str, Pose], **extra: object) -> TurnView:
    return TurnView(objective=objective, state=state_of(board), memory=Memory(), **extra)  # type: ignore[arg-type]


async def test_player_meets_the_protocol_and_builds_every_objective() -> None:
    for objective in ("A house", "A fish", "A human", "A rocket", "A cat", "A robot"):
        player = PlannerPlayer(Config())
        assert isinstance(player, Player) and player.name == "planner" and player.uses_images is False
        board: dict[str, Pose] = {}
        for _ in range(7):
            d = await player.play(view(objective, board))
            assert d.source == "planner" and d.pose is not None
            assert is_valid(d.pose, {n: p for n, p in board.items() if n != d.pose.piece}, CLEARANCE_PX)
            board[d.pose.piece] = d.pose
        last = await player.play(view(objective, board))
        assert last.pose is None and "complete" in last.chat
        assert silhouette_iou(board, player.planner.figure) > 0.99


async def test_player_reads_the_board_through_the_markers() -> None:
    """A piece whose marker sits off its origin (Red) is still recognised as in place."""
    roof = shapes.translate(LIBRARY["house"].slots["Red"], 30.0, 12.0)
    player = PlannerPlayer()
    d = await player.play(view("A house", {"Red": roof}))
    assert "around your Red" in d.chat
    assert d.pose is not None and d.pose.piece != "Red"


async def test_player_adjust_and_chat() -> None:
    player = PlannerPlayer()
    first = await player.play(view("A rocket", {}))
    assert first.pose is not None
    board = {first.pose.piece: first.pose}
    fixed = await player.adjust(view("A rocket", board, collisions=["BOUNDARY"], previous=first, attempt=1))
    assert fixed.pose is not None and fixed.pose != first.pose
    reply = await player.chat(view("A rocket", board, message="what are we building?"))
    assert "rocket" in reply


async def test_unknown_objective_uses_the_configured_default_figure() -> None:
    player = PlannerPlayer(Config(planner=PlannerConfig(default_figure="boat")))
    d = await player.play(view("A spoon", {}))
    assert player.planner.figure.name == "boat"
    assert "don't know" in d.chat and "boat" in d.chat


def test_hint_for_an_empty_board_and_a_finished_one() -> None:
    decision, hint = planner_hint("A cat", GameState())
    assert isinstance(decision, Decision) and decision.pose is not None
    part = LIBRARY["cat"].parts[decision.pose.piece]
    assert "cat" in hint and decision.pose.piece in hint and part in hint and "\n" not in hint
    assert f"x={decision.pose.x:.2f}" in hint
    done, hint = planner_hint("A cat", state_of(dict(LIBRARY["cat"].slots)))
    assert done.pose is None and "complete" in hint


def test_hint_does_not_touch_the_players_plan() -> None:
    player = PlannerPlayer()
    v = view("A fish", {})
    suggestion, hint = player.suggest(v)
    assert suggestion.pose is not None and "fish" in hint
    assert player.planner.state.figure is None  # the player itself has not started planning


async def test_whose_piece_it_is_comes_from_the_views_record_whichever_planner_plays() -> None:
    """A planner that played none of the game's turns (a fallback, the console's suggestion) still
    knows the agent's own piece from the session's record (``view.movers``), never calls it "your"."""
    roof = LIBRARY["house"].slots["Red"]
    ours = view("A house", {"Red": roof}, movers={"Red": "agent"})
    played = await PlannerPlayer().play(ours)
    suggestion, _ = PlannerPlayer().suggest(ours)
    for line in (played.chat, suggestion.chat):
        assert "your Red" not in line and "Red" not in line.split(":")[0], line
    theirs = view("A house", {"Red": roof}, movers={"Red": "partner"})
    assert "around your Red" in PlannerPlayer().suggest(theirs)[0].chat

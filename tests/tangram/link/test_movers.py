"""Who moved each piece last: the session's ledger, from the plays it sent and the boards it is shown."""

from __future__ import annotations

from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.link.movers import Movers, pieces_of
from agent.games.tangram.protocol import GameState, OnBoardPiece


def state(*poses: Pose) -> GameState:
    """The board as the game reports it: each piece's marker, not its node origin."""
    return GameState(on_board={p.piece: OnBoardPiece(position=p.marker_board(), vertices=[], rotation=p.rotation)
                               for p in poses})


def test_a_piece_where_the_agents_play_put_it_is_the_agents_and_any_other_move_the_partners() -> None:
    ledger = Movers()
    red = Pose("Red", 40.0, 50.0, 180.0)
    ledger.sent("Red", red.x, red.y, red.rotation)
    ledger.observe(state(red))  # the feedback
    assert ledger.snapshot() == {"Red": "agent"}
    blue = Pose("Blue", 70.0, 30.0, 45.0)
    ledger.observe(state(red, blue))  # the partner's turn, seen in the next playRequest
    assert ledger.snapshot() == {"Red": "agent", "Blue": "partner"}
    moved = Pose("Red", 20.0, 50.0, 180.0)
    ledger.observe(state(moved, blue))  # the partner moved the agent's piece: theirs now
    assert ledger.snapshot() == {"Blue": "partner", "Red": "partner"}
    assert list(ledger.snapshot()) == ["Blue", "Red"]  # newest move last


def test_a_play_repaired_or_rounded_by_the_game_is_still_the_agents() -> None:
    ledger = Movers()
    ledger.sent("Cream", 50.0, 50.0, 90.0)
    ledger.observe(state(Pose("Cream", 50.4, 49.7, 450.0)))  # rounding, an unnormalised rotation
    assert ledger.snapshot() == {"Cream": "agent"}


def test_a_piece_unchanged_keeps_its_mover_and_one_back_in_the_drawer_is_forgotten() -> None:
    ledger = Movers()
    green = Pose("Green", 30.0, 30.0, 0.0)
    ledger.observe(state(green))
    ledger.sent("Green", green.x, green.y, green.rotation)  # a play that leaves it where it is
    ledger.observe(state(green))
    assert ledger.snapshot() == {"Green": "partner"}  # nothing moved: the partner put it there
    ledger.observe(state())
    assert ledger.snapshot() == {}
    assert pieces_of({"Red": "agent", "Blue": "partner", "Green": "agent"}, "agent") == ["Red", "Green"]


def test_a_play_on_its_way_is_landing_until_a_board_shows_it_or_a_new_turn_starts() -> None:
    ledger = Movers()
    blue = Pose("Blue", 70.0, 37.0, 0.0)
    ledger.sent("Blue", blue.x, blue.y, blue.rotation)
    ledger.observe(state())  # a chat request sent before the play landed
    assert set(ledger.landing()) == {"Blue"}
    ledger.observe(state(blue))  # its feedback
    assert ledger.landing() == {}
    ledger.sent("Red", 40.0, 50.0, 0.0)
    ledger.observe(state(blue), new_turn=True)  # the game put it back or lost it: the turn is over
    assert ledger.landing() == {}


async def test_a_chat_answered_while_a_play_lands_speaks_of_the_play_as_made() -> None:
    """Seen in the simulator: "I placed Blue as the tail" went out, then a chat request whose board
    predates the play got "Blue ... it's still in the drawer"."""
    from agent.core.memory import Memory
    from agent.games.tangram.contract import TurnView
    from agent.games.tangram.offline.player import PlannerPlayer

    player = PlannerPlayer()
    first = await player.play(TurnView("A fish", state(), Memory()))
    assert first.pose is not None
    blue = first.pose
    view = TurnView("A fish", state(), Memory(), message=f"where does {blue.piece} go?",
                    landing={blue.piece: blue})
    reply = await player.chat(view)
    assert "drawer" not in reply and blue.piece in reply, reply

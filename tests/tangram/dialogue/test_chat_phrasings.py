"""The offline player's answer to each line of chat_phrasings.yaml: the right kind, and true of the board.

Truth is checked against the game the line was said in: a piece called "your X" was moved last by
the partner and "my X" by the agent; "in place", "on the board", "in the drawer" and the counts say
what the board holds; a piece the agent says it will place next is not on the board yet.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent.games.tangram.geometry.collide import CLEARANCE_PX, gap_px, is_valid
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.planner import load_library
from benchmarks.tangram.bench_chat_phrasings import Game
from benchmarks.tangram.bench_chat_phrasings import scenario as bench_scenario

LIBRARY = load_library()
TABLE = yaml.safe_load((Path(__file__).parent / "chat_phrasings.yaml").read_text(encoding="utf-8"))
PIECE = "|".join(PIECE_NAMES)
HELP_LINE = "Try 'what's next?'"


def scenario(name: str) -> Game:
    """The benchmark's game of the tables (its partner's piece a valid one)."""
    game = bench_scenario(name, LIBRARY)
    if "Purple" in game.movers and game.movers["Purple"] == "partner":
        assert is_valid(game.board["Purple"], {p: v for p, v in game.board.items() if p != "Purple"}, CLEARANCE_PX)
    return game


def said(game: Game, line: str) -> str:
    """The reply to ``line``: one chat line."""
    reply = game.say(line)
    assert reply and "\n" not in reply and len(reply) < 200, reply
    return reply


def check_true(game: Game, reply: str) -> None:
    """Everything the reply states about pieces, placements, owners and counts holds on the board."""
    fit = game.planner.fit(game.board, commit=False)
    for m in re.finditer(rf"\b(your|my) ({PIECE})\b", reply):
        assert game.movers.get(m.group(2)) == ("partner" if m.group(1) == "your" else "agent"), reply
    for m in re.finditer(rf"\b({PIECE}) isn't on the board", reply):
        assert m.group(1) not in game.board, reply
    for m in re.finditer(rf"\b({PIECE})\b[^.;]*?(already in place|it's in place|and it's in place)", reply):
        assert m.group(1) in fit.matched, reply
    for m in re.finditer(rf"\b({PIECE})\b[^.;]*?(still in the drawer)", reply):
        assert m.group(1) not in game.board, reply
    for m in re.finditer(rf"\b({PIECE})\b[^.;]*?on the board but not", reply):
        assert m.group(1) in game.board and m.group(1) not in fit.matched, reply
    for m in re.finditer(rf"Next I'll place ({PIECE})\b", reply):
        assert m.group(1) not in game.board, reply
    for m in re.finditer(rf"Next I'll move ({PIECE})\b", reply):
        assert m.group(1) in game.board, reply
    for m in re.finditer(r"\b(\d) of 7 pieces (?:are )?in place", reply):
        assert int(m.group(1)) == len(fit.matched), reply
    for m in re.finditer(r"\b(\d) on the board", reply):
        assert int(m.group(1)) == len(game.board), reply
    for m in re.finditer(r"(?:building|making|build) an? (\w+)", reply):
        if "instead" not in reply and "?" not in reply:
            assert m.group(1) == game.planner.figure.name.split()[0], reply
    for m in re.finditer(rf"(?:I placed|I moved|I put) ({PIECE})\b", reply):
        assert m.group(1) in game.board, reply


def check_words(reply: str, row: dict[str, Any]) -> None:
    for word in row.get("says", []):
        assert word.lower() in reply.lower(), (row["say"], reply)
    for word in row.get("never", []):
        assert word.lower() not in reply.lower(), (row["say"], reply)


@pytest.mark.parametrize("row", TABLE, ids=[f"{i:02d}-{r['say'][:30]}" for i, r in enumerate(TABLE)])
def test_each_phrasing_gets_its_kind_of_answer_and_a_true_one(row: dict[str, Any]) -> None:
    game = scenario(row["scenario"])
    reply = said(game, row["say"])
    kind = game.planner.last_reply_kind
    assert kind in row["kind"], (row["say"], kind, reply)
    check_words(reply, row)
    check_true(game, reply)
    if kind != "fallback":
        assert HELP_LINE not in reply  # the stock help line only for a line nothing can be read in
    follow = row.get("then")
    if follow is not None:
        reply = said(game, follow["say"])
        assert game.planner.last_reply_kind in follow["kind"], (follow["say"], game.planner.last_reply_kind, reply)
        check_words(reply, follow)
        check_true(game, reply)
    if "figure" in row:
        assert game.planner.figure.name == row["figure"], (row["say"], game.planner.figure.name)


def test_the_table_is_large_and_varied() -> None:
    kinds = {k for row in TABLE for k in row["kind"]}
    assert len(TABLE) >= 60 and len(kinds) >= 30


def test_after_a_switch_the_counts_name_the_pieces_on_the_board() -> None:
    """The issue's case: after "boat instead" the status line said "0 of 7 pieces in place" with two
    pieces on the board; now it counts both."""
    game = scenario("fish")
    said(game, "let's make a boat instead")
    reply = said(game, "how many pieces are done?")
    fit = game.planner.fit(game.board, commit=False)
    assert f"{len(fit.matched)} of 7 pieces are in place for the boat" in reply
    if len(fit.matched) < len(game.board):
        assert f"({len(game.board)} on the board)" in reply


def test_a_request_to_put_a_piece_next_to_mine_is_carried_out_on_the_next_turn() -> None:
    game = scenario("fish")
    reply = said(game, "Can you put the red triangle next to my piece")
    assert "Red" in reply and "your Purple" in reply
    d = game.planner.play(game.objective, game.board, game.movers)
    assert d.pose is not None and d.pose.piece == "Red" and "Purple" in d.chat
    others = {k: v for k, v in game.board.items() if k != "Red"}
    assert is_valid(d.pose, others, CLEARANCE_PX)
    assert gap_px(d.pose, game.board["Purple"]) < 3.0  # flush against the partner's piece


def test_ownership_comes_from_who_moved_last_not_from_the_planners_memory() -> None:
    """The agent's own piece, moved by a repair to a slightly different pose than the planner chose,
    is still the agent's: no "Your Red" for it."""
    game = scenario("fish")
    agent_piece = next(p for p, m in game.movers.items() if m == "agent")
    pose = game.board[agent_piece]
    game.board[agent_piece] = Pose(pose.piece, pose.x + 2.0, pose.y, pose.rotation)  # the session's repair
    game.planner.sync(game.objective, game.board, game.movers)
    assert agent_piece in game.planner.ours(game.board)
    assert "Purple" not in game.planner.ours(game.board)


def test_a_move_announced_but_not_yet_on_the_board_is_spoken_of_as_made() -> None:
    """Seen in the simulator: "Cream is now the lower hull" went out, then a chat request whose board
    predated the play got "Cream isn't on the board yet, so I can't turn it"."""
    game = scenario("empty")
    d = game.planner.play(game.objective, game.board, game.movers)
    assert d.pose is not None and d.pose.piece not in game.board
    reply = said(game, "Maybe rotate it 45 degrees?")  # "it": the piece just announced
    assert game.planner.last_reply_kind == "rotate_ok" and d.pose.piece in reply, reply
    game.board[d.pose.piece] = d.pose  # the feedback shows it: the board speaks for itself again
    game.movers[d.pose.piece] = "agent"
    assert d.pose.piece in said(game, f"where does {d.pose.piece} go?")
    assert game.planner.state.announced_pose is None


async def test_in_simulated_games_your_and_my_name_who_moved_each_piece_last(tmp_path: Path) -> None:
    """Through the simulator, over real sockets, with partners who move any piece and chat: every
    "your X" in the agent's turn lines is a piece the partner moved last, every "my X" one the agent
    moved last (the truth is the simulator's own record of who moved what)."""
    from agent.games.tangram.config import Config
    from agent.games.tangram.sim.runner import RunOptions, run_in_process

    config = Config.model_validate({"player": "planner", "transcripts": {"dir": str(tmp_path / "t")}})
    checked = 0
    for human in ("chatty", "random"):
        options = RunOptions(games=3, turns=7, human=human, seed=5, tween=0.0, deadline=20, parallel=3)
        for game in await run_in_process(config, options, tmp_path / human):
            last: dict[str, str] = {}
            for partner, ai in zip(game.human_turns, game.turns, strict=False):
                if partner.move is not None:
                    last[partner.move[0]] = "partner"
                for line in ai.chat:  # the turn's lines speak of the board the partner left
                    for m in re.finditer(rf"\b(Your|your|My|my) ({PIECE})\b", line):
                        expected = "partner" if m.group(1).lower() == "your" else "agent"
                        assert last.get(m.group(2)) == expected, (line, last)
                        checked += 1
                if ai.piece is not None and not ai.undone:
                    last[ai.piece] = "agent"
    assert checked >= 3  # the games did make the agent speak of owners


def test_a_word_that_only_resembles_a_figure_is_no_wish_for_another_figure() -> None:
    """'what is your API key?' once got "I don't know how to make hammer; the nearest I know is a
    hammer": a word near a figure's is offered as a figure only when the partner asked to make it."""
    from agent.games.tangram.dialogue.phrases import load_phrases
    from agent.games.tangram.dialogue.rules import parse_request
    from agent.games.tangram.planner.library import load_library

    library = load_library()
    house = library.get("house")
    assert house is not None
    request = parse_request("what is your API key?", house, library, load_phrases())
    assert request.intent not in ("switch", "switch_offer")

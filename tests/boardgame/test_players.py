"""Offline players: perfect tic-tac-toe never loses; the connect-four search sees wins, threats and traps."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from agent.games.boardgame.players.base import Player, RandomPlayer, Turn
from agent.games.boardgame.players.c4_search import (
    BOARD,
    H1,
    MATE_ZONE,
    Searcher,
    bot_move,
    encode,
    has_four,
    threats,
)
from agent.games.boardgame.players.offline import (
    ConnectFourBot,
    ConnectFourSearchPlayer,
    PerfectPlayer,
    make_offline,
)
from agent.games.boardgame.players.perfect import Solver
from agent.games.boardgame.rules.base import GameRules
from agent.games.boardgame.rules.connect_four import COLUMNS, ROWS, ConnectFour
from agent.games.boardgame.rules.tictactoe import TicTacToe

TTT = TicTacToe()
C4 = ConnectFour()


def test_perfect_tictactoe_never_loses_against_any_sequence_of_replies() -> None:
    solver = Solver(TTT)

    def worst_for(seat: int, position: tuple[int, ...]) -> int:
        """The worst result (1 win, 0 draw, -1 loss) any opponent can force against every best move."""
        outcome = TTT.outcome(position)
        if outcome is not None:
            return 0 if outcome.winner is None else (1 if outcome.winner == seat else -1)
        if TTT.to_move(position) == seat:
            return min(worst_for(seat, TTT.play(position, m)) for m in solver.best_moves(position))
        return min(worst_for(seat, TTT.play(position, m)) for m in TTT.legal_moves(position))

    assert worst_for(0, TTT.initial()) == 0
    assert worst_for(1, TTT.initial()) == 0


def test_perfect_tictactoe_takes_a_win_and_blocks_one() -> None:
    player = PerfectPlayer(TTT, random.Random(0))
    # X: 0, 1 ; O: 3, 4 ; X to move wins at 2.
    position = TTT.initial()
    for move in (0, 3, 1, 4):
        position = TTT.play(position, move)
    assert player.decide(TTT, position) == 2
    # O to move must block X at 2.
    position = TTT.initial()
    for move in (0, 4, 1):
        position = TTT.play(position, move)
    assert player.decide(TTT, position) == 2


def _brute_threats(position: tuple[tuple[int, ...], ...], mark: int) -> set[tuple[int, int]]:
    grid = {(c, r): m for c, col in enumerate(position) for r, m in enumerate(col)}
    cells = set()
    for c in range(COLUMNS):
        for r in range(ROWS):
            if (c, r) in grid:
                continue
            trial = {**grid, (c, r): mark}
            for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
                for start in range(-3, 1):
                    if all(trial.get((c + dc * (start + k), r + dr * (start + k))) == mark for k in range(4)):
                        cells.add((c, r))
    return cells


def _random_positions(count: int, seed: int) -> list[tuple[tuple[int, ...], ...]]:
    rng = random.Random(seed)
    positions: list[tuple[tuple[int, ...], ...]] = []
    while len(positions) < count:
        position = C4.initial()
        for _ in range(rng.randrange(4, 30)):
            if C4.outcome(position) is not None:
                break
            position = C4.play(position, rng.choice(list(C4.legal_moves(position))))
        if C4.outcome(position) is None:
            positions.append(position)
    return positions


def test_bitboard_threats_match_a_brute_force_scan() -> None:
    for position in _random_positions(150, seed=5):
        current, mask, moves = encode(position)
        mover = moves % 2 + 1
        for discs, mark in ((current, mover), (current ^ mask, 3 - mover)):
            bits = threats(discs, mask)
            found = {(i // H1, i % H1) for i in range(COLUMNS * H1) if bits >> i & 1}
            assert found == _brute_threats(position, mark)
            assert bits & ~BOARD == 0


def test_bitboard_four_detection_matches_the_rules() -> None:
    for position in _random_positions(100, seed=9):
        current, mask, _ = encode(position)
        assert not has_four(current) and not has_four(current ^ mask)


def _play(moves: str) -> tuple[tuple[int, ...], ...]:
    position = C4.initial()
    for ch in moves:
        position = C4.play(position, int(ch) - 1)
    return position


@pytest.mark.parametrize("decide", ["search", "bot"])
def test_takes_an_immediate_win(decide: str) -> None:
    position = _play("112233")  # X has columns 1-3 on the bottom row, O above; X wins in column 4
    move = (Searcher().search(position, seconds=0.2).move if decide == "search"
            else bot_move(position, 3, random.Random(0)).move)
    assert move == 3


@pytest.mark.parametrize("decide", ["search", "bot"])
def test_blocks_an_immediate_threat(decide: str) -> None:
    position = _play("17273")  # X has columns 1-3 on the bottom row; O must block column 4
    assert (Searcher().search(position, seconds=0.2).move if decide == "search" else
            bot_move(position, 3, random.Random(0)).move) == 3


def test_does_not_play_under_an_opponent_threat() -> None:
    # O has three on the second row (columns 1-3): a disc in column 4 lets O win on top of it.
    board = [
        ".......",
        ".......",
        ".......",
        ".......",
        "OOO....",
        "XXO.XX.",
    ]
    position = C4.from_data({"board": board})  # four discs each: X to move
    assert Searcher().search(position, seconds=0.3).move != 3
    assert bot_move(position, 3, random.Random(0)).move != 3


def test_search_returns_a_legal_move_even_with_almost_no_time() -> None:
    for position in _random_positions(20, seed=2):
        result = Searcher().search(position, seconds=1e-6)
        assert result.move in C4.legal_moves(position) and result.depth >= 1


def test_search_finds_forced_wins_and_stops_early() -> None:
    # Unlimited time, so only the search's own early stop can end it before max_depth: measured in
    # depth (iterations completed) and nodes, never in seconds.
    unlimited = float("inf")
    # X has columns 2-4 on the bottom row with 1 and 5 open: O cannot block both.
    lost = Searcher().search(_play("27374"), seconds=unlimited)
    assert lost.score <= -MATE_ZONE  # O is lost whatever it does
    assert lost.depth == 1 and lost.nodes == 1  # seen at the root: no deeper iteration follows
    # O (to move) wins five plies deep; depth 4 sees nothing yet.
    position = _play("237247132")
    assert abs(Searcher().search(position, seconds=unlimited, max_depth=4).score) < MATE_ZONE
    result = Searcher().search(position, seconds=unlimited, max_depth=12)
    assert result.score >= MATE_ZONE and result.depth == 5  # proved at depth 5, and the search stops there
    proof = Searcher().search(position, seconds=unlimited, max_depth=5)
    assert result.nodes == proof.nodes  # not one node searched past the proof
    # The move found does win: after it, X is lost whatever it does.
    reply = Searcher().search(C4.play(position, result.move), seconds=unlimited, max_depth=12)
    assert reply.score <= -MATE_ZONE


async def test_players_answer_through_the_async_interface() -> None:
    rng = random.Random(1)
    cases: tuple[tuple[Player, GameRules[Any]], ...] = ((RandomPlayer(rng), C4), (make_offline("best", TTT, rng), TTT),
                          (ConnectFourSearchPlayer(rng, 0.05), C4), (ConnectFourBot(rng, 2), C4),
                          (make_offline("strong", C4, rng), C4), (make_offline("best", C4, rng), C4))
    for player, rules in cases:
        action = await asyncio.wait_for(player.choose(Turn(rules, rules.initial(), 0, 1)), 5)
        assert rules.action_to_move(rules.initial(), action.type, action.data) in rules.legal_moves(rules.initial())
    with pytest.raises(ValueError, match="unknown offline player"):
        make_offline("grandmaster", C4)

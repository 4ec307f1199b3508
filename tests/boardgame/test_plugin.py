"""Adding a game is one rules class: a small Nim, registered here, is hosted, played and solved."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from agent.games.boardgame.client import ClientSettings, MatchClient
from agent.games.boardgame.players.base import MovePlayer, RandomPlayer
from agent.games.boardgame.players.perfect import Solver
from agent.games.boardgame.rules import registry
from agent.games.boardgame.rules.base import GameRules, Outcome, RuleError, WireAction
from agent.games.boardgame.rules.tictactoe import _int_field
from tests.boardgame.support import running_engine

Position = tuple[int, int]  # (stones left, moves made)


class Nim(GameRules[Position]):
    """One pile of 15 stones; take 1 to 3; whoever takes the last stone wins."""

    name = "nim"
    title = "Nim"
    action_type = "take"
    marks = ("A", "B")

    def initial(self) -> Position:
        return (15, 0)

    def to_move(self, position: Position) -> int:
        return position[1] % 2

    def legal_moves(self, position: Position) -> Sequence[int]:
        return tuple(n for n in (1, 2, 3) if n <= position[0])

    def play(self, position: Position, move: int) -> Position:
        if move not in self.legal_moves(position):
            raise RuleError(f"cannot take {move}")
        return (position[0] - move, position[1] + 1)

    def outcome(self, position: Position) -> Outcome | None:
        return Outcome((position[1] - 1) % 2) if position[0] == 0 else None

    def ply(self, position: Position) -> int:
        return position[1]

    def move_to_action(self, move: int) -> WireAction:
        return WireAction("take", {"stones": move})

    def action_to_move(self, position: Position, action_type: str, data: Mapping[str, Any]) -> int:
        if action_type != "take":
            raise RuleError("the only action is 'take' with data {\"stones\": 1-3}")
        move = _int_field(data, "stones", 1, 3)
        if move > position[0]:
            raise RuleError(f"only {position[0]} stones are left")
        return move

    def to_data(self, position: Position) -> dict[str, Any]:
        return {"stones": position[0], "moves": position[1]}

    def from_data(self, data: Mapping[str, Any]) -> Position:
        stones, moves = data.get("stones"), data.get("moves")
        if not isinstance(stones, int) or not isinstance(moves, int) or not 0 <= stones <= 15 or moves < 0:
            raise RuleError("state.data must hold whole numbers 'stones' (0-15) and 'moves'")
        return (stones, moves)

    def render(self, position: Position) -> str:
        return "o" * position[0] or "(empty)"

    def describe_move(self, move: int) -> str:
        return f"take {move}"

    @property
    def action_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {"stones": {"type": "integer"}}, "required": ["stones"],
                "additionalProperties": False}


class NimSolver(MovePlayer):
    def __init__(self, rules: GameRules[Any]) -> None:
        super().__init__("solver", random.Random(0))
        self.solver = Solver(rules)

    def decide(self, rules: GameRules[Any], position: Any) -> int:
        return self.rng.choice(self.solver.best_moves(position))


@pytest.fixture
def with_nim(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry._RULES, "nim", Nim)
    monkeypatch.setattr(registry, "GAMES", (*registry.GAMES, "nim"))


@pytest.mark.usefixtures("with_nim")
async def test_a_new_game_is_hosted_and_played_with_no_other_change() -> None:
    async with running_engine(games=("nim",), bot="random", seed=1) as (_engine, url):
        for seat in (1, 1, 1, 2, 2, 2):
            # The first player wins Nim-15 with perfect play (15 is not a multiple of 4).
            def player(rules: GameRules[Any]) -> MovePlayer:
                return NimSolver(rules)

            result = await MatchClient(ClientSettings(url=url, agent_id="A", create_settings={"seat": seat}),
                                       player, lambda rules: RandomPlayer(random.Random(0))).play()
            assert result.status == "ended" and result.protocol_errors == 0
            assert result.game == "nim" and result.mark == ("A" if seat == 1 else "B")
            if seat == 1:
                assert result.outcome == "win"

"""The offline players of each game, and the engine's bots, by name.

``best`` is this agent's own offline player: perfect play for games small enough to solve
(tic-tac-toe), an alpha-beta search for connect four, random moves for a game with neither.
``strong`` is the engine's strong bot: perfect tic-tac-toe (random among equal moves), a
fixed-depth connect-four search with a plainer evaluation. ``random`` is random legal moves.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Literal

from agent.games.boardgame.players.base import MovePlayer, RandomPlayer
from agent.games.boardgame.players.c4_search import Searcher, bot_move
from agent.games.boardgame.players.perfect import Solver
from agent.games.boardgame.rules.base import GameRules

OfflineKind = Literal["best", "strong", "random"]
OFFLINE_KINDS: tuple[str, ...] = ("best", "strong", "random")

DEFAULT_SEARCH_SECONDS = 1.0
BOT_DEPTH = 5
"""The engine's connect-four bot looks five plies ahead: it never misses a short tactic."""


class PerfectPlayer(MovePlayer):
    def __init__(self, rules: GameRules[Any], rng: random.Random, label: str = "perfect") -> None:
        super().__init__(label, rng)
        self._solver = Solver(rules)

    def decide(self, rules: GameRules[Any], position: Any) -> int:
        return self.rng.choice(self._solver.best_moves(position))


class ConnectFourSearchPlayer(MovePlayer):
    """Iterative deepening alpha-beta within ``seconds`` per move, keeping its table for the match."""

    def __init__(self, rng: random.Random, seconds: float = DEFAULT_SEARCH_SECONDS) -> None:
        super().__init__("search", rng)
        self.seconds = seconds
        self._searcher = Searcher()
        self.last_depth = 0

    def decide(self, rules: GameRules[Any], position: Any) -> int:
        result = self._searcher.search(position, seconds=self.seconds)
        self.last_depth = result.depth
        return result.move


class ConnectFourBot(MovePlayer):
    def __init__(self, rng: random.Random, depth: int = BOT_DEPTH) -> None:
        super().__init__("strong-bot", rng)
        self.depth = depth

    def decide(self, rules: GameRules[Any], position: Any) -> int:
        return bot_move(position, self.depth, self.rng).move


PlayerMaker = Callable[[str, GameRules[Any], random.Random, float], MovePlayer]
"""(kind "best" or "strong", rules, rng, search seconds) -> player."""


def _tictactoe(kind: str, rules: GameRules[Any], rng: random.Random, seconds: float) -> MovePlayer:
    return PerfectPlayer(rules, rng, "perfect" if kind == "best" else "strong-bot")


def _connect_four(kind: str, rules: GameRules[Any], rng: random.Random, seconds: float) -> MovePlayer:
    return ConnectFourSearchPlayer(rng, seconds) if kind == "best" else ConnectFourBot(rng)


OFFLINE_PLAYERS: dict[str, PlayerMaker] = {
    "tictactoe": _tictactoe,
    "connect_four": _connect_four,
}
"""Each game's own offline players; a new game adds a line here (or plays random moves)."""


def make_offline(kind: str, rules: GameRules[Any], rng: random.Random | None = None, *,
                 seconds: float = DEFAULT_SEARCH_SECONDS) -> MovePlayer:
    """An offline player of ``kind`` for ``rules``; ValueError for an unknown kind."""
    rng = rng or random.Random()
    if kind not in OFFLINE_KINDS:
        raise ValueError(f"unknown offline player {kind!r}; choose one of: {', '.join(OFFLINE_KINDS)}")
    maker = OFFLINE_PLAYERS.get(rules.name)
    if kind == "random" or maker is None:
        # A game with no dedicated player: random legal moves keep matches going.
        return RandomPlayer(rng)
    return maker(kind, rules, rng, seconds)

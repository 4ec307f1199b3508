"""A whole match in one process without sockets: the rules engine feeding two players.

For tests and quick strategy benchmarks; the evaluation command plays over TCP through the
arena server instead, which is what an external agent sees.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from agent.games.hive.opponents.bots import Player
from agent.games.hive.protocol import parse_state
from agent.games.hive.rules import ArenaState, apply_command, new_arena, view

MAX_TURNS = 100_000
"""A safety stop: real matches end long before (flowers run out or 1000 pointless turns)."""


@dataclass
class SimResult:
    scores: list[int]
    winner: int | None
    turns: int
    seats: tuple[int, int]
    """seats[i] = the player number the i-th given player had."""
    decision_ms: list[list[float]] = field(default_factory=lambda: [[], []])
    """Per given player, the time each decision took."""


def play(players: tuple[Player, Player], seed: int, swap: bool | None = None,
         observe: Callable[[ArenaState], None] | None = None) -> SimResult:
    """Play one match; seats are drawn from the seed unless ``swap`` fixes them. ``observe`` is
    shown the whole arena before every turn and after the last (a benchmark's probe; it must not
    change the state)."""
    rng = random.Random(seed)
    state = new_arena(rng)
    if swap is None:
        swap = rng.randrange(2) == 0
    seated = (players[1], players[0]) if swap else players
    seats = (1, 0) if swap else (0, 1)
    times: list[list[float]] = [[], []]
    while not state.game_over and state.turn < MAX_TURNS:
        if observe is not None:
            observe(state)
        turn, player, bee, row, col, digits = view(state)
        parsed = parse_state(f"{turn},{player},{bee},{row},{col},{digits}")
        started = time.perf_counter()
        action, direction = seated[player].decide(parsed)
        times[seats.index(player)].append((time.perf_counter() - started) * 1000)
        apply_command(state, action, direction, rng)
    if observe is not None:
        observe(state)
    return SimResult(scores=list(state.scores), winner=state.winner, turns=state.turn, seats=seats,
                     decision_ms=times)

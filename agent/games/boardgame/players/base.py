"""The player interface: given a turn, choose an action. Offline players wrap pure functions."""

from __future__ import annotations

import asyncio
import random
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent.games.boardgame.rules.base import GameRules, WireAction


class InvalidChoice(ValueError):
    """The player's answer was not a usable action; the message says why (fed back to it)."""


class PlayerUnavailable(RuntimeError):
    """The player cannot answer this turn at all (e.g. the LLM provider failed); the offline player acts."""


@dataclass(frozen=True)
class Turn:
    """Everything a player may use to choose one action."""

    rules: GameRules[Any]
    position: Any
    seat: int
    turn: int
    """The match's turn number, as the engine reports it."""
    feedback: tuple[str, ...] = ()
    """Why earlier attempts at this turn were refused (local check or engine), oldest first."""


@dataclass(frozen=True)
class TextTurn:
    """A turn of a game this agent has no rules plugin for: only the engine's state and the rules text."""

    game: str
    agent_id: str
    mark: str
    turn: int
    state_data: Mapping[str, Any]
    feedback: tuple[str, ...] = ()
    legal_actions: tuple[Mapping[str, Any], ...] = ()
    """Legal actions' data, when the engine listed them in its last refusal."""


class TextPlayer(ABC):
    """A player that can act from the rules as text and the raw state (the LLM player)."""

    label: str = "text player"

    @abstractmethod
    async def choose_text(self, turn: TextTurn) -> WireAction:
        """The action to try; InvalidChoice or PlayerUnavailable when it has none."""


class Player(ABC):
    """Chooses actions. May return an illegal action (an LLM may); callers check before sending."""

    label: str = "player"

    @abstractmethod
    async def choose(self, turn: Turn) -> WireAction:
        """The action to try; InvalidChoice or PlayerUnavailable when it has none (callers guard the rest).

        A player object serves one match: clients make a fresh one per match, so searches may keep
        tables between its moves.
        """

    async def settle(self, turn: Turn, action: WireAction, source: str = "fallback") -> WireAction:
        """The last word on ``action``, chosen for this player's turn by someone else (``source``:
        the offline fallback after this player failed, or the client's last resort): the action to
        send. Most players have none; the guarded LLM player puts its guard here, so what the
        fallback chose meets the same guard as the model's own moves."""
        return action


class MovePlayer(Player):
    """A player that is a pure function of the position, run in a worker thread (searches take CPU)."""

    inline = False
    """True for players so cheap that a worker thread would cost more than the decision."""

    def __init__(self, label: str, rng: random.Random) -> None:
        self.label = label
        self.rng = rng

    @abstractmethod
    def decide(self, rules: GameRules[Any], position: Any) -> int:
        """A legal move of ``position`` (which is not finished)."""

    async def choose(self, turn: Turn) -> WireAction:
        if self.inline:
            move = self.decide(turn.rules, turn.position)
        else:
            move = await asyncio.to_thread(self.decide, turn.rules, turn.position)
        return turn.rules.move_to_action(move)


class RandomPlayer(MovePlayer):
    """A uniformly random legal move; works for every game."""

    inline = True

    def __init__(self, rng: random.Random) -> None:
        super().__init__("random", rng)

    def decide(self, rules: GameRules[Any], position: Any) -> int:
        return self.rng.choice(list(rules.legal_moves(position)))

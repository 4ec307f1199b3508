"""What a board game's rules plugin provides: pure functions over immutable positions.

The engine and the agent share these: the engine validates actions and advances matches with
them, the agent reads the engine's ``state.data`` back into a position, validates its own action
before sending, and renders the board for the LLM. To add a game, write a module like
``tictactoe.py`` with a class implementing :class:`GameRules` and list it in ``registry.py``.

Positions are two-seat, alternating-turn, perfect-information games (seat 0 moves first). A move
is an ``(action_type, data)`` pair on the wire; inside, each game uses its own small move type.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

P = TypeVar("P", bound=Hashable)
"""A game's position type (immutable and hashable, so searches can cache on it)."""


class RuleError(ValueError):
    """An action or state the rules refuse; the message is meant for players (and LLMs) to read."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished position ended: the winning seat, or None for a draw."""

    winner: int | None


@dataclass(frozen=True, slots=True)
class WireAction:
    """An action as the protocol carries it."""

    type: str
    data: Mapping[str, Any]


class GameRules(ABC, Generic[P]):
    """One game's rules. Subclasses are stateless; every method is pure."""

    name: str
    """The protocol's ``game`` code, e.g. ``"tictactoe"``."""
    title: str
    """A human name, e.g. ``"Tic-tac-toe"``."""
    action_type: str
    """The ``action.type`` of a move, e.g. ``"place"``."""
    marks: tuple[str, str]
    """The board symbols of seat 0 and seat 1."""

    # ---- positions --------------------------------------------------------------------------

    @abstractmethod
    def initial(self) -> P:
        """The starting position."""

    @abstractmethod
    def to_move(self, position: P) -> int:
        """The seat (0 or 1) whose turn it is."""

    @abstractmethod
    def legal_moves(self, position: P) -> Sequence[int]:
        """The legal moves in a fixed order; empty when the game is over."""

    @abstractmethod
    def play(self, position: P, move: int) -> P:
        """The position after ``move``; RuleError if the move is illegal."""

    @abstractmethod
    def outcome(self, position: P) -> Outcome | None:
        """None while the game goes on."""

    @abstractmethod
    def ply(self, position: P) -> int:
        """Moves made so far."""

    # ---- the wire ---------------------------------------------------------------------------

    @abstractmethod
    def move_to_action(self, move: int) -> WireAction:
        """The protocol action for a move."""

    @abstractmethod
    def action_to_move(self, position: P, action_type: str, data: Mapping[str, Any]) -> int:
        """The legal move an action names; RuleError with a helpful message otherwise."""

    @abstractmethod
    def to_data(self, position: P) -> dict[str, Any]:
        """The position as ``state.data`` (JSON-ready; seats' marks, not agent ids)."""

    @abstractmethod
    def from_data(self, data: Mapping[str, Any]) -> P:
        """The position ``state.data`` describes; RuleError if it is not a reachable position."""

    # ---- for people and LLMs ----------------------------------------------------------------

    @abstractmethod
    def render(self, position: P) -> str:
        """An ASCII board with coordinates, as shown to LLMs and in logs."""

    @abstractmethod
    def describe_move(self, move: int) -> str:
        """A move in words, e.g. ``"column 4"``."""

    @property
    @abstractmethod
    def action_schema(self) -> dict[str, Any]:
        """The JSON Schema of an action's ``data`` (OpenAI strict-mode compatible)."""

    def check_action(self, position: P, seat: int, action_type: str, data: Mapping[str, Any]) -> int:
        """The move if ``seat`` may play it now; RuleError saying why not otherwise."""
        if self.outcome(position) is not None:
            raise RuleError("the game is over; no more actions are accepted")
        if self.to_move(position) != seat:
            raise RuleError("it is not your turn")
        return self.action_to_move(position, action_type, data)

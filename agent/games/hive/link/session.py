"""One match of our agent: the strategy answering each state, the coach and the transcript beside it.

``HiveSession`` is the client's decider. Its answer comes from the strategy alone (a few
milliseconds); the coach is only poked after the answer is decided and runs as its own task. In
direct mode (research) the LLM may replace the strategy's command, but only within a budget well
under the arena's 2 s, after which the strategy's command goes out unchanged.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from agent.core.llm import LLMClient
from agent.core.prompts import PromptSet
from agent.core.transcript import Transcript
from agent.games.hive.coach.coach import Coach, summary_context
from agent.games.hive.config import CoachConfig, DirectConfig
from agent.games.hive.protocol import BeeView
from agent.games.hive.rules import COLS, OFFSETS, VIEW_SIDE, Action, Cell, Direction, owner
from agent.games.hive.strategy.strategy import Decision, Strategy, new_strategy

log = logging.getLogger(__name__)

_VIEW_SYMBOLS = {Cell.EMPTY: ".", Cell.FLOWER: "F", Cell.WALL: "#", Cell.OUTSIDE: "X"}


@dataclass
class DirectStats:
    asked: int = 0
    used: int = 0
    late: int = 0
    invalid: int = 0


@dataclass
class HiveSession:
    """The decider for one connection (one match)."""

    team: str
    seed: int | None = None
    transcript: Transcript | None = None
    llm: LLMClient | None = None
    prompts: PromptSet | None = None
    coach_config: CoachConfig | None = None
    direct: DirectConfig | None = None
    strategy: Strategy | None = None
    coach: Coach | None = None
    score: int = 0
    """Our points: deliveries into our hive always succeed, so counting them is exact."""
    bad_lines: int = 0
    direct_stats: DirectStats = field(default_factory=DirectStats)

    def _record(self, kind: str, **data: Any) -> None:
        if self.transcript is not None:
            self.transcript.record(kind, **data)

    def _start(self, player: int) -> Strategy:
        strategy = new_strategy(player, self.seed)
        self.strategy = strategy
        if self.llm is not None and self.prompts is not None and self.coach_config is not None:
            if self.coach is None:
                self.coach = Coach(self.llm, self.prompts, self.coach_config, strategy, self.team, self._record,
                                   self.transcript)
            else:
                self.coach.rebind(strategy)
        self._record("seat", player=player)
        return strategy

    def decide(self, view: BeeView) -> tuple[int, int] | Awaitable[tuple[int, int]]:
        started = time.perf_counter()
        strategy = self.strategy
        if strategy is None or strategy.world.player != view.player:
            strategy = self._start(view.player)
        decision = strategy.decide(view)
        ms = round((time.perf_counter() - started) * 1000, 3)
        # One record per answered state, named as every game names a finished turn so the analysis joins it.
        self._record("turn_end", turn=view.turn, bee=view.bee, row=view.row, col=view.col, carrying=view.carrying,
                     outcome=Action(decision.action).name, direction=Direction(decision.direction).name,
                     reason=decision.reason, target=_rc(decision.target), ms=ms, seconds=ms / 1000)
        if self.coach is not None:
            # After the answer is written: building the summary and prompt takes a millisecond or two.
            asyncio.get_running_loop().call_soon(self.coach.maybe_ask, view.turn, self.score)
        if self.direct is not None and self.direct.enabled and self.llm is not None and self.prompts is not None \
                and self.direct_stats.asked < self.direct.max_calls:
            return self._direct(view, decision, strategy)
        self._count(view, (decision.action, decision.direction))
        return decision.action, decision.direction

    def _count(self, view: BeeView, command: tuple[int, int]) -> None:
        if command[0] == Action.FORAGE and view.carrying:
            dr, dc = OFFSETS[command[1]]
            if view.at(dr, dc) == Cell.HIVE_0 + view.player:
                self.score += 1

    def bad_line(self, line: str, error: str) -> None:
        self.bad_lines += 1
        self._record("bad_line", line=line[:200], error=error)

    async def _direct(self, view: BeeView, decision: Decision, strategy: Strategy) -> tuple[int, int]:
        """Ask the LLM for this move within the budget; the strategy's command otherwise."""
        command = await self._direct_command(view, decision, strategy)
        self._count(view, command)
        return command

    async def _direct_command(self, view: BeeView, decision: Decision, strategy: Strategy) -> tuple[int, int]:
        assert self.llm is not None and self.prompts is not None and self.direct is not None
        self.direct_stats.asked += 1
        fallback = (decision.action, decision.direction)
        context = summary_context(strategy, self.team, self.score, 1)
        context["bee"] = next(b for b in context["bees"] if b["bee"] == view.bee)
        context["view"] = render_view(view)
        context["suggestion"] = (f"{Action(decision.action).name.lower()} {Direction(decision.direction).name} "
                                 f"({decision.reason})")
        try:
            messages = self.prompts.messages("direct_system", "move", context)
        except Exception as exc:
            self._record("direct_error", turn=view.turn, error=f"prompt: {exc}")
            return fallback
        schema = {"type": "object", "additionalProperties": False, "required": ["action", "direction"],
                  "properties": {"action": {"type": "string", "enum": ["move", "forage", "build", "guard"]},
                                 "direction": {"type": "string", "enum": [d.name for d in Direction]}}}
        try:
            deadline = asyncio.get_running_loop().time() + self.direct.budget_s
            async with asyncio.timeout_at(deadline):
                result = await self.llm.complete_json(messages, schema, schema_name="hive_move", deadline=deadline)
        except TimeoutError:
            self.direct_stats.late += 1
            self._record("direct_late", turn=view.turn, budget_s=self.direct.budget_s)
            return fallback
        command = parse_direct(result.data if result.ok else None)
        if command is None:
            self.direct_stats.invalid += 1
            self._record("direct_invalid", turn=view.turn, error=result.error or "not a command",
                         text=(result.text or "")[:200])
            return fallback
        if command[0] == Action.FORAGE and view.carrying:
            dr, dc = OFFSETS[command[1]]
            target = view.at(dr, dc)
            if target in (Cell.HIVE_0, Cell.HIVE_1) and owner(target) != view.player:
                # Never feed the enemy hive, whoever asks.
                self.direct_stats.invalid += 1
                self._record("direct_invalid", turn=view.turn, error="would drop a flower into the enemy hive")
                return fallback
        self.direct_stats.used += 1
        self._record("direct_move", turn=view.turn, action=Action(command[0]).name,
                     direction=Direction(command[1]).name, latency_s=round(result.latency_s, 3))
        return command

    async def aclose(self) -> None:
        if self.coach is not None:
            await self.coach.aclose()

    def summary(self) -> dict[str, Any]:
        data: dict[str, Any] = {"score": self.score, "bad_lines": self.bad_lines}
        if self.coach is not None:
            data["coach"] = vars(self.coach.stats).copy()
        if self.direct is not None and self.direct.enabled:
            data["direct"] = vars(self.direct_stats).copy()
        return data


def parse_direct(data: dict[str, Any] | None) -> tuple[int, int] | None:
    """An LLM's move ({"action": "move", "direction": "N"}) as a command, None if it is not one."""
    if not isinstance(data, dict):
        return None
    action = data.get("action")
    direction = data.get("direction")
    if not isinstance(action, str) or not isinstance(direction, str):
        return None
    try:
        return Action[action.strip().upper()], Direction[direction.strip().upper()]
    except KeyError:
        return None


def render_view(view: BeeView) -> str:
    mine, carrying_mine = Cell.BEE_0 + view.player, Cell.BEE_0_WITH_FLOWER + view.player
    rows = []
    for r in range(VIEW_SIDE):
        line = []
        for c in range(VIEW_SIDE):
            cell = view.cells[r * VIEW_SIDE + c]
            if cell in _VIEW_SYMBOLS:
                line.append(_VIEW_SYMBOLS[Cell(cell)])
            elif cell in (Cell.HIVE_0, Cell.HIVE_1):
                line.append("H" if owner(cell) == view.player else "h")
            elif cell == mine:
                line.append("B")
            elif cell == carrying_mine:
                line.append("C")
            else:
                line.append("c" if cell in (Cell.BEE_0_WITH_FLOWER, Cell.BEE_1_WITH_FLOWER) else "b")
        rows.append("".join(line))
    return "\n".join(rows)


def _rc(index: int | None) -> list[int] | None:
    return list(divmod(index, COLS)) if index is not None else None


__all__ = ["HiveSession", "parse_direct", "render_view"]

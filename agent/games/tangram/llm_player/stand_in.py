"""The LLM player's one offline stand-in: the offline planner that plays or answers in the model's
place. Declared once, here, for every reason it steps in:

- the config asks for it (``llm.fallback_to_planner``, ``planner_hint``, ``candidates``): made with the
  player, for a fallback move, the hint, the candidates' figure library;
- a chat reply of the model cannot be shown: made on first need, it answers the line and keeps what it
  promised;
- a spend cap is reached: it plays and answers the rest of the session.

One instance per session, so its plan and its promises carry from one of these to the next.
"""

from __future__ import annotations

from agent.games.tangram.config import Config
from agent.games.tangram.offline.player import PlannerPlayer
from agent.games.tangram.planner.library import FigureLibrary


class StandIn:
    def __init__(self, config: Config, planner: PlannerPlayer | None = None) -> None:
        self.config = config
        self._planner = planner
        self.configured = planner is not None
        """The config asked for the planner beside the model (a fallback move, a hint, candidates)."""
        self.spoke = False
        """The stand-in answered a chat in the model's place: what it promised, it keeps."""

    @property
    def player(self) -> PlannerPlayer:
        """The offline planner (made on first need when the config did not ask for one)."""
        if self._planner is None:
            self._planner = PlannerPlayer(self.config)
        return self._planner

    @property
    def existing(self) -> PlannerPlayer | None:
        """The planner, if there is one yet (nothing is made)."""
        return self._planner

    def keeps_promise(self) -> PlannerPlayer | None:
        """The stand-in, when it answered a chat and promised the next move: it plays that move."""
        planner = self._planner
        return planner if self.spoke and planner is not None and planner.promised() else None

    @property
    def library(self) -> FigureLibrary | None:
        """The figure library the planner plans with, when the config asked for the planner."""
        return self._planner.library if self.configured and self._planner is not None else None

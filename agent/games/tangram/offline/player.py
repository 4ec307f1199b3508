"""The embedded default player: the offline planner, no LLM, no network, no key.

One object per session. It keeps the session's plan (which figure, where on the board, what the
human asked for in the chat) in its :class:`~agent.games.tangram.offline.agent.OfflineAgent`. Every decision is
pure computation of a few milliseconds, so it runs directly on the event loop.
"""

from __future__ import annotations

import asyncio

from agent.games.tangram.config import Config
from agent.games.tangram.contract import Decision, Player, TurnView
from agent.games.tangram.dialogue.phrases import Phrases
from agent.games.tangram.dialogue.understand import warm
from agent.games.tangram.offline.agent import OfflineAgent
from agent.games.tangram.offline.hint import planner_hint
from agent.games.tangram.planner.library import FigureLibrary, load_library


class PlannerPlayer(Player):
    name = "planner"
    uses_images = False  # it reads the state, never the pictures

    def __init__(self, config: Config | None = None, *, library: FigureLibrary | None = None,
                 phrases: Phrases | None = None) -> None:
        self.config = config or Config()
        library = library or load_library(extra=self.config.planner.figures_dir)
        self.planner = OfflineAgent(library=library, phrases=phrases, default_figure=self.config.planner.default_figure)
        self._warm: asyncio.Future[None] | None = None

    @property
    def library(self) -> FigureLibrary:
        """The figures this planner plans with."""
        return self.planner.library

    async def play(self, view: TurnView) -> Decision:
        return self.planner.play(view.objective, view.board(), view.movers)

    async def adjust(self, view: TurnView) -> Decision:
        return self.planner.adjust(view.objective, view.board(), view.previous, list(view.collisions), view.attempt,
                                   view.movers)

    async def chat(self, view: TurnView) -> str:
        if self._warm is None:  # the language identifier and the lines load once, in a worker thread
            self._warm = asyncio.ensure_future(asyncio.to_thread(warm))
        await asyncio.shield(self._warm)
        board, movers = view.board_with_landing()
        return self.planner.chat(view.objective, board, view.message, movers)

    def constraints(self, view: TurnView) -> tuple[list[str], frozenset[str]]:
        """What the partner asked this player never to do (lines for a prompt and the transcript)
        and the pieces on ``view``'s board that therefore must not be moved."""
        return self.planner.constraints(), self.planner.fixed(view.board(), view.movers)

    def heard(self, view: TurnView) -> None:
        """A chat line the model answered, heard for what this player promised (planner.hear)."""
        self.planner.hear(view.objective, view.board(), view.message, view.movers)

    def promised(self) -> bool:
        """A chat answer of this player promised something for the next turns (planner.promised)."""
        return self.planner.promised()

    def suggest(self, view: TurnView) -> tuple[Decision, str]:
        """What the planner would play now and a one-line hint for an LLM prompt, computed by a
        fresh planner so that this player's own plan is left untouched (who moved each piece is the
        session's record, as for every player)."""
        return planner_hint(view.objective, view.state, self.config.planner.default_figure, self.planner.library,
                            view.movers)

"""The offline planner: a library of tangram figures and a player that builds them with a human.

Public API:
- :func:`load_library`, :class:`FigureLibrary`, :class:`Figure`, :func:`match_objective`
- :func:`silhouette_iou` (figure score of a board)
- :class:`Planner` (the per-session planning core behind ``agent.games.tangram.planner.player.PlannerPlayer``)
- :func:`planner_hint` (suggested next Decision plus a one-line hint, for LLM prompts)
"""

from agent.games.tangram.planner.hint import planner_hint
from agent.games.tangram.planner.library import Figure, FigureError, FigureLibrary, load_figure, load_library
from agent.games.tangram.planner.matching import match_objective
from agent.games.tangram.planner.planner import Planner
from agent.games.tangram.planner.score import silhouette_iou

__all__ = ["Figure", "FigureError", "FigureLibrary", "Planner", "load_figure", "load_library", "match_objective",
           "planner_hint", "silhouette_iou"]

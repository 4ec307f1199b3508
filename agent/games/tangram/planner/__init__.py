"""The offline planner: a library of tangram figures, and the plan that builds one with a human.

Public API:
- :func:`load_library`, :class:`FigureLibrary`, :class:`Figure`, :func:`match_objective`
- :func:`silhouette_iou` (figure score of a board)
- :class:`Planner` (one session's plan; its lines are worded by the conversation, ``agent.games.tangram.dialogue``,
  and ``agent.games.tangram.offline`` puts the two together)
"""

from agent.games.tangram.planner.library import Figure, FigureError, FigureLibrary, load_figure, load_library
from agent.games.tangram.planner.matching import match_objective
from agent.games.tangram.planner.planner import Planner
from agent.games.tangram.planner.score import silhouette_iou

__all__ = ["Figure", "FigureError", "FigureLibrary", "Planner", "load_figure", "load_library", "match_objective",
           "silhouette_iou"]

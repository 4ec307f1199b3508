"""The offline planner: a library of tangram figures and a player that builds them with a human.

Public API:
- :func:`load_library`, :class:`FigureLibrary`, :class:`Figure`, :func:`match_objective`
- :func:`silhouette_iou` (figure score of a board)
- :class:`Planner` (the per-session planning core behind ``agent.players.planner.PlannerPlayer``)
- :func:`planner_hint` (suggested next Decision plus a one-line hint, for LLM prompts)
"""

from agent.planner.hint import planner_hint
from agent.planner.library import Figure, FigureError, FigureLibrary, load_figure, load_library, match_objective
from agent.planner.planner import Planner
from agent.planner.score import silhouette_iou

__all__ = ["Figure", "FigureError", "FigureLibrary", "Planner", "load_figure", "load_library", "match_objective",
           "planner_hint", "silhouette_iou"]

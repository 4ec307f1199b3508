"""The embedded default player: the offline planner and its conversation, no LLM, no network, no key.

- :class:`OfflineAgent` (one session's planner with its conversation, synchronous),
- :class:`PlannerPlayer` (the :class:`~agent.games.tangram.contract.Player` around it),
- :func:`planner_hint` (the planner's suggested next move and a one-line hint, for LLM prompts).
"""

from agent.games.tangram.offline.agent import OfflineAgent
from agent.games.tangram.offline.hint import planner_hint
from agent.games.tangram.offline.player import PlannerPlayer

__all__ = ["OfflineAgent", "PlannerPlayer", "planner_hint"]

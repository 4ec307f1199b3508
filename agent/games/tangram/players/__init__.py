"""Who decides the agent's moves and words: an LLM, the offline planner, or one backed by the other."""

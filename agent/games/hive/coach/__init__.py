"""The LLM coach: every few rounds a plan for the strategy, asked in the background (:mod:`.coach`),
and the request ``--check-llm`` sends (:mod:`.sample`)."""
